"""Per-participant dimensionality reductions: the nonlinear obfuscations of data collaboration.

In data collaboration analysis [1]_ each participant ``k`` fits its own private reduction
``f_k`` (PCA, kernel PCA, UMAP, ...) on its own rows only, then uploads ``f_k(X^(k))`` and the
reduced shared anchor ``f_k(A)``. The analyst never sees ``f_k``; integration aligners
(:class:`~skdc.alignment.LTIAligner`, :class:`~skdc.alignment.KTIAligner`, ...) bring the
uploads into one space through the anchor. :class:`ParticipantWise` turns any scikit-learn
transformer into such a mechanism; :class:`UMAPMechanism`, :class:`KernelPCAMechanism` and
:class:`PCAMechanism` fix the settings of [1]_ (Table 2 and the RQ4 study of Sec. 5.5),
including its per-participant heterogeneity, which can be switched off.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

from abc import abstractmethod
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.decomposition import PCA, KernelPCA
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..anchors import check_anchor_covers_rows
from ..utils._docstring import Substitution
from ..utils._kernels import median_heuristic_gamma
from ..utils._references import kti_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions
from ._base import _MECHANISM_ATTRIBUTES_DOC, _NOISE_RANDOM_STATE_DOC, _SEED_MAX, BaseMechanism

__all__ = [
    "KernelPCAMechanism",
    "PCAMechanism",
    "ParticipantWise",
    "UMAPMechanism",
    "median_heuristic_gamma",
]

_REDUCTION_WIDTH_DOC = """\
    n_participants : int, default=2
        Number of participants.
    n_components : int, default=2
        Width ``d~`` of every participant's representation.
"""

_REDUCTION_ANCHOR_DOC = """\
    anchor : {"orthonormal", "uniform"}, array-like, callable or object, default=None
        The shared anchor (see :mod:`skdc.anchors`). A nonlinear reduction maps only what lies
        near its training rows, so give rows of the data's domain:
        ``SMOTEAnchor.from_rows(X_public, y_public)`` (public rows; in a simulation, rows held
        out from the participants). A synthetic anchor (``"orthonormal"``, ``"uniform"``) off
        the rows' range integrates to chance accuracy, and fitting warns
        (:func:`~skdc.anchors.check_anchor_covers_rows`). ``None``: no anchor uploads, which
        no aligner accepts.
    n_anchors : int, default=None
        Number of anchor rows for generated anchors (``None``: ``4 * n_features``).
    n_jobs : int, default=None
        Participants fitted in parallel (joblib threads).
"""

_REDUCTION_ATTRIBUTES_DOC = """\
    widths_ : list of int
        Output width ``h_i`` of each participant.
