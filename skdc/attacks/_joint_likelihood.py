"""The joint-likelihood attack: one likelihood over rotations for every channel a colluder holds.

Against I-GDP with noisy anchors the attacker sees the target's secret ``O_i`` through two
channels. The anchor: ``B_i = A O_i + 1 Psi_i^T + v W_i`` with Gaussian ``W_i`` (Def 4.1 of
[1]_), whose centered log-likelihood is ``tr(O^T Abar^T Bbar) / v^2`` up to a constant. The
data: the target's de-rotated rows ``Yc O^T`` and the colluders' rows ``Xc`` are samples of one
population; modelled as one Gaussian with unknown covariance, the profile log-likelihood (the
covariance replaced by its maximum-likelihood estimate, the pooled scatter over ``N`` rows) is
``-(N / 2) log det(Xc^T Xc + O Yc^T Yc O^T)`` up to a constant. The attack maximises their sum
over the orthogonal group, climbing from the Procrustes and the sample-axes estimates.

The covariance is profiled out rather than fixed at the sample's: a fixed covariance makes
the data term as sure of the sample's principal axes as if they were the population's, and
on tabular data the true rotation then scores far below the sample-axes estimate.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np

from ..utils import polar
from ..utils._deprecation import DEPRECATED
from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval
from ._base import BaseAttack, _gdp_inverse
from ._docstring import _examples_setup
from ._sample_axes import _V_CONSTRAINTS, _Channels, _sample_axes_rotation

__all__ = ["JointLikelihoodAttack"]


def _euclidean_gradient(ch, O):
    """Gradient of the joint log-likelihood in ``O``: ``M / v^2 - N K^{-1} O T`` with
    ``K = C + O T O^T`` (plus the ridge)."""
    K = ch.C + O @ ch.T @ O.T
    K[np.diag_indices_from(K)] += ch.ridge
    return ch.M / ch.v**2 - (ch.n_x + ch.n_y) * np.linalg.solve(K, O @ ch.T)


def _curvature(ch, O, c, Ux):
    """A positive estimate of minus the Hessian of the log-likelihood along each plane of
    rotation ``(k, l)`` of the sample's principal axes ``Ux`` (eigenvalues ``c`` of ``C``).

    With the target's scatter mapped to those axes, ``s = diag(Ux^T O T O^T Ux)``, the data
    term restricted to a rotation by ``theta`` in the plane ``(k, l)`` of aligned axes has
    second derivative ``-N (s_k - s_l)(c_k - c_l) / ((c_k + s_k)(c_l + s_l))`` at 0, and the
    anchor term ``-(P_kk + P_ll) / v^2`` with ``P = Ux^T M O^T Ux``. Their magnitudes, floored
    at ``1e-8`` times the largest, scale the gradient: the planes of the principal axes differ
    in curvature by orders of magnitude, which stalls a plain gradient ascent.
    """
    s = np.einsum("ik,ij,jk->k", Ux, O @ ch.T @ O.T, Ux)
    p = np.einsum("ik,ij,jk->k", Ux, ch.M @ O.T, Ux)
    a = c + s + ch.ridge
    H = (ch.n_x + ch.n_y) * np.abs(np.subtract.outer(s, s) * np.subtract.outer(c, c))
    H = H / np.outer(a, a) + np.abs(np.add.outer(p, p)) / ch.v**2
    return np.maximum(H, 1e-8 * max(float(H.max()), 1e-300))


def _ascend(ch, O, value, max_iter, tol):
    """Preconditioned Riemannian gradient ascent on the orthogonal group from ``O``.

    A left rotation ``O -> (I + t Delta) O``, retracted by the polar factor, moves along the
    skew direction ``Delta``; the Riemannian gradient there is ``skew(G O^T)`` for the Euclidean
    gradient ``G``. ``Delta`` is that gradient divided, plane by plane of the sample's principal
    axes, by the curvature of :func:`_curvature` (a diagonal Newton step, a positive scaling:
    still an ascent direction). The step ``t`` starts at 1 and is halved until the Armijo
    condition holds, so every accepted step increases the objective: the result is never below
    the start. Stops when a step gains less than ``tol`` relative to ``|l|``, or after
    ``max_iter`` steps.
    """
    c, Ux = np.linalg.eigh(ch.C)
    eye = np.eye(O.shape[0])
    for _ in range(max_iter):
        grad = _euclidean_gradient(ch, O) @ O.T
        grad = (grad - grad.T) / 2
        delta = Ux @ ((Ux.T @ grad @ Ux) / _curvature(ch, O, c, Ux)) @ Ux.T
        slope = float(np.sum(grad * delta))
        if slope <= 0.0:
            break
        step = 1.0
        while True:
            O_new = polar((eye + step * delta) @ O)
            new = ch.log_likelihood(O_new)
            if new >= value + 1e-4 * step * slope:
                break
            step /= 2
            if step < 1e-10:
                return O, value
        gain, O, value = new - value, O_new, new
        if gain <= tol * max(abs(value), 1.0):
            break
    return O, value


@Substitution(references=gdp_paper_references, examples=_examples_setup)
class JointLikelihoodAttack(BaseAttack):
    """Maximise over rotations one likelihood of the anchor and data channels.

    Non-paper extension. With ``M = Abar^T Bbar`` the anchor cross-product, ``Xc`` the
    colluders' centered rows, ``Yc`` the target's centered uploads and ``N`` their total
    number of rows, the attack maximises over orthogonal ``O``

    ``l(O) = tr(O^T M) / v^2 - (N / 2) log det(Xc^T Xc + O Yc^T Yc O^T)``

    the anchor term being the Gaussian log-likelihood of the target's anchor upload under the
    declared noise ``v`` (Def 4.1 of [1]_) and the data term the profile Gaussian
    log-likelihood of the colluders' rows and the target's de-rotated rows as one population
    of unknown covariance. It climbs by a preconditioned Riemannian gradient ascent (a diagonal
    Newton step in the planes of the sample's principal axes) with Armijo steps from each
    of the Procrustes estimate (eq. (61)-(65) of [1]_) and :class:`SampleAxesAttack`'s, and
    keeps the higher summit: it never ends below the better start. Then ``Psihat = b - Ohat^T a``
    (eq. (69) of [1]_) and ``Xhat = (Y_i - 1 Psihat^T) Ohat^T``. With a noiseless anchor the
    anchor term dominates and ``Ohat = Pi(M)``, exact (Prop 3.1 of [1]_). With declared
    private-data noise ``sigma`` the target's scatter is taken less ``n sigma^2 I``.

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
        The anchor-noise scale ``v`` (Def 4.1 of [1]_) weighing the anchor term. ``None``
        reads the aligner's ``v``; when that is 0 (uploads that arrive noisy), it is
        estimated from the residual of the Procrustes fit.
    max_iter : int, default=200
        Largest number of ascent steps from each start.
    tol : float, default=1e-9
        Stop when a step gains less than ``tol`` times ``|l(O)|``.
    anchor_noise : float or None, default="deprecated"
        Deprecated spelling of ``v``.

        .. deprecated:: 0.2
           ``anchor_noise`` is renamed ``v`` and will be removed in 0.3.

    See Also
    --------
    SampleAxesAttack : The best signed permutation of the principal axes under ``l``.
    KnownAnchorAttack : The anchor term alone (``'procrustes'``).

    {references}

    {examples}
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdc.alignment import GOPPAligner
    >>> from skdc.attacks import JointLikelihoodAttack, KnownAnchorAttack
    >>> X = X * [4.0, 2.0, 1.0, 0.5]  # distinct variances
    >>> pipe = make_pipeline(IGDP(2, random_state=0), GOPPAligner(v=0.3)).fit(X)
    >>> view = collusion_view(pipe, X)
    >>> def err(attack):
    ...     rec = attack.reconstruct(view)
    ...     return np.linalg.norm(rec.X - view.truth.X) / np.linalg.norm(view.truth.X)
    >>> bool(err(JointLikelihoodAttack()) < err(KnownAnchorAttack("procrustes")))
    True
    """

    _parameter_constraints: dict = {
        **_V_CONSTRAINTS,
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, v=None, *, max_iter=200, tol=1e-9, anchor_noise=DEPRECATED):
        self.v = v
        self.max_iter = max_iter
        self.tol = tol
        self.anchor_noise = anchor_noise

    def _estimate(self, view):
        ch = _Channels(self, view)
        if ch.noiseless:
            O = polar(ch.M)
        else:
            # the likelihood has many local maxima (a flipped or swapped axis is one); climb
            # from both estimates and keep the higher summit: it is at least the better start
            summits = [_ascend(ch, O0, ch.log_likelihood(O0), self.max_iter, self.tol)
                       for O0 in (polar(ch.M), _sample_axes_rotation(ch))]
            O = max(summits, key=lambda summit: summit[1])[0]  # the first of equal values
        psi = ch.translation(O)
        return _gdp_inverse(view.Y, O, psi), O, psi
