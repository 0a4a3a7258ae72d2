"""Kernel-based Target-normalized Integration (KTI), Theorem 2 and Algorithm 2 of [1]_.

Each participant ``k`` gets a kernel ridge map ``g_k(x) = kappa(x, A~(k)) alpha^(k)`` onto a
common orthonormal anchor target ``Z``:

``min_{Z, g} sum_k ||g_k(A~(k)) - Z||_F^2 + lambda ||g_k||_H^2``  s.t. ``Z^T Z = I`` (Eq. 31).

For fixed ``Z`` the minimiser is ``alpha^(k) = (K^(k) + lambda I)^{-1} Z`` (Eq. 36) with value
``lambda tr(Z^T (K^(k) + lambda I)^{-1} Z)``, so ``Z`` holds the eigenvectors of the ``d^``
smallest eigenvalues of ``M_lambda = lambda sum_k (K^(k) + lambda I)^{-1}`` (Eq. 37,
Theorem 2 in Section 4.2 of [1]_). Options (Sections 4.4-4.6 and Appendix B of [1]_): an
intrinsic kNN graph on the anchor uploads (``"gl"`` geometric, ``"tsl"`` same-label), a
target-dissimilarity penalty graph (``"tdl"``), giving ``(M_lambda + mu B) u = nu C u`` (Eqs.
40/43), and the centering constraint ``1^T Z = 0`` solved in the Helmert basis (Eqs. 49-53).
From the DC lab's code: the
residual-only objective ``M = sum_k (I - S^(k))^2`` (``target_objective="residual"``), each
kernel divided by its spectral radius (``kernel_normalization="spectral"``), and bandwidths
tuned on each participant's own intermediate rows (``gamma_rows="own"``) by the median or the
lab's self-tuning kNN rule (``gamma="knn"``), times a ratio (``gamma_ratio``).

This module is the paper's home; the rest of [1]_ lives in ``alignment/_dc.py`` and
``_lti.py`` (the linear integrations MPP, GEP, ODC, LTI), ``mechanisms/_embedding.py`` (the
participants' UMAP, kernel PCA and PCA, the bandwidth rule of ``utils/_kernels.py``),
:class:`~skdc.anchors.SMOTEAnchor`, ``attacks/_dc.py`` (the anchor-regression attack),
:func:`~skdc.metrics.reconstruction_label_accuracy`, ``audit/_baselines.py`` (Central and
Local) and ``experiments/_reproduce_kti.py`` (Fig. 3 and Tables 3-4). The developer guide maps each
paper to its modules.

Computation: per participant one Cholesky factorization of ``K^(k) + lambda I`` (or, with
``solver="eigh"``, one symmetric eigendecomposition ``K^(k) = V diag(l) V^T``, which serves
every ``lambda``), then one partial eigendecomposition for ``Z``: ``O(K n_a^3)``. With
``n_kernel_components=m`` each kernel is replaced by its Nystroem approximation on ``m``
landmark anchors, ``M_lambda`` becomes ``K I`` minus a sum of rank-``m`` terms (Woodbury) and
``Z`` is found by Lanczos iterations: ``O(K n_a m^2)``.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

import hashlib
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target

from ..utils._deprecation import renamed_attribute
from ..utils._docstring import Substitution
from ..utils._kernels import median_heuristic_gamma
from ..utils._references import kti_paper_references
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from . import _eigh_cache
from ._base import (
    BaseAligner,
    _check_anchor_uploads,
    _helmert_dot,
    _helmert_t_dot,
    _integration_attributes_doc,
    _n_components_constraint,
    _sign_flip,
    _target_width,
)

__all__ = ["KTIAligner", "anchor_graph"]

_MEDIAN_ROWS = 2000  # gamma="median" on more own rows: a random subset (pdist is quadratic)
_MAP_BLOCK = 1 << 21  # (row, anchor) kernel entries per block of transform: 16 MB
_EPS = 1e-9  # epsilon-regularization of a singular C (Section 4.5 of [1]; authors' value)
_GAMMA_KERNELS = {"rbf", "laplacian", "poly"}


@validate_params(
    {
        "anchor_upload": ["array-like"],
        "kind": [StrOptions({"gl", "tsl", "tdl"})],
        "anchor_y": [None, "array-like"],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=kti_paper_references)
def anchor_graph(anchor_upload, *, kind="gl", anchor_y=None, n_neighbors=10):
    """Symmetrized kNN graph of one participant's anchor upload (Eqs. 47-48, Appendix B of [1]_).

    Read more in the :ref:`User Guide <nonlinear>`.

    ``N(i)`` are the ``n_neighbors`` Euclidean nearest other anchors of anchor ``i`` in the
    upload. Raw weights: ``"gl"`` 1 for ``i' in N(i)``; ``"tsl"`` 1 if also
    ``y_i = y_i'`` (continuous ``anchor_y``: ``exp(-(y_i - y_i')^2 / std(y)^2)``); ``"tdl"`` 1 if
    ``y_i != y_i'``. The graph is symmetrized by averaging, ``w = (w_hat + w_hat^T) / 2``, so
    weights are 0, 1/2 or 1 and the diagonal is zero.

    Parameters
    ----------
    anchor_upload : array-like of shape (n_anchors, h)
        One participant's reduced anchor ``A~(k)``.
    kind : {"gl", "tsl", "tdl"}, default="gl"
        Geometric, target-similarity or target-dissimilarity graph.
    anchor_y : array-like of shape (n_anchors,), default=None
        Anchor labels; required by ``"tsl"`` and ``"tdl"``.
    n_neighbors : int, default=10
        Neighbourhood size ``k_nn`` (capped at ``n_anchors - 1``).

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n_anchors, n_anchors)
        Symmetric weights with zero diagonal.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.alignment import anchor_graph
    >>> B = np.array([[0.0], [1.0], [3.0]])  # nearest: 0 -> 1, 1 -> 0, 2 -> 1
    >>> anchor_graph(B, n_neighbors=1).toarray()
    array([[0. , 1. , 0. ],
           [1. , 0. , 0.5],
           [0. , 0.5, 0. ]])
    """
    B = np.asarray(anchor_upload, dtype=np.float64)
    n = B.shape[0]
    if kind != "gl" and anchor_y is None:
        raise ValueError(
            f"graph={kind!r} needs anchor labels, but the uploads carry no anchor_y. Build "
            "the mechanism with a labelled anchor (anchor=SMOTEAnchor(...)) or use graph='gl' "
            "or graph=None."
        )
    k = min(n_neighbors, n - 1)
    if k < 1:
        return sp.csr_matrix((n, n))
    ind = NearestNeighbors(n_neighbors=k + 1).fit(B).kneighbors(B, return_distance=False)
    keep = ind != np.arange(n)[:, None]
    no_self = keep.all(axis=1)  # duplicates may push a row's own index out of its list
    keep[no_self, -1] = False
    rows = np.repeat(np.arange(n), k)
    cols = ind[keep]
    if kind == "gl":
        w = np.ones(rows.size)
    else:
        y = np.asarray(anchor_y)
        if y.shape != (n,):
            raise ValueError(f"anchor_y must have shape ({n},); got {y.shape}.")
        if kind == "tsl" and type_of_target(y) == "continuous":
            # sigma_y = std(y_a): Appendix B of [1] leaves sigma_y open
            s2 = float(np.var(y)) or 1.0
            w = np.exp(-((y[rows] - y[cols]) ** 2) / s2)
        elif kind == "tsl":
            w = (y[rows] == y[cols]).astype(np.float64)
        else:
            w = (y[rows] != y[cols]).astype(np.float64)
    W = sp.csr_matrix((w, (rows, cols)), shape=(n, n))
    W = ((W + W.T) * 0.5).tocsr()  # average symmetrization (the equation before Eq. 47)
    W.eliminate_zeros()
    return W


def _knn_gamma(X, n_neighbors):
    """The DC lab's self-tuning RBF bandwidth: ``median_i(1 / sigma_i) / 3``.

    ``sigma_i`` is the Euclidean distance from row ``i`` to its ``n_neighbors``-th nearest
    other row (3 in the lab's kernel ridge maps; capped at ``n_rows - 1``), not squared and
    with no factor 2; a zero distance (a duplicated row) counts as machine epsilon, as in the
    lab's code.
    """
    k = min(n_neighbors, X.shape[0] - 1)
    dist, _ = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    sigma = dist[:, k]  # column 0 is the row itself (or a duplicate)
    sigma = np.where(sigma == 0, np.finfo(np.float64).eps, sigma)
    return float(np.median(1.0 / sigma)) / 3.0


def _spectral_radius(Kmat):
    """``lambda_max`` of a symmetric positive semi-definite kernel matrix (Lanczos when big)."""
    n = Kmat.shape[0]
    if n <= 64:
        return float(scipy.linalg.eigvalsh(Kmat, subset_by_index=[n - 1, n - 1])[0])
    w = eigsh(Kmat, k=1, which="LA", v0=np.ones(n), tol=1e-12, return_eigenvectors=False)
    return float(w[0])


def _laplacian(W):
    return (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()


@Substitution(attributes=_integration_attributes_doc, references=kti_paper_references)
class KTIAligner(BaseAligner):
    """Kernel-based Target-normalized Integration (Theorem 2, Algorithm 2 of [1]_).

    Read more in the :ref:`User Guide <nonlinear>`.

    Fits ``Z`` (``n_anchors x d^``, ``Z^T C Z = I``) and one kernel ridge map per participant,
    ``g_k(x~) = kappa_k(x~, A~(k)) alpha^(k)`` with ``alpha^(k) = (K^(k) + lambda I)^{-1} Z``
    (Eq. 36; ``lambda`` is ``alpha`` here, following scikit-learn's ``KernelRidge``). ``Z``
    minimises ``tr(Z^T (M_lambda + mu B) Z)`` with ``M_lambda = lambda sum_k (K^(k) +
    lambda I)^{-1}`` (Eqs. 37, 40) and optionally ``1^T Z = 0`` (Eq. 49). Participants may have
    different widths. Variants of [1]_: ``graph=None`` (KTI), ``"gl"`` (KTI+GL), ``"tsl"``
    (KTI+TSL), ``center=True`` (+Center).

    Parameters
    ----------
    kernel : {"rbf", "laplacian", "poly", "linear", "cosine"} or callable, default="rbf"
        The kernel ``kappa``; a callable ``kernel(X, Y) -> (n_X, n_Y) Gram matrix`` must be
        positive semi-definite (checked at fit).
    gamma : float, array-like of shape (n_participants,), {"median", "knn"} or None, \
            default=1.0
        Bandwidth of ``"rbf"``, ``"laplacian"``, ``"poly"`` (the paper uses 1.0). A float
        serves every participant; an array gives participant ``k`` its own fixed bandwidth
        ``gamma[k]``. A rule tunes one bandwidth per participant on the rows chosen by
        ``gamma_rows``, then multiplies it by ``gamma_ratio``:

        - ``"knn"``: the DC lab's self-tuning rule ``median_i(1 / sigma_i) / 3``, with
          ``sigma_i`` the distance from row ``i`` to its ``gamma_neighbors``-th nearest other
          row (not squared, no factor 2, no standardization; a zero distance counts as
          machine epsilon);
        - ``"median"``: ``1 / (2 m_k^2)`` with ``m_k`` the median nonzero pairwise distance.

        ``None``: ``1 / h_k``, ``h_k`` the participant's upload width (the lab's "auto").
    gamma_ratio : float, default=1.0
        Multiplier of a tuned bandwidth (``"knn"``, ``"median"`` or ``None``): the DC lab's
        ``gamma_ratio_krr`` for the kernel ridge maps. A numeric ``gamma`` is used as given,
        so ``gamma_ratio`` must then stay 1.
    alpha : float, default=1.0
        Ridge ``lambda > 0``.
    target_objective : {"ridge", "residual"}, default="ridge"
        Which matrix ``Z`` minimises. ``"ridge"``: ``M_lambda = lambda sum_k (K^(k) +
        lambda I)^{-1}``, the objective of Eq. (31) at its optimal maps (Eq. 37).
        ``"residual"``: ``M = sum_k (I - S^(k))^2 = sum_k lambda^2 (K^(k) + lambda I)^{-2}``
        with ``S^(k) = K^(k) (K^(k) + lambda I)^{-1}`` the ridge smoother, i.e. the anchor
        residual ``sum_k ||g_k(A~(k)) - Z||_F^2`` alone, without the RKHS-norm term (the
        older form in the DC lab's code). The maps are Eq. (36) either way.
    kernel_normalization : {"none", "spectral"}, default="none"
        ``"spectral"`` divides each participant's kernel by its spectral radius
        ``rho_k = lambda_max(K^(k))`` (the DC lab's code), so that one ``alpha`` weighs every
        participant alike whatever its kernel's scale; ``kappa_k / rho_k`` is then used for
        new rows too. On the raw kernel the ridge acts as ``alpha * rho_k``, so a normalized
        fit needs a smaller ``alpha`` (about ``1 / rho_k``) to match the default.
    gamma_rows : {"anchor", "own"}, default="anchor"
        Rows on which the ``gamma`` rules are tuned: the anchor upload
        ``A~(k)``, or participant ``k``'s own intermediate rows ``X~(k)`` in the uploads (the
        DC lab's code). Median over more than 2000 own rows uses a random subset of 2000.
    gamma_neighbors : int, default=3
        The neighbour rank of ``gamma="knn"`` (3 in the DC lab's kernel ridge maps, 7 in its
        kernel PCA and in the local scale of self-tuning spectral clustering [2]_), capped at
        the number of rows minus one.
    graph : {None, "gl", "tsl", "tdl"}, default=None
        Graph regularization (Sections 4.4-4.5 of [1]_): ``"gl"`` geometric kNN Laplacian, ``"tsl"``
        same-label kNN Laplacian, ``"tdl"`` TSL as intrinsic graph plus the different-label
        kNN Laplacian as penalty ``C``. ``"tsl"``/``"tdl"`` need labelled anchors
        (:class:`~skdc.anchors.SMOTEAnchor`), which then must be shareable with the analyst.
    mu : float, default=1.0
        Weight of the intrinsic graph; ``0`` reproduces plain KTI.
    n_neighbors : int, default=10
        ``k_nn`` of the anchor graphs.
    center : bool, default=False
        Impose ``1^T Z = 0`` (Section 4.6, Eqs. 49-53 of [1]_).
    n_components : int, default=None
        Integrated width ``d^``; ``None`` uses the largest upload width. At most
        ``n_anchors`` (``n_anchors - 1`` with ``center``).
    graph_scale : {"trace", "none"}, default="trace"
        ``"trace"`` rescales the intrinsic Laplacian to ``tr(B) = tr(M_lambda)`` so ``mu`` is
        a relative weight (the authors' code); ``"none"`` keeps the raw mean Laplacian.
    n_kernel_components : int, default=None
        Nystroem rank ``m``: approximate each kernel from ``m`` landmark anchors (for
        ``n_anchors >= 5000``). ``None`` or ``m >= n_anchors``: exact. Not with ``"tdl"``.
    solver : {"cholesky", "eigh"}, default="cholesky"
        How the exact fit factors ``K^(k) + lambda I``: a Cholesky factorization (fastest for
        one ``alpha``), or a symmetric eigendecomposition ``K^(k) = V diag(l) V^T`` that serves
        every ``alpha``: it is kept in :data:`~skdc.alignment.kernel_eigh_cache` (a
        :class:`~skdc.alignment.KernelEighCache`, up to 256 MiB, keyed by the anchor upload,
        kernel and ``gamma``) and reused when an aligner is refitted with another ``alpha``,
        as in a grid search over ``alpha``; ``kernel_eigh_cache.clear()`` frees it. The
        first fit is about 4x slower than Cholesky at ``n_anchors = 1000``. Neither forms a
        general matrix inverse.
    random_state : int, RandomState instance or None, default=None
        Picks the Nystroem landmarks and the Lanczos start vector.

    Attributes
    ----------
    target_matrix_ : ndarray of shape (n_anchors, n_components)
        The integration target ``Z`` of Eq. (31) of [1]_, to which every participant's map
        ``g_k`` sends its anchor upload: the eigenvectors of the ``d^`` smallest eigenvalues
        of ``M_lambda`` (Eq. 37, or the matrix ``target_objective`` names; with a graph, of
        ``(M_lambda + mu B) u = nu C u``, Eqs. 40/43), so ``Z^T C Z = I``.
    target_ : ndarray of shape (n_anchors, n_components)
        Deprecated spelling of ``target_matrix_`` (``target`` names the attacked party);
        removed in skdc 0.3.
    eigenvalues_ : ndarray of shape (n_components,)
        The ``d^`` smallest (generalized) eigenvalues ``nu``, ascending; for plain KTI they lie
        in ``(0, K]``.
    coef_ : list of ndarray of shape (n_kernel_rows, n_components)
        The coefficients ``alpha^(k)`` (Nystroem: the landmark coefficients).
    kernel_anchors_ : list of ndarray of shape (n_kernel_rows, h_k)
        The anchor-upload rows each map evaluates the kernel against (all of ``A~(k)``, or the
        landmarks).
    gammas_ : ndarray of shape (n_participants,)
        The bandwidth used for each participant (a tuned one times ``gamma_ratio``).
    kernel_scales_ : ndarray of shape (n_participants,)
        The divisor of each participant's kernel: its spectral radius ``rho_k`` with
        ``kernel_normalization="spectral"``, else ones. ``coef_`` is ``alpha^(k) / rho_k``, so
        that ``g_k(x~) = kappa_k(x~, A~(k)) coef_[k]``.
    intrinsic_laplacian_ : scipy.sparse.csr_matrix of shape (n_anchors, n_anchors) or None
        The aggregated, scaled intrinsic Laplacian ``B``.
    penalty_laplacian_ : scipy.sparse.csr_matrix of shape (n_anchors, n_anchors) or None
        The aggregated penalty Laplacian ``C`` scaled to ``tr(C) = n_anchors`` (``"tdl"``).
    {attributes}

    See Also
    --------
    LTIAligner : The linear version (the limit of a linear kernel as ``alpha -> 0``).
    anchor_graph : The per-participant graphs.

    Notes
    -----
    Cost ``O(K n_a^3)`` to fit and ``O(n_a h)`` per transformed row (Table 1 of [1]_).
    Pickled, the aligner holds the anchor uploads (the analyst's view), never a participant's
    reduction ``f_k``.

    {references}
    .. [2] Zelnik-Manor and Perona, "Self-Tuning Spectral Clustering", NeurIPS 2004.

    Examples
    --------
    The gallery example :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` compares KTI with
    the linear integrations under UMAP.

    >>> import numpy as np
    >>> from skdc.mechanisms import KernelPCAMechanism
    >>> from skdc.alignment import KTIAligner
    >>> X = np.random.RandomState(0).rand(60, 5)
    >>> Y = KernelPCAMechanism(3, n_components=3, anchor="uniform", n_anchors=30,
    ...                        random_state=0).fit_transform(X)
    >>> kti = KTIAligner(gamma=1.0, alpha=1.0, center=True).fit(Y)
    >>> Z = kti.target_matrix_
    >>> bool(np.allclose(Z.T @ Z, np.eye(3))), bool(np.allclose(Z.sum(0), 0))
    (True, True)
    >>> kti.transform(Y).shape
    (60, 3)
    >>> lab = KTIAligner(gamma="knn", gamma_rows="own", kernel_normalization="spectral",
    ...                  target_objective="residual").fit(Y)
    >>> lab.gammas_.shape, bool(np.all(lab.kernel_scales_ >= 1))
    ((3,), True)
    >>> KTIAligner(gamma=[0.5, 1.0, 2.0]).fit(Y).gammas_
    array([0.5, 1. , 2. ])
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions({"rbf", "laplacian", "poly", "linear", "cosine"}), callable],
        "gamma": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"median", "knn"}),
            "array-like",
            None,
        ],
        "gamma_ratio": [Interval(Real, 0, None, closed="neither")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "target_objective": [StrOptions({"ridge", "residual"})],
        "kernel_normalization": [StrOptions({"none", "spectral"})],
        "gamma_rows": [StrOptions({"anchor", "own"})],
        "gamma_neighbors": [Interval(Integral, 1, None, closed="left")],
        "graph": [None, StrOptions({"gl", "tsl", "tdl"})],
        "mu": [Interval(Real, 0, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "center": ["boolean"],
        "n_components": _n_components_constraint,
        "graph_scale": [StrOptions({"trace", "none"})],
        "n_kernel_components": [None, Interval(Integral, 1, None, closed="left")],
        "solver": [StrOptions({"cholesky", "eigh"})],
        "random_state": ["random_state"],
    }

    # the deprecated spelling of target_matrix_ (``target`` names the attacked party)
    target_ = renamed_attribute("target_", "target_matrix_")

    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=1.0,
        gamma_ratio=1.0,
        alpha=1.0,
        target_objective="ridge",
        kernel_normalization="none",
        gamma_rows="anchor",
        gamma_neighbors=3,
        graph=None,
        mu=1.0,
        n_neighbors=10,
        center=False,
        n_components=None,
        graph_scale="trace",
        n_kernel_components=None,
        solver="cholesky",
        random_state=None,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.gamma_ratio = gamma_ratio
        self.alpha = alpha
        self.target_objective = target_objective
        self.kernel_normalization = kernel_normalization
        self.gamma_rows = gamma_rows
        self.gamma_neighbors = gamma_neighbors
        self.graph = graph
        self.mu = mu
        self.n_neighbors = n_neighbors
        self.center = center
        self.n_components = n_components
        self.graph_scale = graph_scale
        self.n_kernel_components = n_kernel_components
        self.solver = solver
        self.random_state = random_state

    # -- kernels ----------------------------------------------------------------------
    def _fixed_gammas(self, n_participants):
        """The bandwidths given as numbers: one per participant, or None for a rule."""
        if self.gamma is None or isinstance(self.gamma, str):
            return None
        if self.gamma_ratio != 1:
            raise ValueError(
                f"KTIAligner: gamma_ratio={self.gamma_ratio!r} multiplies a tuned bandwidth, "
                f"but gamma={self.gamma!r} is fixed. Put the product into gamma, or set "
                "gamma_ratio=1."
            )
        g = np.asarray(self.gamma)
        if g.ndim == 0:
            g = np.full(n_participants, g)
        if g.dtype.kind not in "iuf" or g.shape != (n_participants,):
            raise ValueError(
                "KTIAligner: gamma must be a positive number, one positive number per "
                f"participant (shape ({n_participants},)), 'median', 'knn' or None; "
                f"got an array of shape {g.shape} and dtype {g.dtype}. Give one "
                "bandwidth per participant of the uploads."
            )
        g = g.astype(np.float64)
        if not np.all(np.isfinite(g) & (g > 0)):
            raise ValueError(
                f"KTIAligner: every per-participant gamma must be finite and > 0; got {g}."
            )
        return g

    def _gamma_for(self, B, own, rng):
        """Tuned bandwidth of one participant from its anchor upload ``B`` or its own rows."""
        if self.gamma is None:
            gamma = 1.0 / B.shape[1]
        else:
            rows = B if self.gamma_rows == "anchor" else own
            if self.gamma == "median":
                if rows.shape[0] > _MEDIAN_ROWS:
                    rows = rows[np.sort(rng.choice(rows.shape[0], _MEDIAN_ROWS, replace=False))]
                gamma = median_heuristic_gamma(rows)
            else:
                gamma = _knn_gamma(rows, self.gamma_neighbors)
        return gamma * float(self.gamma_ratio)  # the lab's gamma_ratio_krr

    def _own_rows(self, uploads, anchors):
        """Each participant's own intermediate rows ``X~(k)`` (its width, no padding)."""
        Y = np.asarray(uploads, dtype=np.float64)
        part = uploads.participant
        out = []
        for k, b in enumerate(anchors):
            rows = Y[part == k, : b.shape[1]]
            if rows.shape[0] < 2:
                raise ValueError(
                    f"KTIAligner: gamma_rows='own' tunes gamma={self.gamma!r} on each "
                    f"participant's own rows, but participant {k} uploaded {rows.shape[0]} "
                    "row(s); at least 2 are needed. Use gamma_rows='anchor'."
                )
            out.append(rows)
        return out

    def _kernel(self, X, Y, gamma):
        if callable(self.kernel):
            return np.asarray(self.kernel(X, Y), dtype=np.float64)
        if self.kernel in _GAMMA_KERNELS:
            return pairwise_kernels(X, Y, metric=self.kernel, gamma=gamma)
        return pairwise_kernels(X, Y, metric=self.kernel)

    def _psd_eigh(self, Kmat, k):
        """Eigendecomposition of a symmetrized Gram matrix; refuse an indefinite one."""
        lam, V = scipy.linalg.eigh((Kmat + Kmat.T) / 2, driver="evd")
        self._check_psd(lam, k)
        return np.clip(lam, 0.0, None), V

    # -- graphs -----------------------------------------------------------------------
    def _graphs(self, anchors, anchor_y, trace_M):
        if self.graph is None:
            return None, None
        if anchor_y is None:
            if self.graph != "gl":
                raise ValueError(
                    f"KTIAligner: graph={self.graph!r} needs anchor labels, but the uploads "
                    "carry no anchor_y. Build the mechanism with a labelled anchor "
                    "(anchor=SMOTEAnchor(...)), or set graph='gl' or graph=None."
                )
        intrinsic = "gl" if self.graph == "gl" else "tsl"
        K = len(anchors)
        # aggregate the per-participant symmetrized graphs by their mean (the paper says
        # "aggregated"; the mean is the authors' code's)
        WB = sum(
            anchor_graph(b, kind=intrinsic, anchor_y=anchor_y, n_neighbors=self.n_neighbors)
            for b in anchors
        ) / K
        LB = _laplacian(WB)
        tr = float(LB.diagonal().sum())
        if self.graph_scale == "trace":
            if tr > 0:
                LB = LB * (trace_M / tr)  # tr(B) = tr(M_lambda) (authors' code)
            else:
                warnings.warn(
                    f"KTIAligner: the {intrinsic!r} graph has no edges (no neighbouring "
                    "anchors share a label); the graph term is zero.",
                    UserWarning,
                )
        LC = None
        if self.graph == "tdl":
            WC = sum(
                anchor_graph(b, kind="tdl", anchor_y=anchor_y, n_neighbors=self.n_neighbors)
                for b in anchors
            ) / K
            LC = _laplacian(WC)
            trc = float(LC.diagonal().sum())
            if trc > 0:
                LC = (LC * (LB.shape[0] / trc)).tocsr()  # tr(C) = n_a
            else:
                warnings.warn(
                    "KTIAligner: the 'tdl' penalty graph has no edges; using C = I.", UserWarning
                )
                LC = None
        return LB.tocsr(), LC

    # -- fit --------------------------------------------------------------------------
    def _fit_maps(self, anchors, uploads):
        anchors = _check_anchor_uploads(anchors, self)
        self.widths_ = [b.shape[1] for b in anchors]
        n_a = anchors[0].shape[0]
        d = _target_width(self, anchors)
        rng = check_random_state(self.random_state)
        uses_rows = isinstance(self.gamma, str) and self.gamma_rows == "own"
        own = self._own_rows(uploads, anchors) if uses_rows else [None] * len(anchors)
        fixed = self._fixed_gammas(len(anchors))
        if fixed is None:
            fixed = [self._gamma_for(b, x, rng) for b, x in zip(anchors, own)]
        self.gammas_ = np.asarray(fixed, dtype=np.float64)
        m = self.n_kernel_components
        if m is None or m >= n_a:
            self._fit_exact(anchors, uploads.anchor_y, d)
        else:
            if self.graph == "tdl":
                raise ValueError(
                    "KTIAligner: graph='tdl' (a penalty graph C) is not supported with the "
                    "Nystroem approximation; set n_kernel_components=None or use graph='tsl'."
                )
            self._fit_nystroem(anchors, uploads.anchor_y, d, m, rng)
        return d

    def _ridge_factors(self, anchors):
        """Per participant: ``(K^(k) + lambda I)^{-1}``, a solver for ``alpha^(k)``, ``rho_k``.

        ``solver="cholesky"``: one Cholesky factor ``L L^T = K^(k) + lambda I`` (LAPACK
        ``potrf``), the inverse from it (``potri``) and triangular solves for ``alpha^(k)``.
        ``solver="eigh"``: ``K^(k) = V diag(l) V^T`` gives ``V diag(1 / (l + lambda)) V^T``.
        Neither calls a general matrix inverse. With ``kernel_normalization="spectral"``,
        ``K^(k)`` is divided by ``rho_k = lambda_max(K^(k))`` first.
        """
        factor = self._eigh_factor if self.solver == "eigh" else self._cholesky_factor
        return [factor(b, self._kernel(b, b, g), g, k)
                for k, (b, g) in enumerate(zip(anchors, self.gammas_))]

    def _eigh_factor(self, b, Kmat, g, k):
        """``(inv, solve, rho)`` from ``K^(k) = V diag(l) V^T``, kept in the shared cache."""
        lam = float(self.alpha)
        key = None
        if not callable(self.kernel):
            digest = hashlib.blake2b(np.ascontiguousarray(b).tobytes(), digest_size=16)
            key = (digest.hexdigest(), b.shape, self.kernel, float(g))
        ev, V = _eigh_cache.kernel_eigh_cache.get(key, lambda: self._psd_eigh(Kmat, k))
        rho = float(ev.max()) if self.kernel_normalization == "spectral" else 1.0
        if not rho > 0:
            raise self._zero_kernel_error(k)
        ev = ev / rho
        inv = (V / (ev + lam)) @ V.T

        def solve(Z):
            return (V / (ev + lam)) @ (V.T @ Z)

        return inv, solve, rho

    def _cholesky_factor(self, b, Kmat, g, k):
        """``(inv, solve, rho)`` from one Cholesky factor ``L L^T = K^(k) / rho + lambda I``."""
        lam = float(self.alpha)
        if callable(self.kernel):
            self._check_psd(scipy.linalg.eigvalsh((Kmat + Kmat.T) / 2), k)
        Ks = (Kmat + Kmat.T) / 2
        rho = _spectral_radius(Ks) if self.kernel_normalization == "spectral" else 1.0
        if not rho > 0:
            raise self._zero_kernel_error(k)
        Kl = Ks / rho + lam * np.eye(Kmat.shape[0])
        c, info = scipy.linalg.lapack.dpotrf(Kl, lower=True, clean=True)
        if info != 0:
            self._check_psd(scipy.linalg.eigvalsh(Kmat), k)
            raise np.linalg.LinAlgError(
                f"KTIAligner: Cholesky of K + alpha I failed for participant {k}; "
                "increase alpha or use solver='eigh'."
            )
        inv, _ = scipy.linalg.lapack.dpotri(c, lower=True)
        inv = np.tril(inv) + np.tril(inv, -1).T

        def solve(Z):
            return scipy.linalg.cho_solve((c, True), Z)

        return inv, solve, rho

    def _zero_kernel_error(self, k):
        return ValueError(
            f"KTIAligner: the kernel matrix of participant {k} is zero, so "
            "kernel_normalization='spectral' cannot divide by its spectral radius. Check the "
            "kernel, or use kernel_normalization='none'."
        )

    def _check_psd(self, eigenvalues, k):
        top = max(float(np.abs(eigenvalues).max()), np.finfo(float).tiny)
        if eigenvalues.min() < -1e-8 * top * eigenvalues.size:
            raise ValueError(
                f"KTIAligner: the kernel matrix of participant {k} is not positive "
                f"semi-definite (smallest eigenvalue {eigenvalues.min():.3g}, largest "
                f"{top:.3g}). Kernel ridge integration needs a positive semi-definite kernel: "
                "change the kernel parameter (e.g. kernel='rbf')."
            )

    def _fit_exact(self, anchors, anchor_y, d):
        lam_ridge = float(self.alpha)
        factors = self._ridge_factors(anchors)
        self.kernel_scales_ = np.array([rho for _, _, rho in factors])
        if self.target_objective == "residual":
            # M = sum_k (I - S^(k))^2 with I - S^(k) = lambda (K^(k) + lambda I)^{-1}
            M = lam_ridge**2 * sum(inv @ inv for inv, _, _ in factors)
        else:
            # M_lambda = lambda sum_k (K^(k) + lambda I)^{-1}, Eq. (37) of [1]
            M = lam_ridge * sum(inv for inv, _, _ in factors)
        M = (M + M.T) / 2
        LB, LC = self._graphs(anchors, anchor_y, float(np.trace(M)))
        self.intrinsic_laplacian_, self.penalty_laplacian_ = LB, LC
        A = M if LB is None else M + self.mu * LB.toarray()  # Eq. (40)
        C = None if LC is None else LC.toarray()
        if self.center:
            # Z = T Y with the Helmert basis T: the reduced problem of Eq. (53)
            A = _helmert_t_dot(_helmert_t_dot(A).T)
            if C is not None:
                C = _helmert_t_dot(_helmert_t_dot(C).T)
        if C is not None:
            C = (C + C.T) / 2 + _EPS * np.eye(C.shape[0])  # C_eps (Section 4.5 of [1])
        nu, Y = scipy.linalg.eigh((A + A.T) / 2, C, subset_by_index=[0, d - 1])
        Z = _helmert_dot(Y) if self.center else Y
        Z = Z * _sign_flip(Z)
        self.target_matrix_ = Z
        self.eigenvalues_ = nu
        # alpha^(k) = (K^(k) + lambda I)^{-1} Z, Eq. (36); over rho_k for the raw kernel
        self.coef_ = [solve(Z) / rho for _, solve, rho in factors]
        self.kernel_anchors_ = list(anchors)

    def _fit_nystroem(self, anchors, anchor_y, d, m, rng):
        """KTI on rank-``m`` Nystroem kernels: Woodbury for ``M``, Lanczos for ``Z``."""
        lam_ridge = float(self.alpha)
        n_a = anchors[0].shape[0]
        K = len(anchors)
        idx = np.sort(rng.choice(n_a, size=m, replace=False))
        factors = [self._nystroem_factor(b, g, idx, k)
                   for k, (b, g) in enumerate(zip(anchors, self.gammas_))]
        self.kernel_scales_ = np.array([rho for *_, rho in factors])
        # Woodbury: lambda (Phi Phi^T + lambda I)^{-1} = I - U diag(s^2/(s^2+lambda)) U^T; its
        # square (target_objective="residual") is I - U diag(2 D - D^2) U^T
        if self.target_objective == "residual":
            Ds = [2.0 * D - D**2 for _, D, _, _, _ in factors]
        else:
            Ds = [D for _, D, _, _, _ in factors]
        trace_M = K * n_a - sum(float(D.sum()) for D in Ds)
        LB, _ = self._graphs(anchors, anchor_y, trace_M)
        self.intrinsic_laplacian_, self.penalty_laplacian_ = LB, None
        Z, self.eigenvalues_ = self._nystroem_target([f[0] for f in factors], Ds, LB, d, rng)
        self.target_matrix_ = Z
        coefs, kanchors = [], []
        for b, (U, D, P, Phi, _) in zip(anchors, factors):
            alpha_k = (Z - U @ (D[:, None] * (U.T @ Z))) / lam_ridge  # (Phi Phi^T+lambda I)^-1 Z
            # g(x) = phi(x) Phi^T alpha with phi(x) = kappa(x, landmarks) W^{-1/2}
            coefs.append(P @ (Phi.T @ alpha_k))
            kanchors.append(b[idx])
        self.coef_ = coefs
        self.kernel_anchors_ = kanchors

    def _nystroem_factor(self, b, g, idx, k):
        """One participant's Nystroem kernel ``K^(k) / rho_k ~ Phi Phi^T = U diag(s^2) U^T``.

        Returns ``(U, D, P, Phi, rho_k)`` with ``D = s^2 / (s^2 + lambda)`` and ``P`` the
        landmark map ``W^{-1/2}`` (``phi(x) = kappa(x, landmarks) P``).
        """
        m = idx.size
        Cm = self._kernel(b, b[idx], g)
        w, Vw = self._psd_eigh(Cm[idx], k)
        keep = w > w.max() * m * np.finfo(float).eps
        P = Vw[:, keep] / np.sqrt(w[keep])  # W^{-1/2} on its range
        Phi = Cm @ P  # Nystroem features: K^(k) ~ Phi Phi^T
        # Phi = U diag(s) R^T from the small Gram matrix Phi^T Phi = R diag(s^2) R^T
        s2, R = scipy.linalg.eigh(Phi.T @ Phi)
        big = s2 > s2.max() * Phi.shape[1] * np.finfo(float).eps
        s2, R = s2[big], R[:, big]
        U = (Phi @ R) / np.sqrt(s2)
        rho = float(s2.max()) if self.kernel_normalization == "spectral" else 1.0
        # K^(k) / rho ~ (Phi / sqrt(rho)) (Phi / sqrt(rho))^T: U stays, s^2 scales
        s2, P, Phi = s2 / rho, P / np.sqrt(rho), Phi / np.sqrt(rho)
        return U, s2 / (s2 + float(self.alpha)), P, Phi, rho

    def _nystroem_target(self, Us, Ds, LB, d, rng):
        """The ``d`` bottom eigenvectors of ``M + mu B`` (``1^T Z = 0`` with ``center``).

        ``M = K I - sum_k U_k diag(D_k) U_k^T`` is never formed: Lanczos finds the top of
        ``c I - (M + mu B)`` with ``c >= lambda_max(M + mu B)``. Returns ``(Z, nu)``.
        """
        n_a, K = Us[0].shape[0], len(Us)
        mu = self.mu if LB is not None else 0.0
        bound = 2.0 * float(LB.diagonal().max()) if LB is not None else 0.0
        shift = K + mu * bound  # c >= lambda_max(M + mu B): top of c I - A = bottom of A

        def op(x):
            x = x.reshape(n_a, -1)
            if self.center:
                x = x - x.mean(axis=0)
            smoothed = np.zeros_like(x)
            for U, D in zip(Us, Ds):
                smoothed += U @ (D[:, None] * (U.T @ x))
            y = (shift - K) * x + smoothed
            if LB is not None:
                y = y - mu * (LB @ x)
            if self.center:
                y = y - y.mean(axis=0)
            return y

        lin = LinearOperator((n_a, n_a), matvec=op, matmat=op, dtype=np.float64)
        v0 = rng.uniform(-1, 1, n_a)
        theta, Z = eigsh(lin, k=d, which="LA", v0=v0, tol=1e-12)
        order = np.argsort(theta)[::-1]
        theta, Z = theta[order], Z[:, order]
        return Z * _sign_flip(Z), shift - theta

    def _map(self, Y, i):
        # Eq. (39), in blocks of rows: memory O(block x anchors), time linear in the rows
        anchors, coef = self.kernel_anchors_[i], self.coef_[i]
        step = max(1, _MAP_BLOCK // max(1, anchors.shape[0]))
        if Y.shape[0] <= step:
            return self._kernel(Y[:, : self.widths_[i]], anchors, self.gammas_[i]) @ coef
        out = np.empty((Y.shape[0], coef.shape[1]))
        for start in range(0, Y.shape[0], step):
            block = Y[start : start + step, : self.widths_[i]]
            out[start : start + len(block)] = self._kernel(block, anchors, self.gammas_[i]) @ coef
        return out
