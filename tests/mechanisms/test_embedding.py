"""Tests for skdc.mechanisms ParticipantWise, PCAMechanism, KernelPCAMechanism, UMAPMechanism."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.spatial.distance import pdist
from sklearn.decomposition import PCA, KernelPCA
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from skdc.mechanisms import (
    KernelPCAMechanism,
    ParticipantWise,
    PCAMechanism,
    UMAPMechanism,
    median_heuristic_gamma,
)


@pytest.fixture(autouse=True)
def _single_thread_blas():
    """Small dense problems: one BLAS thread (threads only spin on a shared 2-core box)."""
    with threadpool_limits(limits=1):
        yield



@pytest.fixture(scope="session")
def umap_ready():
    """Import umap-learn and compile its numba kernels once for the whole session."""
    umap = pytest.importorskip("umap")
    X = np.random.RandomState(0).rand(30, 4)
    umap.UMAP(n_components=2, n_neighbors=5, n_epochs=10, random_state=0, n_jobs=1).fit(
        X
    ).transform(X[:3])
    return umap


def _data(rng, n=60, d=6, p=3):
    X = rng.rand(n, d)
    part = np.arange(n) % p
    return X, part


def test_participant_wise_fits_each_clone_on_own_rows():
    rng = np.random.RandomState(0)
    X, part = _data(rng)
    mech = ParticipantWise(PCA(n_components=2), n_participants=3, anchor="uniform",
                           n_anchors=15, random_state=0)
    Y = mech.fit_transform(X, participant=part)
    for i in range(3):
        ref = PCA(n_components=2).fit(X[part == i])
        assert_allclose(np.abs(Y[part == i]), np.abs(ref.transform(X[part == i])),
                        rtol=0, atol=1e-10)
        assert_allclose(Y.anchors[i], mech.estimators_[i].transform(mech.anchor_),
                        rtol=0, atol=1e-12)
    # per-participant seeds for an estimator with random_state
    seeds = [p["random_state"] for p in mech.participant_params_]
    assert len(set(seeds)) == 3


def test_participant_wise_vary_sequences_callables_and_widths():
    rng = np.random.RandomState(1)
    X, part = _data(rng)
    mech = ParticipantWise(
        PCA(),
        n_participants=3,
        vary={"n_components": [2, 3], "whiten": lambda i, r: bool(i == 2)},
        anchor="uniform",
        n_anchors=12,
        random_state=0,
    )
    Y = mech.fit_transform(X, participant=part)
    assert mech.widths_ == [2, 3, 2]
    assert Y.widths == [2, 3, 2]
    assert [e.whiten for e in mech.estimators_] == [False, False, True]
    assert_allclose(Y[part == 0][:, 2], 0, rtol=0)  # narrower participant: trailing zeros
    with pytest.raises(ValueError, match="vary names parameter.*does not have"):
        ParticipantWise(PCA(), vary={"n_comp": [2]}).fit(X)


def test_pca_mechanism_matches_sklearn_pca():
    rng = np.random.RandomState(2)
    X, part = _data(rng)
    Y = PCAMechanism(3, n_components=3, anchor="uniform", n_anchors=10).fit_transform(
        X, participant=part
    )
    for i in range(3):
        ref = PCA(n_components=3, svd_solver="full").fit(X[part == i]).transform(X[part == i])
        assert_allclose(Y[part == i], ref, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="at most n_components=6.*Lower n_components"):
        PCAMechanism(3, n_components=7).fit(X, participant=part)


def test_kernel_pca_median_heuristic_on_standardized_rows():
    rng = np.random.RandomState(3)
    X, part = _data(rng)
    mech = KernelPCAMechanism(3, n_components=2, anchor="uniform", n_anchors=10).fit(
        X, participant=part
    )
    for i in range(3):
        S = StandardScaler().fit_transform(X[part == i])
        m = np.median(pdist(S))
        assert_allclose(mech.gammas_[i], 1 / (2 * m**2), rtol=1e-12)
        ref = KernelPCA(2, kernel="rbf", gamma=mech.gammas_[i], eigen_solver="dense").fit(S)
        out = mech.transform(X[part == i], participant=part[part == i])
        assert_allclose(np.abs(out), np.abs(ref.transform(S)), rtol=0, atol=1e-8)
    fixed = KernelPCAMechanism(3, n_components=2, gamma=0.5).fit(X, participant=part)
    assert_array_equal(fixed.gammas_, [0.5] * 3)
    assert median_heuristic_gamma(np.ones((3, 2))) == 1.0


def test_umap_participant_settings(umap_ready):
    rng = np.random.RandomState(4)
    X, part = _data(rng, n=80, p=4)
    mech = UMAPMechanism(4, n_components=2, n_epochs=20, init="pca", anchor="uniform",
                         n_anchors=10, random_state=0)
    Y = mech.fit_transform(X, participant=part)
    params = mech.participant_params_
    # metric by 1-based k mod 3: 0 -> correlation, 1 -> cosine, 2 -> euclidean
    assert [p["metric"] for p in params] == ["cosine", "euclidean", "correlation", "cosine"]
    assert all(2 <= p["n_neighbors"] <= 7 for p in params)
    assert all(0 <= p["min_dist"] < 0.8 for p in params)
    assert len({p["random_state"] for p in params}) == 4
    assert Y.shape == (80, 2) and Y.anchors[3].shape == (10, 2)
    again = UMAPMechanism(4, n_components=2, n_epochs=20, init="pca", anchor="uniform",
                          n_anchors=10, random_state=0, n_jobs=2).fit_transform(X, participant=part)
    assert_array_equal(np.asarray(Y), np.asarray(again))
    other = UMAPMechanism(4, n_components=2, n_epochs=20, random_state=1).fit(
        X, participant=part
    )
    assert other.participant_params_ != params


def test_umap_homogeneous_switch(umap_ready):
    rng = np.random.RandomState(5)
    X, part = _data(rng, n=40, p=2)
    mech = UMAPMechanism(2, heterogeneous=False, n_neighbors=4, min_dist=0.2, metric="cosine",
                         n_epochs=20, random_state=0).fit(X, participant=part)
    assert all(
        (p["metric"], p["n_neighbors"], p["min_dist"]) == ("cosine", 4, 0.2)
        for p in mech.participant_params_
    )


def test_umap_too_few_rows_names_n_neighbors():
    rng = np.random.RandomState(6)
    X = rng.rand(20, 4)
    part = np.r_[np.zeros(17, int), np.ones(3, int)]
    with pytest.raises(ValueError, match="participant 1 has 3 rows.*n_neighbors=5"):
        UMAPMechanism(2, heterogeneous=False, n_neighbors=5).fit(X, participant=part)


def test_median_heuristic_gamma_wants_rows():
    with pytest.raises(ValueError, match="'X' parameter"):
        median_heuristic_gamma(3.0)


def _kpca_uploads(mech, X, part):
    """Each participant's embedding of its own rows stacked over its anchor upload."""
    Y = mech.transform(X, participant=part)
    return [np.vstack([np.asarray(Y)[part == i], Y.anchors[i]]) for i in range(mech.n_participants)]


