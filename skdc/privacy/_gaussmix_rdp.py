"""Renyi DP of the Gaussian mixing mechanism ``S X + sigma xi`` and its calibration.

The rows of ``S X + sigma xi`` (``S`` a secret ``k x n`` Gaussian sketch) are i.i.d.
``N(0, X^T X + sigma^2 I)``. For rows bounded by ``C_X`` and ``lambda_min(X^T X) >= lambda_low``
the release is ``(alpha, phi(alpha; k, zeta))``-RDP for ``alpha in (1, zeta)``, with
``zeta = (sigma^2 + lambda_low) / C_X^2`` (Lemma 1 of [1]_)::

    phi(alpha; k, zeta) = k alpha / (2 (alpha-1)) ln(1 - 1/zeta)
                          - k / (2 (alpha-1)) ln(1 - alpha/zeta)

This module holds that curve, its conversion to ``(epsilon, delta)`` (Proposition 1 of [1]_, the
improved conversion of Canonne, Kamath and Steinke), truncated CDP (Corollary 1), inverse
calibration, composition, and the adaptive Algorithm 1 of [1]_ with its units corrected (release
``lambda_min / C_X^2`` with sensitivity 1; ``sqrt(gamma) C_X`` noise in the non-adaptive branch).

References
----------
.. [1] Lev, Srinivasan, Shenfeld, Ligett, Sekhari and Wilson, "The Gaussian Mixing Mechanism:
   Renyi Differential Privacy via Gaussian Sketches", arXiv:2505.24603, 2025.
"""

# Licence: BSD 3 clause

import math
from functools import lru_cache
from numbers import Integral, Real

import numpy as np
from scipy import optimize

from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ..utils._validation import check_delta
from ._release_leakage import gaussmix_kl
from ._subsampled_gaussian import LN2, _finite

__all__ = [
    "GaussMixAccountant",
    "RDPCurve",
    "auto_sketch_rows",
    "calibrate_gaussmix",
    "gaussmix_rdp",
    "gaussmix_epsilon",
    "adaptive_threshold",
    "paper_budget",
    "smallest_scale",
]


def _check_k(k):
    if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
        raise ValueError(f"the sketch dimension k must be a positive integer; got {k!r}.")
    return int(k)


def _check_zeta(zeta):
    if not isinstance(zeta, Real) or not np.isfinite(zeta) or zeta <= 1:
        raise ValueError(
            f"the effective scale zeta = (sigma^2 + lambda_low) / row_bound^2 must be a finite "
            f"number > 1; got {zeta!r}. Raise sigma (or lambda_low) relative to row_bound."
        )
    return float(zeta)


def _gaussmix_rdp(alpha, k, zeta):
    k = _check_k(k)
    zeta = _check_zeta(zeta)
    a = np.asarray(alpha, dtype=float)
    if np.any(a < 1) or np.any(a >= zeta):
        raise ValueError(
            f"alpha must lie in (1, zeta) = (1, {zeta:g}); got {np.ravel(a).tolist()}. The curve "
            "diverges as alpha approaches zeta."
        )
    am1 = np.where(a == 1.0, 1.0, a - 1.0)
    phi = (k * a / (2 * am1)) * math.log1p(-1 / zeta) - (k / (2 * am1)) * np.log1p(-a / zeta)
    phi = np.where(a == 1.0, gaussmix_kl(k, zeta), phi)
    phi = _finite(phi, "GaussMix RDP")
    return float(phi) if np.ndim(phi) == 0 else phi


# k, zeta and alpha are checked against their domain by the implementation, whose messages say
# what to change (raise sigma, lower the order); the constraints here are their types.
@validate_params(
    {"alpha": [Real, "array-like"], "k": [Integral], "zeta": [Real]},
    prefer_skip_nested_validation=True,
)
def gaussmix_rdp(alpha, k, zeta):
    """The GaussMix RDP curve ``phi(alpha; k, zeta)`` in nats (Lemma 1 of [1]_).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    At ``alpha = 1`` returns the KL limit ``(k/2)[1/(zeta-1) + ln(1-1/zeta)]``.

    Parameters
    ----------
    alpha : float or array-like
        Renyi order(s), in [1, zeta).
    k : int
        Sketch dimension.
    zeta : float
        Effective scale ``(sigma^2 + lambda_low) / C_X^2``, > 1.

    Returns
    -------
    phi : float or ndarray
        The RDP at each order.

    Examples
    --------
    >>> from skdc.privacy import gaussmix_rdp
    >>> round(gaussmix_rdp(2.0, 10, 5.0), 7)
    0.3226926
    """
    return _gaussmix_rdp(alpha, k, zeta)


