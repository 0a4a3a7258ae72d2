"""Privacy accounting and guarantees: leakage accountants, the reconstruction lower bound and
the Renyi DP of Gaussian sketches.

Nothing here imports torch or Opacus at import time (the entropy bound looks for torch at fit
time, unless ``device="cpu"``); DP-SGD training of skorch nets is in :mod:`skdc.nn`
(:func:`skdc.nn.make_dpsgd_net`), accounted here by :class:`DPSGDLeakageAccountant`.
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
