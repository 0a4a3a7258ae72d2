"""Train one small CNN per noise draw of a sweep, all draws at once.

A privacy-utility sweep trains a separate classifier from scratch for every noise draw, with
the same initialisation and minibatch-order seeds (Section 5.1 of [1]_). Those fits differ
only in their input rows, so they can run as one computation: the parameters of the ``M``
models are stacked along a leading axis and one forward pass evaluates all of them with
:func:`torch.func.vmap` over :func:`torch.func.functional_call`. The loss is the sum of the
models' mean losses, so each model's gradient is its own (the Table 2 CNN takes a faster
path: its convolutions become batched products with dense matrices gathered from the
filters); element-wise optimizers (Adam, SGD, RMSprop...) applied to the stacked tensors
update every model exactly as its own optimizer would. The validation split, the shuffling
generator, the seeded initialisation and the best-validation-balanced-accuracy checkpoint
are those of a single
:class:`~skdc.nn.RepresentationCNN` fit, so each returned net matches a sequential fit up to
floating-point summation order.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import copy
import time
from numbers import Integral

import numpy as np
import torch
from sklearn.base import clone
from sklearn.utils import check_random_state
from skorch.dataset import Dataset
from torch.func import functional_call, vmap
from torch.nn import functional as F
from torch.utils.data import DataLoader

from ..utils._progress import progress_bar
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._base import _BaseCNN
from ._callbacks import BestValidCheckpoint
from ._modules import RepresentationModule

__all__ = ["fit_batched"]


def _pooled_conv_index(positions, in_channels, size, kernel, out_channels):
    """Gather index of the dense matrix of a valid convolution followed by 2 x 2 max-pooling.

    A valid ``kernel x kernel`` convolution of an input laid out on ``in_channels x size x
    size`` is a linear map. Column ``(di, dj, o, pi, pj)`` of its matrix is output channel
    ``o`` at pixel ``(2 pi + di, 2 pj + dj)``, so the 2 x 2 max-pool is a maximum over the four
    contiguous ``(di, dj)`` blocks (rows and columns the pool drops are left out). Entry
    ``[p, col]`` (input feature ``p`` at ``positions[p] = (channel, row, col)``) indexes the
    flattened filter bank ``(out_channels, in_channels, kernel, kernel)``, or the extra zero
    entry at its end when ``p`` is outside the receptive field.
    """
    ch, row, col = (np.asarray(a)[:, None] for a in positions)
    pooled = (size - kernel + 1) // 2
    di, dj, o, pi, pj = (a.reshape(1, -1) for a in np.meshgrid(
        [0, 1], [0, 1], np.arange(out_channels), np.arange(pooled), np.arange(pooled),
        indexing="ij"))
    u, v = row - (2 * pi + di), col - (2 * pj + dj)
    valid = (u >= 0) & (u < kernel) & (v >= 0) & (v < kernel)
    per_out = in_channels * kernel * kernel
    index = np.where(valid, o * per_out + ch * kernel * kernel + u * kernel + v,
                     out_channels * per_out)
    return torch.as_tensor(index, dtype=torch.long), pooled


def _inverse_index(index, n_filter):
    """For each filter entry, the flat positions of the dense matrix that copy it.

    Rows are padded with ``index.numel()`` (a zero slot appended to the gradient). The zero
    entry ``n_filter`` itself (outside the receptive field) needs no gradient and is left out.
    """
    flat = index.reshape(-1).cpu().numpy()
    keep = np.flatnonzero(flat < n_filter)
    order = keep[np.argsort(flat[keep], kind="stable")]
    counts = np.bincount(flat[keep], minlength=n_filter)
    inverse = np.full((n_filter, max(int(counts.max()), 1)), flat.size)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for f in np.flatnonzero(counts):
        inverse[f, : counts[f]] = order[starts[f] : starts[f] + counts[f]]
    return torch.as_tensor(inverse, dtype=torch.long)


class _FilterGather(torch.autograd.Function):
    """Dense convolution matrices ``W[:, index]`` gathered from the stacked filters.

    The backward pass sums each filter entry's copies through the precomputed inverse table
    (a gather and a sum), instead of the scatter-add autograd would run for ``W[:, index]``.
    """

    @staticmethod
    def forward(ctx, flat, index, inverse):
        ctx.save_for_backward(inverse)
        ctx.n_dense = index.numel()
        ext = torch.cat([flat, flat.new_zeros(flat.shape[0], 1)], dim=1)
        return ext.index_select(1, index.reshape(-1)).view(flat.shape[0], *index.shape)

    @staticmethod
    def backward(ctx, grad):
        (inverse,) = ctx.saved_tensors
        g = grad.reshape(grad.shape[0], ctx.n_dense)
        g = torch.cat([g, g.new_zeros(g.shape[0], 1)], dim=1)
        picked = g.index_select(1, inverse.reshape(-1)).view(g.shape[0], *inverse.shape)
        return picked.sum(-1), None, None


class _BlockMax(torch.autograd.Function):
    """Element-wise maximum of the four contiguous quarters of the last axis (the 2 x 2 pool).

    Three ``torch.maximum`` calls forward, and a backward that routes the gradient to the
    winning quarter (the first one on ties) with three saved 0/1 masks, by multiplications
    written straight into the quarters of the result: far cheaper on the CPU than the strided
    ``max(dim)`` reduction and its scatter.
    """

    @staticmethod
    def quarters(x):
        """The four contiguous quarters of the last axis, as views."""
        q = x.shape[-1] // 4
        return [x[..., i * q : (i + 1) * q] for i in range(4)]

    @staticmethod
    def pool(x):
        """The maximum without autograd bookkeeping (validation and prediction)."""
        x0, x1, x2, x3 = _BlockMax.quarters(x)
        return torch.maximum(torch.maximum(x0, x1), torch.maximum(x2, x3))

    @staticmethod
    def forward(ctx, x):
        x0, x1, x2, x3 = _BlockMax.quarters(x)
        first, second = torch.maximum(x0, x1), torch.maximum(x2, x3)
        masks = ((x1 > x0).to(x.dtype), (x3 > x2).to(x.dtype), (second > first).to(x.dtype))
        ctx.save_for_backward(*masks)
        return torch.maximum(first, second)

    @staticmethod
    def backward(ctx, grad):
        a, b, c = ctx.saved_tensors
        out = grad.new_empty(*grad.shape[:-1], 4 * grad.shape[-1])
        x0, x1, x2, x3 = _BlockMax.quarters(out)
        high = grad * c
        low = grad - high
        torch.mul(low, a, out=x1)
        torch.sub(low, x1, out=x0)
        torch.mul(high, b, out=x3)
        torch.sub(high, x3, out=x2)
        return out


class _StackedRepresentationForward:
    """All draws' :class:`RepresentationModule` forward passes as batched matrix products.

    Each valid convolution of Table 2 (with the row layout and zero padding folded into the
    first one) is a linear map whose matrix is gathered from the filter weights; its columns
    are ordered so that the 2 x 2 max-pool is a maximum over four contiguous blocks, and the
    bias and ReLU, which commute with that maximum, are applied after it. A minibatch of ``M``
    models is then a few ``torch.bmm`` calls: the same function as the module (up to float
    summation order), with far less memory traffic than ``M`` small convolutions. Gradients
    reach the filters through the gather.
    """

    def __init__(self, module, device):
        self.n_outputs = module.n_outputs
        k = module.conv1.kernel_size[0]
        side, (left, right, top, _) = module.side, module.pad
        size = side + left + right
        n = module.n_features
        p = np.arange(n)
        c1, c2 = module.conv1.out_channels, module.conv2.out_channels
        index1, p1 = _pooled_conv_index((np.zeros(n, int), p // side + top, p % side + left),
                                        1, size, k, c1)
        q = np.arange(c1 * p1 * p1)
        c, rest = np.divmod(q, p1 * p1)
        index2, p2 = _pooled_conv_index((c, rest // p1, rest % p1), c1, p1, k, c2)
        self.index1, self.index2 = index1.to(device), index2.to(device)
        self.inverse1 = _inverse_index(index1, c1 * k * k).to(device)
        self.inverse2 = _inverse_index(index2, c2 * c1 * k * k).to(device)
        self.rep1, self.rep2 = p1 * p1, p2 * p2
        # widest intermediate per row and model: the first convolution before pooling
        self.row_width = index1.shape[1]

    @staticmethod
    def _conv_pool(h, weight, bias, index, inverse, rep):
        dense = _FilterGather.apply(weight.reshape(weight.shape[0], -1), index, inverse)
        out = torch.bmm(h, dense)  # (M, B, 4 * O * P * P)
        out = _BlockMax.apply(out) if torch.is_grad_enabled() else _BlockMax.pool(out)
        return F.relu(out + bias.repeat_interleave(rep, dim=1)[:, None, :])

    def __call__(self, params, buffers, X):
        h = self._conv_pool(X, params["conv1.weight"], params["conv1.bias"], self.index1,
                            self.inverse1, self.rep1)
        h = self._conv_pool(h, params["conv2.weight"], params["conv2.bias"], self.index2,
                            self.inverse2, self.rep2)
        h = F.relu(torch.baddbmm(params["fc.bias"][:, None, :], h,
                                 params["fc.weight"].transpose(1, 2)))
        out = torch.baddbmm(params["out.bias"][:, None, :], h,
                            params["out.weight"].transpose(1, 2))
        return out.squeeze(-1) if self.n_outputs == 1 else out


def _stacked_forward(module, device):
    """Forward pass of ``M`` stacked copies of ``module``: ``f(params, buffers, X[M, B, n])``."""
    if type(module) is RepresentationModule and module.conv1.stride == (1, 1):
        return _StackedRepresentationForward(module, device)
    skeleton = copy.deepcopy(module).to("meta")

    def _one(p, b, x):
        return functional_call(skeleton, (p, b), (x,))

    return vmap(_one, in_dims=(0, 0, 0))


# On the CPU the models of one minibatch step are run a few at a time, so that the widest
# intermediate (models x rows x pre-pool width, float32) stays about this many elements, near
# the cache: the step is bound by memory traffic more than arithmetic. In
# benchmarks/bench_sweep.py's setting (batch 256, pre-pool width 1440) that is 11 models, and a
# step of 50 models takes 94 ms against 132 ms all at once. A GPU takes all models at once.
_CPU_GROUP_ELEMENTS = 2**22


def _model_group(forward, device, n_models, batch_size):
    """How many models one forward/backward pass of a minibatch step handles."""
    width = getattr(forward, "row_width", None)
    if torch.device(device).type != "cpu" or width is None:
        return n_models
    return int(min(n_models, max(1, _CPU_GROUP_ELEMENTS // (batch_size * width))))


def _balanced_accuracies(y_true, pred):
    """Balanced accuracy of each row of ``pred`` (models x rows) against ``y_true``, at once.

    The mean over the classes present in ``y_true`` of the per-class recall, as
    :func:`sklearn.metrics.balanced_accuracy_score` (without its adjustment) computes it.
    """
    y_true = np.asarray(y_true, dtype=np.int64)
    support = np.bincount(y_true).astype(float)
    hits = np.zeros((pred.shape[0], support.size))
    for c in np.flatnonzero(support):
        hits[:, c] = (pred[:, y_true == c] == c).sum(axis=1)
    present = support > 0
    return (hits[:, present] / support[present]).mean(axis=1)


def _check_stack(X, name):
    if isinstance(X, np.ndarray) and X.ndim == 3:
        arrays = list(X)
    else:
        arrays = [np.asarray(x) for x in X]
    if not arrays:
        raise ValueError(f"{name} holds no draws; pass a list of (n_samples, n_features) arrays.")
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1 or len(arrays[0].shape) != 2:
        raise ValueError(
            f"Every draw of {name} must be a 2-D array of the same shape; got shapes "
            f"{sorted(shapes)[:4]}."
        )
    stack = np.stack(arrays).astype(np.float32)
    if not np.isfinite(stack).all():
        raise ValueError(f"{name} contains NaN or infinity.")
    return stack


def _split_indices(net, y):
    """Train and validation positions chosen by the net's ``train_split``, as skorch does."""
    n = y.shape[0]
    if net.train_split is None:
        return np.arange(n), None
    ds_train, ds_valid = net.train_split(Dataset(np.arange(n)[:, None], y), y)
    return np.asarray(ds_train.indices), np.asarray(ds_valid.indices)


