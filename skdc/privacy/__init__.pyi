# Public names of skdc.privacy, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._bound import ReconstructionBound as ReconstructionBound
from ._bound import mechanism_leakage_bits as mechanism_leakage_bits
from ._bound import per_block_bound as per_block_bound
from ._bound import shannon_lower_bound as shannon_lower_bound

# DP-SGD support needs torch, skorch and Opacus: loaded only when asked for
from ._dpsgd import DPSGDMixin as DPSGDMixin
from ._dpsgd import PoissonBatchLoader as PoissonBatchLoader
from ._dpsgd import make_dpsgd_net as make_dpsgd_net
from ._entropy import BlockEntropyLowerBound as BlockEntropyLowerBound
from ._entropy import mc_constant as mc_constant
from ._entropy import mc_margin as mc_margin
from ._entropy import plugin_entropy as plugin_entropy
from ._entropy import sampling_margin as sampling_margin
from ._entropy import trace_ucb as trace_ucb
from ._gaussmix_rdp import GaussMixAccountant as GaussMixAccountant
from ._gaussmix_rdp import RDPCurve as RDPCurve
from ._gaussmix_rdp import adaptive_threshold as adaptive_threshold
from ._gaussmix_rdp import gaussmix_epsilon as gaussmix_epsilon
from ._gaussmix_rdp import gaussmix_rdp as gaussmix_rdp
from ._gaussmix_rdp import paper_budget as paper_budget
from ._gaussmix_rdp import smallest_scale as smallest_scale
from ._hadamard import apply_hadamard as apply_hadamard
from ._hadamard import hadamard as hadamard
from ._hadamard import hadamard_factors as hadamard_factors
from ._hadamard import hadamard_order as hadamard_order
from ._leakage import DPSGDLeakageAccountant as DPSGDLeakageAccountant
from ._leakage import GaussianReleaseLeakage as GaussianReleaseLeakage
from ._leakage import GaussMixLeakage as GaussMixLeakage
from ._leakage import binary_symmetric_leakage as binary_symmetric_leakage
from ._leakage import calibrate_sigma as calibrate_sigma
from ._leakage import rdp_to_dp as rdp_to_dp
from ._leakage import subsampled_gaussian_kl as subsampled_gaussian_kl
from ._leakage import subsampled_gaussian_rdp as subsampled_gaussian_rdp
