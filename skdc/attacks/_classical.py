"""Classical attacks on geometric data perturbation: known input, known sample and ICA.

The GDP paper [1]_ cites these attacks ([21, 23] there) but leaves them out of its analysis
(Section 2, and Section 5.1 for ICA); they are extensions of skdc, labelled non-paper. Each
threat model is in the class docstring. They target any width-preserving GDP map
``Y = X O + 1 Psi^T`` and need no anchor, so they also apply to C-GDP and to unaligned I-GDP.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
.. [2] Chen, Liu, "Towards attack-resilient geometric data perturbation", SIAM SDM, 2007.
.. [3] Liu, Giannella, Kargupta, "An attacker's view of distance preserving maps for privacy
   preserving data mining", PKDD, 2006.
"""

# Licence: BSD 3 clause

from numbers import Integral

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.decomposition import FastICA

from ..utils import center, polar
from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, StrOptions
from ._base import BaseAttack, _gdp_inverse
from ._docstring import _examples_setup

__all__ = ["ICAAttack", "KnownInputAttack", "KnownSampleAttack"]


def _check_sample(attack, view, min_rows):
    n = view.colluder_X.shape[0]
    if n < min_rows:
        raise ValueError(
            f"{type(attack).__name__} matches the target's uploads against a sample of the same "
            f"population (the colluder's rows); it needs at least {min_rows} colluder rows among "
            f"the evaluation rows, got {n} of colluder(s) {list(view.colluders)}. Evaluate on "
            "more rows or add colluders."
        )
    if view.colluder_X.shape[1] != view.Y.shape[1]:
        raise ValueError(
            f"{type(attack).__name__} inverts a width-preserving GDP map; the mechanism maps "
            f"{view.colluder_X.shape[1]} features to uploads of width {view.Y.shape[1]}. Use "
            "AnchorRegressionAttack for dimension-reducing mechanisms."
        )


@Substitution(references=gdp_paper_references, examples=_examples_setup)
class KnownInputAttack(BaseAttack):
    """Estimate the target's secret from a few of its leaked (record, upload) pairs [2]_.

    Non-paper extension (``attack_c_known_input`` of the reference code of [1]_): center the
    ``n_known`` leaked pairs, estimate ``Ohat = Pi(Xk^T Yk)`` (``'procrustes'``) or
    ``Ohat = Xk^+ Yk`` (``'exact'``, ``'mp'``), set ``Psihat = ybar - Ohat^T xbar`` and invert
    every upload. Noiselessly exact once the centered leaked records span the feature space
    (``n_known >= n_features + 1`` in general position).

    Read more in the :ref:`User Guide <threat_model>`.

    Threat model: the attacker learned ``n_known`` of the target's raw records and the uploads they
    produced (simulated by :meth:`CollusionView.leak_target_pairs`); no anchor or colluder secret is
    used, so the number of colluders does not matter. A lower reconstruction error means less
    privacy; scorers report higher = more private.

    Parameters
    ----------
    n_known : int, default=10
        Number of leaked pairs.
    estimator : {'procrustes', 'exact', 'mp'}, default='procrustes'
        Orthogonal Procrustes, or least squares inverted by the transpose (``'exact'``) or the
        pseudo-inverse (``'mp'``).
    random_state : int, RandomState instance or None, default=None
        Which of the target's rows leak.

    {references}
    .. [2] Chen, Liu, "Towards attack-resilient geometric data perturbation", SIAM SDM, 2007.

    {examples}
    >>> from skdc.attacks import KnownInputAttack
    >>> view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    >>> rec = KnownInputAttack(n_known=5, random_state=0).reconstruct(view)
    >>> bool(np.allclose(rec.X, view.truth.X))
    True
    """

    _parameter_constraints: dict = {
        "n_known": [Interval(Integral, 2, None, closed="left")],
        "estimator": [StrOptions({"procrustes", "exact", "mp"})],
        "random_state": ["random_state"],
    }

    def __init__(self, n_known=10, *, estimator="procrustes", random_state=None):
        self.n_known = n_known
        self.estimator = estimator
        self.random_state = random_state

    def _estimate(self, view):
        Xk, Yk, _ = view.leak_target_pairs(self.n_known, self.random_state)
        if Xk.shape[1] != Yk.shape[1]:
            raise ValueError(
                f"KnownInputAttack inverts a width-preserving GDP map; got records of width "
                f"{Xk.shape[1]} and uploads of width {Yk.shape[1]}. Use AnchorRegressionAttack."
            )
        xbar, Xc = center(Xk)
        ybar, Yc = center(Yk)
        if self.estimator == "procrustes":
            O = polar(Xc.T @ Yc)
        else:
            O = np.linalg.pinv(Xc) @ Yc
        psi = ybar - O.T @ xbar
        return _gdp_inverse(view.Y, O, psi, pseudo_inverse=self.estimator == "mp"), O, psi


