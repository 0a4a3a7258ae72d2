"""The sample-axes attack: principal axes from the colluder's rows, signs from the noisy anchor.

Under a width-preserving GDP map ``Y_i = X_i O_i + 1 Psi_i^T`` the target's upload covariance
is ``O_i^T cov(X_i) O_i``: the rotation carries the principal axes of the target's rows to
those of its uploads. A colluder holds a sample of the same population (its own rows), whose
principal axes estimate those of the target's rows, so the eigenvectors ``U_x`` of the
sample's covariance and ``U_y`` of the uploads' give ``O_i = U_x D U_y^T`` up to a signed
permutation ``D`` (the principal-component attack on distance-preserving maps of [2]_). The
classical attack (:class:`~skdc.attacks.KnownSampleAttack`) reads the signs from skewness; this
one reads them, and the order of axes whose variances are close, from the target's noisy
anchor upload ``B_i = A O_i + 1 Psi_i^T + v W_i`` (Def 4.1 of [1]_), a channel that anchor
noise blurs but never removes, while the data channel (the uploads' covariance) is untouched
by anchor noise.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
.. [2] Liu, Giannella, Kargupta, "An attacker's view of distance preserving maps for privacy
   preserving data mining", PKDD, 2006.
"""

# Licence: BSD 3 clause

from numbers import Real

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..utils import center, polar
from ..utils._deprecation import DEPRECATED, renamed_argument
from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Hidden, Interval, StrOptions
from ._base import BaseAttack, _gdp_inverse
from ._classical import _check_sample
from ._docstring import _examples_setup

__all__ = ["SampleAxesAttack"]

# A ridge on the pooled scatter, as a fraction of its average eigenvalue, keeps the log
# determinant finite when the sample and the uploads share a direction without variance
# (constant pixels).
_SCATTER_RIDGE = 1e-9

# the constraints of the scale the attacks weigh the anchor by: ``v`` and its deprecated
# spelling ``anchor_noise`` (default DEPRECATED: not given)
_V_CONSTRAINTS = {
    "v": [None, Interval(Real, 0, None, closed="left")],
    "anchor_noise": [None, Interval(Real, 0, None, closed="left"),
                     Hidden(StrOptions({DEPRECATED}))],
}


class _Channels:
    """What the sample-axes and joint-likelihood attacks read from a collusion view.

    ``M = Abar^T Bbar`` (the anchor cross-product, whose polar factor is the Procrustes
    estimate, eq. (61)-(65) of [1]_), the anchor means ``a``, ``b``, the colluders' centered
    scatter ``C = Xc^T Xc`` and the target's ``T = Yc^T Yc`` (less the declared private-data
    noise ``n sigma^2 I``, clipped to be positive semidefinite), the row means ``xbar``,
    ``ybar``, the row counts and the anchor noise ``v`` the attack weighs the anchor by.
    """

    def __init__(self, attack, view):
        A, B = attack._anchor_pairs(
            view,
            why="the raw anchor A disclosed by the colluder and the target's anchor upload B "
                "(a mechanism with an anchor, e.g. IGDP, aligned by e.g. GOPPAligner)",
        )
        _check_sample(attack, view, 2)
        self.a, Abar = center(A)
        self.b, Bbar = center(B)
        self.M = Abar.T @ Bbar
        attack._require_square(view, self.M, "an anchor cross-product")
        self.xbar, Xc = center(view.colluder_X)
        self.ybar, Yc = center(view.Y)
        self.n_x, self.n_y = Xc.shape[0], Yc.shape[0]
        d = Yc.shape[1]
        self.C = Xc.T @ Xc
        sigma = float(getattr(view.mechanism, "noise", 0.0) or 0.0)  # declared, public
        T = Yc.T @ Yc - self.n_y * sigma**2 * np.eye(d)
        if sigma > 0:  # Y = X O + Psi + sigma W: the noise adds sigma^2 to every variance
            w, V = np.linalg.eigh(T)
            T = (V * np.maximum(w, 0.0)) @ V.T
        self.T = T
        self.ridge = _SCATTER_RIDGE * max(np.trace(self.C) + np.trace(self.T), 1e-300) / d
        self.v = _anchor_noise_scale(_given_v(attack), view, Abar, Bbar, self.M)

    @property
    def noiseless(self):
        """Whether the anchor is noiseless: then it fixes the rotation (eq. (75) of [1]_)."""
        return self.v == 0.0

    def translation(self, O):
        """``Psihat = b - Ohat^T a`` (eq. (69) of [1]_)."""
        return self.b - O.T @ self.a

    def log_likelihood(self, O):
        """The joint log-likelihood of a rotation, up to a constant (see
        :class:`~skdc.attacks.JointLikelihoodAttack`)."""
        K = self.C + O @ self.T @ O.T
        K[np.diag_indices_from(K)] += self.ridge
        anchor = 0.0 if self.noiseless else np.sum(O * self.M) / self.v**2
        return anchor - (self.n_x + self.n_y) / 2 * np.linalg.slogdet(K)[1]


