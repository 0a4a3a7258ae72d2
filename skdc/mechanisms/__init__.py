"""Participant-side mechanisms: what each participant runs on its own rows before uploading."""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._base": ["BaseMechanism"],
    "._gdp": ["CGDP", "GDP", "IGDP"],
    "._gaussmix": [
        "GaussMix", "adaptive_noise_scale", "calibrate_gaussmix", "check_row_bound",
        "gaussmix_release",
    ],
    "._embedding": [
        "KernelPCAMechanism", "PCAMechanism", "ParticipantWise", "UMAPMechanism",
        "median_heuristic_gamma",
    ],
})
