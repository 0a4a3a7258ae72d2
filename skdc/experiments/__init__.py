"""Experiments: privacy-utility sweeps, noise calibration and audit reports, spline fits with
bootstrap bands, the paper's plots, and the Central and Local baselines of data-collaboration
comparisons."""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._baselines": ["Central", "Local"],
    "._spline": ["SplineBand", "fit_spline_band"],
    "._plot": ["column_label", "plot_frontier", "plot_noise_curves"],
    "._calibrate": ["NoiseCalibration", "calibrate_noise"],
    "._audit": ["AuditReport", "audit"],
    "._sweep": ["privacy_utility_sweep"],
})