""" + _MECHANISM_ATTRIBUTES_DOC

# The fragments every per-participant mechanism's docstring names; the fixed reductions (PCA,
# kernel PCA, UMAP) also name ``{reduction_width}``.
_REDUCTION_FRAGMENTS = {
    "reduction_anchor": _REDUCTION_ANCHOR_DOC,
    "noise_random_state": _NOISE_RANDOM_STATE_DOC,
    "reduction_attributes": _REDUCTION_ATTRIBUTES_DOC,
    "references": kti_paper_references,
}
_reduction_doc = Substitution(reduction_width=_REDUCTION_WIDTH_DOC, **_REDUCTION_FRAGMENTS)

# UMAP's metric by 1-based participant index k mod 3 (Table 2 of [1]).
_UMAP_METRICS = ("correlation", "cosine", "euclidean")

# Kernel PCA with solver="auto": a participant with more rows than this takes the Nystroem path
# (the dense solver's cubic time and quadratic memory stay below it, where the papers' numbers
# are reproduced: the KTI paper's parties hold 100 rows).
_DENSE_MAX_ROWS = 2000
# the median heuristic on more rows than this reads a random subset (pdist is quadratic)
_MEDIAN_ROWS = 2000
# rows per block when the Nystroem features are formed: memory stays O(block x landmarks)
_BLOCK_ROWS = 8192


class _NystroemKernelPCA(TransformerMixin, BaseEstimator):
    """RBF kernel PCA on a Nystroem approximation: linear in the rows, in time and memory.

    ``n_landmarks`` rows ``L`` drawn uniformly without replacement give the features
    ``phi(x) = k(x, L) W^{-1/2}`` with ``W = k(L, L)``, so ``k(x, x') ~ phi(x) phi(x')^T``
    (Williams and Seeger, "Using the Nystroem method to speed up kernel machines", NIPS 2001).
    The kernel PCA of the approximate kernel is the PCA of the features: with ``F`` the
    centred features of the rows and ``F^T F = V diag(s^2) V^T`` (an exact eigensolver on the
    ``n_landmarks x n_landmarks`` scatter, accumulated over blocks of rows), a row maps to
    ``(phi(x) - mean) V``. On the training rows that is ``U diag(s)``, the scale of
    ``KernelPCA.transform`` (eigenvectors of the centred kernel times the square roots of its
    eigenvalues), so the two agree up to the sign of each component. Time ``O(n m (m + p))``
    and memory ``O(m (m + p) + block m)`` for ``n`` rows of ``p`` features and ``m`` landmarks.
    """

    def __init__(self, n_components=2, *, gamma=1.0, n_landmarks=300, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.n_landmarks = n_landmarks
        self.random_state = random_state

    def _features(self, X):
        return rbf_kernel(X, self.landmarks_, gamma=self.gamma) @ self.normalization_

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        rng = np.random.RandomState(self.random_state)
        m = min(int(self.n_landmarks), n)
        self.landmarks_ = X[np.sort(rng.choice(n, size=m, replace=False))]
        w, V = np.linalg.eigh(rbf_kernel(self.landmarks_, gamma=self.gamma))
        keep = w > w.max() * m * np.finfo(np.float64).eps  # W^{-1/2} on the range of W
        self.normalization_ = V[:, keep] / np.sqrt(w[keep])
        width = self.normalization_.shape[1]
        total, scatter, shift = np.zeros(width), np.zeros((width, width)), None
        for start in range(0, n, _BLOCK_ROWS):
            F = self._features(X[start : start + _BLOCK_ROWS])
            if shift is None:  # sums about the first block's mean: no cancellation below
                shift = F.mean(axis=0)
            F -= shift
            total += F.sum(axis=0)
            scatter += F.T @ F
        offset = total / n
        self.mean_ = shift + offset
        scatter -= n * np.outer(offset, offset)  # centred: F_c^T F_c
        s2, R = np.linalg.eigh((scatter + scatter.T) / 2)
        order = np.argsort(s2)[::-1][: self.n_components]
        self.eigenvalues_ = np.clip(s2[order], 0.0, None)
        self.components_ = R[:, order]
        if self.components_.shape[1] < self.n_components:  # fewer landmarks than components
            pad = self.n_components - self.components_.shape[1]
            self.components_ = np.hstack([self.components_, np.zeros((width, pad))])
            self.eigenvalues_ = np.r_[self.eigenvalues_, np.zeros(pad)]
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=np.float64)
        out = np.empty((X.shape[0], self.n_components))
        for start in range(0, X.shape[0], _BLOCK_ROWS):
            block = X[start : start + _BLOCK_ROWS]
            out[start : start + len(block)] = (self._features(block) - self.mean_) \
                @ self.components_
        return out


def _fit_one(estimator, X):
    return estimator.fit(X)


class _PerParticipantMechanism(BaseMechanism):
    """Template: one fitted transformer per participant, on that participant's rows only.

    A subclass supplies ``_make_estimators(X, participant, rng)``, the list of unfitted
    transformers (hyperparameters drawn here), and may check each participant's rows in
    ``_check_participant_rows``. Fitting runs in parallel over participants with joblib
    threads: numba-compiled code (UMAP) is compiled once per process, not per participant.
    """

    _parameter_constraints: dict = {
        **BaseMechanism._parameter_constraints,
        "n_jobs": [None, Integral],
    }

    @abstractmethod
    def _make_estimators(self, X, participant, rng):
        """Unfitted per-participant transformers, in participant order."""

    def _check_participant_rows(self, estimator, i, n_rows):
        """Raise if participant ``i``'s ``n_rows`` rows cannot fit ``estimator``."""

    # a nonlinear reduction maps only what lies near its training rows: its anchor must too
    _anchor_must_cover_rows = False

    def _fit_participants(self, X, participant, rng):
        if self.anchor_ is not None and self._anchor_must_cover_rows:
            check_anchor_covers_rows(self.anchor_, X, estimator_name=type(self).__name__)
        estimators = self._make_estimators(X, participant, rng)
        rows = [participant == i for i in range(self.n_participants)]
        for i, est in enumerate(estimators):
            self._check_participant_rows(est, i, int(rows[i].sum()))
        self.estimators_ = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_fit_one)(est, X[r]) for est, r in zip(estimators, rows)
        )
        if self.anchor_ is None:
            self._anchor_uploads_cache = None
            probe = X[rows[0]][:1]
            self.widths_ = [int(self._apply(probe, i).shape[1]) for i in range(len(rows))]
        else:
            # f_i(A) is computed once: every later upload carries the same anchor uploads
            self._anchor_uploads_cache = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(self._apply)(self.anchor_, i) for i in range(len(rows))
            )
            self.widths_ = [int(b.shape[1]) for b in self._anchor_uploads_cache]
        return max(self.widths_)

    def _anchor_uploads(self):
        return self._anchor_uploads_cache

    def _apply(self, X, i):
        return np.asarray(self.estimators_[i].transform(X), dtype=np.float64)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags


