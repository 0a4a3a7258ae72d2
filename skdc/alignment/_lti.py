"""Linear Target-normalized Integration (LTI), Theorem 1 and Algorithm 1 of [1]_.

LTI solves ``min_{Z, G} sum_k ||A~(k) G^(k) - Z||_F^2`` subject to ``Z^T Z = I`` (Eqs. 13-14
of [1]_). For a fixed ``Z`` the best map is ``G^(k) = pinv(A~(k)) Z``, whose residual is
``tr(Z^T (I - P^(k)) Z)`` with ``P^(k) = Q^(k) Q^(k)^T`` the projector on ``range(A~(k))``. So
the objective is ``K d^ - tr(Z^T M Z)`` with ``M = W_Q W_Q^T``, ``W_Q = [Q^(1), ..., Q^(K)]``
(Eq. 21), and by Ky Fan ``Z`` spans the top ``d^`` left singular vectors of ``W_Q``
(Theorem 1 of [1]_). Orthonormalizing each participant first makes LTI invariant to any
invertible reparametrization ``A~(k) -> A~(k) E_k``, unlike MPP. ``center=True`` adds the
zero-sum constraint ``1^T Z = 0`` of the DC lab's code, the linear counterpart of KTI+Center
(Eqs. 49-53 of [1]_): with ``T`` the Helmert basis of ``{x : 1^T x = 0}``, ``Z = T Y`` and ``Y``
spans the top left singular vectors of ``T^T W_Q``.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

import warnings

import numpy as np

from ..utils._docstring import Substitution
from ..utils._references import kti_paper_references
from ._base import (
    _helmert_dot,
    _helmert_t_dot,
    _integration_attributes_doc,
    _LinearIntegration,
    _n_components_constraint,
    _pca_uploads_example_doc,
    _sign_flip,
    _target_width,
)

__all__ = ["LTIAligner"]


def _orth(B):
    """Orthonormal basis of ``range(B)`` by SVD (rank tolerance of ``numpy.linalg.matrix_rank``)."""
    U, s, _ = np.linalg.svd(B, full_matrices=False)
    if s.size == 0 or s[0] == 0:
        return U[:, :0]
    tol = max(B.shape) * np.finfo(float).eps * s[0]
    return U[:, s > tol]


@Substitution(
    attributes=_integration_attributes_doc,
    references=kti_paper_references,
    example=_pca_uploads_example_doc,
)
class LTIAligner(_LinearIntegration):
    """Linear Target-normalized Integration (Theorem 1, Algorithm 1 of [1]_).

    Read more in the :ref:`User Guide <nonlinear>`.

    ``Z`` holds the top ``d^`` left singular vectors of ``W_Q = [Q^(1), ..., Q^(K)]`` (each
    ``Q^(k)`` an orthonormal basis of participant ``k``'s anchor upload), and
    ``G^(k) = pinv(A~(k)) Z``. The optimal objective is ``K d^ - sum_j sigma_j(W_Q)^2`` and
    each ``sigma_j^2`` lies in ``[0, K]`` (``K`` iff the direction is in every participant's
    range). Participants may have different widths.

    Parameters
    ----------
    n_components : int, default=None
        Integrated width ``d^ <= n_anchors`` (``n_anchors - 1`` with ``center``); ``None``
        uses the largest upload width.
    center : bool, default=False
        Impose ``1^T Z = 0`` (the zero-sum option of the DC lab's code; the linear analogue of
        KTI+Center, Eq. 49 of [1]_): ``Z`` maximises ``tr(Z^T M Z)`` over orthonormal,
        column-centred targets, i.e. ``Z = T Y`` with ``Y`` the top ``d^`` left singular
        vectors of ``T^T W_Q`` and ``T`` the Helmert basis. Since ``1^T A~(k) G^(k) = 1^T
        P^(k) Z``, the aligned anchors are centred too when each upload's range holds ``1``.

    Attributes
    ----------
    target_matrix_ : ndarray of shape (n_anchors, n_components)
        The anchor target ``Z`` (``Z^T Z = I``).
    target_ : ndarray or None
        Deprecated spelling of ``target_matrix_`` (``target`` names the attacked party);
        removed in skdc 0.3.
    coef_ : list of ndarray of shape (h_k, n_components)
        The maps ``G^(k)``.
    singular_values_ : ndarray of shape (n_components,)
        ``sigma_j(W_Q)`` (``sigma_j(T^T W_Q)`` with ``center``), descending.
    ranks_ : list of int
        Numerical rank of each anchor upload.
    {attributes}

    See Also
    --------
    KTIAligner : The kernel (nonlinear) version.
    GEPAligner : Equal to LTI up to column scaling.

    {references}

    Examples
    --------
    {example}
    >>> from skdc.alignment import LTIAligner
    >>> lti = LTIAligner().fit(Y)
    >>> bool(np.allclose(lti.target_matrix_.T @ lti.target_matrix_, np.eye(3)))
    True
    >>> centred = LTIAligner(center=True).fit(Y)
    >>> bool(np.allclose(centred.target_matrix_.sum(axis=0), 0))
    True
    """

    _parameter_constraints: dict = {
        "n_components": _n_components_constraint,
        "center": ["boolean"],
    }

    def __init__(self, n_components=None, *, center=False):
        self.n_components = n_components
        self.center = center

    def _fit_maps(self, anchors, uploads):
        anchors = self._prepare_anchors(anchors)
        n_a = anchors[0].shape[0]
        d = _target_width(self, anchors)
        Qs = [_orth(b) for b in anchors]
        self.ranks_ = [q.shape[1] for q in Qs]
        WQ = np.hstack(Qs)  # W_Q, Eq. (21) of [1]
        if self.center:
            WQ = _helmert_t_dot(WQ)  # T^T W_Q: the problem on {Z = T Y}, as Eq. (53) of [1]
            n_a -= 1
        if d > WQ.shape[1]:
            warnings.warn(
                f"LTIAligner: n_components={d} exceeds rank(W_Q) <= {WQ.shape[1]}; the extra "
                "target columns come from the null space and carry no information.",
                UserWarning,
            )
        if n_a <= WQ.shape[1] or d > WQ.shape[1]:
            w, V = np.linalg.eigh(WQ @ WQ.T)  # M = W_Q W_Q^T
            U = V[:, ::-1][:, :d]
            s = np.sqrt(np.clip(w[::-1][:d], 0, None))
        else:
            U, s, _ = np.linalg.svd(WQ, full_matrices=False)
            U, s = U[:, :d], s[:d]
        if self.center:
            U = _helmert_dot(U)  # Z = T Y is orthonormal and column-centred
        Z = U * _sign_flip(U)  # Theorem 1: Z = U_{Q,d} O, O pinned by the sign convention
        self.target_matrix_ = Z
        self.singular_values_ = s
        self.coef_ = [np.linalg.pinv(b) @ Z for b in anchors]  # G^(k) = pinv(A~(k)) Z
        return d
