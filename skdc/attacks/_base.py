"""Template shared by the attacks: validate, check the view, reconstruct, decode."""

# Licence: BSD 3 clause

from abc import abstractmethod

import numpy as np
from sklearn.base import BaseEstimator

from ..utils._sklearn_compat import validate_estimator_params
from ._view import CollusionView, Reconstruction

__all__ = ["BaseAttack"]


class BaseAttack(BaseEstimator):
    """Base class of the attacks.

    A subclass supplies ``_estimate(view) -> (X_mechanism, rotation, translation)``; the
    template validates the parameters and the view, then decodes the reconstruction through
    the pipeline's public earlier steps.

    Warning: This class should not be used directly. Use derived classes instead.
    """

    _parameter_constraints: dict = {}

    @abstractmethod
    def _estimate(self, view):
        """Reconstruct the target's rows in the mechanism's input space."""

    def reconstruct(self, view):
        """Reconstruct the target's rows from a collusion view.

        Parameters
        ----------
        view : CollusionView
            What the analyst and the colluder know (see :func:`collusion_view`).

        Returns
        -------
        reconstruction : Reconstruction
            The reconstruction, decoded to the pipeline's input space, and the estimated
            secrets where the attack estimates them.
        """
        validate_estimator_params(self)
        if not isinstance(view, CollusionView):
            raise TypeError(
                f"{type(self).__name__}.reconstruct expects a CollusionView built by "
                f"skdc.attacks.collusion_view(pipeline, X); got {type(view).__name__}."
            )
        X_mech, rotation, translation = self._estimate(view)
        return Reconstruction(
            X=view.decode(X_mech),
            X_mechanism=X_mech,
            rotation=rotation,
            translation=translation,
        )

    # -- helpers for subclasses ----------------------------------------------------------
    def _require(self, view, *names, why):
        missing = [n for n in names if getattr(view, n) is None]
        if missing:
            raise ValueError(
                f"{type(self).__name__} needs {why}; the collusion view lacks "
                f"{', '.join(missing)} (mechanism {type(view.mechanism).__name__}"
                f"{'' if view.aligner is None else ', aligner ' + type(view.aligner).__name__}"
                ")."
            )

    def _anchor_pairs(self, view, *, why):
        """The known-input pairs ``(A, B_i)``: the disclosed raw anchor and the target's anchor
        upload as the analyst received it, row by row."""
        self._require(view, "anchor", "B", why=why)
        A, B = view.anchor, view.B
        if A.shape[0] != B.shape[0]:
            raise ValueError(
                f"the anchor has {A.shape[0]} rows but the target's anchor upload has "
                f"{B.shape[0]}: they must be the same anchor rows."
            )
        return A, B

    def _require_square(self, view, matrix, what):
        if matrix.shape[0] != matrix.shape[1] or view.Y.shape[1] != matrix.shape[1]:
            raise ValueError(
                f"{type(self).__name__} inverts a GDP map, which keeps the width; got {what} "
                f"of shape {matrix.shape} for uploads of width {view.Y.shape[1]}. For "
                "nonlinear or dimension-reducing mechanisms use AnchorRegressionAttack."
            )


def _gdp_inverse(Y, rotation, translation, *, pseudo_inverse=False):
    """``(Y - 1 Psihat^T) Ohat^T`` (eq. (70)), or ``pinv(Ohat)`` for the MP attack (eq. (60))."""
    inv = np.linalg.pinv(rotation) if pseudo_inverse else rotation.T
    return (Y - translation) @ inv