def test_kernel_pca_large_path_taken_above_the_threshold(monkeypatch):
    import skdc.mechanisms._embedding as embedding

    monkeypatch.setattr(embedding, "_DENSE_MAX_ROWS", 100)
    rng = np.random.RandomState(7)
    X = rng.rand(330, 5)
    part = np.r_[np.zeros(100, int), np.ones(230, int)]  # 100 rows: dense; 230: Nystroem
    mech = KernelPCAMechanism(2, n_components=3, anchor=X[::11] + 0.01, n_landmarks=50,
                              random_state=0).fit(X, participant=part)
    assert mech.solvers_ == ["dense", "nystroem"]
    assert isinstance(mech.estimators_[0][-1], KernelPCA)
    assert isinstance(mech.estimators_[1][-1], embedding._NystroemKernelPCA)
    assert mech.estimators_[1][-1].landmarks_.shape == (50, 5)
    # the dense participant's fit draws nothing from the large path: its embedding is the
    # one of solver="dense"
    dense = KernelPCAMechanism(2, n_components=3, anchor=X[::11] + 0.01, solver="dense",
                               random_state=0).fit(X, participant=part)
    assert_allclose(mech.transform(X[:100], participant=part[:100]),
                    dense.transform(X[:100], participant=part[:100]), rtol=1e-12, atol=1e-12)
    forced = KernelPCAMechanism(2, n_components=3, solver="dense").fit(X, participant=part)
    assert forced.solvers_ == ["dense", "dense"]