def _check_template(estimator):
    if not isinstance(estimator, _BaseCNN):
        raise TypeError(
            "fit_batched trains skdc.nn nets (RepresentationCNN, LinkageAuditor); got "
            f"{type(estimator).__name__}."
        )
    if isinstance(estimator.random_state, np.random.RandomState):
        raise ValueError(
            "fit_batched gives every draw the same seeds, which a RandomState instance cannot "
            "do; pass random_state=<int> (or None)."
        )


def _seeded_template(estimator, X, y):
    """One net, fitted in the sense of having seeds, device, classes and a module."""
    proto = clone(estimator)
    if proto.random_state is None:
        proto.random_state = int(check_random_state(None).randint(2**31 - 1))
    proto._check_fit_data(X[0], y)
    proto.initialize()
    return proto


def _train_and_valid_rows(proto, X, y, X_valid, y_valid):
    """Training rows of every draw, and the validation rows (``None``: no validation)."""
    y_enc = proto._encode(y)
    if X_valid is None:
        train_idx, valid_idx = _split_indices(proto, y_enc)
        if valid_idx is None:
            return X[:, train_idx], y_enc[train_idx], None, None
        return X[:, train_idx], y_enc[train_idx], X[:, valid_idx], y_enc[valid_idx]
    Xv = _check_stack(X_valid, "X_valid")
    if Xv.shape[0] != X.shape[0] or Xv.shape[2] != X.shape[2]:
        raise ValueError(
            f"X_valid must hold {X.shape[0]} draws of {X.shape[2]} features; got shape "
            f"{Xv.shape}."
        )
    return X, y_enc, Xv, proto._encode(y_valid)


