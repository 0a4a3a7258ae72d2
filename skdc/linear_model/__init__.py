"""Private linear models: Gaussian-mixing linear and logistic regression (from one sketch, or
from one sketch per participant of a collaboration), and baselines.

Every estimator exposes ``privacy_spent_ = {"eps", "delta", "rdp"}`` after ``fit`` and refuses
rows beyond its declared public bounds unless ``clip=True`` (the collaboration's classifier
always clips and says how many rows it clipped).
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
