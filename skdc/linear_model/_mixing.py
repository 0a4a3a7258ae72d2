"""Private linear and logistic regression from one Gaussian-sketch release ("Linear Mixing").

Algorithm 2 of [1]_: sketch the augmented matrix ``[X, y]`` with the (corrected, adaptive)
Gaussian mixing mechanism and solve least squares on the ``k`` sketch rows, which is
post-processing. Since ``E[X~^T X~] = k (X^T X + sigma~^2 I)`` the solution is implicitly
ridge-regularised. Logistic regression replaces the log-likelihood by its degree-2 Chebyshev
approximation on ``[-Q, Q]``, which depends on the data only through ``X^T X`` and ``X^T y``
(Corollary 2 of [1]_).

References
----------
.. [1] Lev, Srinivasan, Shenfeld, Ligett, Sekhari and Wilson, "The Gaussian Mixing Mechanism:
   Renyi Differential Privacy via Gaussian Sketches", arXiv:2505.24603, 2025.
"""

# Licence: BSD 3 clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_array, check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..mechanisms import check_row_bound, gaussmix_release
from ..privacy import RDPCurve, auto_sketch_rows, calibrate_gaussmix
from ..utils._docstring import Substitution
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context, validate_data
from ._base import (
    _BOUNDS_DOC,
    _CLIP_RANDOM_STATE_DOC,
    _FIT_DOC,
    _PREDICT_DOC,
    _PRIVACY_BUDGET_DOC,
    _PRIVATE_MODEL_CONSTRAINTS,
    _PrivateRegressor,
)

__all__ = ["LinearMixingRegressor", "MixingLogisticRegression"]

# Docstring fragments of the two Linear Mixing estimators (with those of ``_base``).
_MIXING_RELEASE_DOC = """\
    adaptive : bool, default=True
        Corrected adaptive Algorithm 1 of the Gaussian mixing paper: a privately released
        ``lambda_min`` lowers the noise on well-conditioned data.
    eta : float or None, default=None
        Eigenvalue noise multiplier (``gamma / sqrt(k)`` if None).
""" + _CLIP_RANDOM_STATE_DOC

_MIXING_ATTRIBUTES_DOC = """\
    k_ : int
        Sketch rows used.
    scale_ : float
        Dimensionless scale ``gamma``.
    noise_ : float
        Standard deviation of the noise actually added.
    privacy_spent_ : dict
        ``{"eps", "delta", "rdp"}``.
    n_features_in_ : int
        Number of features seen during fit.
"""

_mixing_doc = Substitution(
    privacy_budget=_PRIVACY_BUDGET_DOC, mixing_release=_MIXING_RELEASE_DOC,
    mixing_attributes=_MIXING_ATTRIBUTES_DOC,
)


def _privacy_spent(epsilon, delta, k, gamma, eta):
    rdp = RDPCurve(k=k, zeta=gamma, noise=eta)
    return {"eps": float(epsilon), "delta": float(delta), "rdp": rdp}


class _BaseMixing(BaseEstimator):
    _parameter_constraints: dict = {
        **_PRIVATE_MODEL_CONSTRAINTS,
        "k": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "adaptive": ["boolean"],
        "eta": [None, Interval(Real, 0, None, closed="neither")],
    }

    def _release(self, Z, row_bound, rng):
        k = auto_sketch_rows(Z.shape[1]) if self.k == "auto" else int(self.k)
        gamma, eta = calibrate_gaussmix(
            k, float(self.epsilon), float(self.delta), bool(self.adaptive), self.eta
        )
        M, info = gaussmix_release(
            Z, k=k, row_bound=row_bound, gamma=gamma, adaptive=self.adaptive, eta=eta,
            delta=self.delta, random_state=rng,
        )
        self.k_ = k
        self.scale_ = gamma
        self.noise_ = info["sigma"]
        self.privacy_spent_ = _privacy_spent(self.epsilon, self.delta, k, gamma, eta)
        return M


