"""skorch classifiers for the paper's utility CNN and its linkage auditor.

Both nets train as the reference code of [1]_ does (Section 5.1): cross-entropy on logits,
Adam with learning rate 1e-3, minibatches of 256, and the checkpoint with the highest
**validation balanced accuracy** is the one kept. Initialisation and minibatch order come from
``random_state``, so that every noise draw of a sweep starts from the same weights and sees
the same batches ("all fits use the same deterministic initialization and minibatch-order
seeds"). ``device="auto"`` trains on CUDA when torch sees a device; the choice is made at fit
time and stored in ``device_``. What the nets share (device, seeds, label coding) is their base
class in ``_base.py``; the checkpoint that keeps the best epoch is in ``_callbacks.py``.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import numpy as np
import torch
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from skorch.dataset import ValidSplit
from skorch.utils import to_tensor

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ._base import _BaseCNN
from ._modules import AuditorModule, RepresentationModule

__all__ = ["LinkageAuditor", "RepresentationCNN"]

# default validation split: the first of 5 stratified folds (stateless, so one shared instance)
_VALID_SPLIT = ValidSplit(5, stratified=True)


@Substitution(references=gdp_paper_references)
class RepresentationCNN(_BaseCNN):
    """The paper's utility CNN (Table 2 of [1]_) as a scikit-learn classifier.

    Read more in the :ref:`User Guide <experiments>`.

    Each representation row (any width ``h``) is laid out on the smallest square holding it,
    zero-padded symmetrically to a 16 x 16 input (the reference input of Table 2: a 100-dim row
    is a 10 x 10 square padded by 3), then two valid 5 x 5 convolution blocks (10 and 20
    filters, ReLU, 2 x 2 max-pool), a 50-unit ReLU layer and the output. Rows wider than 256
    are not padded (the CelebA 20 x 20 input). ``head='logit'`` gives the CelebA variant: one
    logit, binary cross-entropy with logits, threshold 0.5 (the authors' reference code for
    Section 5.3 of [1]_).

    Training follows the reference code: Adam (lr 1e-3), 15 epochs, and the weights of the
    epoch with the highest validation balanced accuracy are kept. The paper's batch of 256 rows
    assumes MNIST's 60,000: on 1,000 rows it leaves 45 gradient steps in 15 epochs, too few to
    learn. So the default ``batch_size="auto"`` sizes the batch to the rows given to ``fit``,
    ``batch_size_ = min(256, max(16, n_samples // 40))``: about 32 steps an epoch on small data
    and the paper's 256 from 10,240 rows on. ``batch_size=256`` is the paper's recipe exactly
    (what ``python -m skdc reproduce ... --model cnn`` uses).

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=RepresentationModule
        The network. A class receives ``n_features`` and ``n_outputs`` plus any
        ``module__<name>`` arguments (``reference_side``, ``conv_channels``, ``kernel_size``,
        ``hidden_units``).
    head : {'softmax', 'logit'}, default='softmax'
        ``'softmax'``: one logit per class with cross-entropy; ``'logit'``: binary tasks with
        one logit and ``BCEWithLogitsLoss``.
    criterion : torch criterion class or None, default=None
        ``None`` gives ``torch.nn.CrossEntropyLoss`` (``BCEWithLogitsLoss`` for
        ``head='logit'``). The module returns logits, so NLL (skorch's default) would be wrong.
    optimizer : torch optimizer class, default=torch.optim.Adam
        Optimizer; its arguments are routed with ``optimizer__<name>``.
    lr : float, default=1e-3
        Learning rate.
    max_epochs : int, default=15
        Number of epochs.
    batch_size : int or "auto", default="auto"
        Minibatch size. ``"auto"``: ``min(256, max(16, n_samples // 40))`` for the
        ``n_samples`` rows given to ``fit`` (``batch_size_``); ``256`` is the paper's recipe;
        ``-1`` takes every row in one batch.
    train_split : callable or None, default=ValidSplit(5, stratified=True)
        Holds out the validation rows used for checkpointing (skorch's ``train_split``);
        ``None`` trains on every row and keeps the last epoch. With
        ``skorch.helper.predefined_split(dataset)`` the dataset's targets must be class
        indices (positions in ``classes_``).
    classes : array-like or None, default=None
        All class labels; ``None`` reads them from ``y`` at fit.
    device : str, torch.device or None, default='auto'
        ``'auto'`` picks CUDA when torch sees it, else the CPU, at fit time (``device_``).
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation and the minibatch order (``init_seed_``, ``order_seed_``).
        Pass an int to give every fit of a sweep the same initialisation and batches.
    verbose : int, default=0
        Print a line per epoch when positive.
    **kwargs : dict
        Other skorch arguments, routed by prefix (``module__``, ``optimizer__``,
        ``iterator_train__``, ``callbacks__``...).

    Attributes
    ----------
    module_ : torch.nn.Module
        The trained network (best-validation weights).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Width of the input rows.
    device_ : str or torch.device
        Device used for training and prediction.
    batch_size_ : int
        The minibatch size used: ``batch_size``, or the one ``"auto"`` derived from the rows
        (``-1``: every training row in one batch).
    init_seed_, order_seed_ : int
        Seeds of the initialisation and of the minibatch order.
    best_epoch_ : int
        Epoch (1-based) whose weights were kept.
    best_valid_balanced_accuracy_ : float
        Validation balanced accuracy of that epoch (NaN without validation).
    history_ : skorch.History
        Per-epoch ``train_loss``, ``valid_loss``, ``valid_bacc``.

    See Also
    --------
    LinkageAuditor : the Table 3 CNN whose embeddings score linkage.
    fit_batched : train one such net per noise draw, all together.

    Notes
    -----
    The square layout is only a layout for convolution; a representation row is not an image
    (paper, Section 5.2). Training runs in float32 while the protocol algebra is float64.

    {references}

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skdc.nn import RepresentationCNN
    >>> X, y = load_digits(return_X_y=True)
    >>> net = RepresentationCNN(max_epochs=2, device="cpu", random_state=0)
    >>> net.fit(X[:300] / 16, y[:300]).predict(X[:5]).shape
    (5,)
    >>> net.module_.layout(net.module_.conv1.weight.new_zeros(1, 64)).shape
    torch.Size([1, 1, 16, 16])
    """

    def __init__(self, module=RepresentationModule, *, head="softmax", criterion=None,
                 optimizer=torch.optim.Adam, lr=1e-3, max_epochs=15, batch_size="auto",
                 train_split=_VALID_SPLIT, classes=None, device="auto",
                 random_state=None, verbose=0, **kwargs):
        super().__init__(module, criterion=criterion, optimizer=optimizer, lr=lr,
                         max_epochs=max_epochs, batch_size=batch_size,
                         train_split=train_split, classes=classes, device=device,
                         verbose=verbose, **kwargs)
        self.head = head
        self.random_state = random_state

    def _n_outputs(self, n_classes):
        return 1 if self.head == "logit" else n_classes

    # the paper's batch (Table 2's reference code), reached by "auto" from 40 x 256 rows on
    _PAPER_BATCH, _MIN_BATCH, _BATCHES_PER_EPOCH = 256, 16, 40

    def _check_fit_data(self, X, y):
        X, y = super()._check_fit_data(X, y)
        if isinstance(self.batch_size, str):
            if self.batch_size != "auto":
                raise ValueError(
                    f"batch_size must be a positive int, -1 or 'auto'; got {self.batch_size!r}."
                )
            self.batch_size_ = int(min(self._PAPER_BATCH, max(
                self._MIN_BATCH, X.shape[0] // self._BATCHES_PER_EPOCH)))
        else:
            self.batch_size_ = int(self.batch_size)
        return X, y

    def get_params_for(self, prefix):
        """skorch's routed parameters of ``prefix``; the data loaders get ``batch_size_``.

        Parameters
        ----------
        prefix : str
            ``"module"``, ``"iterator_train"``, ``"criterion"``...

        Returns
        -------
        params : dict
            The ``prefix__name`` parameters without their prefix; for the two iterators,
            ``batch_size`` is the fitted ``batch_size_`` when ``batch_size="auto"`` (256
            before ``fit`` has seen rows).
        """
        params = super().get_params_for(prefix)
        if (prefix in ("iterator_train", "iterator_valid") and "batch_size" not in params
                and isinstance(self.batch_size, str)):
            params["batch_size"] = getattr(self, "batch_size_", self._PAPER_BATCH)
        return params

    def _default_criterion(self):
        return torch.nn.BCEWithLogitsLoss if self.head == "logit" else torch.nn.CrossEntropyLoss

    def initialize(self):
        """Check ``head``, then initialise (see :meth:`fit`)."""
        if self.head not in ("softmax", "logit"):
            raise ValueError(f"head must be 'softmax' or 'logit'; got {self.head!r}.")
        if self.head == "logit" and len(self.classes_) != 2:
            raise ValueError(
                f"head='logit' is for binary tasks; y has {len(self.classes_)} classes. "
                "Use head='softmax'."
            )
        return super().initialize()


@Substitution(references=gdp_paper_references)
class LinkageAuditor(ClassNamePrefixFeaturesOutMixin, TransformerMixin, _BaseCNN):
    """The paper's linkage auditor CNN (Table 3 of [1]_): a classifier whose embedding links.

    Read more in the :ref:`User Guide <threat_model>`.

    Trained once on clean images (MNIST in the paper: 10 epochs, Adam 1e-3, batch 256, best
    validation balanced accuracy, as in the authors' reference code: the paper does not give
    them), then frozen. ``transform`` maps clean or reconstructed images to the 128-dim
    penultimate embeddings ``ReLU(fc(flatten(features)))``, L2-normalised, whose cosine
    similarity decides exact-source linkage (Section 5.2.1 of [1]_;
    :func:`skdc.metrics.linkage_accuracy`).

    Parameters
    ----------
    module : torch.nn.Module class or instance, default=AuditorModule
        The network; a class receives ``n_features``, ``n_outputs`` and ``module__<name>``
        arguments (``image_shape=(channels, height, width)``, ``channels``,
        ``embedding_dim``). Images of one grayscale square need no ``image_shape``.
    criterion : torch criterion class, default=torch.nn.CrossEntropyLoss
        Loss on the training head's logits.
    optimizer : torch optimizer class, default=torch.optim.Adam
        Optimizer (``optimizer__<name>`` arguments).
    lr : float, default=1e-3
        Learning rate.
    max_epochs : int, default=10
        Number of epochs.
    batch_size : int, default=256
        Minibatch size.
    train_split : callable or None, default=ValidSplit(5, stratified=True)
        Validation rows for checkpointing (see :class:`RepresentationCNN`).
    classes : array-like or None, default=None
        All class labels; ``None`` reads them from ``y``.
    normalize : bool, default=True
        Whether ``transform`` L2-normalises the embeddings.
    device : str, torch.device or None, default='auto'
        ``'auto'`` picks CUDA when available at fit time (``device_``).
    random_state : int, RandomState instance or None, default=None
        Seeds the initialisation and the minibatch order.
    verbose : int, default=0
        Print a line per epoch when positive.
    **kwargs : dict
        Other skorch arguments, routed by prefix.

    Attributes
    ----------
    module_ : torch.nn.Module
        The trained auditor.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Width of a flattened image.
    device_ : str or torch.device
        Device used.
    init_seed_, order_seed_ : int
        Seeds of the initialisation and of the minibatch order.
    best_epoch_ : int
        Epoch whose weights were kept.
    best_valid_balanced_accuracy_ : float
        Its validation balanced accuracy.
    history_ : skorch.History
        Per-epoch scores.

    See Also
    --------
    RepresentationCNN : the utility CNN of Table 2.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skdc.nn import LinkageAuditor
    >>> X, y = load_digits(return_X_y=True)
    >>> auditor = LinkageAuditor(max_epochs=1, device="cpu", random_state=0)
    >>> E = auditor.fit(X[:200] / 16, y[:200]).transform(X[:4] / 16)
    >>> E.shape, np.allclose(np.linalg.norm(E, axis=1), 1)
    ((4, 128), True)
    """

    def __init__(self, module=AuditorModule, *, criterion=torch.nn.CrossEntropyLoss,
                 optimizer=torch.optim.Adam, lr=1e-3, max_epochs=10, batch_size=256,
                 train_split=_VALID_SPLIT, classes=None, normalize=True,
                 device="auto", random_state=None, verbose=0, **kwargs):
        super().__init__(module, criterion=criterion, optimizer=optimizer, lr=lr,
                         max_epochs=max_epochs, batch_size=batch_size,
                         train_split=train_split, classes=classes, device=device,
                         verbose=verbose, **kwargs)
        self.normalize = normalize
        self.random_state = random_state

    def embed(self, X):
        """Penultimate ReLU embeddings of the images ``X`` (not normalised).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or image stack
            Flattened images, or an array of images that is flattened row-wise.

        Returns
        -------
        E : ndarray of shape (n_samples, embedding_dim)
            The embeddings (float32).
        """
        X = self._check_X(X, reset=False)
        module = self.module_
        if not hasattr(module, "embed"):
            raise TypeError(
                f"The auditor's module {type(module).__name__} has no embed(x) method; use "
                "AuditorModule or add embed(x) -> (batch, embedding_dim)."
            )
        module.eval()
        out = []
        with torch.no_grad():
            for batch in self.get_iterator(self.get_dataset(X), training=False):
                Xb = to_tensor(batch[0], device=self.device_)
                out.append(module.embed(Xb).cpu().numpy())
        if not out:
            return np.empty((0, self._n_features_out), dtype=np.float32)
        return np.concatenate(out)

    def transform(self, X):
        """Linkage embeddings: :meth:`embed`, L2-normalised when ``normalize=True``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Flattened clean or reconstructed images.

        Returns
        -------
        E : ndarray of shape (n_samples, embedding_dim)
            Embeddings whose dot products are cosine similarities.
        """
        E = self.embed(X)
        if self.normalize:
            norms = np.linalg.norm(E, axis=1, keepdims=True)
            E = E / np.maximum(norms, np.finfo(E.dtype).tiny)
        return E

    def fit_transform(self, X, y=None, **fit_params):
        """Fit on labelled images, then return their embeddings.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Flattened images.
        y : array-like of shape (n_samples,)
            Class labels (the auditor is trained as a classifier).
        **fit_params : dict
            Passed to :meth:`fit`.

        Returns
        -------
        E : ndarray of shape (n_samples, embedding_dim)
            Embeddings of ``X``.
        """
        return self.fit(X, y, **fit_params).transform(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the embeddings are float32 whatever the input dtype (the CNN runs in float32)
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags

    @property
    def _n_features_out(self):
        return int(self.module_.embedding.out_features)