def _phi(a, k, zeta):
    # Lemma 1 of [1]; unchecked and vectorised, for the order search
    return (k * a / (2 * (a - 1))) * math.log1p(-1 / zeta) - (k / (2 * (a - 1))) * np.log1p(
        -a / zeta
    )


def _conversion_term(alpha, delta, conversion):
    if conversion == "improved":  # Canonne-Kamath-Steinke / Balle et al. (2020)
        return (
            math.log(1 / delta) / (alpha - 1) + np.log1p(-1 / alpha) - np.log(alpha) / (alpha - 1)
        )
    if conversion == "classic":  # Mironov (2017)
        return math.log(1 / delta) / (alpha - 1)
    raise ValueError(f"conversion must be 'improved' or 'classic'; got {conversion!r}.")


def _minimise_order(objective, upper):
    """Minimise ``objective(alpha)`` over ``(1, upper)``: 400 log-spaced points, then Brent."""
    grid = 1.0 + np.logspace(-6, math.log10(upper - 1.0), 400, endpoint=False)
    with np.errstate(all="ignore"):
        vals = np.asarray(objective(grid), dtype=float)
    vals = np.where(np.isfinite(vals), vals, np.inf)
    j = int(np.argmin(vals))
    lo = grid[max(j - 1, 0)] if j > 0 else 1.0 + 1e-9
    hi = grid[j + 1] if j + 1 < grid.size else upper - 1e-12 * upper
    with np.errstate(all="ignore"):
        res = optimize.minimize_scalar(lambda a: float(objective(a)), bounds=(lo, hi),
                                       method="bounded", options={"xatol": 1e-10})
    if res.fun <= vals[j]:
        return float(res.fun), float(res.x)
    return float(vals[j]), float(grid[j])


@validate_params(
    {
        "k": [Integral],
        "zeta": [Real],
        "delta": [Real],
        "conversion": [StrOptions({"improved", "classic"})],
        "extra_rdp": [None, callable],
    },
    prefer_skip_nested_validation=True,
)
def gaussmix_epsilon(k, zeta, delta, *, conversion="improved", extra_rdp=None):
    """``(epsilon, alpha*)`` of one GaussMix release (Proposition 1 of [1]_).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Parameters
    ----------
    k : int
        Sketch dimension.
    zeta : float
        Effective scale, > 1.
    delta : float
        In (0, 1).
    conversion : {'improved', 'classic'}, default='improved'
        RDP to DP conversion.
    extra_rdp : callable or None, default=None
        An RDP curve ``alpha -> nats`` composed with the release before converting.

    Returns
    -------
    epsilon : float
    alpha : float
        The optimal order.

    Examples
    --------
    >>> from skdc.privacy import gaussmix_epsilon
    >>> eps, a = gaussmix_epsilon(1, 10.0, 1e-5)
    >>> round(eps, 5)
    1.09405
    """
    k = _check_k(k)
    zeta = _check_zeta(zeta)
    delta = check_delta(delta)

    def objective(a):
        a = np.asarray(a, dtype=float)
        val = _phi(a, k, zeta) + _conversion_term(a, delta, conversion)
        if extra_rdp is not None:
            val = val + np.vectorize(lambda t: float(extra_rdp(t)))(a)
        return np.where((a > 1) & (a < zeta), val, np.inf)

    eps, alpha = _minimise_order(objective, zeta)
    return float(_finite(max(eps, 0.0), "epsilon")), alpha


