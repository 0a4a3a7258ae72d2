"""The margins of the block entropy lower bound, fixed before any estimate (Sec 5 of [1]_).

:class:`~skdc.privacy.BlockEntropyLowerBound` subtracts two margins, in bits, from each grid
pair's plug-in estimate, each Bonferroni-corrected over the grid ``G`` and fixed before
estimation:

* the Monte Carlo margin ``t_MC`` by Cantelli's inequality (:func:`mc_margin`), from the variance
  constant ``c_MC`` of eq. 33 of [1]_ (:func:`mc_constant`);
* the sampling margin ``t_MD = H_b(1/n) sqrt((n/2) ln(|G| / alpha_2))`` by McDiarmid's
  inequality, Prop. 5.1 of [1]_ (:func:`sampling_margin`), and the rows it needs.

It also holds the upper confidence bound on the calibration trace ``tr Cov(Z)`` by empirical
Bernstein (App. G.2 of [1]_; Theorem 4 of Maurer and Pontil, 2009, :func:`trace_ucb`). The
estimate itself is in :mod:`skdc.privacy._plugin_entropy`.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
"""

# Licence: BSD 3 clause

import math
from numbers import Integral, Real

import numpy as np

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["mc_constant", "mc_margin", "sampling_margin", "trace_ucb"]

LN2 = math.log(2.0)


def _binary_entropy(p):
    return -p * math.log2(p) - (1 - p) * math.log2(1 - p)


def _mc_constant(k, s, m_hat):
    rk = s * math.sqrt(k)
    return (9 * k * s**2 + 8 * (2 + rk) * m_hat + 3 * (11 * rk + 1) * math.sqrt(m_hat)) / s**2


@validate_params(
    {
        "k": [Interval(Integral, 1, None, closed="left")],
        "s": [Interval(Real, 0, None, closed="neither")],
        "m_hat": [Interval(Real, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def mc_constant(k, s, m_hat):
    """Monte Carlo variance constant ``c_MC`` (nats^2), eq. 33 of [1]_.

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    The printed eq. 33 is garbled; this is the form consistent with its fragments and with
    the authors' code.

    ``c_MC = [9 k s^2 + 8 (2 + s sqrt(k)) m_hat + 3 (11 s sqrt(k) + 1) sqrt(m_hat)] / s^2``,
    with ``m_hat`` the mean squared norm of the block centres.

    Examples
    --------
    >>> from skdc.privacy import mc_constant
    >>> round(mc_constant(1, 0.2 ** 0.5, 1.0), 2)
    195.68
    """
    return _mc_constant(k, s, m_hat)


@validate_params(
    {
        "c_bar": [Interval(Real, 0, None, closed="left")],
        "n_blocks": [Interval(Integral, 1, None, closed="left")],
        "n": [Interval(Integral, 1, None, closed="left")],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "n_pairs": [Interval(Integral, 1, None, closed="left")],
        "alpha1": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def mc_margin(c_bar, n_blocks, n, n_mc, n_pairs, alpha1):
    """Cantelli margin ``t_MC`` (bits) on the Monte Carlo estimate of the block entropy.

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    ``sigma_MC^2 = c_bar / ((ln 2)^2 N_k n n_MC)`` and ``t_MC = sigma_MC sqrt(|G| / alpha_1 - 1)``.

    Examples
    --------
    >>> from skdc.privacy import mc_margin
    >>> round(mc_margin(195.5515, 784, 59000, 2, 48, 0.025), 6)
    0.091885
    """
    sigma2 = c_bar / (LN2**2 * n_blocks * n * n_mc)
    return math.sqrt(sigma2) * math.sqrt(n_pairs / alpha1 - 1)


def _sampling_margin(n, n_pairs, alpha2):
    if n < 2:
        raise ValueError(f"the sampling margin needs n >= 2 estimation rows; got {n}.")
    return _binary_entropy(1.0 / n) * math.sqrt(0.5 * n * math.log(n_pairs / alpha2))


@validate_params(
    {
        "n": [Interval(Integral, 2, None, closed="left")],
        "n_pairs": [Interval(Integral, 1, None, closed="left")],
        "alpha2": [Interval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def sampling_margin(n, n_pairs, alpha2):
    """McDiarmid margin ``t_MD = H_b(1/n) sqrt((n/2) ln(|G| / alpha_2))`` (bits).

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    Examples
    --------
    >>> from skdc.privacy import sampling_margin
    >>> round(sampling_margin(59000, 48, 0.025), 5)
    0.1384
    """
    return _sampling_margin(n, n_pairs, alpha2)


def _required_rows(n, n_pairs, alpha2):
    """The smallest power-of-two multiple of ``n`` whose ``t_MD`` is below ``log2(n) / 2``."""
    need = n
    while _sampling_margin(need, n_pairs, alpha2) >= 0.5 * math.log2(need):
        need *= 2
    return need


@validate_params(
    {
        "Z": ["array-like"],
        "diameter_sq": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "random_state": [None, Interval(Integral, 0, None, closed="left"), np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def trace_ucb(Z, diameter_sq, delta=0.05, random_state=None):
    """Upper confidence bound on ``tr Cov(Z)`` by empirical Bernstein (App. G.2 of [1]_).

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    Random disjoint pairs give ``Y = ||z - z'||^2 / 2`` with ``E Y = tr Sigma`` and
    ``Y in [0, B/2]``; Theorem 4 of Maurer and Pontil (2009) bounds the mean of ``Y/(B/2)``.

    Parameters
    ----------
    Z : array-like of shape (n, m)
        Calibration rows (representation space).
    diameter_sq : float
        ``B``, an upper bound on ``||z - z'||^2`` (e.g. ``255**2 * d`` for 8-bit pixels).
    delta : float, default=0.05
        Failure probability.
    random_state : int or None
        Seed of the pairing.

    Returns
    -------
    ucb : float

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.privacy import trace_ucb
    >>> Z = np.random.RandomState(0).uniform(0, 1, (2000, 5))  # tr Cov = 5 / 12 = 0.4167
    >>> round(trace_ucb(Z, diameter_sq=5.0, random_state=0), 4)
    0.4597
    """
    Z = np.asarray(Z, dtype=np.float64)
    m_pairs = Z.shape[0] // 2
    if m_pairs < 2:
        raise ValueError(
            f"the trace upper bound needs at least 4 calibration rows (2 pairs); got {Z.shape[0]}."
        )
    perm = np.random.default_rng(random_state).permutation(Z.shape[0])[: 2 * m_pairs]
    D = Z[perm[:m_pairs]] - Z[perm[m_pairs:]]
    half_b = 0.5 * float(diameter_sq)
    Y = 0.5 * np.einsum("ij,ij->i", D, D) / half_b
    if np.any(Y > 1 + 1e-12):
        raise ValueError(
            f"diameter_sq={diameter_sq} is not an upper bound on ||z - z'||^2: a pair reaches "
            f"{float(Y.max() * 2 * half_b):.6g}. Pass a valid bound."
        )
    L = math.log(2 / delta)
    ub = Y.mean() + math.sqrt(2 * Y.var(ddof=1) * L / m_pairs) + 7 * L / (3 * (m_pairs - 1))
    return float(min(ub, 1.0) * half_b)
