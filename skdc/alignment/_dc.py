"""Linear data-collaboration integrations: MPP (SVD), GEP and ODC (Section 3.1 of [1]_).

Each participant ``k`` uploads its reduced anchor ``A~(k) = f_k(A)`` (``n_a x h_k``). A linear
integration builds ``G^(k)`` (``h_k x d^``) so that the collaboration representations
``A~(k) G^(k)`` agree; new rows map as ``x~ G^(k)``. These are the baselines of [1]_: Imakura
and Sakurai's minimum-perturbation SVD integration (MPP), Kawakami et al.'s generalized
eigenvalue integration (GEP) and Nosaka et al.'s orthogonal integration (ODC).

Pinned choices (ours; the paper leaves them open): every eigen/SVD target ``Z`` is fixed up to
column signs by making each column's largest-magnitude entry positive (first index on ties);
columns are ordered best first.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

import numpy as np
import scipy.linalg

from ..utils._docstring import Substitution
from ..utils._linalg import polar
from ..utils._references import kti_paper_references
from ._base import (
    _aligner_attributes_doc,
    _integration_attributes_doc,
    _LinearIntegration,
    _n_components_constraint,
    _n_components_doc,
    _pca_uploads_example_doc,
    _reference_constraint,
    _reference_stack,
    _resolve_n_components,
    _sign_flip,
)

__all__ = ["GEPAligner", "MPPAligner", "ODCAligner"]

_GEP_EPS = 1e-6  # ridge on a singular D (the authors' code; Section 3.1 of [1] assumes D > 0)


@Substitution(
    attributes=_integration_attributes_doc,
    references=kti_paper_references,
    n_components=_n_components_doc,
    example=_pca_uploads_example_doc,
)
class MPPAligner(_LinearIntegration):
    """Imakura-Sakurai SVD integration ("DC-MPP", Sections 2.2 and 3.1 of [1]_).

    Read more in the :ref:`User Guide <nonlinear>`.

    The target ``Z`` holds the top ``d^`` left singular vectors of the stacked anchor uploads
    ``W = [A~(1), ..., A~(K)]`` (the minimum-perturbation solution ``Z = U_1 C`` with
    ``C = I``), and ``G^(k) = pinv(A~(k)) Z`` (the least-squares map of Section 3.1 of
    [1]_). Participants with larger uploads weigh more in the SVD, and an invertible
    reparametrization of one participant changes the result; :class:`LTIAligner` removes
    both.

    Parameters
    ----------
    {n_components}

    Attributes
    ----------
    target_matrix_ : ndarray of shape (n_anchors, n_components)
        The anchor target ``Z``.
    target_ : ndarray or None
        Deprecated spelling of ``target_matrix_`` (``target`` names the attacked party);
        removed in skdc 0.3.
    coef_ : list of ndarray of shape (h_k, n_components)
        The maps ``G^(k)``.
    singular_values_ : ndarray of shape (n_components,)
        The top singular values of ``W``.
    {attributes}

    See Also
    --------
    LTIAligner : The reparametrization-invariant version.

    {references}

    Examples
    --------
    {example}
    >>> from skdc.alignment import MPPAligner
    >>> MPPAligner().fit(Y).transform(Y).shape
    (60, 3)
    """

    _parameter_constraints: dict = {"n_components": _n_components_constraint}

    def __init__(self, n_components=None):
        self.n_components = n_components

    def _fit_maps(self, anchors, uploads):
        anchors = self._prepare_anchors(anchors)
        W = np.hstack(anchors)
        d = _resolve_n_components(self, anchors, limit=min(W.shape), limit_name="min(n_anchors, "
                                  "total upload width)")
        U, s, _ = np.linalg.svd(W, full_matrices=False)
        Z = U[:, :d] * _sign_flip(U[:, :d])
        self.target_matrix_ = Z
        self.singular_values_ = s[:d]
        self.coef_ = [np.linalg.pinv(b) @ Z for b in anchors]  # G = pinv(A~) Z, Section 3.1 of [1]
        return d


@Substitution(
    attributes=_integration_attributes_doc,
    references=kti_paper_references,
    n_components=_n_components_doc,
    example=_pca_uploads_example_doc,
)
class GEPAligner(_LinearIntegration):
    """Kawakami et al.'s generalized-eigenvalue integration ("DC-GEP", Section 3.1 of [1]_).

    Read more in the :ref:`User Guide <nonlinear>`.

    Minimises ``sum_{k,k'} ||A~(k) G^(k) - A~(k') G^(k')||_F^2`` under
    ``sum_k ||A~(k) G^(k)_{:,j}||^2 = 1``: the stacked columns ``g_j`` are the generalized
    eigenvectors of ``W^T W g = eta D g`` for the ``d^`` largest ``eta``, with
    ``W = [A~(1), ..., A~(K)]`` and ``D = blockdiag(A~(k)^T A~(k))``. A singular ``D`` gets a
    ridge ``1e-6 * max(diag D)``. With full-rank uploads GEP equals :class:`LTIAligner` up to
    the column scaling ``1 / sigma_j`` (``eta_j = sigma_j(W_Q)^2``).

    Parameters
    ----------
    {n_components}

    Attributes
    ----------
    target_matrix_ : None
        GEP has no prescribed target.
    target_ : ndarray or None
        Deprecated spelling of ``target_matrix_`` (``target`` names the attacked party);
        removed in skdc 0.3.
    coef_ : list of ndarray of shape (h_k, n_components)
        The maps ``G^(k)``.
    eigenvalues_ : ndarray of shape (n_components,)
        The generalized eigenvalues ``eta``, descending.
    {attributes}

    See Also
    --------
    LTIAligner : The same subspace with an orthonormal target.

    {references}

    Examples
    --------
    {example}
    >>> from skdc.alignment import GEPAligner
    >>> gep = GEPAligner().fit(Y)
    >>> bool(np.all(gep.eigenvalues_ <= 3 + 1e-9))
    True
    """

    _parameter_constraints: dict = {"n_components": _n_components_constraint}

    def __init__(self, n_components=None):
        self.n_components = n_components

    def _fit_maps(self, anchors, uploads):
        anchors = self._prepare_anchors(anchors)
        W = np.hstack(anchors)
        n_total = W.shape[1]
        d = _resolve_n_components(self, anchors, limit=n_total, limit_name="the total width")
        D = scipy.linalg.block_diag(*[b.T @ b for b in anchors])
        scale = max(float(np.max(np.diag(D))), np.finfo(float).tiny)
        if any(
            np.linalg.matrix_rank(b) < b.shape[1] for b in anchors
        ):  # D singular: ridge (the authors' code)
            D = D + _GEP_EPS * scale * np.eye(n_total)
        WtW = W.T @ W
        eta, V = scipy.linalg.eigh(
            (WtW + WtW.T) / 2, (D + D.T) / 2, subset_by_index=[n_total - d, n_total - 1]
        )
        eta, V = eta[::-1], V[:, ::-1]
        # sign convention on the common anchor representation sum_k A~(k) G^(k)
        V = V * _sign_flip(W @ V)
        self.target_matrix_ = None
        self.eigenvalues_ = eta
        bounds = np.cumsum([0] + self.widths_)
        self.coef_ = [V[bounds[k] : bounds[k + 1]] for k in range(len(anchors))]
        return d


@Substitution(
    attributes=_aligner_attributes_doc,
    references=kti_paper_references,
    example=_pca_uploads_example_doc,
)
class ODCAligner(_LinearIntegration):
    """Orthogonal data collaboration ("DC-ODC", Section 3.1 of [1]_, Nosaka et al.).

    Read more in the :ref:`User Guide <nonlinear>`.

    The target is a reference participant's anchor upload, ``Z = A~(s)``, and every
    participant's map is the orthogonal Procrustes solution
    ``G^(k) = Pi(A~(k)^T Z) = U_k V_k^T``. Exact when the participants' reductions differ by
    orthogonal maps (PCA-like); not for UMAP.

    Parameters
    ----------
    reference : int, default=0
        The reference participant ``s``.

    Attributes
    ----------
    target_matrix_ : ndarray of shape (n_anchors, n_components)
        The anchor target ``Z = A~(s)``.
    target_ : ndarray or None
        Deprecated spelling of ``target_matrix_`` (``target`` names the attacked party);
        removed in skdc 0.3.
    coef_ : list of ndarray of shape (n_components, n_components)
        The orthogonal maps ``G^(k)``.
    widths_ : list of int
        Upload widths (all equal).
    {attributes}

    See Also
    --------
    ReferenceAligner : The same idea with centering, for GDP uploads.

    {references}

    Examples
    --------
    {example}
    >>> from skdc.alignment import ODCAligner
    >>> odc = ODCAligner().fit(Y)
    >>> bool(np.allclose(odc.coef_[1].T @ odc.coef_[1], np.eye(3)))
    True
    """

    _parameter_constraints: dict = {"reference": _reference_constraint}

    def __init__(self, reference=0):
        self.reference = reference

    def _fit_maps(self, anchors, uploads):
        anchors = self._prepare_anchors(anchors)
        B, s = _reference_stack(anchors, self)
        Z = B[s]
        self.target_matrix_ = Z
        self.coef_ = [polar(b.T @ Z) for b in B]  # argmin_{G^T G = I} ||A~ G - Z||
        return B.shape[2]
