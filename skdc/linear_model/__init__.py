"""Private linear models: Gaussian-mixing linear and logistic regression, and baselines.

Every estimator exposes ``privacy_spent_ = {"eps", "delta", "rdp"}`` after ``fit`` and refuses
rows beyond its declared public bounds unless ``clip=True``.
"""

from ._baselines import AdaSSPRegressor, SheffetSketchRegressor, adassp_constants, sheffet_w2
from ._mixing import LinearMixingRegressor, MixingLogisticRegression

__all__ = [
    "AdaSSPRegressor",
    "LinearMixingRegressor",
    "MixingLogisticRegression",
    "SheffetSketchRegressor",
    "adassp_constants",
    "sheffet_w2",
]
