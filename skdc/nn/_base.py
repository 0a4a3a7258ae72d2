"""What the skdc nets share: ``_BaseCNN``, the skorch classifier under both nets of ``_net.py``
(and under every net :func:`~skdc.nn.fit_batched` trains).

* **device**: ``device="auto"`` trains on CUDA when torch sees a device; the choice is made at
  fit time and stored in ``device_``, while the parameter stays ``"auto"`` (skorch's own
  methods run on ``device_`` inside ``_BaseCNN._skorch_device``);
* **seeds**: initialisation and minibatch order come from ``random_state``
  (``init_seed_``, ``order_seed_``), so that every noise draw of a sweep starts from the same
  weights and sees the same batches (Section 5.1 of [1]_: "all fits use the same
  deterministic initialization and minibatch-order seeds");
* **data**: images are flattened rows, labels are coded as positions in ``classes_``, and the
  default callbacks score each epoch's validation balanced accuracy and keep the best epoch
  (``_callbacks.py``).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from contextlib import contextmanager

import numpy as np
import torch
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array
from skorch import NeuralNetClassifier
from skorch.callbacks import EpochTimer, PassthroughScoring, PrintLog
from skorch.exceptions import NotInitializedError
from skorch.utils import to_tensor

from ..utils._device import resolve_device
from ..utils._docstring import Substitution
from ._callbacks import BestValidCheckpoint, _valid_balanced_accuracy, _ValidScoring

__all__ = ["resolve_device"]

_SEED_MAX = 2**31 - 1

# docstring fragments shared by the nets' docstrings (skdc.utils._docstring.Substitution)
_X_rows_doc = """\
        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Input rows.
"""


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