def _given_v(attack):
    """The attack's ``v``, or its deprecated spelling ``anchor_noise`` (with a
    ``FutureWarning``); ``None`` when neither is given."""
    if isinstance(attack.anchor_noise, str):  # DEPRECATED, the default: not given
        return attack.v
    return renamed_argument("anchor_noise", attack.anchor_noise, "v",
                            DEPRECATED if attack.v is None else attack.v, unset=DEPRECATED)


def _anchor_noise_scale(v, view, Abar, Bbar, M):
    """The anchor noise the attack weighs the anchor by: given (``v``), else declared by the
    analyst's aligner (``GOPPAligner(v)``), else estimated from the Procrustes residual.

    Deployed uploads arrive already noisy and the aligner then declares ``v = 0``; the residual
    ``||Bbar - Abar Pi(M)||_F^2`` over its degrees of freedom (``(m - 1) d`` minus the
    ``d (d - 1) / 2`` of a rotation) estimates ``v^2`` there. A value at rounding level counts
    as noiseless.
    """
    if v is not None:
        return float(v)
    declared = float(getattr(view.aligner, "v", 0.0) or 0.0)
    if declared > 0:
        return declared
    m, d = Abar.shape
    dof = (m - 1) * d - d * (d - 1) // 2
    if dof <= 0:
        return 0.0
    resid = np.sum((Bbar - Abar @ polar(M)) ** 2)
    scale = max(np.sum(Bbar**2), 1e-300)
    if resid <= 1e-20 * scale:
        return 0.0
    return float(np.sqrt(resid / dof))


def _principal_axes(S):
    """Eigenvalues (decreasing) and eigenvectors of a symmetric matrix."""
    w, U = np.linalg.eigh(S)
    return w[::-1], U[:, ::-1]


def _sample_axes_rotation(ch):
    """``Ohat = U_x D U_y^T`` with the signed permutation ``D`` that maximises the joint
    log-likelihood among all signed permutations of the two sets of principal axes.

    With ``O = U_x D U_y^T`` the pooled scatter ``C + O T O^T`` is diagonal in ``U_x``, so the
    log-likelihood separates over the pairs (sample axis k, upload axis l) that ``D`` matches:
    ``|U_x^T M U_y|_kl / v^2 - (N / 2) log(c_k + t_l)`` with the sign of ``(U_x^T M U_y)_kl``.
    The best ``D`` is a linear assignment: the data pair axes of equal rank, the anchor picks
    the signs and swaps axes of close variance when its evidence outweighs theirs.
    """
    c, Ux = _principal_axes(ch.C)
    t, Uy = _principal_axes(ch.T)
    G = Ux.T @ ch.M @ Uy
    N = ch.n_x + ch.n_y
    data = -(N / 2) * np.log(np.maximum(c[:, None] + t[None, :] + ch.ridge, 1e-300))
    weight = data + np.abs(G) / ch.v**2
    rows, cols = linear_sum_assignment(weight, maximize=True)
    D = np.zeros_like(G)
    D[rows, cols] = np.where(G[rows, cols] >= 0, 1.0, -1.0)  # a zero overlap gives +1
    return Ux @ D @ Uy.T