@Substitution(**_REDUCTION_FRAGMENTS)
class ParticipantWise(_PerParticipantMechanism):
    """Fit one clone of any transformer per participant, on that participant's rows only.

    Read more in the :ref:`User Guide <nonlinear_participant_side>`.

    Participant ``i``'s clone ``f_i`` is fitted on its own rows, applied to its rows and to the
    shared anchor (``anchors[i] = f_i(A)``), and never seen by the analyst: the generic private
    obfuscation of data collaboration (Sec. 3 of [1]_). Widths may differ between
    participants (``vary={"n_components": [...]}``); participant ``i``'s rows then fill the
    first ``h_i`` columns of the uploads and the rest is zero.

    Parameters
    ----------
    estimator : estimator object
        A transformer with ``fit`` and ``transform``; it is cloned per participant.
    n_participants : int, default=2
        Number of participants.
    vary : dict, default=None
        Per-participant hyperparameters: ``{name: values}`` where ``values`` is a sequence
        (participant ``i`` gets ``values[i % len(values)]``) or a callable ``f(i, rng)``
        (``rng`` a ``RandomState``) returning the value. ``None``: every clone has the same
        parameters. If the estimator has a ``random_state`` parameter, each clone gets its own
        seed drawn from ``random_state`` unless ``vary`` sets it.
    {reduction_anchor}
    random_state : int, RandomState instance or None, default=None
        Seeds the anchor, the participants' seeds and hyperparameters, and the row hash.
    {noise_random_state}

    Attributes
    ----------
    estimators_ : list of estimator
        The fitted per-participant transformers (participants' secrets).
    participant_params_ : list of dict
        The hyperparameters set on each clone.
    {reduction_attributes}
    See Also
    --------
    UMAPMechanism : Per-participant UMAP with the paper's heterogeneity.
    KernelPCAMechanism : Per-participant RBF kernel PCA, median-heuristic bandwidth.
    PCAMechanism : Per-participant PCA.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import PCA
    >>> from skdc.mechanisms import ParticipantWise
    >>> X = np.random.RandomState(0).rand(60, 5)
    >>> mech = ParticipantWise(PCA(), n_participants=2, vary={"n_components": [2, 3]},
    ...                        anchor="uniform", n_anchors=20, random_state=0)
    >>> Y = mech.fit_transform(X)
    >>> Y.shape, Y.widths
    ((60, 3), [2, 3])
    """

    _parameter_constraints: dict = {
        **_PerParticipantMechanism._parameter_constraints,
        "estimator": [HasMethods(["fit", "transform"])],
        "vary": [None, dict],
    }

    def __init__(
        self,
        estimator,
        n_participants=2,
        *,
        vary=None,
        anchor=None,
        n_anchors=None,
        n_jobs=None,
        random_state=None,
        noise_random_state=None,
    ):
        self.estimator = estimator
        self.n_participants = n_participants
        self.vary = vary
        self.anchor = anchor
        self.n_anchors = n_anchors
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.noise_random_state = noise_random_state

    def _make_estimators(self, X, participant, rng):
        vary = {} if self.vary is None else dict(self.vary)
        valid = self.estimator.get_params(deep=True)
        unknown = sorted(set(vary) - set(valid))
        if unknown:
            raise ValueError(
                f"ParticipantWise: vary names parameter(s) {unknown} that "
                f"{type(self.estimator).__name__} does not have. Valid names: "
                f"{sorted(valid)}."
            )
        seeds = rng.randint(_SEED_MAX, size=self.n_participants)
        estimators, params = [], []
        for i in range(self.n_participants):
            p = {}
            if "random_state" in valid:
                p["random_state"] = int(seeds[i])
            for name, values in vary.items():
                if callable(values):
                    p[name] = values(i, np.random.RandomState(seeds[i]))
                else:
                    values = list(values)
                    if not values:
                        raise ValueError(
                            f"ParticipantWise: vary[{name!r}] is empty; give at least one value."
                        )
                    p[name] = values[i % len(values)]
            estimators.append(clone(self.estimator).set_params(**p))
            params.append(p)
        self.participant_params_ = params
        return estimators


