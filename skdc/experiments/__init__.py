"""Experiments: privacy-utility sweeps, noise calibration and audit reports, spline fits with
bootstrap bands, the paper's plots, and the Central and Local baselines of data-collaboration
comparisons."""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
