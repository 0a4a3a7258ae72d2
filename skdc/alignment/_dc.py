"""Linear data-collaboration integrations: MPP (SVD), GEP and ODC (spec sections 3.1-3.4).

Each participant ``k`` uploads its reduced anchor ``A~(k) = f_k(A)`` (``n_a x h_k``). A linear
integration builds ``G^(k)`` (``h_k x d^``) so that the collaboration representations
``A~(k) G^(k)`` agree; new rows map as ``x~ G^(k)``. These are the baselines of [1]_: Imakura
and Sakurai's minimum-perturbation SVD integration (MPP), Kawakami et al.'s generalized
eigenvalue integration (GEP) and Nosaka et al.'s orthogonal integration (ODC).

Pinned choices (spec section 3.0): every eigen/SVD target ``Z`` is fixed up to column signs
by making each column's largest-magnitude entry positive (first index on ties); columns are
ordered best first.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

from numbers import Integral

import numpy as np
import scipy.linalg

from ..utils._linalg import polar
from ..utils._sklearn_compat import Interval
from ._base import (
    _check_anchor_uploads,
    _check_reference,
    _LinearIntegration,
    _resolve_n_components,
    _sign_flip,
    _stack_equal_width,
)

__all__ = ["GEPAligner", "MPPAligner", "ODCAligner"]

_GEP_EPS = 1e-6  # ridge on a singular D (spec section 3.3, from the authors' code)


class MPPAligner(_LinearIntegration):
    """Imakura-Sakurai SVD integration ("DC-MPP", spec section 3.2 of [1]_).

    The target ``Z`` holds the top ``d^`` left singular vectors of the stacked anchor uploads
    ``W = [A~(1), ..., A~(K)]`` (the minimum-perturbation solution ``Z = U_1 C`` with
    ``C = I``), and ``G^(k) = pinv(A~(k)) Z`` (spec section 3.1). Participants with larger
    uploads weigh more in the SVD, and an invertible reparametrization of one participant
    changes the result; :class:`LTIAligner` removes both.

    Parameters
    ----------
    n_components : int, default=None
        Integrated width ``d^``; ``None`` uses the largest upload width.

    Attributes
    ----------
    target_ : ndarray of shape (n_anchors, n_components)
        The anchor target ``Z``.
    coef_ : list of ndarray of shape (h_k, n_components)
        The maps ``G^(k)``.
    singular_values_ : ndarray of shape (n_components,)
        The top singular values of ``W``.
    widths_ : list of int
        Upload width ``h_k`` of each participant.
    n_participants_ : int
        Number of participants.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    LTIAligner : The reparametrization-invariant version.

    References
    ----------
    .. [1] Suetake et al., "Nonlinear Data Integration via Kernel Methods for Data
       Collaboration Analysis", arXiv:2605.27219, 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import PCAMechanism
    >>> from skdc.alignment import MPPAligner
    >>> X = np.random.RandomState(0).rand(60, 5)
    >>> Y = PCAMechanism(3, n_components=3, anchor="uniform", n_anchors=20,
    ...                  random_state=0).fit_transform(X)
    >>> MPPAligner().fit(Y).transform(Y).shape
    (60, 3)
    """

    _parameter_constraints: dict = {
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_components=None):
        self.n_components = n_components

    def _fit_maps(self, anchors, uploads):
        anchors = _check_anchor_uploads(anchors, self)
        self._store_widths(anchors)
        W = np.hstack(anchors)
        d = _resolve_n_components(self, anchors, limit=min(W.shape), limit_name="min(n_anchors, "
                                  "total upload width)")
        U, s, _ = np.linalg.svd(W, full_matrices=False)
        Z = U[:, :d] * _sign_flip(U[:, :d])
        self.target_ = Z
        self.singular_values_ = s[:d]
        self.coef_ = [np.linalg.pinv(b) @ Z for b in anchors]  # spec eq. G = pinv(A~) Z
        return d


class GEPAligner(_LinearIntegration):
    """Kawakami et al.'s generalized-eigenvalue integration ("DC-GEP", spec section 3.3).

    Minimises ``sum_{k,k'} ||A~(k) G^(k) - A~(k') G^(k')||_F^2`` under
    ``sum_k ||A~(k) G^(k)_{:,j}||^2 = 1``: the stacked columns ``g_j`` are the generalized
    eigenvectors of ``W^T W g = eta D g`` for the ``d^`` largest ``eta``, with
    ``W = [A~(1), ..., A~(K)]`` and ``D = blockdiag(A~(k)^T A~(k))``. A singular ``D`` gets a
    ridge ``1e-6 * max(diag D)``. With full-rank uploads GEP equals :class:`LTIAligner` up to
    the column scaling ``1 / sigma_j`` (``eta_j = sigma_j(W_Q)^2``).

    Parameters
    ----------
    n_components : int, default=None
        Integrated width ``d^``; ``None`` uses the largest upload width.

    Attributes
    ----------
    target_ : None
        GEP has no prescribed target.
    coef_ : list of ndarray of shape (h_k, n_components)
        The maps ``G^(k)``.
    eigenvalues_ : ndarray of shape (n_components,)
        The generalized eigenvalues ``eta``, descending.
    widths_ : list of int
        Upload width ``h_k`` of each participant.
    n_participants_ : int
        Number of participants.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    LTIAligner : The same subspace with an orthonormal target.

    References
    ----------
    .. [1] Suetake et al., "Nonlinear Data Integration via Kernel Methods for Data
       Collaboration Analysis", arXiv:2605.27219, 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import PCAMechanism
    >>> from skdc.alignment import GEPAligner
    >>> X = np.random.RandomState(0).rand(60, 5)
    >>> Y = PCAMechanism(3, n_components=3, anchor="uniform", n_anchors=20,
    ...                  random_state=0).fit_transform(X)
    >>> gep = GEPAligner().fit(Y)
    >>> bool(np.all(gep.eigenvalues_ <= 3 + 1e-9))
    True
    """

    _parameter_constraints: dict = {
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, n_components=None):
        self.n_components = n_components

    def _fit_maps(self, anchors, uploads):
        anchors = _check_anchor_uploads(anchors, self)
        self._store_widths(anchors)
        W = np.hstack(anchors)
        n_total = W.shape[1]
        d = _resolve_n_components(self, anchors, limit=n_total, limit_name="the total width")
        D = scipy.linalg.block_diag(*[b.T @ b for b in anchors])
        scale = max(float(np.max(np.diag(D))), np.finfo(float).tiny)
        if any(
            np.linalg.matrix_rank(b) < b.shape[1] for b in anchors
        ):  # D singular: ridge (spec section 3.3)
            D = D + _GEP_EPS * scale * np.eye(n_total)
        WtW = W.T @ W
        eta, V = scipy.linalg.eigh(
            (WtW + WtW.T) / 2, (D + D.T) / 2, subset_by_index=[n_total - d, n_total - 1]
        )
        eta, V = eta[::-1], V[:, ::-1]
        # sign convention on the common anchor representation sum_k A~(k) G^(k)
        V = V * _sign_flip(W @ V)
        self.target_ = None
        self.eigenvalues_ = eta
        bounds = np.cumsum([0] + self.widths_)
        self.coef_ = [V[bounds[k] : bounds[k + 1]] for k in range(len(anchors))]
        return d


class ODCAligner(_LinearIntegration):
    """Orthogonal data collaboration ("DC-ODC", spec section 3.4 of [1]_, Nosaka et al.).

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
    target_ : ndarray of shape (n_anchors, n_components)
        The anchor target ``Z = A~(s)``.
    coef_ : list of ndarray of shape (n_components, n_components)
        The orthogonal maps ``G^(k)``.
    widths_ : list of int
        Upload widths (all equal).
    n_participants_ : int
        Number of participants.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    ReferenceAligner : The same idea with centering, for GDP uploads.

    References
    ----------
    .. [1] Suetake et al., "Nonlinear Data Integration via Kernel Methods for Data
       Collaboration Analysis", arXiv:2605.27219, 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import PCAMechanism
    >>> from skdc.alignment import ODCAligner
    >>> X = np.random.RandomState(0).rand(60, 5)
    >>> Y = PCAMechanism(3, n_components=3, anchor="uniform", n_anchors=20,
    ...                  random_state=0).fit_transform(X)
    >>> odc = ODCAligner().fit(Y)
    >>> bool(np.allclose(odc.coef_[1].T @ odc.coef_[1], np.eye(3)))
    True
    """

    _parameter_constraints: dict = {"reference": [Interval(Integral, 0, None, closed="left")]}

    def __init__(self, reference=0):
        self.reference = reference

    def _fit_maps(self, anchors, uploads):
        anchors = _check_anchor_uploads(anchors, self)
        B = _stack_equal_width(anchors, self)
        s = _check_reference(self, B.shape[0])
        self._store_widths(anchors)
        Z = B[s]
        self.target_ = Z
        self.coef_ = [polar(b.T @ Z) for b in B]  # argmin_{G^T G = I} ||A~ G - Z||
        return B.shape[2]
