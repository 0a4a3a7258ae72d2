"""Attacks on geometric data perturbation under analyst-participant collusion [1]_.

* :class:`KnownSecretAttack`: against C-GDP the colluder's secret is everybody's secret, so
  inversion is exact up to the private-data noise (Prop 2.5, eq. (74)).
* :class:`KnownAnchorAttack`: the colluder discloses the raw anchor ``A``; the target's anchor
  upload ``B_i = A O_i + 1 Psi_i^T (+ v W_i)`` is then a set of known-input pairs. Noiseless,
  the secret is recovered exactly (Algorithm 3, Prop 3.1, eq. (75)-(76)); with anchor noise the
  Moore-Penrose (eq. (57)-(60)) and orthogonal-Procrustes (eq. (61)-(65)) estimators apply.
* :class:`AlignmentMapAttack`: the analyst's own alignment rotations satisfy ``O_j Rhat_j = Q``
  for all j at ``v = 0``; the colluder's ``O_c`` calibrates ``Q`` (eq. (66)-(70)).

All of them are exact at ``v = 0`` and form, with the classical attacks, an envelope that
lower-bounds leakage; none is a guarantee (Section 4.4 of [1]_: the attacks are feasible under
the threat model but not exhaustive).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import numpy as np

from ..utils import center, polar
from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import StrOptions
from ._base import BaseAttack, _gdp_inverse
from ._docstring import _examples_setup

__all__ = ["AlignmentMapAttack", "KnownAnchorAttack", "KnownSecretAttack"]


@Substitution(references=gdp_paper_references, examples=_examples_setup)
class KnownSecretAttack(BaseAttack):
    """Invert C-GDP with the common secret disclosed by the colluder (Prop 2.5 of [1]_).

    ``Xhat_i = (Y_i - 1 Psi^T) O^T`` (eq. (74)). Exact for C-GDP; with private-data noise the
    reconstruction is ``X_i + sigma W_i O^T``, the noise being the only protection.

    Read more in the :ref:`User Guide <what_an_attacker_knows>`; the example
    :ref:`sphx_glr_auto_examples_plot_attack_gallery.py` shows its reconstructions.

    Threat model: the analyst holds the target's uploads; the colluder discloses the common
    ``(O, Psi)``. Requires a common-secret mechanism (:class:`~skdc.mechanisms.CGDP`): under
    independent secrets the colluder's secret says nothing about the target's. Several
    colluders disclose the same common secret, so they add nothing: the attack inverts with the
    first colluder's copy.

    A lower reconstruction error means less privacy; the scorers built by
    :func:`~skdc.metrics.make_attack_scorer` turn every metric so that higher means more private.

    See Also
    --------
    KnownAnchorAttack : The same leak through a disclosed anchor (AA-I-GDP).

    {references}

    {examples}
    >>> from skdc.attacks import KnownSecretAttack
    >>> view = collusion_view(CGDP(2, random_state=0).fit(X), X)
    >>> rec = KnownSecretAttack().reconstruct(view)
    >>> bool(np.allclose(rec.X, view.truth.X))
    True
    """

    def _estimate(self, view):
        self._require(
            view, "colluder_rotations", "colluder_translations",
            why="the colluder's GDP secret (rotation and translation)",
        )
        if not view.common_secret:
            raise ValueError(
                f"KnownSecretAttack inverts a common secret (C-GDP), but the mechanism "
                f"{type(view.mechanism).__name__} draws an independent secret per participant: "
                "the colluder's secret says nothing about the target's. Use "
                "KnownAnchorAttack or AlignmentMapAttack against I-GDP."
            )
        # one common secret: every colluder holds the same (O, Psi)
        O, psi = view.colluder_rotations[0], view.colluder_translations[0]
        self._require_square(view, O, "the colluder's rotation")
        return _gdp_inverse(view.Y, O, psi), O, psi  # eq. (74) in [1]


@Substitution(references=gdp_paper_references, examples=_examples_setup)
class KnownAnchorAttack(BaseAttack):
    """Recover the target's secret from the disclosed anchor and its anchor upload [1]_.

    With ``a`` the anchor mean, ``Abar`` the centered anchor, ``b_i`` and ``Bbar_i`` the mean
    and centered version of the target's anchor upload as the analyst received it:

    * ``"exact"`` (Algorithm 3, Prop 3.1, eq. (75)-(76)): ``Ohat = Abar^+ Bbar_i``,
      ``Psihat = b_i - Ohat^T a``, ``Xhat = (Y_i - 1 Psihat^T) Ohat^T``; exact for noiseless
      anchors when ``rank(Abar) = d``;
    * ``"mp"`` (Moore-Penrose, eq. (57)-(60)): the same ``Ohat``, unbiased under anchor noise
      (``Ohat - O_i = v Abar^+ W_i``), inverted by its pseudo-inverse;
    * ``"procrustes"`` (orthogonal Procrustes, eq. (61)-(65)): ``Ohat = Pi(Abar^T Bbar_i)``,
      inverted by its transpose.

    Read more in the :ref:`User Guide <what_an_attacker_knows>`; the example
    :ref:`sphx_glr_auto_examples_plot_attack_gallery.py` shows its reconstructions.

    Threat model: the analyst holds the target's uploads and anchor upload; the colluder
    discloses the raw anchor ``A``. Requires an anchor protocol (e.g.
    :class:`~skdc.mechanisms.IGDP`) with a GDP (width-preserving) mechanism. Every colluder
    discloses the same shared ``A``, and the estimators read only ``A`` and the target's own
    anchor upload, so several colluders give the same reconstruction as one. A lower
    reconstruction error means less privacy; scorers report higher = more private.

    Parameters
    ----------
    estimator : {'exact', 'mp', 'procrustes'}, default='exact'
        The secret estimator.

    See Also
    --------
    AlignmentMapAttack : Calibrates the analyst's own alignment maps instead.

    {references}

    {examples}
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdc.alignment import GOPPAligner
    >>> from skdc.attacks import KnownAnchorAttack
    >>> pipe = make_pipeline(IGDP(2, random_state=0), GOPPAligner(v=0.0)).fit(X)
    >>> rec = KnownAnchorAttack().reconstruct(collusion_view(pipe, X))
    >>> rec.X.shape, bool(np.allclose(rec.X, collusion_view(pipe, X).truth.X))
    ((29, 4), True)
    """

    _parameter_constraints: dict = {"estimator": [StrOptions({"exact", "mp", "procrustes"})]}

    def __init__(self, estimator="exact"):
        self.estimator = estimator

    def _estimate(self, view):
        A, B = self._anchor_pairs(
            view,
            why="the raw anchor A disclosed by the colluder and the target's anchor upload B "
                "(a mechanism with an anchor, e.g. IGDP(anchor='orthonormal'))",
        )
        a, Abar = center(A)
        b, Bbar = center(B)
        if self.estimator == "procrustes":
            O = polar(Abar.T @ Bbar)  # eq. (61)-(65) in [1]
        else:
            O = np.linalg.pinv(Abar) @ Bbar  # eq. (75) / (57)-(59) in [1]
        self._require_square(view, O, "an estimated rotation")
        psi = b - O.T @ a  # eq. (76) / (69) in [1]
        X = _gdp_inverse(view.Y, O, psi, pseudo_inverse=self.estimator == "mp")  # eq. (60)
        return X, O, psi


@Substitution(references=gdp_paper_references, examples=_examples_setup)
class AlignmentMapAttack(BaseAttack):
    """Calibrate the analyst's alignment rotations with the colluder's secret (AM, [1]_).

    At ``v = 0`` every participant satisfies ``O_j Rhat_j = Q`` for one unknown ``Q``; the
    colluder's ``O_c`` and the analyst's ``Rhat_c`` give ``Qhat = Pi(O_c Rhat_c)``, then
    ``Ohat_i = Qhat Rhat_i^T``, ``Psihat_i = b_i - Ohat_i^T a`` and
    ``Xhat_i = (Y_i - 1 Psihat_i^T) Ohat_i^T`` (eq. (66)-(70)). Its error vanishes with ``v``.
    A set ``K`` of colluders calibrates with all of theirs, as the reference code of [1]_
    does: ``Qhat = Pi(sum_{k in K} O_k Rhat_k)``, the orthogonal matrix closest to their mean
    (the least-squares fit of eq. (67) over ``K``), which averages their alignment errors.

    Read more in the :ref:`User Guide <several_colluders>`; the example
    :ref:`sphx_glr_auto_examples_plot_attack_gallery.py` shows its reconstructions.

    Threat model: the analyst holds its fitted rotations ``Rhat_j`` and the target's uploads; the
    colluders disclose their ``O_k`` and the raw anchor (for its mean ``a``). Requires an aligner
    step with ``rotations_`` (:class:`~skdc.alignment.GOPPAligner` or
    :class:`~skdc.alignment.ReferenceAligner`). A lower reconstruction error means less privacy;
    scorers report higher = more private.

    See Also
    --------
    KnownAnchorAttack : Uses the disclosed anchor directly.

    {references}

    {examples}
    >>> from sklearn.pipeline import Pipeline
    >>> from skdc.alignment import GOPPAligner
    >>> from skdc.attacks import AlignmentMapAttack
    >>> pipe = Pipeline([("gdp", IGDP(2, random_state=0)), ("align", GOPPAligner(v=0.0))])
    >>> view = collusion_view(pipe.fit(X), X)  # the analyst's Rhat_j: pipe["align"].rotations_
    >>> bool(np.allclose(AlignmentMapAttack().reconstruct(view).X, view.truth.X))
    True
    >>> pipe.set_params(gdp=IGDP(4, random_state=0)).fit(X)  # now four participants
    Pipeline(...)
    >>> view = collusion_view(pipe, X, colluder=[0, 2], target=1)  # two colluders
    >>> bool(np.allclose(AlignmentMapAttack().reconstruct(view).X, view.truth.X))
    True
    """

    def _estimate(self, view):
        self._require(
            view, "aligner_rotations",
            why="the analyst's alignment rotations (an aligner step with rotations_, e.g. "
                "GOPPAligner, right after the mechanism)",
        )
        self._require(
            view, "colluder_rotations", "anchor", "B",
            why="the colluder's GDP rotation, the raw anchor and the target's anchor upload",
        )
        R = view.aligner_rotations
        # eq. (67) in [1], summed over the colluders K as in the paper's reference code
        Q = polar(sum(O @ R[k] for O, k in zip(view.colluder_rotations, view.colluders)))
        O = Q @ R[view.target].T  # eq. (68)
        self._require_square(view, O, "an estimated rotation")
        psi = view.B.mean(axis=0) - O.T @ view.anchor.mean(axis=0)  # eq. (69)
        return _gdp_inverse(view.Y, O, psi), O, psi  # eq. (70)