@validate_params(
    {
        "estimator": "no_validation",  # checked by _check_template, with its own message
        "X": ["array-like"],
        "y": ["array-like"],
        "X_valid": [None, "array-like"],
        "y_valid": [None, "array-like"],
        "chunk_size": [None, Interval(Integral, 1, None, closed="left")],
        "progress": ["boolean", StrOptions({"auto"})],
    },
    prefer_skip_nested_validation=True,
)
def fit_batched(estimator, X, y, *, X_valid=None, y_valid=None, chunk_size=None,
                progress="auto"):
    """Fit one clone of ``estimator`` per draw of ``X``, all draws trained together.

    Read more in the :ref:`User Guide <experiments>`.

    Each draw ``X[m]`` (the rows a sweep produced for noise draw ``m``, the same rows in the
    same order for every draw) gets its own model, trained from the estimator's seeded
    initialisation with its minibatch order, optimizer, epochs and best-validation-balanced-
    accuracy checkpoint, exactly as ``clone(estimator).fit(X[m], y)`` would; the models just
    share every pass over the data (:func:`torch.func.vmap` over stacked parameters).

    Parameters
    ----------
    estimator : RepresentationCNN or LinkageAuditor
        Unfitted template; its ``random_state`` must not be a ``RandomState`` instance
        (every draw uses the same seeds, as in the paper).
    X : ndarray of shape (n_draws, n_samples, n_features) or list of 2-D arrays
        One input matrix per draw.
    y : array-like of shape (n_samples,)
        Labels, shared by every draw.
    X_valid : ndarray of shape (n_draws, n_valid, n_features) or list, default=None
        Validation rows per draw; ``None`` holds out rows with the estimator's
        ``train_split`` (no validation, and the last epoch kept, when that is ``None``).
    y_valid : array-like of shape (n_valid,), default=None
        Validation labels (with ``X_valid``).
    chunk_size : int or None, default=None
        Train this many draws at a time to bound memory (``None``: all at once).
    progress : bool or "auto", default="auto"
        A tqdm progress bar over the epochs; ``"auto"`` shows it when standard error is a
        terminal.

    Returns
    -------
    nets : list of fitted estimators
        ``nets[m]`` is a fitted clone of ``estimator`` for draw ``m``, with ``module_``,
        ``classes_``, ``best_epoch_``, ``best_valid_balanced_accuracy_`` and a ``history_``
        holding ``train_loss`` and ``valid_bacc`` per epoch.

    Notes
    -----
    Optimizers must act element-wise on parameters (Adam, AdamW, SGD, RMSprop...), which is
    what makes the stacked update equal to independent updates. For
    :class:`RepresentationModule` the stacked forward pass writes each convolution as a dense
    matrix gathered from the filters (pooling becomes a maximum over contiguous blocks), so a
    minibatch of all draws is a few batched matrix products; other modules run through
    :func:`torch.func.vmap`. On CUDA the whole sweep of small CNNs runs as a few large
    kernels instead of many tiny ones; on the CPU the models of a step run a few at a time, so
    that the widest intermediate stays near the cache (``benchmarks/bench_sweep.py``: 50 digits
    draws train about 3x faster than 50 sequential fits on 2 cores).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from skdc.nn import RepresentationCNN, fit_batched
    >>> X, y = load_digits(return_X_y=True)
    >>> rng = np.random.RandomState(0)
    >>> draws = [X[:300] / 16 + s * rng.randn(300, 64) for s in (0.0, 0.5, 1.0)]
    >>> template = RepresentationCNN(max_epochs=2, device="cpu", random_state=0)
    >>> nets = fit_batched(template, draws, y[:300])
    >>> len(nets), nets[0].predict(X[:3] / 16).shape
    (3, (3,))
    """
    _check_template(estimator)
    X = _check_stack(X, "X")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[1]:
        raise ValueError(
            f"y must be 1-D with one label per row of each draw ({X.shape[1]} rows); got "
            f"shape {y.shape}."
        )
    if (X_valid is None) != (y_valid is None):
        raise ValueError("Pass X_valid and y_valid together, or neither.")

    proto = _seeded_template(estimator, X, y)
    Xt, yt, Xv, yv = _train_and_valid_rows(proto, X, y, X_valid, y_valid)
    n_draws = X.shape[0]
    step = n_draws if chunk_size is None else int(chunk_size)
    nets = []
    for start in range(0, n_draws, step):
        stop = min(start + step, n_draws)
        sub_valid = None if Xv is None else Xv[start:stop]
        nets.extend(_train_chunk(proto, estimator, Xt[start:stop], yt, sub_valid, yv,
                                 progress))
    return nets


