# Public names of skdc.linear_model, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._baselines import AdaSSPRegressor as AdaSSPRegressor
from ._baselines import SheffetSketchRegressor as SheffetSketchRegressor
from ._baselines import adassp_constants as adassp_constants
from ._baselines import sheffet_w2 as sheffet_w2
from ._collaboration import GaussMixCollaborationClassifier as GaussMixCollaborationClassifier
from ._mixing import LinearMixingRegressor as LinearMixingRegressor
from ._mixing import MixingLogisticRegression as MixingLogisticRegression
