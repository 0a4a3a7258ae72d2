# Public names of skdc.mechanisms, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._base import BaseMechanism as BaseMechanism
from ._codebook import CodebookRelease as CodebookRelease
from ._embedding import KernelPCAMechanism as KernelPCAMechanism
from ._embedding import ParticipantWise as ParticipantWise
from ._embedding import PCAMechanism as PCAMechanism
from ._embedding import UMAPMechanism as UMAPMechanism
from ._embedding import median_heuristic_gamma as median_heuristic_gamma
from ._gaussmix import GaussMix as GaussMix
from ._gaussmix import adaptive_noise_scale as adaptive_noise_scale
from ._gaussmix import calibrate_gaussmix as calibrate_gaussmix
from ._gaussmix import check_row_bound as check_row_bound
from ._gaussmix import gaussmix_release as gaussmix_release
from ._gdp import CGDP as CGDP
from ._gdp import GDP as GDP
from ._gdp import IGDP as IGDP
