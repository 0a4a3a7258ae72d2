"""Shared parts of the private linear regressors: bounded inputs, linear predictions, tags."""

# Licence: BSD 3 clause

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..mechanisms import check_row_bound
from ..utils._docstring import Substitution
from ..utils._sklearn_compat import Interval, validate_data

__all__ = ["_PrivateRegressor"]

# Docstring fragments the private linear models share, filled by ``Substitution``. Class
# docstrings: four spaces; method docstrings: eight.
_PRIVACY_BUDGET_DOC = """\
    epsilon : float, default=1.0
        Privacy budget of the whole fit.
    delta : float, default=1e-6
        The ``delta`` of the ``(epsilon, delta)`` guarantee, in (0, 1).
"""

_BOUNDS_DOC = """\
    row_bound_x : float, default=1.0
        Public bound on ``||x_i||``.
    bound_y : float, default=1.0
        Public bound on ``|y_i|``.
"""

_CLIP_RANDOM_STATE_DOC = """\
    clip : bool, default=False
        Clip rows (and targets) to the public bounds instead of refusing them.
    random_state : int, RandomState instance or None, default=None
        Source of the randomness of the private release (sketch, noise, noisy tests).
"""

_FIT_DOC = """\
Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows, each within ``row_bound_x`` (or clipped with ``clip=True``).
        y : array-like of shape (n_samples,)
            Targets, each within ``bound_y`` (or clipped); class labels for a classifier.

        Returns
        -------
        self : object
            Fitted estimator.
"""

_PREDICT_DOC = """\
Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
"""


# The parameters every private linear model has: its budget, its row bound, clipping, seed.
_PRIVATE_MODEL_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither")],
    "delta": [Interval(Real, 0, 1, closed="neither")],
    "row_bound_x": [Interval(Real, 0, None, closed="neither")],
    "clip": ["boolean"],
    "random_state": ["random_state"],
}


class _PrivateRegressor(RegressorMixin, BaseEstimator):
    """Base of the private regressors: rows and targets within public bounds, ``X coef_``."""

    _parameter_constraints: dict = {
        **_PRIVATE_MODEL_CONSTRAINTS,
        "bound_y": [Interval(Real, 0, None, closed="neither")],
    }

    @Substitution(predict=_PREDICT_DOC)
    def predict(self, X):
        """Linear predictions ``X coef_ + intercept_``.

        {predict}
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

    def _checked(self, X, y):
        """Validate ``(X, y)`` and refuse (or clip) rows beyond the declared public bounds."""
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        X = check_row_bound(X, self.row_bound_x, clip=self.clip)
        y = check_row_bound(y, self.bound_y, clip=self.clip, what="target")
        return X, y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True  # private: noise and sketching cost accuracy
        return tags
