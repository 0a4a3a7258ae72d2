"""Per-record leakage accountants: how many bits a release reveals about one record.

The reconstruction bound (:class:`~skdc.privacy.ReconstructionBound`) sees a mechanism only
through ``gamma = I(x_i; release | X_{-i})`` in bits (Lemma 3.4 of [1]_). This module bounds
``gamma`` for three releases:

* Poisson-subsampled DP-SGD, Theorem 4.1 of [1]_: ``gamma <= sum_t KL(P_t || Q_t) / ln 2`` with
  ``P_t = (1 - q) N(0, sigma^2) + q N(1, sigma^2)`` and ``Q_t = N(0, sigma^2)``, each KL by
  256-node Gauss-Hermite quadrature (:class:`DPSGDLeakageAccountant`);
* an additive Gaussian release of a representation, ``y = A(x) + N(0, sigma^2 I)``, including
  the private-data noise of C-GDP / I-GDP, where the secret rotation earns no credit
  (Lemma 3.4 of [1]_ with the Gaussian maximum-entropy and golden-formula bounds on the
  mutual information, :class:`GaussianReleaseLeakage`);
* a Gaussian-sketch release ``S X + sigma xi`` (its KL limit, by the same lemma,
  :class:`GaussMixLeakage`).

The module also computes the Renyi DP of the Poisson-subsampled Gaussian (Mironov, Talwar and
Zhang, 2019), so that a DP-SGD run reports ``(epsilon, delta)`` next to its leakage, with the
conversion of Balle et al. (2020) used by Opacus' RDP accountant. The tighter privacy-loss
random variable (PRV) accountant of Gopi, Lee and Wutschitz (2021), with which [1]_ calibrates
its noise to a target epsilon, is Opacus' own ``PRVAccountant``
(:func:`calibrate_sigma`, ``DPSGDLeakageAccountant.epsilon(accountant="prv")``).

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
.. [2] Mironov, Talwar and Zhang, "Renyi Differential Privacy of the Sampled Gaussian
   Mechanism", arXiv:1908.10530, 2019.
.. [3] Gopi, Lee and Wutschitz, "Numerical Composition of Differential Privacy", NeurIPS 2021,
   arXiv:2106.02848.
"""

# Licence: BSD 3 clause

import math
import textwrap
import warnings
from numbers import Integral, Real

import numpy as np
from scipy import special

from ..utils._docstring import Substitution
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ..utils._validation import check_delta, check_positive, check_rate

__all__ = [
    "DPSGDLeakageAccountant",
    "calibrate_sigma",
    "GaussianReleaseLeakage",
    "GaussMixLeakage",
    "binary_symmetric_leakage",
    "subsampled_gaussian_kl",
    "subsampled_gaussian_rdp",
    "rdp_to_dp",
]

# A DP-SGD run's rate and noise, shared by the RDP curve and the accountant's add_run; written
# once and indented for a function's (4) or a method's (8) docstring.
_RUN_PARAMS = """q : float
    Poisson sampling rate, in (0, 1].
sigma : float
    Noise multiplier, > 0.
"""


def _indented(text, spaces):
    return textwrap.indent(text, " " * spaces)


LN2 = math.log(2.0)
DEFAULT_ORDERS = tuple([1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)))


# -- argument checks shared by the accountants --------------------------------------------
def _check_steps(steps):
    if not isinstance(steps, Integral) or isinstance(steps, bool) or steps < 0:
        raise ValueError(f"steps must be a non-negative integer; got {steps!r}.")
    return int(steps)


def _finite(value, what):
    if not np.all(np.isfinite(value)):
        raise FloatingPointError(
            f"{what} is not finite ({value!r}); the quadrature broke down for these arguments. "
            "Check that the noise is not vanishingly small."
        )
    return value


# -- DP-SGD leakage (Theorem 4.1 of [1]) --------------------------------------------------
_GH_CACHE = {}


def _gauss_hermite(n_quad):
    if n_quad not in _GH_CACHE:
        x, w = special.roots_hermite(n_quad)  # asymptotic + Newton: ms, not numpy's ~1 s
        _GH_CACHE[n_quad] = (x, w / math.sqrt(math.pi))
    return _GH_CACHE[n_quad]