@_reduction_doc
class PCAMechanism(_PerParticipantMechanism):
    """Per-participant PCA: ``f_k(x) = (x - mean_k) V_k`` fitted on participant ``k``'s rows.

    Read more in the :ref:`User Guide <nonlinear_participant_side>`.

    The linear reduction of RQ4 in [1]_ (Sec. 5.5): no standardization, no whitening.
    A linear ``f_k`` is easy to invert from a few leaked anchor pairs; it is the high-risk end
    of the paper's utility-privacy table.

    Parameters
    ----------
    {reduction_width}
    {reduction_anchor}
    random_state : int, RandomState instance or None, default=None
        Seeds the anchor and the row hash.
    {noise_random_state}

    Attributes
    ----------
    estimators_ : list of PCA
        Each participant's fitted PCA (its secret).
    {reduction_attributes}
    See Also
    --------
    KernelPCAMechanism : The nonlinear counterpart.

    {references}

    Examples
    --------
    The example :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` measures its
    reconstruction risk.

    >>> import numpy as np
    >>> from skdc.mechanisms import PCAMechanism
    >>> X = np.random.RandomState(0).rand(40, 6)
    >>> Y = PCAMechanism(n_participants=2, n_components=3, anchor="uniform",
    ...                  n_anchors=10, random_state=0).fit_transform(X)
    >>> Y.shape, len(Y.anchors), Y.anchors[0].shape
    ((40, 3), 2, (10, 3))
    """

    _parameter_constraints: dict = {
        **_PerParticipantMechanism._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_participants=2,
        *,
        n_components=2,
        anchor=None,
        n_anchors=None,
        n_jobs=None,
        random_state=None,
        noise_random_state=None,
    ):
        self.n_participants = n_participants
        self.n_components = n_components
        self.anchor = anchor
        self.n_anchors = n_anchors
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.noise_random_state = noise_random_state

    def _check_participant_rows(self, estimator, i, n_rows):
        limit = min(n_rows, self.n_features_in_)
        if self.n_components > limit:
            raise ValueError(
                f"PCAMechanism: participant {i} has {n_rows} rows and {self.n_features_in_} "
                f"features, so at most n_components={limit}; got n_components="
                f"{self.n_components}. Lower n_components or give participant {i} more rows."
            )

    def _make_estimators(self, X, participant, rng):
        return [
            PCA(n_components=self.n_components, svd_solver="full")
            for _ in range(self.n_participants)
        ]


