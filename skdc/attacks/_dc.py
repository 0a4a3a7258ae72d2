"""Data-collaboration anchor attacks: regress raw rows on anchor uploads [1]_.

In the reconstruction-risk experiment of the KTI paper (Section 5.5 of [1]_), raw anchor rows
leak to the analyst through a colluding party. The pairs ``(B_i[I], A[I])`` of the target's anchor
upload and the raw anchor then train a map from the target's representation back to the raw
space, applied to its private-data uploads. It needs no knowledge of the mechanism, so it
attacks nonlinear mechanisms (per-participant UMAP or kernel PCA) and GDP alike.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026: Section 5.5, and its reference code
   for the PINV, LR and MLP attacks.
"""

# Licence: BSD 3 clause

import numpy as np
from sklearn.base import clone
from sklearn.neural_network import MLPRegressor

from ..utils import center
from ..utils._docstring import Substitution
from ..utils._references import kti_paper_references
from ..utils._sklearn_compat import HasMethods, StrOptions
from ._base import BaseAttack
from ._docstring import _examples_setup

__all__ = ["AnchorRegressionAttack"]


@Substitution(references=kti_paper_references, examples=_examples_setup)
class AnchorRegressionAttack(BaseAttack):
    """Learn upload -> raw from the target's anchor pairs and apply it to its uploads [1]_.

    Both sides are centered with the leaked rows' means, ``A_c = A_I - abar``,
    ``B_c = B_I - bbar`` (the centering of Section 5.5 of [1]_), then:

    * ``'pinv'``: fit the forward map ``Fhat = A_c^+ B_c`` (``x~ ~ x F``) and invert it,
      ``xhat = (y - bbar) Fhat^+ + abar``; for GDP with noiseless anchors this is exact;
    * ``'lr'``: regress back directly, ``Bhat = B_c^+ A_c``, ``xhat = (y - bbar) Bhat + abar``;
    * ``'mlp'``: ``MLPRegressor(hidden_layer_sizes=(128,), max_iter=600, early_stopping=True,
      validation_fraction=0.2, n_iter_no_change=10)`` fitted on ``(B_c, A_c)``;
    * any scikit-learn regressor (cloned, fitted on ``(B_c, A_c)``).

    Read more in the :ref:`User Guide <nonlinear_privacy>`; the example
    :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` measures it across reductions.

    Threat model: the analyst holds the target's uploads and anchor upload (as received); the
    colluder discloses the raw anchor rows ``anchor_rows`` (all by default). No mechanism
    secret is used; several colluders disclose the same anchor, so they give the same
    reconstruction as one. A lower reconstruction error means less privacy; scorers report higher =
    more private.

    Parameters
    ----------
    regressor : {'pinv', 'lr', 'mlp'} or regressor, default='pinv'
        How to learn the inverse map.
    anchor_rows : array-like of int or bool, default=None
        The leaked anchor rows ``I``; ``None`` leaks all of them.
    random_state : int or None, default=None
        Seeds the MLP.

    {references}

    {examples}
    >>> from skdc.attacks import AnchorRegressionAttack
    >>> view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    >>> bool(np.allclose(AnchorRegressionAttack().reconstruct(view).X, view.truth.X))
    True
    """

    _parameter_constraints: dict = {
        "regressor": [StrOptions({"pinv", "lr", "mlp"}), HasMethods(["fit", "predict"])],
        "anchor_rows": [None, "array-like"],
        "random_state": ["random_state"],
    }

    def __init__(self, regressor="pinv", *, anchor_rows=None, random_state=None):
        self.regressor = regressor
        self.anchor_rows = anchor_rows
        self.random_state = random_state

    def _estimate(self, view):
        A, B = self._anchor_pairs(
            view,
            why="the raw anchor rows disclosed by the colluder and the target's anchor upload "
                "(a mechanism with an anchor)",
        )
        if self.anchor_rows is not None:
            rows = np.asarray(self.anchor_rows)
            A, B = A[rows], B[rows]
        if A.shape[0] < 2:
            raise ValueError(
                f"AnchorRegressionAttack needs at least 2 leaked anchor rows; got {A.shape[0]}."
            )
        abar, Ac = center(A)
        bbar, Bc = center(B)
        Y = view.Y - bbar
        if isinstance(self.regressor, str) and self.regressor == "pinv":
            F = np.linalg.pinv(Ac) @ Bc
            return Y @ np.linalg.pinv(F) + abar, None, None
        if isinstance(self.regressor, str) and self.regressor == "lr":
            return Y @ (np.linalg.pinv(Bc) @ Ac) + abar, None, None
        if isinstance(self.regressor, str):  # "mlp": the reference code's MLP attack of [1]
            reg = MLPRegressor(
                hidden_layer_sizes=(128,), activation="relu", solver="adam", max_iter=600,
                early_stopping=True, validation_fraction=0.2, n_iter_no_change=10,
                random_state=self.random_state,
            )
        else:
            reg = clone(self.regressor)
        reg.fit(Bc, Ac)
        return np.asarray(reg.predict(Y), dtype=np.float64).reshape(len(Y), -1) + abar, None, None
