"""Baselines for private linear regression: AdaSSP (Wang, 2018) and Sheffet's sketch (2017).

* AdaSSP (Algorithm 2 of [1]_): noisy sufficient statistics ``X^T X`` and ``X^T y`` plus an
  adaptive ridge chosen from a privately released ``lambda_min``, the budget split in thirds.
* Sheffet's sketch (Algorithm 1 of [2]_, as excerpted in App. H.2 of [3]_): release
  ``S [X, y]`` without noise when a noisy test finds ``lambda_min`` large, else with noise
  ``w``; ordinary least squares on the release.

References
----------
.. [1] Wang, "Revisiting differentially private linear regression: optimal and adaptive
   prediction & estimation in unbounded domain", UAI 2018.
.. [2] Sheffet, "Differentially private ordinary least squares", ICML 2017.
.. [3] Lev et al., "The Gaussian Mixing Mechanism", arXiv:2505.24603, 2025.
"""

# Licence: BSD 3 clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..privacy import RDPCurve, auto_sketch_rows
from ..utils._docstring import Substitution
from ..utils._sklearn_compat import Interval, StrOptions, _fit_context, validate_params
from ._base import (
    _BOUNDS_DOC,
    _CLIP_RANDOM_STATE_DOC,
    _FIT_DOC,
    _PRIVACY_BUDGET_DOC,
    _PrivateRegressor,
)

__all__ = ["AdaSSPRegressor", "SheffetSketchRegressor", "adassp_constants", "sheffet_w2"]

# The baselines' coefficients: least squares through the origin.
_BASELINE_COEF_DOC = """\
    coef_ : ndarray of shape (n_features,)
        Weights of the private fit.
    intercept_ : float
        Always 0.
"""

_baseline_doc = Substitution(
    privacy_budget=_PRIVACY_BUDGET_DOC, bounds=_BOUNDS_DOC,
    clip_random_state=_CLIP_RANDOM_STATE_DOC, baseline_coef=_BASELINE_COEF_DOC,
)


