"""The analyst's screen of the anchor uploads: who sits far from the others, before training.

Participant ``i`` uploads ``B_i = A O_i + 1 Psi_i^T + v_i W_i`` with a secret rotation ``O_i``,
a shift ``Psi_i`` and its own unit anchor noise ``W_i`` of i.i.d. N(0, 1) entries (Def 4.1 of
[1]_). The analyst centers the uploads, ``Bbar_i = H B_i`` with ``H = I - 11^T / r``, and the
GOPP (eq. (23)-(29) of [1]_) finds rotations ``R_i`` that bring them onto their consensus
``C = (1/p) sum_j Bbar_j R_j`` (eq. (26)). Each participant's residual
``E_i = Bbar_i R_i - C`` has a known scale:

at the planted rotations ``R_i = O_i^T Q`` the anchor cancels, ``Bbar_i R_i = H A Q +
v_i H W_i O_i^T Q``, and ``W_i O_i^T Q`` again has i.i.d. N(0, 1) entries (the Gaussian is
rotation invariant, and the ``W_j`` are independent), so

    E_i = H G_i,  G_i of i.i.d. N(0, s_i^2) entries,  s_i^2 = v_i^2 (1 - 2/p) + sum_j v_j^2 / p^2,

and ``||E_i||_F^2 / s_i^2`` is chi-square with ``(r - 1) d`` degrees of freedom (``H``
removes one of the ``r`` row directions). The fitted rotations minimise ``sum_i ||E_i||^2``
(eq. (29)), so they can only absorb noise: honest ratios ``||E_i||^2 / ((r - 1) d s_i^2)``
stay near or below 1. A participant whose anchor upload is not ``A O_i + shift + noise``
(rows permuted, a rank-deficient or rescaled upload, another anchor, another secret than its
rows) leaves a residual of the size of the anchor itself, which the noise does not explain.

The screen refuses (or warns about) the participant of the largest ratio when it exceeds the
chi-square quantile at a false-alarm probability of ``1e-6`` per fit (Bonferroni over the
``p`` participants). ``v_i`` is the anchor noise each upload declares; when an upload declares
none, ``s^2`` is estimated from the residuals themselves (the median participant's share, which
needs three participants). A floor of ``sqrt(eps)`` relative to the uploads' size stands for
rounding (clean anchors, ``v = 0``, leave residuals near ``1e-15`` of it).

The screen can tell only what the noise leaves visible: a hostile upload whose deviation is
smaller than the noise (anchor noise near the phase transition of eq. (51)) passes. That
includes the noise an upload *declares*, which its sender chooses: declaring ``v = 0.5`` over an
agreed 0.05 hides fully permuted anchor rows. :class:`~skdc.protocol.Analyst` therefore refuses
uploads whose declared noise is not the agreed value (or outside the range it names) before
this screen runs.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from typing import NamedTuple

import numpy as np
from scipy.stats import chi2

__all__ = ["FALSE_ALARM", "AnchorScreen", "rank_deficient", "screen_anchor_uploads"]

#: Probability that a fit of honest uploads is refused (per fit, all participants together).
FALSE_ALARM = 1e-6

# rounding: residuals below sqrt(eps) of the uploads' size are never a participant's fault
_ROUNDING = float(np.sqrt(np.finfo(np.float64).eps))
# a centered anchor (or anchor upload) with s_min <= this * s_max spans fewer than d directions
RANK_RTOL = 1e-10


class AnchorScreen(NamedTuple):
    """What :func:`screen_anchor_uploads` measured.

    Attributes
    ----------
    ratios : ndarray of shape (n_participants,)
        ``||E_i||_F^2`` over its expected value under the anchor-noise model.
    threshold : float
        The refusal threshold on ``ratios``: the chi-square quantile over its degrees of
        freedom.
    residuals : ndarray of shape (n_participants,)
        ``||E_i||_F``: each aligned, centered anchor upload's distance from the consensus.
    expected : ndarray of shape (n_participants,)
        The root of its expected square.
    noise : ndarray of shape (n_participants,)
        The anchor noise ``v_i`` used (declared, or estimated).
    declared : bool
        Whether ``noise`` is what the uploads declared.
    """

    ratios: np.ndarray
    threshold: float
    residuals: np.ndarray
    expected: np.ndarray
    noise: np.ndarray
    declared: bool


def rank_deficient(s):
    """Whether singular values ``s`` (descending) are those of a rank-deficient matrix."""
    return not s[-1] > RANK_RTOL * max(s[0], np.finfo(float).tiny)


def screen_anchor_uploads(anchor_uploads, rotations, declared=None):
    """Each participant's aligned anchor upload against the consensus, relative to the noise.

    Parameters
    ----------
    anchor_uploads : ndarray of shape (n_participants, n_anchors, n_features)
        The anchor uploads ``B_i`` as received (not centered).
    rotations : ndarray of shape (n_participants, n_features, n_features)
        The GOPP rotations ``R_i`` fitted on them.
    declared : sequence of float or None, default=None
        The anchor noise ``v_i`` each upload declares; ``None`` (or any entry ``None``):
        estimate a common level from the residuals.

    Returns
    -------
    screen : AnchorScreen or None
        ``None`` when nothing can be screened (fewer than two participants, or no declared
        noise and fewer than three participants).

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.protocol._screen import screen_anchor_uploads
    >>> rng = np.random.RandomState(0)
    >>> A = np.linalg.qr(rng.standard_normal((16, 3)))[0]
    >>> B = np.stack([A + 0.01 * rng.standard_normal((16, 3)) for _ in range(3)])
    >>> B[2] = B[2][rng.permutation(16)]                        # rows permuted
    >>> s = screen_anchor_uploads(B, np.stack([np.eye(3)] * 3), [0.01] * 3)
    >>> int(np.argmax(s.ratios)), bool(s.ratios.max() > s.threshold)
    (2, True)
    """
    B = np.asarray(anchor_uploads, dtype=np.float64)
    p, r, d = B.shape
    Bbar = B - B.mean(axis=1, keepdims=True)
    aligned = np.einsum("prd,pde->pre", Bbar, rotations)
    E2 = ((aligned - aligned.mean(axis=0)) ** 2).sum(axis=(1, 2))
    dof = (r - 1) * d
    if declared is not None and all(v is not None for v in declared):
        v2, is_declared = np.asarray(declared, dtype=np.float64) ** 2, True
    elif p >= 3:
        # one common level: sum_j E||E_j||^2 = dof v^2 (p - 1), so each share is dof v^2 (1 - 1/p)
        v2, is_declared = np.full(p, np.median(E2) / (dof * (1 - 1 / p))), False
    else:
        return None
    if p < 2:
        return None
    s2 = v2 * (1 - 2 / p) + v2.sum() / p**2
    floor = _ROUNDING**2 * float((Bbar**2).sum()) / p
    expected = dof * s2 + floor
    threshold = float(chi2.isf(FALSE_ALARM / p, dof) / dof)
    return AnchorScreen(E2 / expected, threshold, np.sqrt(E2), np.sqrt(expected), np.sqrt(v2),
                        is_declared)
