"""Private linear models: Gaussian-mixing linear and logistic regression, and baselines.

Every estimator exposes ``privacy_spent_ = {"eps", "delta", "rdp"}`` after ``fit`` and refuses
rows beyond its declared public bounds unless ``clip=True``.
"""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._baselines": ["AdaSSPRegressor", "SheffetSketchRegressor", "adassp_constants", "sheffet_w2"],
    "._mixing": ["LinearMixingRegressor", "MixingLogisticRegression"],
})