# Why fit_batched has its own epoch loop. skorch's ``fit_loop`` runs one net: its
# ``train_step`` calls that net's optimizer on that net's batch, and its callbacks see one
# ``module_``. Here the ``M`` nets of a chunk are one set of stacked tensors, trained by one
# optimizer in one loop (that is what makes the sweep fast), so the loop below is the
# stacked form of skorch's: the same minibatch order (a DataLoader over row positions with the
# net's seeded generator), the train loss skorch's ``PassthroughScoring`` averages, the
# validation balanced accuracy with ``EpochScoring``'s strict "better than the best so far"
# rule, and a checkpoint of the best epoch's weights. Running each net's own callbacks
# instead would mean ``M`` separate validation passes and ``M`` weight copies every epoch
# (and skorch's ``Checkpoint`` writes files, where the nets keep their best weights in memory).
# What is per net is skorch's: each returned net records its epochs in its own
# ``skorch.history.History``, and :class:`BestValidCheckpoint`'s ``on_train_end`` restores the
# kept weights and sets ``best_epoch_`` / ``best_valid_balanced_accuracy_``, as in a fit.


def _stacked_copies(tensors, n_models, device):
    """``n_models`` copies of each tensor along a new leading axis, on ``device``."""
    return {k: v.detach().to(device).unsqueeze(0).repeat(n_models, *([1] * v.ndim))
            for k, v in tensors}


