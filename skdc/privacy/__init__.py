"""Privacy accounting and guarantees: leakage accountants, the reconstruction lower bound,
DP-SGD training support and the Renyi DP of Gaussian sketches.

Nothing here imports torch or Opacus at import time; the DP-SGD helpers load them lazily.
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