@_reduction_doc
class KernelPCAMechanism(_PerParticipantMechanism):
    """Per-participant kernel PCA on standardized rows, median-heuristic RBF bandwidth.

    Read more in the :ref:`User Guide <nonlinear_participant_side>`.

    Participant ``k`` standardizes its rows (``StandardScaler`` fitted on them), sets
    ``gamma_k = 1 / (2 m_k^2)`` with ``m_k`` the median nonzero pairwise distance of its
    standardized rows, and fits ``KernelPCA(n_components, kernel="rbf", gamma=gamma_k)``
    (RQ4, Sec. 5.5 of [1]_). The per-participant bandwidth is the heterogeneity; a
    numeric ``gamma`` switches it off.

    The dense solver holds the participant's ``n x n`` kernel matrix and takes cubic time, so
    a participant with more than 2,000 rows (``solver="auto"``) fits the kernel PCA of a
    Nystroem approximation instead: ``n_landmarks`` of its rows drawn at random give the
    features ``phi(x) = k(x, L) k(L, L)^{-1/2}`` (Williams and Seeger, NIPS 2001), and the
    PCA of those features (an exact eigensolver on their ``n_landmarks x n_landmarks``
    scatter, summed over blocks of rows) is the kernel PCA of the approximate kernel, on the
    same scale as the dense one. Its time grows linearly in the rows (``O(n m (m + p))`` for
    ``m`` landmarks and ``p`` features) and its memory too (the rows, their output and a block
    of ``8192 x m`` features); the median heuristic then reads 2,000 of the rows drawn at
    random. Up to 2,000 rows the dense solver runs, where the papers' numbers are reproduced.
    After an orthogonal Procrustes fit the two embeddings agree to about 2% of the
    embedding's norm with 300 landmarks on 3,000 20-feature rows (0.7% to 1.8% measured for
    5 to 20 components; the tests check 1% with 100 landmarks of 400 8-feature rows).

    Parameters
    ----------
    {reduction_width}
    gamma : float or "median", default="median"
        RBF bandwidth; ``"median"`` is the per-participant median heuristic.
    standardize : bool, default=True
        Standardize each participant's rows before the kernel PCA.
    solver : {"auto", "dense", "nystroem"}, default="auto"
        ``"dense"``: scikit-learn's ``KernelPCA(eigen_solver="dense")`` (cubic time and
        quadratic memory in the participant's rows). ``"nystroem"``: the Nystroem
        approximation above (linear). ``"auto"``: dense up to 2,000 rows per participant,
        Nystroem above.
    n_landmarks : int, default=300
        Landmark rows of the Nystroem approximation (at most the participant's rows).
    {reduction_anchor}
    random_state : int, RandomState instance or None, default=None
        Seeds the anchor and the row hash.
    {noise_random_state}

    Attributes
    ----------
    estimators_ : list of estimator
        Each participant's fitted scaler + kernel PCA (its secret).
    gammas_ : ndarray of shape (n_participants,)
        The bandwidth each participant used.
    solvers_ : list of str
        The solver each participant's kernel PCA used, ``"dense"`` or ``"nystroem"``.
    {reduction_attributes}
    See Also
    --------
    median_heuristic_gamma : The bandwidth rule.

    {references}

    Examples
    --------
    The example :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` measures its
    reconstruction risk.

    >>> import numpy as np
    >>> from skdc.mechanisms import KernelPCAMechanism
    >>> X = np.random.RandomState(0).rand(40, 6)
    >>> mech = KernelPCAMechanism(n_participants=2, n_components=3, anchor="uniform",
    ...                           n_anchors=10, random_state=0).fit(X)
    >>> mech.gammas_.shape, mech.transform(X).shape
    ((2,), (40, 3))
    """

    _anchor_must_cover_rows = True

    _parameter_constraints: dict = {
        **_PerParticipantMechanism._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"median"})],
        "standardize": ["boolean"],
        "solver": [StrOptions({"auto", "dense", "nystroem"})],
        "n_landmarks": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_participants=2,
        *,
        n_components=2,
        gamma="median",
        standardize=True,
        solver="auto",
        n_landmarks=300,
        anchor=None,
        n_anchors=None,
        n_jobs=None,
        random_state=None,
        noise_random_state=None,
    ):
        self.n_participants = n_participants
        self.n_components = n_components
        self.gamma = gamma
        self.standardize = standardize
        self.solver = solver
        self.n_landmarks = n_landmarks
        self.anchor = anchor
        self.n_anchors = n_anchors
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.noise_random_state = noise_random_state

    def _make_estimators(self, X, participant, rng):
        estimators, gammas, solvers = [], [], []
        for i in range(self.n_participants):
            Xi = X[participant == i]
            solver = self.solver
            if solver == "auto":
                solver = "nystroem" if Xi.shape[0] > _DENSE_MAX_ROWS else "dense"
            # the dense path draws nothing: its results do not depend on the large path's
            seed = int(rng.randint(_SEED_MAX)) if solver == "nystroem" else None
            if self.standardize:
                Xi = StandardScaler().fit_transform(Xi)
            if self.gamma == "median":
                if Xi.shape[0] > _MEDIAN_ROWS and solver == "nystroem":
                    pick = np.random.RandomState(seed).choice(
                        Xi.shape[0], _MEDIAN_ROWS, replace=False)
                    Xi = Xi[np.sort(pick)]
                g = median_heuristic_gamma(Xi)
            else:
                g = float(self.gamma)
            if solver == "dense":
                kpca = KernelPCA(
                    n_components=self.n_components, kernel="rbf", gamma=g, eigen_solver="dense"
                )
            else:
                kpca = _NystroemKernelPCA(self.n_components, gamma=g,
                                          n_landmarks=self.n_landmarks, random_state=seed)
            estimators.append(make_pipeline(StandardScaler(), kpca) if self.standardize else kpca)
            gammas.append(g)
            solvers.append(solver)
        self.gammas_ = np.asarray(gammas)
        self.solvers_ = solvers
        return estimators

    def _check_participant_rows(self, estimator, i, n_rows):
        if self.n_components > n_rows:
            raise ValueError(
                f"KernelPCAMechanism: participant {i} has {n_rows} rows, fewer than "
                f"n_components={self.n_components}. Lower n_components or give participant "
                f"{i} more rows."
            )