def _order_loader(proto, n_rows):
    """The net's training minibatch order: a DataLoader over row positions, seeded as skorch's.

    Returns the loader and its batch size.
    """
    generator = torch.Generator().manual_seed(proto.order_seed_)
    it_kwargs = proto.get_params_for("iterator_train")
    batch_size = it_kwargs.pop("batch_size", proto.batch_size)
    if batch_size == -1:
        batch_size = n_rows
    shuffle = it_kwargs.pop("shuffle", True)
    loader = DataLoader(torch.arange(n_rows), batch_size=batch_size, shuffle=shuffle,
                        generator=generator if shuffle else None,
                        drop_last=it_kwargs.get("drop_last", False))
    return loader, batch_size


def _valid_batch_size(proto, n_valid):
    batch_size = proto.get_params_for("iterator_valid").get("batch_size", proto.batch_size)
    return n_valid if batch_size == -1 else batch_size


class _StackedNets:
    """The ``M`` models of a chunk: stacked copies of the one seeded initialisation.

    The paper gives every draw the same initialisation; one optimizer over the stacked
    tensors updates each model as its own optimizer would (element-wise optimizers). A step
    runs the models ``group`` at a time (:func:`_model_group`).
    """

    def __init__(self, proto, n_models, device, batch_size):
        base = proto.module_
        self.n_models = n_models
        self.params = {k: v.requires_grad_(True) for k, v in
                       _stacked_copies(base.named_parameters(), n_models, device).items()}
        self.buffers = _stacked_copies(base.named_buffers(), n_models, device)
        self.forward = _stacked_forward(base, device)
        criterion = copy.deepcopy(proto.criterion_).to(device)
        # one loss per model (each the criterion's mean over the batch), in one vectorised call
        self.losses_of = vmap(criterion, in_dims=(0, None))
        args, kwargs = proto.get_params_for_optimizer("optimizer", list(self.params.items()))
        self.optimizer = proto.optimizer(*args, **kwargs)
        self.group = _model_group(self.forward, device, n_models, batch_size)

    def _forward_groups(self, X):
        """The stacked outputs on ``X[M, B, n]``, one model group at a time."""
        for g0 in range(0, self.n_models, self.group):
            part = slice(g0, g0 + self.group)
            yield part, self.forward({k: v[part] for k, v in self.params.items()},
                                     {k: v[part] for k, v in self.buffers.items()}, X[part])

    def train_step(self, xb, yb):
        """One optimizer step of every model on its batch; each model's mean batch loss."""
        losses = np.zeros(self.n_models, dtype=np.float32)
        self.optimizer.zero_grad(set_to_none=True)
        for part, out in self._forward_groups(xb):
            batch_losses = self.losses_of(out, yb)
            batch_losses.sum().backward()  # each model's gradient lands in its own slice
            losses[part] = batch_losses.detach().cpu().numpy()
        self.optimizer.step()
        return losses

    def train_epoch(self, loader, Xt, yt):
        """One pass over the training rows; each model's mean train loss (skorch's)."""
        total = np.zeros(self.n_models)
        seen = 0
        for idx in loader:
            idx_dev = idx.to(Xt.device)
            total += self.train_step(Xt.index_select(1, idx_dev),
                                     yt.index_select(0, idx_dev)) * len(idx)
            seen += len(idx)
        return total / max(seen, 1)

    @torch.no_grad()
    def predict(self, X, batch_size, binary):
        """Class indices of every model on its rows ``X[M, n_rows, n]`` (models x rows)."""
        preds = []
        for s in range(0, X.shape[1], batch_size):
            rows = [(out > 0).long() if binary else out.argmax(-1)
                    for _, out in self._forward_groups(X[:, s:s + batch_size])]
            preds.append(torch.cat(rows, dim=0))
        return torch.cat(preds, dim=1).cpu().numpy()


