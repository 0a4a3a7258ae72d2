"""Reference-participant orthogonal Procrustes alignment (Algorithm 2 of [1]_).

Every participant's centered anchor upload is rotated onto the reference participant's by an
orthogonal Procrustes fit, ``R_i = Pi(Bbar_i^T Bbar_s)``, and its offset replaced by the
reference's. With noiseless anchors whose centered version has full column rank the alignment
is exact: ``R_i = O_i^T O_s`` (Lemma S.2) and the aligned output equals C-GDP with the reference
participant's secret (Prop 2.12).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import numpy as np

from ..utils._docstring import Substitution
from ..utils._linalg import polar_batched
from ..utils._references import gdp_paper_references
from ._base import (
    BaseAligner,
    _aligner_attributes_doc,
    _reference_constraint,
    _reference_stack,
)

__all__ = ["ReferenceAligner"]


@Substitution(attributes=_aligner_attributes_doc, references=gdp_paper_references)
class ReferenceAligner(BaseAligner):
    """Align every participant onto a reference participant's frame (Algorithm 2 of [1]_).

    Read more in the :ref:`User Guide <protocols>`.

    The map of participant ``i`` is ``N_i(T) = (T - b_i) R_i + b_s`` with
    ``R_i = Pi(Bbar_i^T Bbar_s)`` and ``b_i`` the mean of its anchor upload; the reference keeps
    its own uploads (``R_s = I``).

    Parameters
    ----------
    reference : int, default=0
        The reference participant ``s`` whose frame everyone is mapped to.

    Attributes
    ----------
    rotations_ : ndarray of shape (n_participants, n_features, n_features)
        The alignment rotations ``R_i``; ``rotations_[reference]`` is the identity.
    anchor_means_ : ndarray of shape (n_participants, n_features)
        The anchor-upload means ``b_i``.
    anchor_uploads_ : ndarray of shape (n_participants, n_anchors, n_features)
        The anchor uploads as the analyst received them.
    {attributes}

    See Also
    --------
    GOPPAligner : Noisy-anchor alignment without a reference participant.

    {references}

    Examples
    --------
    The gallery example :ref:`sphx_glr_auto_examples_plot_cgdp_igdp_aligned.py` compares it with
    C-GDP and unaligned I-GDP.

    >>> import numpy as np
    >>> from skdc.mechanisms import CGDP, IGDP
    >>> from skdc.alignment import ReferenceAligner
    >>> X = np.random.RandomState(0).rand(40, 3)
    >>> Z = ReferenceAligner().fit_transform(IGDP(3, random_state=0).fit_transform(X))
    >>> Z_common = CGDP(3, random_state=0).fit_transform(X)  # same secret as participant 0
    >>> bool(np.allclose(Z, Z_common))
    True
    """

    _parameter_constraints: dict = {"reference": _reference_constraint}

    def __init__(self, reference=0):
        self.reference = reference

    def _fit_maps(self, anchors, uploads):
        B, s = _reference_stack(anchors, self)
        self.anchor_uploads_ = B
        self.anchor_means_ = B.mean(axis=1)
        Bbar = B - self.anchor_means_[:, None, :]
        # R_i = Pi(Bbar_i^T Bbar_s), Alg. 2 of [1]
        self.rotations_ = polar_batched(np.swapaxes(Bbar, 1, 2) @ Bbar[s])
        self.rotations_[s] = np.eye(B.shape[2])
        return B.shape[2]

    def _map(self, Y, i):
        s = self.reference
        if i == s:
            return Y
        return (Y - self.anchor_means_[i]) @ self.rotations_[i] + self.anchor_means_[s]
