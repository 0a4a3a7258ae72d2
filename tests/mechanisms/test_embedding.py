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