class _StackedCheckpoint:
    """Best validation epoch of each stacked model, and a copy of its weights.

    The stacked form of :class:`BestValidCheckpoint`: the copy of the improving models is one
    masked ``torch.where`` over the stack.
    """

    def __init__(self, params):
        n_models = next(iter(params.values())).shape[0]
        self.best = {k: v.detach().clone() for k, v in params.items()}
        self.score = np.full(n_models, -np.inf)
        self.epoch = np.zeros(n_models, dtype=int)  # 0: not improved yet

    def update(self, epoch, scores, params):
        improved = scores > self.score  # strict, as skorch's EpochScoring
        if improved.any():
            mask = torch.as_tensor(improved, device=next(iter(params.values())).device)
            for k, v in params.items():
                shape = mask.shape + (1,) * (v.ndim - 1)
                self.best[k] = torch.where(mask.reshape(shape), v.detach(), self.best[k])
            self.score[improved] = scores[improved]
            self.epoch[improved] = epoch + 1
        return improved

    def restore(self, net, m, buffers):
        """Load model ``m``'s best weights into ``net`` (:class:`BestValidCheckpoint`)."""
        callback = BestValidCheckpoint().initialize()
        if self.epoch[m]:
            callback.best_state_ = {k: v[m] for k, v in self.best.items()}
            callback.best_state_.update({k: v[m] for k, v in buffers.items()})
            callback.best_epoch_, callback.best_score_ = int(self.epoch[m]), float(self.score[m])
        callback.on_train_end(net)


