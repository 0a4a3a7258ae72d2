"""Privacy accounting and guarantees: leakage accountants, the reconstruction lower bound,
DP-SGD training support and the Renyi DP of Gaussian sketches.

Nothing here imports torch or Opacus at import time; the DP-SGD helpers load them lazily.
"""

from ._bound import (
    ReconstructionBound,
    bound_slack_score,
    make_bound_scorer,
    make_slack_scorer,
    mechanism_leakage_bits,
    reconstruction_ratio_score,
    shannon_lower_bound,
)
from ._codebook import CodebookRelease
from ._entropy import (
    BlockEntropyLowerBound,
    mc_constant,
    mc_margin,
    plugin_entropy,
    sampling_margin,
    trace_ucb,
)
from ._gaussmix_rdp import (
    GaussMixAccountant,
    RDPCurve,
    adaptive_threshold,
    gaussmix_epsilon,
    gaussmix_rdp,
    paper_budget,
)
from ._hadamard import apply_hadamard, hadamard, hadamard_factors, hadamard_order
from ._leakage import (
    DPSGDLeakageAccountant,
    GaussianReleaseLeakage,
    GaussMixLeakage,
    binary_symmetric_leakage,
    calibrate_sigma,
    rdp_to_dp,
    subsampled_gaussian_kl,
    subsampled_gaussian_rdp,
)
from ._likelihood_attack import PriorAwareLikelihoodAttack

__all__ = [
    "BlockEntropyLowerBound",
    "CodebookRelease",
    "RDPCurve",
    "ReconstructionBound",
    "apply_hadamard",
    "binary_symmetric_leakage",
    "bound_slack_score",
    "calibrate_sigma",
    "hadamard",
    "hadamard_factors",
    "hadamard_order",
    "make_bound_scorer",
    "make_slack_scorer",
    "mc_constant",
    "mc_margin",
    "mechanism_leakage_bits",
    "plugin_entropy",
    "reconstruction_ratio_score",
    "sampling_margin",
    "shannon_lower_bound",
    "trace_ucb",
    "DPSGDLeakageAccountant",
    "GaussMixAccountant",
    "GaussMixLeakage",
    "GaussianReleaseLeakage",
    "PriorAwareLikelihoodAttack",
    "adaptive_threshold",
    "gaussmix_epsilon",
    "gaussmix_rdp",
    "paper_budget",
    "rdp_to_dp",
    "subsampled_gaussian_kl",
    "subsampled_gaussian_rdp",
]

_LAZY = {"DPSGDMixin", "PoissonBatchLoader", "make_dpsgd_net"}
__all__ += sorted(_LAZY)


def __getattr__(name):
    # DP-SGD support needs torch, skorch and Opacus: load them only when asked for
    if name in _LAZY:
        from . import _dpsgd

        return getattr(_dpsgd, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