def _subsampled_gaussian_kl(q, sigma, n_quad=256):
    """``subsampled_gaussian_kl`` without parameter validation (the accountants' loops)."""
    q = check_rate(q)
    sigma = check_positive(sigma, "sigma")
    if q == 1.0:
        return 1.0 / (2.0 * sigma**2)
    x, w = _gauss_hermite(n_quad)
    lq, l1q = math.log(q), math.log1p(-q)

    def llr(y):  # log(P/Q)(y) = log((1 - q) + q exp((2y - 1) / (2 sigma^2))), overflow-safe
        return np.logaddexp(l1q, lq + (2.0 * y - 1.0) / (2.0 * sigma**2))

    with np.errstate(over="ignore", invalid="ignore"):
        e0 = w @ llr(math.sqrt(2.0) * sigma * x)
        e1 = w @ llr(1.0 + math.sqrt(2.0) * sigma * x)
    kl = (1.0 - q) * e0 + q * e1
    return float(_finite(max(kl, 0.0), f"KL(q={q}, sigma={sigma})"))


@validate_params(
    {
        "q": [Interval(Real, 0, 1, closed="right")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "n_quad": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def subsampled_gaussian_kl(q, sigma, n_quad=256):
    """KL divergence (nats) of one Poisson-subsampled Gaussian step, ``KL(P || Q)``.

    Read more in the :ref:`User Guide <leakage_bits>`.

    ``P = (1 - q) N(0, sigma^2) + q N(1, sigma^2)`` (record sampled with probability ``q``) and
    ``Q = N(0, sigma^2)`` (record absent), the dominating pair of Theorem 4.1 of [1]_. Both
    expectations of the log-likelihood ratio use ``n_quad``-node Gauss-Hermite quadrature;
    ``q = 1`` is the closed form ``1 / (2 sigma^2)``.

    Parameters
    ----------
    q : float
        Poisson sampling rate, in (0, 1].
    sigma : float
        Noise multiplier (noise standard deviation over the clipping norm), > 0.
    n_quad : int, default=256
        Number of Gauss-Hermite nodes.

    Returns
    -------
    kl : float
        ``KL(P || Q)`` in nats.

    Examples
    --------
    >>> from skdc.privacy import subsampled_gaussian_kl
    >>> round(subsampled_gaussian_kl(1.0, 1.0), 6)
    0.5
    >>> round(subsampled_gaussian_kl(0.5, 0.2), 6)
    5.574057
    """
    return _subsampled_gaussian_kl(q, sigma, n_quad)


def _log_sub(x, y):
    if y == -np.inf:
        return x
    if x == y:
        return -np.inf
    return x + math.log1p(-math.exp(y - x))


def _log_erfc(x):
    # erfc(x) = 2 Phi(-x sqrt(2)), stable in the tails
    return math.log(2.0) + float(special.log_ndtr(-x * math.sqrt(2.0)))


def _half_inv_var(sigma):
    """``1 / (2 sigma^2)``, ``inf`` (not ZeroDivisionError) where ``sigma**2`` underflows."""
    return 0.5 / sigma / sigma if sigma > 1e-150 else math.inf


def _log_a_int(q, sigma, alpha):
    log_a = -np.inf
    half_inv_var = _half_inv_var(sigma)
    for i in range(int(alpha) + 1):
        log_coef = (
            special.gammaln(alpha + 1) - special.gammaln(i + 1) - special.gammaln(alpha - i + 1)
        )
        s = log_coef + i * math.log(q) + (alpha - i) * math.log1p(-q) + (
            (i * i - i) * half_inv_var if i > 1 else 0.0
        )
        log_a = np.logaddexp(log_a, s)
    return float(log_a)


def _log_a_frac(q, sigma, alpha):
    # series of Mironov, Talwar and Zhang (2019), Sec 3.3, split at z0 where the two Gaussian
    # densities weighted by the sampling probabilities cross
    log_a0, log_a1 = -np.inf, -np.inf
    half_inv_var = _half_inv_var(sigma)
    if not math.isfinite(half_inv_var):
        return math.inf  # no noise: the divergence is infinite
    z0 = sigma**2 * math.log(1.0 / q - 1.0) + 0.5
    i = 0
    while True:
        coef = special.binom(alpha, i)
        log_coef = math.log(abs(coef))
        j = alpha - i
        log_t0 = log_coef + i * math.log(q) + j * math.log1p(-q)
        log_t1 = log_coef + j * math.log(q) + i * math.log1p(-q)
        log_e0 = math.log(0.5) + _log_erfc((i - z0) / (math.sqrt(2) * sigma))
        log_e1 = math.log(0.5) + _log_erfc((z0 - j) / (math.sqrt(2) * sigma))
        log_s0 = log_t0 + (i * i - i) * half_inv_var + log_e0
        log_s1 = log_t1 + (j * j - j) * half_inv_var + log_e1
        if coef > 0:
            log_a0 = np.logaddexp(log_a0, log_s0)
            log_a1 = np.logaddexp(log_a1, log_s1)
        else:
            log_a0 = _log_sub(log_a0, log_s0)
            log_a1 = _log_sub(log_a1, log_s1)
        i += 1
        if max(log_s0, log_s1) < -30 or i > 10_000:
            break
    return float(np.logaddexp(log_a0, log_a1))


def _subsampled_gaussian_rdp(q, sigma, steps, orders=DEFAULT_ORDERS):
    """``subsampled_gaussian_rdp`` without parameter validation (the accountants' loops)."""
    q = check_rate(q)
    sigma = check_positive(sigma, "sigma")
    steps = _check_steps(steps)
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if np.any(orders <= 1):
        raise ValueError(f"Renyi orders must be > 1; got {orders[orders <= 1].tolist()}.")
    out = np.empty(orders.shape)
    for n, a in enumerate(orders):
        if q == 1.0:
            out[n] = a * _half_inv_var(sigma)
        elif float(a).is_integer():
            out[n] = _log_a_int(q, sigma, int(a)) / (a - 1)
        else:
            out[n] = _log_a_frac(q, sigma, float(a)) / (a - 1)
    return _finite(out * steps, "subsampled Gaussian RDP")


@validate_params(
    {
        "q": [Interval(Real, 0, 1, closed="right")],
        "sigma": [Interval(Real, 0, None, closed="neither")],
        "steps": [Interval(Integral, 0, None, closed="left")],
        "orders": [Real, "array-like"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(run=_indented(_RUN_PARAMS, 4))
def subsampled_gaussian_rdp(q, sigma, steps, orders=DEFAULT_ORDERS):
    """Renyi DP of ``steps`` Poisson-subsampled Gaussian steps, at each order (nats).

    Read more in the :ref:`User Guide <leakage_bits>`.

    The exact Renyi divergence ``D_alpha(P || Q)`` of the pair of :func:`subsampled_gaussian_kl`
    (Theorem 4 and Sec 3.3 of [2]_), times ``steps``.

    Parameters
    ----------
    {run}
    steps : int
        Number of steps.
    orders : sequence of float, default=DEFAULT_ORDERS
        Renyi orders, each > 1 (Opacus' default list).

    Returns
    -------
    rdp : ndarray of shape (n_orders,)
        RDP at each order.

    Examples
    --------
    >>> from skdc.privacy import subsampled_gaussian_rdp
    >>> float(subsampled_gaussian_rdp(1.0, 2.0, 1, orders=[2.0])[0])
    0.25
    """
    return _subsampled_gaussian_rdp(q, sigma, steps, orders)


def _rdp_to_dp(rdp, orders, delta, *, conversion="improved"):
    """``rdp_to_dp`` without parameter validation (the accountants' loops)."""
    delta = check_delta(delta)
    rdp = np.atleast_1d(np.asarray(rdp, dtype=float))
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if conversion == "improved":
        eps = (
            rdp
            - (np.log(delta) + np.log(orders)) / (orders - 1)
            + np.log((orders - 1) / orders)
        )
    elif conversion == "classic":
        eps = rdp + np.log(1.0 / delta) / (orders - 1)
    else:
        raise ValueError(f"conversion must be 'improved' or 'classic'; got {conversion!r}.")
    eps = np.where(np.isnan(eps), np.inf, eps)
    best = int(np.argmin(eps))
    if not np.isfinite(eps[best]):
        raise FloatingPointError("every order gives an infinite epsilon; check the RDP curve.")
    return float(max(eps[best], 0.0)), float(orders[best])


@validate_params(
    {
        "rdp": [Real, "array-like"],
        "orders": [Real, "array-like"],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "conversion": [StrOptions({"improved", "classic"})],
    },
    prefer_skip_nested_validation=True,
)
def rdp_to_dp(rdp, orders, delta, *, conversion="improved"):
    """Convert an RDP curve into ``(epsilon, delta)``-DP, returning ``(epsilon, best_order)``.

    Read more in the :ref:`User Guide <leakage_bits>`.

    ``"improved"`` is Proposition 12 of Canonne, Kamath and Steinke (2020) / Balle et al. (2020),
    ``eps = rdp + ln(1/delta)/(a-1) + ln(1 - 1/a) - ln(a)/(a-1)``, as in Opacus;
    ``"classic"`` is Mironov (2017), ``eps = rdp + ln(1/delta)/(a-1)``.

    Parameters
    ----------
    rdp : array-like of shape (n_orders,)
        RDP at each order (nats).
    orders : array-like of shape (n_orders,)
        The orders, each > 1.
    delta : float
        Target delta in (0, 1).
    conversion : {'improved', 'classic'}, default='improved'
        Which conversion.

    Returns
    -------
    epsilon : float
        The smallest epsilon over the orders.
    order : float
        The order attaining it.

    Examples
    --------
    >>> from skdc.privacy import rdp_to_dp
    >>> eps, a = rdp_to_dp([0.5, 1.0], [2.0, 4.0], 1e-5, conversion="classic")
    >>> round(eps, 4), a
    (4.8376, 4.0)
    """
    return _rdp_to_dp(rdp, orders, delta, conversion=conversion)


# -- (epsilon, delta) of DP-SGD runs: Opacus' PRV accountant or the RDP curve above ---------
_ACCOUNTANTS = ("prv", "rdp")


def _check_accountant(accountant):
    if accountant not in _ACCOUNTANTS:
        raise ValueError(
            f"accountant must be 'prv' (Opacus' PRV accountant) or 'rdp' (Renyi DP); got "
            f"{accountant!r}."
        )
    return accountant


def _prv_epsilon(runs, delta):
    """Opacus' ``PRVAccountant.get_epsilon`` for ``runs = [(q, sigma, steps), ...]``."""
    try:
        from opacus.accountants import PRVAccountant
    except ImportError as exc:  # pragma: no cover - opacus is an optional dependency
        raise ImportError(
            "accountant='prv' uses Opacus' PRV accountant, and Opacus is not installed: run "
            "pip install skdc[dp], or pass accountant='rdp'."
        ) from exc
    acct = PRVAccountant()
    acct.history = [(sigma, q, steps) for q, sigma, steps in runs]
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        # q = 1 takes log(1 - q) = -inf inside Opacus' PRV; the value is still exact
        warnings.simplefilter("ignore", RuntimeWarning)
        # Opacus sizes the PRV domain from an RDP bound and warns when its order grid is short
        warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")
        eps = acct.get_epsilon(delta=delta)
    return float(_finite(max(float(eps), 0.0), "PRV epsilon"))


def _runs_epsilon(runs, delta, accountant, orders=DEFAULT_ORDERS, conversion="improved"):
    """``(epsilon, order)`` of ``runs = [(q, sigma, steps), ...]``; ``order`` is nan for PRV.

    One function behind :meth:`DPSGDLeakageAccountant.epsilon` and :func:`calibrate_sigma`.
    """
    runs = [r for r in runs if r[2] > 0]
    if not runs:
        return 0.0, math.nan
    if accountant == "prv":
        return _prv_epsilon(runs, delta), math.nan
    orders = np.asarray(orders, dtype=float)
    rdp = np.zeros(orders.shape)
    for q, sigma, steps in runs:
        rdp = rdp + _subsampled_gaussian_rdp(q, sigma, steps, orders)
    return _rdp_to_dp(rdp, orders, delta, conversion=conversion)


_SIGMA_RANGE = (1e-2, 1e6)


@validate_params(
    {
        "target_epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "q": [Interval(Real, 0, 1, closed="right")],
        "steps": [Interval(Integral, 1, None, closed="left")],
        "accountant": [StrOptions(set(_ACCOUNTANTS))],
        "rtol": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def calibrate_sigma(target_epsilon, *, delta, q, steps, accountant="prv", rtol=1e-6):
    """Noise multiplier of a Poisson-subsampled DP-SGD run that spends ``target_epsilon``.

    Read more in the :ref:`User Guide <leakage_bits>`.

    Returns the ``sigma`` at which ``steps`` steps at sampling rate ``q`` are
    ``(target_epsilon, delta)``-DP by the chosen accountant, found by a bracketed root search
    on ``log sigma`` (Illinois regula falsi): the returned ``sigma`` spends at most
    ``target_epsilon`` and lies within a factor ``1 + rtol`` of one that spends more. This is
    how Sec. 2.5 and App. G.4 of [1]_ set the noise of each privacy level, with Opacus' PRV
    accountant [3]_; the leakage bound itself needs only ``sigma``
    (:class:`DPSGDLeakageAccountant`).

    Delta convention of [1]_: ``delta = n_train ** -1.1`` with ``n_train`` the training-set
    size implied by the expected batch and the sampling rate, ``n_train = 1024 / q``. For
    CIFAR-10 and CelebA (``q = 1/44``, ``T = 4400``) that is ``n_train = 45,056`` and
    ``delta = 7.60e-6``; the paper's unrounded multipliers (5.837518 at ``epsilon = 1`` ...
    0.503697 at ``epsilon = 64``) are recovered to about 1e-5, and Opacus' RDP accountant
    gives the ``epsilon = 69.17`` that the authors' logs record at ``delta = 8e-6`` for the
    last. Opacus' own ``get_noise_multiplier`` stops its bisection at an epsilon tolerance of
    0.01 and so misses the paper's values by up to 0.4 %.

    Parameters
    ----------
    target_epsilon : float
        The epsilon to spend, > 0.
    delta : float
        The delta, in (0, 1); [1]_ uses ``n_train ** -1.1``.
    q : float
        Poisson sampling rate, in (0, 1].
    steps : int
        Number of noisy steps, >= 1.
    accountant : {"prv", "rdp"}, default="prv"
        ``"prv"``: Opacus' ``PRVAccountant`` (its upper bound at ``eps_error=0.01``), as in
        [1]_. ``"rdp"``: the Renyi DP curve of :func:`subsampled_gaussian_rdp` with Opacus'
        orders and conversion (equal to Opacus' ``RDPAccountant``), looser, so a larger
        ``sigma``.
    rtol : float, default=1e-6
        Relative width of the final bracket on ``sigma``.

    Returns
    -------
    sigma : float
        The noise multiplier.

    See Also
    --------
    DPSGDLeakageAccountant.calibrate_sigma : Calibrates to a leakage budget in bits instead.

    Notes
    -----
    One PRV evaluation at ``T = 4400`` takes about a second (more at large epsilon, where
    Opacus' discretization domain grows); a calibration takes 5-10 of them, seeded by the
    (milliseconds) RDP calibration, which is above it in the usual regimes (the search
    brackets the root either way).

    References
    ----------
    .. [1] Bourne and Allison, arXiv:2610.13768, 2026, Sec. 2.5 and App. G.4.
    .. [3] Gopi, Lee and Wutschitz, arXiv:2106.02848, 2021.

    Examples
    --------
    >>> from skdc.privacy import DPSGDLeakageAccountant, calibrate_sigma
    >>> sigma = calibrate_sigma(1.0, delta=1e-5, q=0.01, steps=100, accountant="rdp")
    >>> round(sigma, 4)
    1.0802
    >>> acct = DPSGDLeakageAccountant().add_run(q=0.01, sigma=sigma, steps=100)
    >>> round(acct.epsilon(1e-5, accountant="rdp")[0], 6)
    1.0
    """
    target = float(target_epsilon)
    delta, q, steps = float(delta), float(q), int(steps)

    def f(log_sigma):  # log eps(sigma) - log target, decreasing in sigma
        eps, _ = _runs_epsilon([(q, math.exp(log_sigma), steps)], delta, accountant)
        return math.log(max(eps, 1e-300)) - math.log(target)

    if accountant == "prv":
        # RDP over-estimates the privacy loss, so its sigma starts the search just above PRV's
        x0 = math.log(calibrate_sigma(target, delta=delta, q=q, steps=steps,
                                      accountant="rdp", rtol=1e-3))
    else:
        x0 = 0.0
    bracket = _bracket_log_sigma(f, x0, f"epsilon={target} at delta={delta}, q={q}, "
                                        f"steps={steps}")
    return math.exp(_illinois(f, *bracket, width=math.log1p(rtol)))


def _bracket_log_sigma(f, x0, run):
    """``(lo, f(lo), hi, f(hi))`` with ``f(lo) > 0 >= f(hi)``, by doubling steps from ``x0``.

    Every probe stays in ``_SIGMA_RANGE``: a first step sized by a huge log-gap (an epsilon
    that is 0 at ``x0``, so ``f(x0)`` is near -700) stops at the range's end, where the search
    gives up in words if the sign still has not changed.
    """
    lo_lim, hi_lim = (math.log(s) for s in _SIGMA_RANGE)
    x0 = min(max(x0, lo_lim), hi_lim)
    f0 = f(x0)
    step = max(abs(f0), 0.01)  # eps ~ 1 / sigma: the log-gap is a good first step
    while True:
        x1 = min(max(x0 - step if f0 <= 0 else x0 + step, lo_lim), hi_lim)
        f1 = f(x1)
        if (f0 > 0) != (f1 > 0):
            return (x0, f0, x1, f1) if f0 > 0 else (x1, f1, x0, f0)
        if f1 > 0 and x1 >= hi_lim:
            raise ValueError(
                f"no noise multiplier up to {_SIGMA_RANGE[1]:g} reaches {run}: the budget is "
                "too small. Raise target_epsilon or delta, or lower q or steps."
            )
        if f1 <= 0 and x1 <= lo_lim:
            raise ValueError(
                f"{run} needs a noise multiplier below {_SIGMA_RANGE[0]:g} (sigma = "
                f"{_SIGMA_RANGE[0]:g} already spends at most this epsilon), where the "
                "accountants are unreliable. Lower target_epsilon (or delta)."
            )
        x0, f0 = x1, f1
        step *= 2.0


def _illinois(f, lo, flo, hi, fhi, *, width):
    """Illinois regula falsi on the bracket ``f(lo) > 0 >= f(hi)``; returns the ``hi`` end
    (where ``f <= 0``) once the bracket is narrower than ``width``."""
    side = 0
    while hi - lo > width:
        x = hi - fhi * (hi - lo) / (fhi - flo)  # regula falsi on the bracket
        x = min(max(x, lo + 0.01 * (hi - lo)), hi - 0.01 * (hi - lo))
        fx = f(x)
        if fx > 0:
            lo, flo = x, fx
            if side == -1:
                fhi *= 0.5  # Illinois: halve the retained end so both ends converge
            side = -1
        else:
            hi, fhi = x, fx
            if side == 1:
                flo *= 0.5
            side = 1
    return hi


class DPSGDLeakageAccountant:
    """Leakage in bits of Poisson-subsampled DP-SGD runs, Theorem 4.1 of [1]_.

    Read more in the :ref:`User Guide <leakage_bits>`.

    Every run on the protected records (hyperparameter searches included) is appended with
    :meth:`add_run`; the leakage of the whole schedule is the sum of per-step KL charges,
    ``gamma = (1/ln 2) sum_runs steps * KL(q, sigma)``. One quadrature per distinct
    ``(q, sigma)``: the cost does not grow with the number of steps. The bound depends on the
    sampling rate and the noise multiplier only (not on the clipping norm, learning rate or
    architecture), under add/remove adjacency with Poisson sampling; shuffled or fixed-size
    batches are not covered.

    Parameters
    ----------
    n_quad : int, default=256
        Number of Gauss-Hermite nodes.

    Attributes
    ----------
    runs_ : list of dict
        The runs added so far: ``{"q", "sigma", "steps", "kl_nats"}``.
    leakage_bits_ : float
        ``gamma`` in bits over all runs (0 before any run).

    References
    ----------
    .. [1] Bourne and Allison, arXiv:2610.13768, 2026, Theorem 4.1 and Sec 2.3.

    Examples
    --------
    >>> from skdc.privacy import DPSGDLeakageAccountant
    >>> acct = DPSGDLeakageAccountant().add_run(q=1.0, sigma=1.0, steps=1)
    >>> round(acct.leakage_bits_, 6)
    0.721348
    >>> round(acct.calibrate_sigma(0.721348, q=1.0, steps=1), 4)
    1.0
    """

    def __init__(self, n_quad=256):
        self.n_quad = n_quad

    def _kl(self, q, sigma):
        cache = self.__dict__.setdefault("_kl_cache", {})
        key = (q, sigma)
        if key not in cache:
            cache[key] = _subsampled_gaussian_kl(q, sigma, self.n_quad)
        return cache[key]

    def step_kl(self, q, sigma):
        """KL charge (nats) of one step at ``(q, sigma)``."""
        return self._kl(check_rate(q), check_positive(sigma, "sigma"))

    @Substitution(run=_indented(_RUN_PARAMS, 8))
    def add_run(self, q, sigma, steps):
        """Charge a run of ``steps`` steps at sampling rate ``q`` and noise multiplier ``sigma``.

        Parameters
        ----------
        {run}
        steps : int
            Number of noisy steps taken.

        Returns
        -------
        self : object
            The accountant, with the run appended.
        """
        q = check_rate(q)
        sigma = check_positive(sigma, "sigma")
        steps = _check_steps(steps)
        runs = self.__dict__.setdefault("runs_", [])
        runs.append({"q": q, "sigma": sigma, "steps": steps, "kl_nats": self._kl(q, sigma)})
        return self

    @property
    def leakage_bits_(self):
        runs = self.__dict__.get("runs_", [])
        total = math.fsum(r["steps"] * r["kl_nats"] for r in runs) / LN2
        return float(_finite(total, "leakage"))

    def leakage_bits(self, q, sigma, steps):
        """Leakage in bits of one run, without recording it."""
        return _check_steps(steps) * self.step_kl(q, sigma) / LN2

    def epsilon(self, delta, orders=DEFAULT_ORDERS, *, conversion="improved", accountant="rdp"):
        """``(epsilon, order)`` of all runs together at ``delta``.

        Parameters
        ----------
        delta : float
            Target delta in (0, 1).
        orders : sequence of float, default=DEFAULT_ORDERS
            Renyi orders (``accountant="rdp"`` only).
        conversion : {'improved', 'classic'}, default='improved'
            RDP to DP conversion (``accountant="rdp"`` only), see :func:`rdp_to_dp`.
        accountant : {"rdp", "prv"}, default="rdp"
            ``"rdp"``: RDP composition with Opacus' orders and conversion (equal to Opacus'
            ``RDPAccountant``). ``"prv"``: Opacus' ``PRVAccountant`` [3]_ (tighter; the
            accountant with which [1]_ calibrates its noise, see :func:`calibrate_sigma`).

        Returns
        -------
        epsilon : float
            The epsilon spent (0 before any run).
        order : float
            The Renyi order attaining it; ``nan`` for ``"prv"`` or before any run.

        Examples
        --------
        >>> from skdc.privacy import DPSGDLeakageAccountant
        >>> acct = DPSGDLeakageAccountant().add_run(q=1 / 44, sigma=0.503697, steps=4400)
        >>> round(acct.epsilon(45_056 ** -1.1)[0], 2)  # as the authors' code logs it
        69.17
        """
        delta = check_delta(delta)
        accountant = _check_accountant(accountant)
        runs = [(r["q"], r["sigma"], r["steps"]) for r in self.__dict__.get("runs_", [])]
        return _runs_epsilon(runs, delta, accountant, orders, conversion)

    def calibrate_sigma(self, target_bits, q, steps, *, tol=1e-10):
        """Smallest noise multiplier whose run leaks at most ``target_bits`` (Sec 2.5 of [1]_).

        Parameters
        ----------
        target_bits : float
            Leakage budget in bits, > 0.
        q : float
            Poisson sampling rate, in (0, 1].
        steps : int
            Number of steps, >= 1.
        tol : float, default=1e-10
            Relative tolerance of the bisection on ``log sigma``.

        Returns
        -------
        sigma : float
            The noise multiplier.
        """
        target = check_positive(target_bits, "target_bits")
        q = check_rate(q)
        steps = _check_steps(steps)
        if steps == 0:
            raise ValueError("steps must be >= 1 to calibrate a noise multiplier.")
        per_step = target * LN2 / steps

        def f(log_s):
            return _subsampled_gaussian_kl(q, math.exp(log_s), self.n_quad) - per_step

        lo, hi = math.log(1e-3), math.log(1e3)
        while f(lo) < 0:
            lo -= 2.0
        while f(hi) > 0:
            hi += 2.0
        while hi - lo > tol:  # gamma is strictly decreasing in sigma
            mid = 0.5 * (lo + hi)
            if f(mid) > 0:
                lo = mid
            else:
                hi = mid
        return math.exp(hi)


def _check_radius_or_cov(cov, radius):
    if cov is None and radius is None:
        raise ValueError(
            "GaussianReleaseLeakage needs an upper bound on what is released: pass radius (a "
            "bound on ||A(x) - c||) and/or cov (an upper bound on the covariance of A(x))."
        )


class GaussianReleaseLeakage:
    """Leakage in bits of an additive Gaussian release of a representation (Lemma 3.4 of [1]_).

    Read more in the :ref:`User Guide <leakage_bits>`; the example
    :ref:`sphx_glr_auto_examples_plot_bound_vs_attacks.py` uses it.

    For ``y = A(x) + N(0, sigma^2 I)`` with ``A`` fixed independently of the data and fresh noise
    per record, ``gamma <= min(0.5 log2 det(I + T cov / sigma^2), T radius^2 / (2 sigma^2 ln 2))``
    (Gaussian maximum entropy, and the golden formula with the reference ``N(c, sigma^2 I)``;
    ``T`` repeated releases with independent noise add up as one release of variance
    ``sigma^2 / T``). Geometric data perturbation ``y = x O + t + noise`` (C-GDP, I-GDP) is
    covered with ``A = id``: the analysis lets the adversary know ``O`` and ``t``, so the rotation
    earns no credit.

    Parameters
    ----------
    sigma : float
        Standard deviation of the added noise, > 0.
    cov : array-like of shape (m, m) or (m,) or None, default=None
        Upper bound on the covariance of ``A(x)`` (a vector is a diagonal). When estimated, use
        an upper confidence bound.
    radius : float or None, default=None
        Bound ``C`` on ``||A(x) - c||`` for a known centre ``c``.
    n_releases : int, default=1
        Releases of the same ``A(x)`` with independent noise.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.privacy import GaussianReleaseLeakage
    >>> round(GaussianReleaseLeakage(1.0, cov=np.ones(4)).leakage_bits(), 6)
    2.0
    """

    def __init__(self, sigma, cov=None, radius=None, n_releases=1):
        self.sigma = sigma
        self.cov = cov
        self.radius = radius
        self.n_releases = n_releases

    def leakage_bits(self):
        """The leakage bound ``gamma`` in bits."""
        sigma = check_positive(self.sigma, "sigma")
        _check_radius_or_cov(self.cov, self.radius)
        t = _check_steps(self.n_releases)
        bounds = []
        if self.cov is not None:
            cov = np.asarray(self.cov, dtype=np.float64)
            if cov.ndim == 1:
                ev = cov
            else:
                ev = np.linalg.eigvalsh(0.5 * (cov + cov.T))
            if np.any(ev < -1e-9 * max(1.0, float(np.abs(ev).max()))):
                raise ValueError("cov must be positive semi-definite.")
            ev = np.clip(ev, 0.0, None)
            bounds.append(0.5 * np.sum(np.log1p(t * ev / sigma**2)) / LN2)
        if self.radius is not None:
            bounds.append(t * float(self.radius) ** 2 / (2.0 * sigma**2 * LN2))
        return float(_finite(min(bounds), "leakage"))


@validate_params(
    {"f0": [Interval(Real, 0, 1, closed="both")], "p": [Interval(Real, 0, 1, closed="both")]},
    prefer_skip_nested_validation=True,
)
def binary_symmetric_leakage(f0, p):
    """Leakage (bits) of a two-cell codebook index sent through a binary symmetric channel.

    Read more in the :ref:`User Guide <floor_tightness>`.

    ``gamma = H_b(f0 p + (1 - f0)(1 - p)) - H_b(p)`` (App. G.6 of [1]_): the cell of the record
    (probabilities ``f0``, ``1 - f0``) is kept with probability ``p``.

    Examples
    --------
    >>> from skdc.privacy import binary_symmetric_leakage
    >>> round(binary_symmetric_leakage(0.5, 0.9), 6)
    0.531004
    """
    if not 0 <= f0 <= 1 or not 0 <= p <= 1:
        raise ValueError(f"f0 and p must lie in [0, 1]; got f0={f0}, p={p}.")

    def hb(t):
        return 0.0 if t in (0.0, 1.0) else -t * math.log2(t) - (1 - t) * math.log2(1 - t)

    return hb(f0 * p + (1 - f0) * (1 - p)) - hb(p)


def gaussmix_kl(k, zeta):
    """KL limit of the GaussMix RDP curve, ``(k/2)[1/(zeta-1) + ln(1-1/zeta)]`` (nats)."""
    if zeta <= 1:
        raise ValueError(
            f"the effective scale zeta = (sigma^2 + lambda_low) / row_bound^2 must exceed 1; got "
            f"{zeta}. Raise sigma or lower row_bound."
        )
    return 0.5 * k * (1.0 / (zeta - 1.0) + math.log1p(-1.0 / zeta))


class GaussMixLeakage:
    """Leakage in bits of one Gaussian-sketch release ``S X + sigma xi`` (Lemma 3.4 of [1]_).

    Read more in the :ref:`User Guide <leakage_bits>`.

    ``gamma <= (k / (2 ln 2)) [1/(zeta - 1) + ln(1 - 1/zeta)]`` with
    ``zeta = (sigma^2 + lambda_low) / row_bound^2``: the ``alpha -> 1`` limit of the GaussMix
    RDP curve (Lemma 1 of Lev et al., 2025) over ``ln 2``, for an informed adversary who knows the
    other rows; the sketch ``S`` must be secret and fresh.

    Parameters
    ----------
    k : int
        Sketch dimension (rows of the release).
    sigma : float
        Standard deviation of the additive noise, >= 0.
    row_bound : float
        Public bound ``C_X`` on the row norms.
    lambda_low : float, default=0.0
        Data-independent lower bound on ``lambda_min(X^T X)`` (0 if unknown).

    Examples
    --------
    >>> from skdc.privacy import GaussMixLeakage
    >>> round(GaussMixLeakage(100, 3.0, 1.0, lambda_low=1.0).leakage_bits(), 6)
    0.414818
    """

    def __init__(self, k, sigma, row_bound, lambda_low=0.0):
        self.k = k
        self.sigma = sigma
        self.row_bound = row_bound
        self.lambda_low = lambda_low

    def leakage_bits(self):
        """The leakage bound ``gamma`` in bits."""
        zeta = (float(self.sigma) ** 2 + float(self.lambda_low)) / float(self.row_bound) ** 2
        return float(_finite(gaussmix_kl(int(self.k), zeta) / LN2, "leakage"))
