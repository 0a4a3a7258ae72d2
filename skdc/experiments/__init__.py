"""Experiments: privacy-utility sweeps, spline fits with bootstrap bands, the papers' plots and
reproductions.

The audit (noise calibration, the single audit, the comparison of options and their reports)
lives in :mod:`skdc.audit`; its public names stay importable from here too."""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