def _signed_moment_signs(Sx, Sy):
    """Signs matching the standardized third moments (fifth when both are near zero).

    ``Sx`` and ``Sy`` are projections of centered rows. Each column is divided by its
    root-mean-square floored at ``sqrt(eps)``, as in the reference code of [1]_: a constant
    direction (rounding noise of order 1e-16) then has moments near zero instead of the
    standardized noise's, falls to the fifth moments and, where a product is exactly 0, to
    ``+1``. A product ``>= 0`` gives ``+1``.
    """
    floor = np.sqrt(np.finfo(np.float64).eps)
    Zx = Sx / np.maximum(np.sqrt((Sx * Sx).mean(0)), floor)
    Zy = Sy / np.maximum(np.sqrt((Sy * Sy).mean(0)), floor)
    Zx2, Zy2 = Zx * Zx, Zy * Zy
    sx, sy = (Zx2 * Zx).mean(0), (Zy2 * Zy).mean(0)
    weak = np.abs(sx) + np.abs(sy) < 1e-3
    if np.any(weak):
        sx = np.where(weak, (Zx2 * Zx2 * Zx).mean(0), sx)
        sy = np.where(weak, (Zy2 * Zy2 * Zy).mean(0), sy)
    return np.where(sx * sy >= 0, 1.0, -1.0)


@Substitution(references=gdp_paper_references)
class KnownSampleAttack(BaseAttack):
    """Match the principal axes of the target's uploads to a same-population sample [2]_.

    Non-paper extension (``attack_i_distribution_moment`` of the reference code of [1]_,
    labelled there as distribution-prior sensitivity): since ``cov(Y) = O^T cov(X) O``, the
    eigenvectors of the sample's covariance ``U_x`` and of the uploads' ``U_y`` (sorted by
    decreasing eigenvalue) give ``Ohat = U_x diag(s) U_y^T``, the signs ``s`` matching the
    standardized third moments of the projections (fifth moments when the third are ~0; a
    product ``>= 0`` gives ``+1``). Each projection is standardized by its root-mean-square
    floored at ``sqrt(eps)``, as in the reference code, so the signs of constant directions
    (constant pixels) follow that code's rule rather than standardized rounding noise. Then
    ``Psihat = ybar - Ohat^T xbar`` and ``Xhat = (Y - 1 Psihat^T) Ohat^T``. It works when the
    covariance has distinct eigenvalues and the projections are skewed.

    Read more in the :ref:`User Guide <threat_model>`.

    Threat model: the attacker holds a sample of the same population (here the colluders' own
    rows, pooled over all colluders: more colluders, a larger sample) and the target's uploads;
    no anchor is used. A lower reconstruction error means less
    privacy; scorers report higher = more private.

    {references}
    .. [2] Liu, Giannella, Kargupta, "An attacker's view of distance preserving maps for
       privacy preserving data mining", PKDD, 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.attacks import KnownSampleAttack, collusion_view
    >>> rng = np.random.RandomState(0)
    >>> X = rng.exponential(size=(4000, 3)) * [3.0, 2.0, 1.0]
    >>> view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    >>> err = KnownSampleAttack().reconstruct(view).X - view.truth.X
    >>> bool(np.linalg.norm(err) / np.linalg.norm(view.truth.X) < 0.2)
    True
    """

    def _estimate(self, view):
        _check_sample(self, view, 2)
        xbar, Xc = center(view.colluder_X)
        ybar, Yc = center(view.Y)
        lx, Ux = np.linalg.eigh(Xc.T @ Xc / len(Xc))
        ly, Uy = np.linalg.eigh(Yc.T @ Yc / len(Yc))
        Ux, Uy = Ux[:, ::-1], Uy[:, ::-1]  # decreasing eigenvalues
        signs = _signed_moment_signs(Xc @ Ux, Yc @ Uy)
        O = (Ux * signs) @ Uy.T
        psi = ybar - O.T @ xbar
        return _gdp_inverse(view.Y, O, psi), O, psi


