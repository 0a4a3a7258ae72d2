"""Experiments: privacy-utility sweeps, spline fits with bootstrap bands, the paper's plots, and
the Central and Local baselines of data-collaboration comparisons."""

from ._baselines import Central, Local
from ._plot import column_label, plot_frontier, plot_noise_curves
from ._spline import SplineBand, fit_spline_band
from ._sweep import privacy_utility_sweep

__all__ = [
    "Central",
    "Local",
    "SplineBand",
    "column_label",
    "fit_spline_band",
    "plot_frontier",
    "plot_noise_curves",
    "privacy_utility_sweep",
]
