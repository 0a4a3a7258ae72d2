"""skorch classifiers for the paper's utility CNN and its linkage auditor.

Both nets train as the reference code of [1]_ does (Section 5.1): cross-entropy on logits,
Adam with learning rate 1e-3, minibatches of 256, and the checkpoint with the highest
**validation balanced accuracy** is the one kept. Initialisation and minibatch order come from
``random_state``, so that every noise draw of a sweep starts from the same weights and sees
the same batches ("all fits use the same deterministic initialization and minibatch-order
seeds"). ``device="auto"`` trains on CUDA when torch sees a device; the choice is made at fit
time and stored in ``device_``.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from contextlib import contextmanager

import numpy as np
import torch
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.metrics import balanced_accuracy_score
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array
from skorch import NeuralNetClassifier
from skorch.callbacks import Callback, EpochScoring, EpochTimer, PassthroughScoring, PrintLog
from skorch.dataset import ValidSplit
from skorch.exceptions import NotInitializedError
from skorch.utils import to_tensor

from ..utils._device import resolve_device
from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ._modules import AuditorModule, RepresentationModule

__all__ = ["LinkageAuditor", "RepresentationCNN", "resolve_device"]

_SEED_MAX = 2**31 - 1

# docstring fragments shared by the nets' docstrings (skdc.utils._docstring.Substitution)
_X_rows_doc = """\
        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input rows.
