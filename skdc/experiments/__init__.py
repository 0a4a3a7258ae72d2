"""Experiments: privacy-utility sweeps, spline fits with bootstrap bands, and the paper's plots."""

from ._plot import plot_frontier, plot_noise_curves
from ._spline import SplineBand, fit_spline_band
from ._sweep import privacy_utility_sweep

__all__ = [
    "SplineBand",
    "fit_spline_band",
    "plot_frontier",
    "plot_noise_curves",
    "privacy_utility_sweep",
]
