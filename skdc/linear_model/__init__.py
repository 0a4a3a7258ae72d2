"""Private linear models: Gaussian-mixing linear and logistic regression, and baselines.

Every estimator exposes ``privacy_spent_ = {"eps", "delta", "rdp"}`` after ``fit`` and refuses
rows beyond its declared public bounds unless ``clip=True``.
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
