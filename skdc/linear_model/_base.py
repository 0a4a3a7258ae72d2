"""Shared parts of the private linear regressors: bounded inputs, linear predictions, tags."""

# Licence: BSD 3 clause

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from ..mechanisms import check_row_bound
from ..utils._sklearn_compat import validate_data

__all__ = ["_PrivateRegressor"]


class _PrivateRegressor(RegressorMixin, BaseEstimator):
    """Base of the private regressors: rows and targets within public bounds, ``X coef_``."""

    def predict(self, X):
        """Linear predictions ``X coef_ + intercept_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
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