@validate_params(
    {"delta": [Interval(Real, 0, 1, closed="neither")], "exact": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def adaptive_threshold(delta, *, exact=False):
    """Threshold ``tau`` with ``P(z > tau) <= delta / 3`` for the adaptive release.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    ``sqrt(2 ln(3 / delta))`` (the authors' code) or, with ``exact=True``, the exact Gaussian
    quantile ``Phi^{-1}(1 - delta / 3)``, which is smaller and also valid.

    Examples
    --------
    >>> from skdc.privacy import adaptive_threshold
    >>> round(adaptive_threshold(1e-6), 6)
    5.461524
    """
    delta = check_delta(delta)
    if exact:
        from scipy.stats import norm

        return float(norm.isf(delta / 3))
    return math.sqrt(2 * math.log(3 / delta))


@validate_params(
    {
        "eta": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Real],
        "k": [Interval(Integral, 1, None, closed="left")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def paper_budget(eta, gamma, k, delta):
    """The paper-style budget ``e_eps(eta, gamma, k, delta)`` of Algorithm 2 of [1]_.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    The sketch at ``delta / 3`` by the improved conversion plus ``sqrt(2 ln(3.75/delta)) / eta``
    for the eigenvalue release (classic Gaussian-mechanism constant, as in the authors' code).
    Kept to reproduce the paper; :class:`~skdc.linear_model.LinearMixingRegressor` accounts the
    eigenvalue release by RDP instead.

    Examples
    --------
    >>> from skdc.privacy import paper_budget
    >>> round(paper_budget(1.0, 10.0, 5, 1e-5), 4)
    6.6659
    """
    k = _check_k(k)
    zeta = _check_zeta(gamma)
    delta = check_delta(delta)

    def objective(a):
        a = np.asarray(a, dtype=float)
        val = _phi(a, k, zeta) + (math.log(3 / delta) + (a - 1) * np.log1p(-1 / a) - np.log(a)) / (
            a - 1
        )
        return np.where((a > 1) & (a < zeta), val, np.inf)

    eps, _ = _minimise_order(objective, zeta)
    return eps + math.sqrt(2 * math.log(3.75 / delta)) / eta


@validate_params(
    {"epsilon_of": [callable], "epsilon": [Interval(Real, 0, None, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def smallest_scale(epsilon_of, epsilon):
    """Smallest effective scale ``zeta`` whose release is ``epsilon``-private.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    The inverse calibration of a GaussMix release: ``epsilon_of(zeta)`` is the privacy loss of
    the release at scale ``zeta = (sigma^2 + lambda_low) / C_X^2`` (Lemma 1 and Proposition 1
    of [1]_, possibly composed with other releases), decreasing in ``zeta``. The smallest
    ``zeta`` with ``epsilon_of(zeta) <= epsilon`` is bracketed by doubling ``ln zeta`` from
    ``ln 2`` and then bisected in ``ln zeta`` to ``1e-12``.

    Parameters
    ----------
    epsilon_of : callable
        ``zeta -> epsilon``, decreasing in ``zeta > 1``.
    epsilon : float
        Target privacy loss, > 0.

    Returns
    -------
    zeta : float
        The smallest scale (to a relative ``1e-12``) that reaches ``epsilon``.

    Examples
    --------
    >>> from skdc.privacy import gaussmix_epsilon, smallest_scale
    >>> zeta = smallest_scale(lambda z: gaussmix_epsilon(10, z, 1e-6)[0], 1.0)
    >>> bool(gaussmix_epsilon(10, zeta, 1e-6)[0] <= 1.0)
    True
    """
    lo, hi = math.log(1.0 + 1e-9), math.log(2.0)
    while epsilon_of(math.exp(hi)) > epsilon:
        lo, hi = hi, hi + 1.0
        if hi > 60:
            raise ValueError(f"no noise scale reaches epsilon={epsilon}.")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if epsilon_of(math.exp(mid)) > epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return math.exp(hi)


@validate_params(
    {"n_columns": [Interval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def auto_sketch_rows(n_columns):
    """Sketch rows ``k = ceil(2.5 d)`` of a GaussMix release of ``d`` columns: ``k="auto"``.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    The sketch dimension of the experiments of [1]_, written once for every estimator that
    takes ``k="auto"``: :class:`~skdc.mechanisms.GaussMix` (``d`` features), the mixing
    regressions of :mod:`skdc.linear_model` (the width of the sketched matrix) and the
    sketch baseline there (features plus the target). ``k`` enters the privacy curve
    ``phi(alpha; k, zeta)`` of Lemma 1 of [1]_ linearly.

    Parameters
    ----------
    n_columns : int
        Width ``d`` of the sketched matrix, >= 1.

    Returns
    -------
    k : int
        ``ceil(2.5 * n_columns)``.

    Examples
    --------
    >>> from skdc.privacy import auto_sketch_rows
    >>> auto_sketch_rows(4), auto_sketch_rows(5)
    (10, 13)
    """
    return math.ceil(2.5 * n_columns)


def _adaptive_eps(k, gamma, eta, delta, conversion):
    # sketch (conditional on the good event z <= tau) plus the Gaussian release of
    # lam_bar (sensitivity 1, noise eta): RDP alpha / (2 eta^2), converted at 2 delta / 3; the
    # bad event costs delta / 3 (the split of Algorithm 1 of [1])
    return gaussmix_epsilon(
        k, gamma, 2 * delta / 3, conversion=conversion, extra_rdp=lambda a: a / (2 * eta**2)
    )[0]


@validate_params(
    {
        "k": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "adaptive": ["boolean"],
        "eta": [None, Interval(Real, 0, None, closed="neither")],
        "conversion": [StrOptions({"improved", "classic"})],
    },
    prefer_skip_nested_validation=True,
)
@lru_cache(maxsize=256)
def calibrate_gaussmix(k, epsilon, delta, adaptive, eta=None, conversion="improved"):
    """Smallest dimensionless scale ``gamma`` whose release is ``(epsilon, delta)``-DP.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Non-adaptive: the sketch alone at ``delta``. Adaptive: sketch plus the eigenvalue release
    with noise multiplier ``eta`` (default ``gamma / sqrt(k)``, the authors' choice), composed
    in RDP at ``2 delta / 3`` plus the ``delta / 3`` bad event. Results are cached. Also
    importable as ``skdc.mechanisms.calibrate_gaussmix``, beside the mechanism it calibrates.

    Parameters
    ----------
    k : int
        Sketch dimension.
    epsilon : float
        Target privacy budget, > 0.
    delta : float
        In (0, 1).
    adaptive : bool
        Calibrate the adaptive release (sketch plus eigenvalue release).
    eta : float or None, default=None
        Fixed eigenvalue noise multiplier; ``None`` ties it to ``gamma / sqrt(k)``.
    conversion : {"improved", "classic"}, default="improved"
        RDP to ``(epsilon, delta)`` conversion.

    Returns
    -------
    gamma : float
        The smallest scale reaching ``(epsilon, delta)``.
    eta : float or None
        The eigenvalue noise multiplier used (adaptive only).

    Examples
    --------
    >>> from skdc.privacy import calibrate_gaussmix
    >>> gamma, eta = calibrate_gaussmix(10, 1.0, 1e-6, False)
    >>> round(gamma, 4), eta
    (18.8417, None)
    """
    if adaptive:
        def eps_of(g):
            return _adaptive_eps(k, g, eta if eta is not None else g / math.sqrt(k), delta,
                                 conversion)
    else:
        def eps_of(g):
            return gaussmix_epsilon(k, g, delta, conversion=conversion)[0]

    gamma = smallest_scale(eps_of, float(epsilon))
    eta_used = (eta if eta is not None else gamma / math.sqrt(k)) if adaptive else None
    return gamma, eta_used


class GaussMixAccountant:
    """Privacy accounting of Gaussian-sketch releases (Lemma 1, Prop. 1, Cor. 1 of [1]_).

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Parameters
    ----------
    k : int
        Sketch dimension.
    row_bound : float
        Public bound ``C_X`` on row norms, > 0.
    lambda_low : float, default=0.0
        Public (data-independent) lower bound on ``lambda_min(X^T X)``.
    conversion : {'improved', 'classic'}, default='improved'
        RDP to ``(epsilon, delta)`` conversion.

    Attributes
    ----------
    curves_ : list of callable
        RDP curves composed with this release through :meth:`compose`.

    Examples
    --------
    >>> from skdc.privacy import GaussMixAccountant
    >>> acct = GaussMixAccountant(k=25, row_bound=1.0)
    >>> sigma, zeta = acct.calibrate(1.0, 1e-6)
    >>> round(zeta, 3)
    24.412
    >>> round(acct.epsilon(sigma, 1e-6)[0], 6)
    1.0
    """

    def __init__(self, k, row_bound, lambda_low=0.0, conversion="improved"):
        self.k = k
        self.row_bound = row_bound
        self.lambda_low = lambda_low
        self.conversion = conversion

    def _check(self):
        k = _check_k(self.k)
        if not isinstance(self.row_bound, Real) or not self.row_bound > 0:
            raise ValueError(f"row_bound must be > 0; got {self.row_bound!r}.")
        if not isinstance(self.lambda_low, Real) or self.lambda_low < 0:
            raise ValueError(f"lambda_low must be >= 0; got {self.lambda_low!r}.")
        if self.conversion not in ("improved", "classic"):
            raise ValueError(
                f"conversion must be 'improved' or 'classic'; got {self.conversion!r}."
            )
        return k, float(self.row_bound) ** 2, float(self.lambda_low)

    def zeta(self, sigma):
        """Effective scale ``(sigma^2 + lambda_low) / C_X^2``."""
        _, c2, lam = self._check()
        if not isinstance(sigma, Real) or not sigma > 0:
            raise ValueError(f"sigma must be > 0; got {sigma!r}.")
        return (float(sigma) ** 2 + lam) / c2

    def _extra(self, alpha):
        return sum(float(c(alpha)) for c in self.__dict__.get("curves_", []))

    def rdp(self, alpha, sigma):
        """``phi(alpha; k, zeta)`` plus any composed curves, in nats."""
        k, _, _ = self._check()
        out = _gaussmix_rdp(alpha, k, self.zeta(sigma))
        if self.__dict__.get("curves_"):
            out = out + np.vectorize(self._extra)(alpha)
        return out

    def tcdp(self, sigma):
        """``(rho, omega)`` truncated CDP of Corollary 1 (needs ``zeta > 5/2``)."""
        k, _, _ = self._check()
        zeta = self.zeta(sigma)
        if zeta <= 2.5:
            raise ValueError(f"truncated CDP needs zeta > 5/2; got zeta={zeta:g}.")
        return k / (2 * zeta**2), 2 * zeta / 5

    def epsilon(self, sigma, delta):
        """``(epsilon, alpha*)`` at ``delta`` (Proposition 1), composed curves included."""
        k, _, _ = self._check()
        extra = self._extra if self.__dict__.get("curves_") else None
        return gaussmix_epsilon(k, self.zeta(sigma), delta, conversion=self.conversion,
                                extra_rdp=extra)

    def calibrate(self, epsilon, delta):
        """Smallest noise reaching ``epsilon`` at ``delta``; returns ``(sigma, zeta)``.

        ``sigma^2 = max(zeta C_X^2 - lambda_low, 0)``: with a large enough public
        ``lambda_low`` no additive noise is needed.
        """
        k, c2, lam = self._check()
        if not isinstance(epsilon, Real) or not epsilon > 0:
            raise ValueError(f"epsilon must be > 0; got {epsilon!r}.")
        delta = check_delta(delta)
        extra = self._extra if self.__dict__.get("curves_") else None
        zeta = smallest_scale(
            lambda z: gaussmix_epsilon(k, z, delta, conversion=self.conversion,
                                       extra_rdp=extra)[0],
            float(epsilon),
        )
        return math.sqrt(max(zeta * c2 - lam, 0.0)), zeta

    def leakage_bits(self, sigma):
        """Per-record leakage in bits (KL limit over ln 2), for the reconstruction bound."""
        k, _, _ = self._check()
        return gaussmix_kl(k, self.zeta(sigma)) / LN2

    def compose(self, rdp_curve):
        """Compose another RDP curve ``alpha -> nats`` (e.g. a search over k) with this one.

        Returns
        -------
        self : object
        """
        if not callable(rdp_curve):
            raise TypeError(f"rdp_curve must be a callable alpha -> nats; got {rdp_curve!r}.")
        self.__dict__.setdefault("curves_", []).append(rdp_curve)
        return self


class RDPCurve:
    """A picklable RDP curve ``alpha -> nats``: a GaussMix release plus Gaussian releases.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    ``gaussmix_rdp(alpha, k, zeta)`` (if ``k``) plus ``n_gaussian * alpha / (2 noise^2)`` (a
    Gaussian mechanism of sensitivity 1 and noise multiplier ``noise``, composed
    ``n_gaussian`` times).

    Examples
    --------
    >>> from skdc.privacy import RDPCurve
    >>> RDPCurve(noise=2.0)(3.0)
    0.375
    """

    def __init__(self, k=None, zeta=None, noise=None, n_gaussian=1):
        self.k = k
        self.zeta = zeta
        self.noise = noise
        self.n_gaussian = n_gaussian

    def __call__(self, alpha):
        out = 0.0
        if self.k is not None:
            out = out + _gaussmix_rdp(alpha, self.k, self.zeta)
        if self.noise is not None:
            out = out + self.n_gaussian * np.asarray(alpha, dtype=float) / (2 * self.noise**2)
        return float(out) if np.ndim(out) == 0 else out

    def __repr__(self):
        return (f"RDPCurve(k={self.k}, zeta={self.zeta}, noise={self.noise}, "
                f"n_gaussian={self.n_gaussian})")
