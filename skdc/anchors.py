"""Anchor makers: the shared synthetic matrix every participant obfuscates alongside its rows.

The anchor ``A`` is participant-side shared state: it is distributed to all participants and
withheld from the analyst. Anchor-based alignment needs the centered anchor ``Abar = H_r A`` to
have full column rank, which forces ``n_anchors >= n_features + 1``. The centered orthonormal
anchor of eq. (22) in [1]_ (``1^T A = 0`` and ``A^T A = I``) fixes the anchor's scale against the
anchor noise ``v``.

Mechanisms take an ``anchor`` parameter that is one of: a name (``"orthonormal"``,
``"uniform"``), an array, a callable ``f(n_anchors, n_features, random_state)`` returning an
array or an ``(A, anchor_y)`` pair, or an object with a ``make_anchor(n_features,
random_state)`` method returning ``(A, anchor_y)`` (the SMOTE anchor of the DC-integration
papers).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .utils._sklearn_compat import Interval, validate_params

__all__ = ["orthonormal_anchor", "uniform_anchor"]


@validate_params(
    {
        "n_anchors": [Interval(Integral, 2, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def orthonormal_anchor(n_anchors, n_features, random_state=None):
    """Centered anchor with orthonormal columns, eq. (22) of [1]_ (spec section 2.4).

    A Gaussian matrix is centered and orthonormalised by a sign-corrected thin QR, so that
    ``1^T A = 0``, ``A^T A = I`` and every singular value of ``A`` equals one.

    Parameters
    ----------
    n_anchors : int
        Number of anchor rows ``r``; must be at least ``n_features + 1``.
    n_features : int
        Width ``d``.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor.

    References
    ----------
    .. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
       Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.anchors import orthonormal_anchor
    >>> A = orthonormal_anchor(12, 3, random_state=0)
    >>> bool(np.allclose(A.T @ A, np.eye(3))), bool(np.allclose(A.sum(0), 0))
    (True, True)
    """
    if n_anchors < n_features + 1:
        raise ValueError(
            f"A centered orthonormal anchor needs n_anchors >= n_features + 1 = "
            f"{n_features + 1}; got n_anchors={n_anchors}. Use more anchor rows (the papers use "
            f"4 * n_features = {4 * n_features})."
        )
    rng = check_random_state(random_state)
    omega = rng.standard_normal((n_anchors, n_features))
    q, r = np.linalg.qr(omega - omega.mean(axis=0))
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return q * signs[None, :]


@validate_params(
    {
        "n_anchors": [Interval(Integral, 2, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "low": [Real],
        "high": [Real],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def uniform_anchor(n_anchors, n_features, *, low=0.0, high=1.0, random_state=None):
    """Anchor with i.i.d. uniform entries, the classic data-collaboration choice.

    Parameters
    ----------
    n_anchors : int
        Number of anchor rows.
    n_features : int
        Width.
    low, high : float, default=0.0, 1.0
        Range of the entries; use the range of your (scaled) features.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor.

    Examples
    --------
    >>> from skdc.anchors import uniform_anchor
    >>> uniform_anchor(5, 2, random_state=0).shape
    (5, 2)
    """
    if not high > low:
        raise ValueError(f"uniform_anchor needs high > low; got low={low}, high={high}.")
    rng = check_random_state(random_state)
    return rng.uniform(low, high, size=(n_anchors, n_features))


_NAMED_ANCHORS = {"orthonormal": orthonormal_anchor, "uniform": uniform_anchor}


def _make_anchor(anchor, n_anchors, n_features, random_state):
    """Resolve a mechanism's ``anchor`` parameter into ``(A, anchor_y)``, validated.

    ``n_anchors=None`` means ``4 * n_features`` for generated anchors.
    """
    rng = check_random_state(random_state)
    r = 4 * n_features if n_anchors is None else n_anchors
    anchor_y = None
    if isinstance(anchor, str):
        A = _NAMED_ANCHORS[anchor](r, n_features, random_state=rng)
    elif hasattr(anchor, "make_anchor"):
        A, anchor_y = anchor.make_anchor(n_features, random_state=rng)
    elif callable(anchor):
        A = anchor(r, n_features, random_state=rng)
        if isinstance(A, tuple):
            A, anchor_y = A
    else:
        A = anchor
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != n_features:
        raise ValueError(
            f"The anchor must have shape (n_anchors, n_features) = (r, {n_features}); got "
            f"shape {A.shape}. Give an anchor as wide as the data."
        )
    if not np.all(np.isfinite(A)):
        raise ValueError("The anchor contains NaN or infinity; give a finite anchor.")
    if anchor_y is not None:
        anchor_y = np.asarray(anchor_y)
        if anchor_y.shape != (A.shape[0],):
            raise ValueError(
                f"anchor labels must have shape ({A.shape[0]},); got {anchor_y.shape}."
            )
    return A, anchor_y


def _check_full_rank_anchor(A, *, rtol=1e-10):
    """Raise unless the centered anchor has full column rank (Props 2.12 and 3.1 of [1])."""
    r, d = A.shape
    if r < d + 1:
        raise ValueError(
            f"Anchor alignment needs n_anchors >= n_features + 1 = {d + 1} anchor rows "
            f"(the centered anchor has rank at most n_anchors - 1); got {r}. Increase "
            f"n_anchors (default 4 * n_features = {4 * d})."
        )
    s = np.linalg.svd(A - A.mean(axis=0), compute_uv=False)
    if s[-1] <= rtol * max(s[0], np.finfo(float).tiny):
        raise ValueError(
            f"The centered anchor is rank-deficient (smallest singular value {s[-1]:.3g}, "
            f"largest {s[0]:.3g}): alignment cannot identify the rotations. Use "
            "anchor='orthonormal' or an anchor whose centered columns are independent."
        )
