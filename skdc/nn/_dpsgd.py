"""Poisson-subsampled DP-SGD for any skorch ``NeuralNet``, with Opacus' per-sample machinery.

:class:`DPSGDMixin` turns a skorch net class into a DP-SGD one: the module is wrapped in Opacus'
``GradSampleModule`` (per-sample gradients), the optimizer in ``DPOptimizer`` (per-sample
clipping to ``max_grad_norm`` and Gaussian noise of std ``noise_multiplier * max_grad_norm``),
and the training iterator draws Poisson batches (:class:`PoissonBatchLoader`: each record joins
each batch independently with probability ``q``), the sampling scheme both the leakage theorem
(Theorem 4.1 of Bourne and Allison, 2026) and the RDP analysis assume. The net records the run's
actual ``(q, sigma, steps)``; :meth:`DPSGDMixin.privacy_spent` reports the leakage in bits and
``(epsilon, delta)``, which matches Opacus' RDP accountant on the same history (or, with
``accountant="prv"``, is Opacus' PRV accountant's).

Opacus is an optional dependency (``pip install skdc[dp]``): this module imports torch, skorch
and Opacus, and :mod:`skdc.nn` loads it only when one of its names is used. The accounting is
:class:`skdc.privacy.DPSGDLeakageAccountant`'s, which needs none of them.
"""

# Licence: BSD 3 clause

import math

import numpy as np
import torch
from torch.utils.data import default_collate

from ..privacy import DPSGDLeakageAccountant
from ..utils._sklearn_compat import validate_params
from ..utils._validation import check_delta, check_positive, check_rate

__all__ = ["DPSGDMixin", "PoissonBatchLoader", "make_dpsgd_net"]


def _empty_like_batch(batch):
    if isinstance(batch, torch.Tensor):
        return batch[:0]
    if isinstance(batch, (list, tuple)):
        return type(batch)(_empty_like_batch(b) for b in batch)
    if isinstance(batch, dict):
        return {k: _empty_like_batch(v) for k, v in batch.items()}
    return batch


class PoissonBatchLoader:
    """Poisson-sampled training batches: record ``i`` joins each batch with probability ``q``.

    Read more in the :ref:`User Guide <leakage_bits>`.

    A drop-in ``iterator_train`` for skorch. An "epoch" is ``steps`` batches (default
    ``round(1 / q)``, one pass in expectation). Batches may be empty; they still count as a
    (noise-only) step.

    Parameters
    ----------
    dataset : torch Dataset
        The training data.
    batch_size : int, default=128
        Expected batch size; sets ``q = batch_size / len(dataset)`` when ``sample_rate`` is None.
    sample_rate : float or None, default=None
        ``q`` in (0, 1].
    steps : int or None, default=None
        Batches per pass.
    generator : numpy Generator or None, default=None
        Source of the sampling (fresh OS entropy if None).
    """

    def __init__(self, dataset, batch_size=128, sample_rate=None, steps=None, generator=None,
                 **kwargs):
        self.dataset = dataset
        n = len(dataset)
        q = sample_rate if sample_rate is not None else min(1.0, batch_size / n)
        self.sample_rate = check_rate(q)
        self.steps = int(steps) if steps is not None else max(1, round(1 / self.sample_rate))
        self.generator = generator if generator is not None else np.random.default_rng()

    def __len__(self):
        return self.steps

    def __iter__(self):
        n = len(self.dataset)
        template = None
        for _ in range(self.steps):
            idx = np.flatnonzero(self.generator.random(n) < self.sample_rate)
            if idx.size == 0:
                if template is None:
                    template = _empty_like_batch(default_collate([self.dataset[0]]))
                yield template
                continue
            yield default_collate([self.dataset[int(i)] for i in idx])