@_reduction_doc
class UMAPMechanism(_PerParticipantMechanism):
    """Per-participant UMAP with the heterogeneous settings of [1]_ (Table 2).

    Read more in the :ref:`User Guide <nonlinear_participant_side>`.

    Participant ``k`` (1-based) standardizes its rows and fits ``UMAP(n_components)`` on them
    only, with metric ``correlation`` / ``cosine`` / ``euclidean`` for ``k mod 3 = 0 / 1 / 2``,
    ``n_neighbors ~ U{2..7}``, ``min_dist ~ U[0, 0.8)`` and its own seed, all drawn from
    ``random_state``. ``heterogeneous=False`` gives every participant ``n_neighbors``,
    ``min_dist`` and ``metric`` (seeds still differ). The anchor and new rows go through
    ``UMAP.transform``.

    umap-learn is imported only when the mechanism is fitted. Its numba functions compile on
    the first fit in a process (tens of seconds) and are reused afterwards: participants are
    fitted in threads of the same process, so the compile is paid once, not per participant.

    Parameters
    ----------
    {reduction_width}
    heterogeneous : bool, default=True
        Draw per-participant metric, ``n_neighbors`` and ``min_dist`` as in [1]_.
    n_neighbors : int, default=15
        UMAP's neighbourhood when ``heterogeneous=False``.
    min_dist : float, default=0.1
        UMAP's ``min_dist`` when ``heterogeneous=False``.
    metric : str, default="euclidean"
        UMAP's metric when ``heterogeneous=False``.
    standardize : bool, default=True
        Standardize each participant's rows before UMAP (the authors' code does; the paper is
        silent).
    n_epochs : int, default=None
        UMAP's optimisation epochs (``None``: umap-learn's default).
    init : {"spectral", "pca", "random"}, default="spectral"
        UMAP's initial layout. ``"spectral"`` is the paper's (umap-learn's default); with the
        small ``n_neighbors`` of the heterogeneous setting the kNN graph is often
        disconnected, and umap-learn 0.5's layout of disconnected components is then not
        reproducible run to run even with a fixed seed. ``"pca"`` is reproducible.
    {reduction_anchor}
    random_state : int, RandomState instance or None, default=None
        Seeds the anchor, the participants' hyperparameters and UMAP seeds, and the row hash.
    {noise_random_state}

    Attributes
    ----------
    estimators_ : list of estimator
        Each participant's fitted scaler + UMAP (its secret).
    participant_params_ : list of dict
        Each participant's ``metric``, ``n_neighbors``, ``min_dist`` and ``random_state``.
    {reduction_attributes}
    See Also
    --------
    KernelPCAMechanism : Per-participant kernel PCA.
    skdc.alignment.KTIAligner : Kernel integration of such uploads.

    {references}

    Examples
    --------
    The example :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` integrates its uploads with KTI.

    >>> import numpy as np
    >>> from skdc.mechanisms import UMAPMechanism
    >>> X = np.random.RandomState(0).rand(80, 6)
    >>> mech = UMAPMechanism(n_participants=4, n_components=2, n_epochs=50, random_state=0)
    >>> Y = mech.fit_transform(X)  # doctest: +SKIP
    >>> [p["metric"] for p in mech.participant_params_]  # doctest: +SKIP
    ['cosine', 'euclidean', 'correlation', 'cosine']
    """

    _anchor_must_cover_rows = True

    _parameter_constraints: dict = {
        **_PerParticipantMechanism._parameter_constraints,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "heterogeneous": ["boolean"],
        "n_neighbors": [Interval(Integral, 2, None, closed="left")],
        "min_dist": [Interval(Real, 0, None, closed="left")],
        "metric": [str],
        "standardize": ["boolean"],
        "n_epochs": [None, Interval(Integral, 1, None, closed="left")],
        "init": [StrOptions({"spectral", "pca", "random"})],
    }

    def __init__(
        self,
        n_participants=2,
        *,
        n_components=2,
        heterogeneous=True,
        n_neighbors=15,
        min_dist=0.1,
        metric="euclidean",
        standardize=True,
        n_epochs=None,
        init="spectral",
        anchor=None,
        n_anchors=None,
        n_jobs=None,
        random_state=None,
        noise_random_state=None,
    ):
        self.n_participants = n_participants
        self.n_components = n_components
        self.heterogeneous = heterogeneous
        self.n_neighbors = n_neighbors
        self.min_dist = min_dist
        self.metric = metric
        self.standardize = standardize
        self.n_epochs = n_epochs
        self.init = init
        self.anchor = anchor
        self.n_anchors = n_anchors
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.noise_random_state = noise_random_state

    def _draw_params(self, rng):
        """Per-participant UMAP settings (Table 2 of [1]), drawn in a fixed order."""
        p = self.n_participants
        seeds = rng.randint(_SEED_MAX, size=p)
        n_neighbors = rng.randint(2, 8, size=p)  # U{2..7}
        min_dist = rng.uniform(0.0, 0.8, size=p)  # U[0, 0.8)
        params = []
        for i in range(p):
            if self.heterogeneous:
                # Table 2 of [1]: metric by k mod 3 with the 1-based party index k
                d = {
                    "metric": _UMAP_METRICS[(i + 1) % 3],
                    "n_neighbors": int(n_neighbors[i]),
                    "min_dist": float(min_dist[i]),
                }
            else:
                d = {
                    "metric": self.metric,
                    "n_neighbors": int(self.n_neighbors),
                    "min_dist": float(self.min_dist),
                }
            d["random_state"] = int(seeds[i])
            params.append(d)
        return params

    def _make_estimators(self, X, participant, rng):
        from umap import UMAP

        self.participant_params_ = self._draw_params(rng)
        estimators = []
        for d in self.participant_params_:
            um = UMAP(
                n_components=self.n_components,
                n_epochs=self.n_epochs,
                init=self.init,
                n_jobs=1,
                **d,
            )
            estimators.append(make_pipeline(StandardScaler(), um) if self.standardize else um)
        return estimators

    def _check_participant_rows(self, estimator, i, n_rows):
        k = self.participant_params_[i]["n_neighbors"]
        if n_rows <= k:
            raise ValueError(
                f"UMAPMechanism: participant {i} has {n_rows} rows, but its UMAP uses "
                f"n_neighbors={k}, which needs more than {k} rows. Give participant {i} more "
                "rows, or set heterogeneous=False with a smaller n_neighbors."
            )
        if n_rows <= self.n_components + 1:
            raise ValueError(
                f"UMAPMechanism: participant {i} has {n_rows} rows, too few for "
                f"n_components={self.n_components} (UMAP needs n_rows > n_components + 1). "
                "Lower n_components or give the participant more rows."
            )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.non_deterministic = self.init == "spectral"
        return tags
