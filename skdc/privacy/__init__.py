"""Privacy accounting and guarantees: leakage accountants, the reconstruction lower bound,
DP-SGD training support and the Renyi DP of Gaussian sketches.

Nothing here imports torch or Opacus at import time; the DP-SGD helpers load them lazily.
"""

from ._gaussmix_rdp import (
    GaussMixAccountant,
    adaptive_threshold,
    gaussmix_epsilon,
    gaussmix_rdp,
    paper_budget,
)
from ._leakage import (
    DPSGDLeakageAccountant,
    GaussianReleaseLeakage,
    GaussMixLeakage,
    rdp_to_dp,
    subsampled_gaussian_kl,
    subsampled_gaussian_rdp,
)

__all__ = [
    "DPSGDLeakageAccountant",
    "GaussMixAccountant",
    "GaussMixLeakage",
    "GaussianReleaseLeakage",
    "adaptive_threshold",
    "gaussmix_epsilon",
    "gaussmix_rdp",
    "paper_budget",
    "rdp_to_dp",
    "subsampled_gaussian_kl",
    "subsampled_gaussian_rdp",
]
