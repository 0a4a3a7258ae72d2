"""Privacy accounting and guarantees: leakage accountants, the reconstruction lower bound,
DP-SGD training support and the Renyi DP of Gaussian sketches.

Nothing here imports torch or Opacus at import time; the DP-SGD helpers load them lazily.
"""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._entropy": [
        "BlockEntropyLowerBound", "mc_constant", "mc_margin", "plugin_entropy",
        "sampling_margin", "trace_ucb",
    ],
    "._codebook": ["CodebookRelease"],
    "._gaussmix_rdp": [
        "RDPCurve", "GaussMixAccountant", "adaptive_threshold", "gaussmix_epsilon",
        "gaussmix_rdp", "paper_budget", "smallest_scale",
    ],
    "._bound": [
        "ReconstructionBound", "bound_slack_score", "make_bound_scorer", "make_slack_scorer",
        "mechanism_leakage_bits", "reconstruction_ratio_score", "shannon_lower_bound",
    ],
    "._hadamard": ["apply_hadamard", "hadamard", "hadamard_factors", "hadamard_order"],
    "._leakage": [
        "DPSGDLeakageAccountant", "GaussMixLeakage", "GaussianReleaseLeakage",
        "binary_symmetric_leakage", "calibrate_sigma", "rdp_to_dp", "subsampled_gaussian_kl",
        "subsampled_gaussian_rdp",
    ],
    "._likelihood_attack": ["PriorAwareLikelihoodAttack"],
    # DP-SGD support needs torch, skorch and Opacus: loaded only when asked for
    "._dpsgd": ["DPSGDMixin", "PoissonBatchLoader", "make_dpsgd_net"],
})