class DPSGDMixin:
    """Mixin giving a skorch net Poisson-subsampled DP-SGD (per-sample clipping + noise).

    Read more in the :ref:`User Guide <leakage_bits>`.

    Put it first in the bases: ``class DPNet(DPSGDMixin, NeuralNetClassifier)`` (or use
    :func:`make_dpsgd_net`). The module must support per-sample gradients (no BatchNorm; use
    GroupNorm) and the criterion must average over the batch (skorch's default).

    Parameters
    ----------
    *args, **kwargs
        The skorch net's own parameters.
    noise_multiplier : float, default=1.0
        ``sigma``: noise std over the clipping norm.
    max_grad_norm : float, default=1.0
        Per-sample clipping norm ``C``.
    sample_rate : float or None, default=None
        Poisson rate ``q``; ``batch_size / n_train`` when None.
    dp_delta : float, default=1e-5
        ``delta`` at which ``epsilon`` is reported in the history.
    dp_random_state : int or None, default=None
        Seeds batch sampling and the DP noise (fresh OS entropy if None, as deployments should).

    Attributes
    ----------
    dp_runs_ : list of dict
        ``{"q", "sigma", "steps"}`` per ``fit`` / ``partial_fit`` call, counted from the steps
        actually taken.

    Notes
    -----
    The guarantee covers the rows DP-SGD trains on. Rows that the net's ``train_split`` holds
    out for validation are not trained on, but a callback that keeps the best-validation
    epoch (as :class:`~skdc.nn.RepresentationCNN` does) looks at them without noise: they get
    no guarantee. When every row is protected, pass ``train_split=None`` or a public
    validation set (``skorch.helper.predefined_split``).
    """

    def __init__(self, *args, noise_multiplier=1.0, max_grad_norm=1.0, sample_rate=None,
                 dp_delta=1e-5, dp_random_state=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.noise_multiplier = noise_multiplier
        self.max_grad_norm = max_grad_norm
        self.sample_rate = sample_rate
        self.dp_delta = dp_delta
        self.dp_random_state = dp_random_state

    # -- wiring ----------------------------------------------------------------------------
    def _dp_generators(self):
        if "_dp_np_gen" not in self.__dict__:
            seq = np.random.SeedSequence(self.dp_random_state)
            a, b = seq.spawn(2)
            self._dp_np_gen = np.random.default_rng(a)
            # torch's generators take a 64-bit seed: the widest the noise stream can get
            self._dp_torch_seed = int(b.generate_state(1, np.uint64)[0])
        return self._dp_np_gen

    def _noise_device(self):
        # the noise generator must live where the parameters are; skdc.nn nets take
        # device="auto" and resolve it at fit time into device_, which torch understands
        dev = self.__dict__.get("device_", self.device)
        if dev is None:
            return "cpu"
        if isinstance(dev, str) and dev == "auto":
            return "cuda" if torch.cuda.is_available() else "cpu"
        return str(dev)

    def initialize_module(self):
        from opacus import GradSampleModule

        super().initialize_module()
        if not isinstance(self.module_, GradSampleModule):
            self.module_ = GradSampleModule(self.module_, loss_reduction="mean")
        return self

    def initialize_optimizer(self, *args, **kwargs):
        from opacus.optimizers import DPOptimizer

        check_positive(self.noise_multiplier, "noise_multiplier")
        check_positive(self.max_grad_norm, "max_grad_norm")
        super().initialize_optimizer(*args, **kwargs)
        self._dp_generators()
        gen = torch.Generator(device=self._noise_device())
        gen.manual_seed(self._dp_torch_seed)
        self.optimizer_ = DPOptimizer(
            self.optimizer_, noise_multiplier=float(self.noise_multiplier),
            max_grad_norm=float(self.max_grad_norm), expected_batch_size=1,
            loss_reduction="mean", generator=gen,
        )
        return self

    def get_iterator(self, dataset, training=False):
        if not training:
            return super().get_iterator(dataset, training=False)
        n = len(dataset)
        # a net that derives its batch from the rows (batch_size="auto") keeps it in batch_size_
        batch = getattr(self, "batch_size_", self.batch_size)
        q = self.sample_rate if self.sample_rate is not None else min(1.0, batch / n)
        q = check_rate(q)
        # DPOptimizer divides the noisy sum by the *expected* batch size q n
        self.optimizer_.expected_batch_size = q * n
        runs = self.__dict__.setdefault("dp_runs_", [])
        sigma = float(self.noise_multiplier)
        cur = self.__dict__.get("_dp_current")
        if cur is None or cur["q"] != q or cur["sigma"] != sigma:
            cur = {"q": q, "sigma": sigma, "steps": 0}
            runs.append(cur)
            self._dp_current = cur
        return PoissonBatchLoader(dataset, sample_rate=q, generator=self._dp_generators())

    def train_step(self, batch, **fit_params):
        out = super().train_step(batch, **fit_params)
        self._dp_current["steps"] += 1  # every Poisson draw is a noisy step, empty or not
        return out

    def partial_fit(self, X, y=None, classes=None, **fit_params):
        self.__dict__.setdefault("dp_runs_", [])
        self._dp_current = None
        try:
            return super().partial_fit(X, y, classes=classes, **fit_params)
        finally:
            self.dp_runs_ = [r for r in self.dp_runs_ if r["steps"] > 0]
            self._dp_current = None

    def fit(self, X, y=None, **fit_params):
        if not self.warm_start or not self.initialized_:
            self.dp_runs_ = []  # a fresh model: its trajectory starts here
        return super().fit(X, y, **fit_params)

    def notify(self, method_name, **cb_kwargs):
        super().notify(method_name, **cb_kwargs)
        if method_name == "on_epoch_end" and self.__dict__.get("dp_runs_"):
            spent = self.privacy_spent(self.dp_delta)
            self.history.record("dp_epsilon", spent["eps"])
            self.history.record("dp_leakage_bits", spent["leakage_bits"])

    # -- pickling: store the plain module and optimizer, re-wrap on load ----------------------
    def __getstate__(self):
        from opacus import GradSampleModule

        saved = {}
        if isinstance(self.__dict__.get("module_"), GradSampleModule):
            saved["module_"] = self.module_
            self.module_.remove_hooks()  # the plain module pickles; hooks are re-added below
            self.module_ = self.module_._module
        if hasattr(self.__dict__.get("optimizer_"), "original_optimizer"):
            saved["optimizer_"] = self.optimizer_
            self.optimizer_ = self.optimizer_.original_optimizer
        try:
            state = super().__getstate__()
        finally:
            self.__dict__.update(saved)
            if "module_" in saved:
                self.module_.add_hooks(loss_reduction="mean")
        state["_dp_wrapped"] = bool(saved)
        return state

    def __setstate__(self, state):
        from opacus import GradSampleModule
        from opacus.optimizers import DPOptimizer

        wrapped = state.pop("_dp_wrapped", False)
        super().__setstate__(state)
        if wrapped:
            self.module_ = GradSampleModule(self.module_, loss_reduction="mean")
            # fresh noise after a reload: replaying the saved stream would correlate noise
            gen = torch.Generator(device=self._noise_device())
            gen.manual_seed(int(np.random.SeedSequence().generate_state(1, np.uint64)[0]))
            self.optimizer_ = DPOptimizer(
                self.optimizer_, noise_multiplier=float(self.noise_multiplier),
                max_grad_norm=float(self.max_grad_norm), expected_batch_size=1,
                loss_reduction="mean", generator=gen,
            )
            self._dp_np_gen = np.random.default_rng()

    # -- accounting --------------------------------------------------------------------------
    def dp_accountant(self):
        """A :class:`skdc.privacy.DPSGDLeakageAccountant` holding every recorded run."""
        acct = DPSGDLeakageAccountant()
        for r in self.__dict__.get("dp_runs_", []):
            if r["steps"]:
                acct.add_run(r["q"], r["sigma"], r["steps"])
        return acct

    def privacy_spent(self, delta=None, accountant="rdp"):
        """``{"eps", "delta", "alpha", "leakage_bits", "runs"}`` of all recorded runs.

        ``eps`` is the epsilon of :meth:`skdc.privacy.DPSGDLeakageAccountant.epsilon`: by
        default the RDP-accounted one (Opacus' orders and conversion; ``alpha`` its order), with
        ``accountant="prv"`` Opacus' tighter PRV accountant (``alpha`` is then ``nan``), the
        one the reconstruction-bound paper calibrates with
        (:func:`skdc.privacy.calibrate_sigma`).
        ``leakage_bits`` is the per-record leakage bound of Theorem 4.1 (Bourne and Allison).
        The per-epoch history records the RDP epsilon.
        """
        delta = check_delta(self.dp_delta if delta is None else delta)
        acct = self.dp_accountant()
        if not acct.__dict__.get("runs_"):
            return {"eps": 0.0, "delta": delta, "alpha": math.nan, "leakage_bits": 0.0,
                    "runs": []}
        eps, alpha = acct.epsilon(delta, accountant=accountant)
        return {"eps": eps, "delta": delta, "alpha": alpha,
                "leakage_bits": acct.leakage_bits_, "runs": list(acct.runs_)}


@validate_params({"net_class": [type]}, prefer_skip_nested_validation=True)
def make_dpsgd_net(net_class):
    """A DP-SGD subclass of a skorch net class: ``make_dpsgd_net(NeuralNetClassifier)``.

    Read more in the :ref:`User Guide <leakage_bits>`.

    The class is registered in this module under ``DPSGD<name>`` so that fitted nets pickle.

    Examples
    --------
    >>> from skorch import NeuralNetClassifier
    >>> from skdc.nn import make_dpsgd_net
    >>> DPNet = make_dpsgd_net(NeuralNetClassifier)
    >>> DPNet.__name__, DPNet is make_dpsgd_net(NeuralNetClassifier)
    ('DPSGDNeuralNetClassifier', True)
    """
    name = f"DPSGD{net_class.__name__}"
    cls = globals().get(name)
    if cls is None or cls.__mro__[2] is not net_class:
        cls = type(name, (DPSGDMixin, net_class), {"__module__": __name__})
        globals()[name] = cls
    return cls