@Substitution(references=gdp_paper_references, examples=_examples_setup)
class SampleAxesAttack(BaseAttack):
    """Principal axes from the colluder's sample, signs and order from the noisy anchor.

    Non-paper extension. ``cov(Y_i) = O_i^T cov(X_i) O_i``, so with ``U_x`` the principal
    axes of the colluders' rows (a sample of the target's population) and ``U_y`` those of the
    target's uploads, both by decreasing variance, ``Ohat = U_x D U_y^T`` for a signed
    permutation ``D`` [2]_. The anchor cross-product ``M = Abar^T Bbar`` (whose polar factor is
    the Procrustes estimate, eq. (61)-(65) of [1]_) chooses ``D``: among all signed
    permutations, the one maximising the joint log-likelihood of
    :class:`JointLikelihoodAttack`, which separates over matched pairs into a linear
    assignment (the data keep axes of distinct variance in order, the anchor sets every sign
    and reorders axes of close variance). Then ``Psihat = b - Ohat^T a`` (eq. (69) of [1]_)
    and ``Xhat = (Y_i - 1 Psihat^T) Ohat^T``. When the anchor is noiseless it fixes the
    rotation: ``Ohat = Pi(M)``, exact (Prop 3.1 of [1]_).

    Anchor noise blurs the signs only: the axes come from the uploads' covariance, which the
    anchor noise never touches, so the attack stays strong at anchor noise where
    :class:`KnownAnchorAttack` fails. It weakens where the population's variances are close
    (axes ill-determined) and with private-data noise.

    Read more in the :ref:`User Guide <what_an_attacker_knows>`.

    Threat model: the colluders disclose their own rows (a sample of the target's population,
    pooled over colluders) and the raw anchor ``A``; the analyst holds the target's uploads and
    its anchor upload as received, and the declared anchor noise ``v`` (the attack's ``v``,
    else the aligner's; estimated from the Procrustes residual when neither declares it) and
    private-data noise ``sigma`` (the mechanism's ``noise``). No secret is used. Requires an
    anchor protocol with a width-preserving GDP mechanism. A lower reconstruction error means
    less privacy; scorers report higher = more private.

    Parameters
    ----------
    v : float, default=None
        The anchor-noise scale ``v`` (Def 4.1 of [1]_) that weighs the anchor against the
        data. ``None`` reads the aligner's ``v``; when that is 0 (uploads that arrive noisy),
        it is estimated from the residual of the Procrustes fit.
    anchor_noise : float or None, default="deprecated"
        Deprecated spelling of ``v``.

        .. deprecated:: 0.2
           ``anchor_noise`` is renamed ``v`` and will be removed in 0.3.

    See Also
    --------
    JointLikelihoodAttack : Refines this estimate over all rotations.
    KnownSampleAttack : The same axes, with signs from the skewness of the projections.
    KnownAnchorAttack : The anchor alone.

    {references}
    .. [2] Liu, Giannella, Kargupta, "An attacker's view of distance preserving maps for
       privacy preserving data mining", PKDD, 2006.

    {examples}
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdc.alignment import GOPPAligner
    >>> from skdc.attacks import KnownAnchorAttack, SampleAxesAttack
    >>> X = X * [4.0, 2.0, 1.0, 0.5]  # distinct variances
    >>> pipe = make_pipeline(IGDP(2, random_state=0), GOPPAligner(v=0.3)).fit(X)
    >>> view = collusion_view(pipe, X)
    >>> def err(attack):
    ...     rec = attack.reconstruct(view)
    ...     return np.linalg.norm(rec.X - view.truth.X) / np.linalg.norm(view.truth.X)
    >>> bool(err(SampleAxesAttack()) < err(KnownAnchorAttack("procrustes")))
    True
    """

    _parameter_constraints: dict = {**_V_CONSTRAINTS}

    def __init__(self, v=None, *, anchor_noise=DEPRECATED):
        self.v = v
        self.anchor_noise = anchor_noise

    def _estimate(self, view):
        ch = _Channels(self, view)
        O = polar(ch.M) if ch.noiseless else _sample_axes_rotation(ch)
        psi = ch.translation(O)
        return _gdp_inverse(view.Y, O, psi), O, psi