class _EpochLog:
    """Every model's per-epoch numbers, as the net's default callbacks name them."""

    def __init__(self, max_epochs, n_models, validated):
        self.validated = validated
        self.train_loss = np.zeros((max_epochs, n_models))
        self.valid_bacc = np.full((max_epochs, n_models), np.nan)
        self.valid_bacc_best = np.zeros((max_epochs, n_models), dtype=bool)
        self.dur = np.zeros(max_epochs)

    def record(self, history, m):
        """Write model ``m``'s epochs into its net's ``skorch.history.History``."""
        for e in range(self.dur.size):
            history.new_epoch()
            history.record("epoch", e + 1)
            history.record("train_loss", float(self.train_loss[e, m]))
            if self.validated:
                history.record("valid_bacc", float(self.valid_bacc[e, m]))
                history.record("valid_bacc_best", bool(self.valid_bacc_best[e, m]))
            history.record("dur", float(self.dur[e]))


def _net_of_draw(proto, estimator, nets, m):
    """A fitted clone of ``estimator`` holding model ``m``'s last weights."""
    net = clone(estimator)
    net.set_params(random_state=proto.random_state)
    if proto.classes is None:
        net.classes_inferred_ = proto.classes_inferred_
    net.n_features_in_ = proto.n_features_in_
    net.initialize()
    state = {k: v.detach()[m] for k, v in nets.params.items()}
    state.update({k: v[m] for k, v in nets.buffers.items()})
    net.module_.load_state_dict(state)
    return net


def _train_chunk(proto, estimator, Xt, yt, Xv, yv, progress):
    """Train one net per draw of ``Xt`` (draws x rows x features) together; the fitted nets."""
    device = proto.device_ if proto.device_ is not None else "cpu"
    n_models = Xt.shape[0]
    loader, batch_size = _order_loader(proto, len(yt))
    nets = _StackedNets(proto, n_models, device, batch_size)
    checkpoint = _StackedCheckpoint(nets.params)
    log = _EpochLog(proto.max_epochs, n_models, validated=Xv is not None)
    Xt_dev, yt_dev = torch.as_tensor(Xt, device=device), torch.as_tensor(yt, device=device)
    Xv_dev = None if Xv is None else torch.as_tensor(Xv, device=device)
    binary = yt.dtype == np.float32
    valid_batch = None if Xv is None else _valid_batch_size(proto, Xv.shape[1])

    epochs = progress_bar(range(proto.max_epochs), progress, unit="epoch",
                          desc=f"training {n_models} draws' nets")
    for epoch in epochs:
        tic = time.perf_counter()
        log.train_loss[epoch] = nets.train_epoch(loader, Xt_dev, yt_dev)
        if Xv_dev is not None:
            pred = nets.predict(Xv_dev, valid_batch, binary)
            log.valid_bacc[epoch] = _balanced_accuracies(yv, pred)
            log.valid_bacc_best[epoch] = checkpoint.update(epoch, log.valid_bacc[epoch],
                                                           nets.params)
        log.dur[epoch] = time.perf_counter() - tic

    fitted = []
    for m in range(n_models):
        net = _net_of_draw(proto, estimator, nets, m)
        log.record(net.history, m)
        checkpoint.restore(net, m, nets.buffers)
        fitted.append(net)
    return fitted