@_mixing_doc
@Substitution(bounds=_BOUNDS_DOC)
class LinearMixingRegressor(_PrivateRegressor, _BaseMixing):
    """Differentially private least squares from one Gaussian sketch (Algorithm 2 of [1]_).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Rows ``[x_i, y_i]`` (with a constant 1 when ``fit_intercept``) are bounded by the public
    ``sqrt(row_bound_x^2 + bound_y^2 (+1))``; the sketch is calibrated so that the whole fit is
    ``(epsilon, delta)``-DP. The adaptive release (corrected Algorithm 1) adds less noise on
    well-conditioned data.

    Parameters
    ----------
    {privacy_budget}
    k : int or "auto", default="auto"
        Sketch rows; ``"auto"`` is ``ceil(2.5 w)`` with ``w`` the width of the sketched
        ``[X, (1,) y]``.
    {bounds}
    fit_intercept : bool, default=False
        Append a constant column (its bound is counted in the row bound).
    {mixing_release}

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Weights of the private least-squares fit.
    intercept_ : float
        The intercept (0 unless ``fit_intercept``).
    {mixing_attributes}

    References
    ----------
    .. [1] Lev et al., "The Gaussian Mixing Mechanism: Renyi Differential Privacy via Gaussian
       Sketches", arXiv:2505.24603, 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.linear_model import LinearMixingRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(5000, 2))
    >>> y = X @ np.array([0.8, -0.6])
    >>> reg = LinearMixingRegressor(epsilon=1.0, random_state=0).fit(X, y)
    >>> reg.privacy_spent_["eps"], reg.coef_.shape
    (1.0, (2,))
    """

    _parameter_constraints: dict = {
        **_PrivateRegressor._parameter_constraints,
        **_BaseMixing._parameter_constraints,
        "fit_intercept": ["boolean"],
    }

    def __init__(self, epsilon=1.0, delta=1e-6, *, k="auto", row_bound_x=1.0, bound_y=1.0,
                 fit_intercept=False, adaptive=True, eta=None, clip=False, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.k = k
        self.row_bound_x = row_bound_x
        self.bound_y = bound_y
        self.fit_intercept = fit_intercept
        self.adaptive = adaptive
        self.eta = eta
        self.clip = clip
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(fit=_FIT_DOC)
    def fit(self, X, y):
        """Release the sketch of ``[X, y]`` and solve least squares on it.

        {fit}
        """
        X, y = self._checked(X, y)
        cols = [X, np.ones((X.shape[0], 1))] if self.fit_intercept else [X]
        Z = np.hstack([*cols, y[:, None]])
        bound = math.sqrt(self.row_bound_x**2 + self.bound_y**2 + float(self.fit_intercept))
        M = self._release(Z, bound, check_random_state(self.random_state))
        theta = np.linalg.lstsq(M[:, :-1], M[:, -1], rcond=None)[0]
        d = X.shape[1]
        self.coef_ = theta[:d]
        self.intercept_ = float(theta[d]) if self.fit_intercept else 0.0
        return self


def _chebyshev_quadratic(Q):
    """Degree-2 Chebyshev interpolant of ``log sigmoid`` on ``[-Q, Q]``: ``a0 + a1 u + a2 u^2``."""
    from numpy.polynomial import Chebyshev

    f = Chebyshev.interpolate(lambda u: -np.logaddexp(0.0, -u), 2, domain=[-Q, Q])
    coef = f.convert(kind=np.polynomial.Polynomial).coef
    coef = np.pad(coef, (0, 3 - coef.size))
    return coef[0], coef[1], coef[2]


@_mixing_doc
class MixingLogisticRegression(ClassifierMixin, _BaseMixing):
    """Differentially private logistic regression through a quadratic surrogate and one sketch.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    The log-likelihood is replaced by its degree-2 Chebyshev approximation on ``[-Q, Q]``,
    ``a0 + a1 u + a2 u^2`` with ``u = y x^T theta``, ``y in {-1, 1}``; it needs only
    ``sum x x^T`` and ``sum y x``, read off one GaussMix sketch of ``[x, 1, onehot(y)]``
    (row bound ``sqrt(row_bound_x^2 + 2)``). Each class gets the one-vs-rest maximiser
    ``theta_c = -(a1 / (2 a2)) (X~^T X~)^{-1} X~^T y~_c`` (post-processing, no extra cost).

    Parameters
    ----------
    {privacy_budget}
    k : int or "auto", default="auto"
        Sketch rows; ``"auto"`` is ``ceil(2.5 (n_features + 1 + n_classes))``.
    row_bound_x : float, default=1.0
        Public bound on ``||x_i||``.
    Q : float, default=2.0
        Half-width of the approximation interval of the margin ``y x^T theta``.
    {mixing_release}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    coef_ : ndarray of shape (n_classes, n_features)
        One-vs-rest weights (one row for binary problems: class 1 against class 0).
    intercept_ : ndarray of shape (n_classes,) or (1,)
        One-vs-rest intercepts.
    {mixing_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.linear_model import MixingLogisticRegression
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(4000, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> clf = MixingLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    >>> bool(clf.score(X, y) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        **_BaseMixing._parameter_constraints,
        "Q": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, epsilon=1.0, delta=1e-6, *, k="auto", row_bound_x=1.0, Q=2.0,
                 adaptive=True, eta=None, clip=False, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.k = k
        self.row_bound_x = row_bound_x
        self.Q = Q
        self.adaptive = adaptive
        self.eta = eta
        self.clip = clip
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(fit=_FIT_DOC)
    def fit(self, X, y):
        """Release the sketch of ``[X, 1, onehot(y)]`` and maximise the surrogate.

        {fit}
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        X = check_row_bound(X, self.row_bound_x, clip=self.clip)
        self.classes_, codes = np.unique(y, return_inverse=True)
        c = self.classes_.size
        onehot = np.eye(c)[codes]
        d = X.shape[1]
        Z = np.hstack([X, np.ones((X.shape[0], 1)), onehot])
        M = self._release(Z, math.sqrt(self.row_bound_x**2 + 2.0),
                          check_random_state(self.random_state))
        self._solve(M, d, c)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_sketch(self, M, classes):
        """Fit from sketch rows of ``[x, 1, onehot(y)]`` released elsewhere (post-processing).

        Stacked releases of several participants, each sketching its own rows, have the
        Gram matrix ``sum_i M_i^T M_i ~ k (X^T X + p sigma^2 I)``: the same surrogate is
        maximised on them. The privacy is the releases' own; nothing is released here, so
        ``privacy_spent_`` is not set.

        Parameters
        ----------
        M : array-like of shape (n_sketch_rows, n_features + 1 + n_classes)
            The sketch rows.
        classes : array-like of shape (n_classes,)
            The class labels, in the order of the one-hot columns.

        Returns
        -------
        self : object
            Fitted classifier.
        """
        self.classes_ = np.asarray(classes)
        c = self.classes_.size
        M = check_array(M, dtype=np.float64)
        d = M.shape[1] - 1 - c
        if c < 2 or d < 1:
            raise ValueError(f"M must have n_features + 1 + n_classes columns with at least "
                             f"one feature and two classes; got {M.shape[1]} columns for "
                             f"{c} classes.")
        self.n_features_in_ = d
        self._solve(M, d, c)
        return self

    def _solve(self, M, d, c):
        Xt = M[:, : d + 1]
        G = Xt.T @ Xt
        _, a1, a2 = _chebyshev_quadratic(float(self.Q))
        # X~^T y~_c with y_c = 2 onehot_c - 1: 2 X~^T onehot_c - X~^T 1 (the ones column)
        B = 2 * Xt.T @ M[:, d + 1 :] - (Xt.T @ Xt[:, d])[:, None]
        theta = -(a1 / (2 * a2)) * np.linalg.lstsq(G, B, rcond=None)[0]  # (d + 1, c)
        if c == 2:
            theta = (theta[:, 1] - theta[:, 0])[:, None] / 2
        self.coef_ = theta[:d].T
        self.intercept_ = theta[d]

    def decision_function(self, X):
        """Surrogate margins: ``(n,)`` for binary problems, else ``(n, n_classes)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = X @ self.coef_.T + self.intercept_
        return scores[:, 0] if self.classes_.size == 2 else scores

    @Substitution(predict=_PREDICT_DOC)
    def predict(self, X):
        """Predicted class labels.

        {predict}
        """
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores > 0).astype(int)]
        if self.classes_.size == 1:
            return np.full(scores.shape[0], self.classes_[0])
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # private: noise and sketching cost accuracy
        return tags
