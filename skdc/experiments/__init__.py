"""Experiments: privacy-utility sweeps, noise calibration and audit reports, spline fits with
bootstrap bands, the paper's plots, and the Central and Local baselines of data-collaboration
comparisons."""

from ._audit import AuditReport, audit
from ._baselines import Central, Local
from ._calibrate import NoiseCalibration, calibrate_noise
from ._plot import column_label, plot_frontier, plot_noise_curves
from ._spline import SplineBand, fit_spline_band
from ._sweep import privacy_utility_sweep

__all__ = [
    "AuditReport",
    "Central",
    "Local",
    "NoiseCalibration",
    "SplineBand",
    "audit",
    "calibrate_noise",
    "column_label",
    "fit_spline_band",
    "plot_frontier",
    "plot_noise_curves",
    "privacy_utility_sweep",
]