@Substitution(references=gdp_paper_references)
class ICAAttack(BaseAttack):
    """Independent component analysis of the target's uploads, matched to a sample [2]_.

    Non-paper extension (Section 5.1 of [1]_ leaves ICA-based attacks out of its scope):
    :class:`~sklearn.decomposition.FastICA` separates the target's uploads and a
    same-population sample (the colluder's rows) into independent components; the two sets are
    matched (permutation and sign) by the distance between the quantiles of their
    unit-variance marginals, solved as an assignment problem. This yields a linear map ``M``
    with ``Xhat = (Y - ybar) M + xbar``; with ``orthogonal=True`` the attacker uses that the
    map is a GDP and projects ``M^T`` onto the orthogonal group. It works when the data has
    non-Gaussian, independent latent sources with distinguishable marginals (symmetric or
    identically distributed sources leave signs or the order ambiguous); a public
    rank-reducing projection is the paper's only mitigation.

    Read more in the :ref:`User Guide <threat_model>`.

    Threat model: the attacker holds the target's uploads and a sample of the same population (the
    colluders' rows, pooled over all colluders); no anchor is used. A lower reconstruction error
    means less privacy; scorers report higher = more private.

    Parameters
    ----------
    orthogonal : bool, default=True
        Project the estimated map onto the orthogonal group (GDP structure).
    n_quantiles : int, default=50
        Quantile levels compared when matching components.
    max_iter : int, default=400
        Iterations of each FastICA fit.
    random_state : int, RandomState instance or None, default=None
        Seeds FastICA.

    {references}
    .. [2] Chen, Liu, "Towards attack-resilient geometric data perturbation", SIAM SDM, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.attacks import ICAAttack, collusion_view
    >>> rng = np.random.RandomState(0)  # independent sources with distinct skewed marginals
    >>> X = np.column_stack([rng.gamma(k, size=3000) for k in (1.0, 3.0, 9.0)])
    >>> view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    >>> err = ICAAttack(random_state=0).reconstruct(view).X - view.truth.X
    >>> bool(np.linalg.norm(err) / np.linalg.norm(view.truth.X) < 0.2)
    True
    """

    _parameter_constraints: dict = {
        "orthogonal": ["boolean"],
        "n_quantiles": [Interval(Integral, 3, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, *, orthogonal=True, n_quantiles=50, max_iter=400, random_state=None):
        self.orthogonal = orthogonal
        self.n_quantiles = n_quantiles
        self.max_iter = max_iter
        self.random_state = random_state

    def _ica(self, X):
        ica = FastICA(
            whiten="unit-variance", max_iter=self.max_iter, random_state=self.random_state
        )
        return ica, ica.fit_transform(X)

    def _estimate(self, view):
        d = view.Y.shape[1]
        _check_sample(self, view, d + 1)
        ica_x, Sx = self._ica(view.colluder_X)
        ica_y, Sy = self._ica(view.Y)
        levels = np.linspace(0.02, 0.98, self.n_quantiles)
        Qx = np.quantile(Sx, levels, axis=0)  # (q, k)
        Qy = np.quantile(Sy, levels, axis=0)
        # cost of matching y-component k to x-component l with sign +1 / -1
        plus = np.abs(Qy[:, :, None] - Qx[:, None, :]).mean(0)
        minus = np.abs(-Qy[::-1, :, None] - Qx[:, None, :]).mean(0)
        rows, cols = linear_sum_assignment(np.minimum(plus, minus))
        signs = np.where(minus[rows, cols] < plus[rows, cols], -1.0, 1.0)
        P = np.zeros((Sy.shape[1], Sx.shape[1]))
        P[rows, cols] = signs
        # Sy = (Y - ybar) Wy^T; Sx ~ Sy P; X ~ Sx Ax^T + xbar
        M = ica_y.components_.T @ P @ ica_x.mixing_.T
        xbar, ybar = ica_x.mean_, ica_y.mean_
        if not self.orthogonal:
            return (view.Y - ybar) @ M + xbar, None, None
        O = polar(M.T)
        psi = ybar - O.T @ xbar
        return _gdp_inverse(view.Y, O, psi), O, psi
