"""Leakage in bits of one-shot releases through a known channel (Lemma 3.4 of [1]_).

The reconstruction bound (:class:`~skdc.privacy.ReconstructionBound`) sees a mechanism only
through ``gamma = I(x_i; release | X_{-i})`` in bits (Lemma 3.4 of [1]_). This module bounds
``gamma`` for releases made once, each by the mutual information of its channel:

* an additive Gaussian release of a representation, ``y = A(x) + N(0, sigma^2 I)``, including
  the private-data noise of C-GDP / I-GDP, where the secret rotation earns no credit (the
  Gaussian maximum-entropy and golden-formula bounds on the mutual information,
  :class:`GaussianReleaseLeakage`);
* a Gaussian-sketch release ``S X + sigma xi`` of the Gaussian mixing mechanism: the
  ``alpha -> 1`` limit (a KL divergence) of its Renyi DP curve, Lemma 1 of [2]_
  (:class:`GaussMixLeakage`);
* a two-cell codebook index sent through a binary symmetric channel, App. G.6 of [1]_
  (:func:`binary_symmetric_leakage`, the sub-bit leakage of
  :class:`~skdc.mechanisms.CodebookRelease`).

Runs of DP-SGD are charged by :class:`~skdc.privacy.DPSGDLeakageAccountant` instead.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
.. [2] Lev, Srinivasan, Shenfeld, Ligett, Sekhari and Wilson, "The Gaussian Mixing Mechanism:
   Renyi Differential Privacy via Gaussian Sketches", arXiv:2505.24603, 2025.
"""

# Licence: BSD 3 clause

import math
from numbers import Real

import numpy as np

from ..utils._sklearn_compat import Interval, validate_params
from ..utils._validation import check_positive
from ._subsampled_gaussian import LN2, _check_steps, _finite

__all__ = ["GaussianReleaseLeakage", "GaussMixLeakage", "binary_symmetric_leakage"]


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