"""
# default validation split: the first of 5 stratified folds (stateless, so one shared instance)
_VALID_SPLIT = ValidSplit(5, stratified=True)


def _device_name(device):
    """``'cpu'`` for ``torch.device('cpu')`` (skorch's fallback returns a torch.device)."""
    return str(device) if isinstance(device, torch.device) else device


def _draw_seeds(random_state):
    """Initialisation and minibatch-order seeds drawn from ``random_state``."""
    rng = check_random_state(random_state)
    init_seed, order_seed = rng.randint(_SEED_MAX, size=2)
    return int(init_seed), int(order_seed)


def _is_auto(device):
    return isinstance(device, str) and device == "auto"


def _valid_balanced_accuracy(net, X, y):
    """Balanced accuracy on the validation rows ``X`` (a skorch ``Dataset``) of class indices ``y``.

    skorch's own ``predict_proba`` runs here (ours checks arrays, and ``X`` is a ``Dataset``);
    inside :class:`_ValidScoring` it replays the outputs cached during validation.
    """
    proba = NeuralNetClassifier.predict_proba(net, X)
    return balanced_accuracy_score(np.asarray(y).astype(np.int64), proba.argmax(axis=1))


class _ValidScoring(EpochScoring):
    """skorch's ``EpochScoring``, run while ``net.device`` shows the fitted device.

    Its cache replays the validation outputs on ``net.device`` (read when the cache is made);
    with ``device='auto'`` that must be ``device_`` (see ``_BaseCNN._skorch_device``).
    """

    def on_epoch_end(self, net, **kwargs):
        with net._skorch_device():
            super().on_epoch_end(net, **kwargs)


class BestValidCheckpoint(Callback):
    """Keep the weights of the epoch with the best validation score, restore them at the end.

    Read more in the :ref:`User Guide <experiments>`.

    The copy lives in memory (no files), and is dropped once restored, so a pickled net holds
    only its final weights. Without a validation split the last epoch is kept.

    Parameters
    ----------
    monitor : str, default='valid_bacc'
        History key of the score; ``'<monitor>_best'`` flags improving epochs (as written by
        :class:`skorch.callbacks.EpochScoring`).
    """

    def __init__(self, monitor="valid_bacc"):
        self.monitor = monitor

    def initialize(self):
        self.best_state_ = None
        self.best_epoch_ = None
        self.best_score_ = np.nan
        return self

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.initialize()

    def on_epoch_end(self, net, **kwargs):
        row = net.history[-1]
        if row.get(self.monitor + "_best", False):
            self.best_state_ = {
                k: v.detach().clone() for k, v in net.module_.state_dict().items()
            }
            self.best_epoch_ = int(row["epoch"])
            self.best_score_ = float(row[self.monitor])

    def on_train_end(self, net, X=None, y=None, **kwargs):
        if self.best_state_ is not None:
            net.module_.load_state_dict(self.best_state_)
            net.best_epoch_ = self.best_epoch_
            net.best_valid_balanced_accuracy_ = self.best_score_
        else:
            net.best_epoch_ = len(net.history)
            net.best_valid_balanced_accuracy_ = np.nan
        self.best_state_ = None


class _BaseCNN(NeuralNetClassifier):
    """Shared behaviour of the skdc nets: device choice, seeds, label coding, checkpoints.

    Subclasses define ``__init__`` (their own defaults) and ``_n_outputs(n_classes)``.
    """

    # ---------------------------------------------------------------- skorch hooks
    # skorch has no public name for the default callbacks that ``get_params`` also lists: its
    # ``get_params`` reads this property directly, as its own NeuralNetClassifier overrides it.
    @property
    def _default_callbacks(self):
        return [
            ("epoch_timer", EpochTimer()),
            ("train_loss", PassthroughScoring(name="train_loss", on_train=True)),
            ("valid_loss", PassthroughScoring(name="valid_loss")),
            ("valid_bacc", _ValidScoring(
                _valid_balanced_accuracy, name="valid_bacc", lower_is_better=False)),
            ("best_checkpoint", BestValidCheckpoint(monitor="valid_bacc")),
            ("print_log", PrintLog()),
        ]

    @property
    def classes_(self):
        if self.classes is not None:
            if not len(self.classes):
                raise AttributeError(f"{type(self).__name__} has no attribute 'classes_'")
            return np.asarray(self.classes)
        try:
            return self.classes_inferred_
        except AttributeError as exc:
            raise AttributeError(
                f"{type(self).__name__} is not fitted yet: call fit(X, y) first, or pass "
                "classes=[...] before initialize()."
            ) from exc

    def check_data(self, X, y=None):
        if y is None:
            raise ValueError(
                f"{type(self).__name__}.fit needs class labels y; got y=None."
            )

    def initialize(self):
        """Resolve the device and seeds, then initialise the module, criterion and optimizer."""
        self.device_ = resolve_device(self.device)
        self.init_seed_, self.order_seed_ = _draw_seeds(self.random_state)
        self._order_generator_ = torch.Generator().manual_seed(self.order_seed_)
        with self._skorch_device():
            return super().initialize()

    # ------------------------------------------------------------ the fitted device
    # skorch reads ``self.device`` where it places the module and the criterion (``initialize``,
    # and ``set_params`` when it re-initialises them), each batch (``infer``, ``get_loss``),
    # the scoring cache and ``load_params``, and needs a torch device there; ours may be
    # "auto". Rather than copy those skorch steps with ``device_`` put in (skorch's private
    # ``_initialize_module`` and its helpers), skorch's own public methods run, through
    # ``super()``, inside ``_skorch_device``: there, and only there, the documented ``device``
    # parameter holds the fitted ``device_``, and "auto" is put back on the way out. skorch
    # itself assigns ``self.device`` this way (``load_params`` and unpickling fall back to the
    # CPU when CUDA is gone). No callback is notified inside but our validation scorer
    # (``_ValidScoring``), so callbacks, ``get_params`` and ``clone`` see the parameter as the
    # user set it. A concrete device (or None) needs no swap. The swap is the net's state, so
    # threads that share one fitted "auto" net should each predict on a copy.
    @contextmanager
    def _skorch_device(self):
        if not _is_auto(self.device):
            yield
            return
        if not hasattr(self, "device_"):
            raise NotInitializedError(
                f"This {type(self).__name__} is not initialized: device='auto' is resolved by "
                "fit(X, y) or initialize(); call one of them first."
            )
        self.device = self.device_
        try:
            yield
        finally:
            self.device = "auto"

    def set_params(self, **kwargs):
        """skorch's ``set_params``; a module or criterion it re-initialises goes to ``device_``.

        Parameters
        ----------
        **kwargs : dict
            Parameters, routed by prefix as in skorch (``module__hidden_units=9``...).

        Returns
        -------
        self : object
            The net.
        """
        if "device" in kwargs:  # resolved again by the next initialize()
            super().set_params(device=kwargs.pop("device"))
        if not kwargs:
            return self
        if not self.initialized_:
            return super().set_params(**kwargs)
        with self._skorch_device():
            return super().set_params(**kwargs)

    def infer(self, x, **fit_params):
        """skorch's ``infer``: the module's output on the batch ``x``, on ``device_``.

        Parameters
        ----------
        x : tensor, array or dict of them
            One batch of inputs.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        y_infer : torch.Tensor
            The module's output.
        """
        with self._skorch_device():
            return super().infer(x, **fit_params)

    def get_loss(self, y_pred, y_true, *args, **kwargs):
        """skorch's ``get_loss``, with ``y_true`` moved to ``device_``.

        Parameters
        ----------
        y_pred : torch.Tensor
            The module's output.
        y_true : tensor or array
            Class indices of the batch.
        *args, **kwargs
            ``X`` and ``training``, as skorch passes them.

        Returns
        -------
        loss : torch.Tensor
            The criterion's value.
        """
        if isinstance(self.criterion_, torch.nn.BCEWithLogitsLoss):
            # BCE takes float targets; class indices may come as ints (a predefined split)
            y_true = to_tensor(y_true, device=y_pred.device).to(y_pred.dtype)
        with self._skorch_device():
            return super().get_loss(y_pred, y_true, *args, **kwargs)

    def _default_criterion(self):
        return torch.nn.CrossEntropyLoss

    def initialize_criterion(self):
        """Instantiate the criterion (``None`` gives the head's cross-entropy)."""
        criterion = self.criterion if self.criterion is not None else self._default_criterion()
        self.criterion_ = self.initialized_instance(criterion, self.get_params_for("criterion"))
        return self

    def initialize_module(self):
        """Instantiate the module under the initialisation seed.

        A module class receives ``n_features`` (from ``fit``'s ``X``) and ``n_outputs`` (from
        the classes) unless ``module__n_features`` / ``module__n_outputs`` are given; a module
        instance is used as it is.
        """
        kwargs = self.get_params_for("module")
        if not isinstance(self.module, torch.nn.Module):
            if "n_features" not in kwargs:
                if not hasattr(self, "n_features_in_"):
                    raise ValueError(
                        f"{type(self).__name__} needs the input width to build its module: "
                        "call fit(X, y), or pass module__n_features=<width> before "
                        "initialize()."
                    )
                kwargs["n_features"] = self.n_features_in_
            if "n_outputs" not in kwargs:
                kwargs["n_outputs"] = self._n_outputs(len(self.classes_))
        # seeded initialisation that leaves the global torch generator untouched
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.init_seed_)
            self.module_ = self.initialized_instance(self.module, kwargs)
        return self

    def get_iterator(self, dataset, training=False):
        """DataLoader over ``dataset``; training batches are shuffled by the order seed."""
        if not training:
            return super().get_iterator(dataset, training=False)
        kwargs = self.get_params_for("iterator_train")
        kwargs.setdefault("batch_size", self.batch_size)
        if kwargs["batch_size"] == -1:
            kwargs["batch_size"] = len(dataset)
        kwargs.setdefault("shuffle", True)
        if kwargs["shuffle"]:
            kwargs.setdefault("generator", self._order_generator_)
        return self.iterator_train(dataset, **kwargs)

    def load_params(self, f_params=None, f_optimizer=None, f_criterion=None, f_history=None,
                    checkpoint=None, **kwargs):
        """skorch's ``load_params``, loading the tensors onto ``device_``.

        skorch maps the loaded tensors to the net's device and, when CUDA is gone, falls back
        to the CPU with a ``DeviceWarning``; ``device_`` records where they landed, and
        ``device='auto'`` stays the parameter.

        Parameters
        ----------
        f_params, f_optimizer, f_criterion, f_history : str, file-like or None, default=None
            Files to load (skorch's ``load_params``).
        checkpoint : skorch.callbacks.Checkpoint or None, default=None
            Load the files of this checkpoint; the net is initialised first if needed.
        **kwargs : dict
            Other skorch arguments (``use_safetensors``, ``f_<module>``...).
        """
        if checkpoint is not None and not self.initialized_:
            self.initialize()  # as skorch does for a checkpoint
        with self._skorch_device():
            super().load_params(f_params=f_params, f_optimizer=f_optimizer,
                                f_criterion=f_criterion, f_history=f_history,
                                checkpoint=checkpoint, **kwargs)
            self.device_ = _device_name(self.device)

    def __setstate__(self, state):
        # skorch maps the pickled tensors to ``state["device"]`` (to the CPU, with a
        # DeviceWarning, when CUDA is gone) and stores where they landed there; for "auto"
        # that is the fitted ``device_``, and the parameter is "auto" again afterwards.
        auto = _is_auto(state.get("device"))
        if auto:
            state = {**state, "device": state.get("device_", "cpu")}
        super().__setstate__(state)
        if auto or "device_" in state:
            self.device_ = _device_name(self.device)
        if auto:
            self.device = "auto"

    # ---------------------------------------------------------------- data checks
    def _n_outputs(self, n_classes):
        return n_classes

    def _check_X(self, X, reset):
        X = check_array(X, dtype=np.float32, allow_nd=True, input_name="X")
        X = X.reshape(X.shape[0], -1)
        if reset:
            self.n_features_in_ = X.shape[1]
        elif hasattr(self, "n_features_in_") and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )
        return X

    def _encode(self, y):
        """Class indices (positions in ``classes_``) of the labels ``y``."""
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-D with one label per row; got shape {y.shape}.")
        classes = self.classes_
        sorter = np.argsort(classes, kind="stable")
        pos = np.clip(np.searchsorted(classes, y, sorter=sorter), 0, len(classes) - 1)
        idx = sorter[pos]
        unknown = classes[idx] != y
        if np.any(unknown):
            raise ValueError(
                f"y holds labels {np.unique(y[unknown])[:5].tolist()} that are not in "
                f"classes_ {classes.tolist()}; pass every label in classes=[...] or refit."
            )
        if self._n_outputs(len(classes)) == 1:
            return idx.astype(np.float32)
        return idx.astype(np.int64)

    def _check_fit_data(self, X, y):
        X = self._check_X(X, reset=True)
        y = np.asarray(y)
        if y.shape[:1] != X.shape[:1]:
            raise ValueError(
                f"X and y have different numbers of rows: {X.shape[0]} and {y.shape[0]}."
            )
        if self.classes is None:
            self.classes_inferred_ = np.unique(y)
        n_classes = len(self.classes_)
        if n_classes < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes in y; got {n_classes}."
            )
        return X, y

    # ---------------------------------------------------------------- public API
    def fit(self, X, y, **fit_params):
        """Train from scratch (or continue, with ``warm_start=True``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input rows (images are flattened).
        y : array-like of shape (n_samples,)
            Class labels.
        **fit_params : dict
            Passed to the module's ``forward`` and to ``train_split`` (skorch).

        Returns
        -------
        self : object
            The fitted net.
        """
        if not self.warm_start or not self.initialized_:
            X, y = self._check_fit_data(X, y)
        return super().fit(X, y, **fit_params)

    @Substitution(X_rows=_X_rows_doc)
    def partial_fit(self, X, y=None, classes=None, **fit_params):
        """Train for ``max_epochs`` more epochs without re-initialising.

        {X_rows}
        y : array-like of shape (n_samples,)
            Class labels (in ``classes_``).
        classes : None
            Unused; pass ``classes`` to the constructor instead.
        **fit_params : dict
            Passed to the module's ``forward``.

        Returns
        -------
        self : object
            The fitted net.
        """
        if not self.initialized_:
            X, y = self._check_fit_data(X, y)
            self.initialize()
        X = self._check_X(X, reset=False)
        if y is None:
            raise ValueError(f"{type(self).__name__} needs class labels y; got y=None.")
        y = self._encode(y)
        return super().partial_fit(X, y, **fit_params)

    @Substitution(X_rows=_X_rows_doc)
    def predict_proba(self, X):
        """Class probabilities, columns ordered as ``classes_``.

        {X_rows}

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Softmax (or sigmoid, for a one-logit head) of the module's output.
        """
        return super().predict_proba(self._check_X(X, reset=False))

    @Substitution(X_rows=_X_rows_doc)
    def predict(self, X):
        """Most probable class label of each row.

        {X_rows}

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_`` (a one-logit head thresholds the probability at 0.5).
        """
        return self.classes_[self.predict_proba(X).argmax(axis=1)]


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
