"""Participant-side mechanisms: what each participant runs on its own rows before uploading."""

from ._base import BaseMechanism
from ._embedding import (
    KernelPCAMechanism,
    ParticipantWise,
    PCAMechanism,
    UMAPMechanism,
    median_heuristic_gamma,
)
from ._gaussmix import (
    GaussMix,
    adaptive_noise_scale,
    calibrate_gaussmix,
    check_row_bound,
    gaussmix_release,
)
from ._gdp import CGDP, GDP, IGDP

__all__ = [
    "BaseMechanism",
    "CGDP",
    "GDP",
    "GaussMix",
    "IGDP",
    "KernelPCAMechanism",
    "PCAMechanism",
    "ParticipantWise",
    "UMAPMechanism",
    "adaptive_noise_scale",
    "calibrate_gaussmix",
    "check_row_bound",
    "gaussmix_release",
    "median_heuristic_gamma",
]
