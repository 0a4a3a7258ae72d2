"""The Poisson-subsampled Gaussian step of DP-SGD: its divergences and the RDP to DP conversion.

One step of DP-SGD on a record is dominated by the pair ``P = (1 - q) N(0, sigma^2) +
q N(1, sigma^2)`` (the record sampled with probability ``q``) and ``Q = N(0, sigma^2)`` (absent).
This module holds the two divergences of that pair that the accountants of
:mod:`skdc.privacy._dpsgd` add up over a run:

* ``KL(P || Q)``, the per-step charge of the leakage bound of Theorem 4.1 of [1]_
  (``gamma <= sum_t KL(P_t || Q_t) / ln 2``), by 256-node Gauss-Hermite quadrature
  (:func:`subsampled_gaussian_kl`);
* the Renyi divergence ``D_alpha(P || Q)`` at each order, Theorem 4 and Sec 3.3 of [2]_
  (:func:`subsampled_gaussian_rdp`), and its conversion to ``(epsilon, delta)``
  (:func:`rdp_to_dp`: Proposition 12 of Canonne, Kamath and Steinke (2020) / Balle et al.
  (2020), as in Opacus, or Mironov (2017));

and the argument checks and constants the leakage accountants share.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
.. [2] Mironov, Talwar and Zhang, "Renyi Differential Privacy of the Sampled Gaussian
   Mechanism", arXiv:1908.10530, 2019.
"""

# Licence: BSD 3 clause

import math
import textwrap
from numbers import Integral, Real

import numpy as np
from scipy import special

from ..utils._docstring import Substitution
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ..utils._validation import check_delta, check_positive, check_rate

__all__ = ["subsampled_gaussian_kl", "subsampled_gaussian_rdp", "rdp_to_dp"]

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


# -- the per-step KL of the leakage bound (Theorem 4.1 of [1]) -----------------------------
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