def test_kernel_pca_nystroem_with_every_row_a_landmark_is_the_dense_kernel_pca():
    """With every row a landmark the Nystroem kernel is the kernel itself: the embedding is
    scikit-learn's dense KernelPCA's, on its scale, up to the sign of each component."""
    rng = np.random.RandomState(8)
    X, part = _data(rng, n=90, d=5, p=2)
    mech = KernelPCAMechanism(2, n_components=3, solver="nystroem", n_landmarks=1000,
                              anchor=X[::3] + 0.01, random_state=0).fit(X, participant=part)
    for i in range(2):
        S = StandardScaler().fit(X[part == i])
        ref = KernelPCA(3, kernel="rbf", gamma=mech.gammas_[i], eigen_solver="dense").fit(
            S.transform(X[part == i]))
        got = mech.transform(X[part == i], participant=part[part == i])
        assert_allclose(np.abs(got), np.abs(ref.transform(S.transform(X[part == i]))),
                        rtol=0, atol=1e-8)
        assert_allclose(np.abs(mech.transform(mech.anchor_, participant=np.full(30, i))),
                        np.abs(ref.transform(S.transform(mech.anchor_))), rtol=0, atol=1e-8)


def test_kernel_pca_nystroem_agrees_with_dense_after_procrustes():
    """100 landmarks of 400 rows per participant: after an orthogonal Procrustes fit of each
    participant's upload (rows and anchor) onto the dense one, the relative error is under
    1% (measured about 0.25%)."""
    from scipy.linalg import orthogonal_procrustes
    from sklearn.datasets import make_classification

    X, _ = make_classification(800, 8, n_informative=5, random_state=0)
    part = np.arange(800) % 2
    A = X[::8] + 0.05 * np.random.RandomState(1).randn(100, 8)
    fits = {s: KernelPCAMechanism(2, n_components=4, solver=s, n_landmarks=100, anchor=A,
                                  random_state=0).fit(X, participant=part)
            for s in ("dense", "nystroem")}
    assert fits["nystroem"].solvers_ == ["nystroem"] * 2
    dense, nys = (_kpca_uploads(fits[s], X, part) for s in ("dense", "nystroem"))
    for D, E in zip(dense, nys):
        R, _ = orthogonal_procrustes(E, D)
        assert np.linalg.norm(E @ R - D) / np.linalg.norm(D) < 0.01


def test_kernel_pca_nystroem_blocks_and_median_subset(monkeypatch):
    """Blocks of rows change nothing; the median heuristic on a random subset of a large
    participant's rows is close to the one on all of them."""
    import skdc.mechanisms._embedding as embedding

    rng = np.random.RandomState(9)
    X = rng.randn(600, 4)
    part = np.zeros(600, int)
    whole = KernelPCAMechanism(1, n_components=2, solver="nystroem", n_landmarks=60,
                               anchor=X[::20], random_state=0).fit(X, participant=part)
    monkeypatch.setattr(embedding, "_BLOCK_ROWS", 7)
    blocked = KernelPCAMechanism(1, n_components=2, solver="nystroem", n_landmarks=60,
                                 anchor=X[::20], random_state=0).fit(X, participant=part)
    assert_allclose(blocked.transform(X, participant=part), whole.transform(X, participant=part),
                    rtol=1e-9, atol=1e-12)
    monkeypatch.setattr(embedding, "_MEDIAN_ROWS", 200)
    sub = KernelPCAMechanism(1, n_components=2, solver="nystroem", n_landmarks=60,
                             anchor=X[::20], random_state=0).fit(X, participant=part)
    full = median_heuristic_gamma(StandardScaler().fit_transform(X))
    assert sub.gammas_[0] != full
    assert_allclose(sub.gammas_[0], full, rtol=0.1)