@validate_params(
    {
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "rho": [Interval(Real, 0, 1, closed="neither")],
        "row_bound_x": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def adassp_constants(n_features, epsilon, delta, rho=0.05, row_bound_x=1.0):
    """AdaSSP's noise multiplier ``c``, eigenvalue shift and ridge threshold (Wang 2018, Alg. 2).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    ``L = ln(6/delta)``, ``c = sqrt(L) / (eps/3)``, shift ``L C^2 / (eps/3)``, threshold
    ``sqrt(d L ln(2 d^2 / rho)) C^2 / (eps/3)``: the budget split in thirds between the
    eigenvalue, ``X^T X`` and ``X^T y`` releases (Algorithm 2 of [1]_).

    Parameters
    ----------
    n_features : int
        Number of features ``d``.
    epsilon : float
        Privacy budget of the whole fit, > 0.
    delta : float
        In (0, 1).
    rho : float, default=0.05
        Failure probability of the ridge choice, in (0, 1).
    row_bound_x : float, default=1.0
        Public bound ``C`` on ``||x_i||``.

    Returns
    -------
    c : float
        Noise multiplier of each of the three Gaussian releases.
    shift : float
        Downward shift of the released eigenvalue.
    threshold : float
        Ridge threshold: the ridge is ``max(threshold - lam_tilde, 0)``.

    References
    ----------
    .. [1] Wang, "Revisiting differentially private linear regression: optimal and adaptive
       prediction & estimation in unbounded domain", UAI 2018.

    Examples
    --------
    >>> from skdc.linear_model import adassp_constants
    >>> [round(v, 6) for v in adassp_constants(10, 1.0, 1e-6)]
    [11.851811, 46.82181, 107.936428]
    """
    L = math.log(6 / delta)
    e3 = epsilon / 3
    c2 = row_bound_x**2
    return (
        math.sqrt(L) / e3,
        L / e3 * c2,
        math.sqrt(n_features * L * math.log(2 * n_features**2 / rho)) * c2 / e3,
    )


@validate_params(
    {
        "k": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "bound_sq": [Interval(Real, 0, None, closed="neither")],
        "form": [StrOptions({"review", "code"})],
    },
    prefer_skip_nested_validation=True,
)
def sheffet_w2(k, epsilon, delta, bound_sq, form="review"):
    """Sheffet's noise level ``w^2``: step 2 of Algorithm 1 of [1]_ (App. H.2 of [2]_).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    ``(4 C^2 / eps) (sqrt(2 k ln(8/delta)) + 2 ln(8/delta))`` in the review's form; the
    authors' code uses ``+ ln(8/delta)`` (``form="code"``).

    Parameters
    ----------
    k : int
        Sketch rows.
    epsilon : float
        Privacy budget, > 0.
    delta : float
        In (0, 1).
    bound_sq : float
        Squared public bound ``C^2`` on the rows of ``[X, y]`` (``C_X^2 + C_Y^2``).
    form : {"review", "code"}, default="review"
        The review's ``2 ln(8/delta)`` term or the authors' code's ``ln(8/delta)``.

    Returns
    -------
    w2 : float
        Noise variance of the noisy branch.

    References
    ----------
    .. [1] Sheffet, "Differentially private ordinary least squares", ICML 2017.
    .. [2] Lev et al., "The Gaussian Mixing Mechanism", arXiv:2505.24603, 2025.

    Examples
    --------
    >>> from skdc.linear_model import sheffet_w2
    >>> round(sheffet_w2(25, 1.0, 1e-6, 1.0), 5), round(sheffet_w2(25, 1.0, 1e-6, 1.0, "code"), 5)
    (239.92469, 176.34488)
    """
    L = math.log(8 / delta)
    factor = 2.0 if form == "review" else 1.0
    return (4 * bound_sq / epsilon) * (math.sqrt(2 * k * L) + factor * L)


@_baseline_doc
class AdaSSPRegressor(_PrivateRegressor):
    """AdaSSP: private ridge regression from noisy sufficient statistics (Wang 2018, Alg. 2).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Parameters
    ----------
    {privacy_budget}
    {bounds}
    rho : float, default=0.05
        Failure probability of the ridge choice.
    {clip_random_state}

    Attributes
    ----------
    {baseline_coef}
    ridge_ : float
        The ridge ``lambda`` chosen.
    privacy_spent_ : dict
        ``{"eps", "delta", "rdp"}``: three Gaussian mechanisms of noise multiplier ``c``.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.linear_model import AdaSSPRegressor
    >>> X = np.random.RandomState(0).uniform(-0.5, 0.5, size=(5000, 2))
    >>> reg = AdaSSPRegressor(epsilon=1.0, random_state=0).fit(X, X @ [0.8, -0.6])
    >>> reg.coef_.shape, reg.ridge_  # well conditioned: no ridge needed
    ((2,), 0.0)
    """

    _parameter_constraints: dict = {
        **_PrivateRegressor._parameter_constraints,
        "rho": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(self, epsilon=1.0, delta=1e-6, *, row_bound_x=1.0, bound_y=1.0, rho=0.05,
                 clip=False, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.row_bound_x = row_bound_x
        self.bound_y = bound_y
        self.rho = rho
        self.clip = clip
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(fit=_FIT_DOC)
    def fit(self, X, y):
        """Release the noisy statistics and solve the adaptive ridge problem.

        {fit}
        """
        X, y = self._checked(X, y)
        rng = check_random_state(self.random_state)
        d = X.shape[1]
        cx2 = self.row_bound_x**2
        c, shift, threshold = adassp_constants(d, self.epsilon, self.delta, self.rho,
                                               self.row_bound_x)
        XX = X.T @ X
        lam_min = max(0.0, float(np.linalg.eigvalsh(XX)[0]))
        lam_tilde = max(0.0, lam_min + c * cx2 * rng.standard_normal() - shift)  # step 2
        lam = max(0.0, threshold - lam_tilde)  # step 3
        E = rng.standard_normal((d, d))
        E = np.triu(E) + np.triu(E, 1).T  # symmetric, upper triangle incl. diagonal i.i.d.
        XX_t = XX + c * cx2 * E  # step 4
        Xy_t = X.T @ y + c * self.row_bound_x * self.bound_y * rng.standard_normal(d)  # step 5
        self.coef_ = np.linalg.lstsq(XX_t + lam * np.eye(d), Xy_t, rcond=None)[0]  # step 6
        self.intercept_ = 0.0
        self.ridge_ = lam
        self.privacy_spent_ = {
            "eps": float(self.epsilon),
            "delta": float(self.delta),
            "rdp": RDPCurve(noise=c, n_gaussian=3),
        }
        return self


@_baseline_doc
class SheffetSketchRegressor(_PrivateRegressor):
    """Sheffet's private OLS by a Gaussian sketch of ``[X, y]`` (Sheffet 2017, Alg. 1).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    A Laplace-noised test on ``lambda_min([X, y]^T [X, y])`` decides whether the sketch is
    released without noise or with noise ``w`` (step 4 of Algorithm 1 of Sheffet 2017); OLS on
    the release.

    Parameters
    ----------
    {privacy_budget}
    k : int or "auto", default="auto"
        Sketch rows; ``"auto"`` is ``ceil(2.5 (n_features + 1))``.
    {bounds}
    w2_form : {"review", "code"}, default="review"
        The review's ``2 ln(8/delta)`` term or the authors' code's ``ln(8/delta)``.
    {clip_random_state}

    Attributes
    ----------
    {baseline_coef}
    w2_ : float
        Noise variance of the noisy branch.
    noisy_ : bool
        Whether the noisy branch ran.
    privacy_spent_ : dict
        ``{"eps", "delta", "rdp"}``; Sheffet's analysis is ``(eps, delta)`` only, so ``rdp`` is
        None.
    n_features_in_ : int
        Number of features seen during fit.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.linear_model import SheffetSketchRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(5000, 2))
    >>> reg = SheffetSketchRegressor(random_state=0).fit(X, X @ np.array([0.8, -0.6]))
    >>> reg.coef_.shape, reg.noisy_  # lambda_min is small next to w^2 here: the noisy branch
    ((2,), True)
    """

    _parameter_constraints: dict = {
        **_PrivateRegressor._parameter_constraints,
        "k": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "w2_form": [StrOptions({"review", "code"})],
    }

    def __init__(self, epsilon=1.0, delta=1e-6, *, k="auto", row_bound_x=1.0, bound_y=1.0,
                 w2_form="review", clip=False, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.k = k
        self.row_bound_x = row_bound_x
        self.bound_y = bound_y
        self.w2_form = w2_form
        self.clip = clip
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    @Substitution(fit=_FIT_DOC)
    def fit(self, X, y):
        """Release Sheffet's sketch of ``[X, y]`` and solve OLS on it.

        {fit}
        """
        X, y = self._checked(X, y)
        rng = check_random_state(self.random_state)
        Z = np.hstack([X, y[:, None]])
        d1 = Z.shape[1]
        k = auto_sketch_rows(d1) if self.k == "auto" else int(self.k)
        b2 = self.row_bound_x**2 + self.bound_y**2
        w2 = sheffet_w2(k, self.epsilon, self.delta, b2, self.w2_form)
        lam_min = float(np.linalg.eigvalsh(Z.T @ Z)[0])
        z = rng.laplace(scale=4 * b2 / self.epsilon)
        noisy = not lam_min > w2 + z + 4 * b2 * math.log(1 / self.delta) / self.epsilon
        S = rng.standard_normal((k, Z.shape[0]))
        M = S @ Z
        if noisy:
            M = M + math.sqrt(w2) * rng.standard_normal((k, d1))
        self.coef_ = np.linalg.lstsq(M[:, :-1], M[:, -1], rcond=None)[0]
        self.intercept_ = 0.0
        self.w2_ = w2
        self.noisy_ = bool(noisy)
        self.privacy_spent_ = {"eps": float(self.epsilon), "delta": float(self.delta),
                               "rdp": None}
        return self
