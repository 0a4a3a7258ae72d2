"""Tests for skdc.alignment.LTIAligner (Theorem 1, Algorithm 1 of Suetake et al., 2026)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from threadpoolctl import threadpool_limits

from skdc.alignment import GEPAligner, LTIAligner, MPPAligner

from .conftest import _uploads


@pytest.fixture(autouse=True)
def _single_thread_blas():
    """Small dense problems: one BLAS thread (threads only spin on a shared 2-core box)."""
    with threadpool_limits(limits=1):
        yield



def _problem(rng, n_a=60, K=4, h=5):
    return [rng.standard_normal((n_a, h)) for _ in range(K)]


def _orth(B):
    return np.linalg.svd(B, full_matrices=False)[0]


def test_target_orthonormal_and_top_subspace():
    rng = np.random.RandomState(0)
    anchors = _problem(rng)
    lti = LTIAligner().fit(_uploads(anchors))
    Z = lti.target_matrix_
    assert_allclose(Z.T @ Z, np.eye(5), rtol=0, atol=1e-10)
    U = np.linalg.svd(np.hstack([_orth(b) for b in anchors]), full_matrices=False)[0][:, :5]
    assert_allclose(Z @ Z.T, U @ U.T, rtol=0, atol=1e-10)


def test_optimal_value_theorem_1():
    rng = np.random.RandomState(1)
    anchors = _problem(rng)
    K, d = len(anchors), 5
    lti = LTIAligner().fit(_uploads(anchors))

    def objective(Z):
        return sum(np.linalg.norm(b @ np.linalg.pinv(b) @ Z - Z) ** 2 for b in anchors)

    value = sum(np.linalg.norm(b @ G - lti.target_matrix_) ** 2 for b, G in zip(anchors, lti.coef_))
    assert_allclose(value, K * d - np.sum(lti.singular_values_**2), rtol=0, atol=1e-9)
    assert np.all(lti.singular_values_**2 <= K + 1e-9)
    for _ in range(100):
        Q = np.linalg.qr(rng.standard_normal((anchors[0].shape[0], d)))[0]
        assert value <= objective(Q) + 1e-9


def _outputs(aligner, anchors, data):
    return aligner.fit(_uploads(anchors)).transform(_uploads(anchors, data))


def test_invariant_to_invertible_reparametrization_mpp_is_not():
    rng = np.random.RandomState(2)
    anchors = _problem(rng)
    data = [rng.standard_normal((7, 5)) for _ in anchors]
    E = [rng.standard_normal((5, 5)) + 3 * np.eye(5) for _ in anchors]
    anchors_e = [b @ e for b, e in zip(anchors, E)]
    data_e = [x @ e for x, e in zip(data, E)]
    lti, lti_e = LTIAligner(), LTIAligner()
    out, out_e = _outputs(lti, anchors, data), _outputs(lti_e, anchors_e, data_e)
    assert_allclose(lti.target_matrix_, lti_e.target_matrix_, rtol=0, atol=1e-8)
    assert_allclose(out, out_e, rtol=0, atol=1e-8)
    # negative control: MPP depends on each participant's parametrization
    mpp, mpp_e = MPPAligner(), MPPAligner()
    _outputs(mpp, anchors, data), _outputs(mpp_e, anchors_e, data_e)
    assert np.linalg.norm(
        mpp.target_matrix_ @ mpp.target_matrix_.T - mpp_e.target_matrix_ @ mpp_e.target_matrix_.T
    ) > 1e-3


@pytest.mark.parametrize("aligner", [LTIAligner(), MPPAligner(), GEPAligner()],
                         ids=lambda a: type(a).__name__)
def test_exact_alignment_of_shared_span(aligner):
    rng = np.random.RandomState(3)
    A = rng.standard_normal((40, 8))
    X = rng.standard_normal((9, 8))
    F = rng.standard_normal((8, 4))
    E = [rng.standard_normal((4, 4)) + 2 * np.eye(4) for _ in range(3)]
    anchors = [A @ F @ e for e in E]
    data = [X @ F @ e for e in E]
    out = _outputs(aligner, anchors, data).reshape(3, 9, -1)
    for k in range(1, 3):
        assert_allclose(out[k], out[0], rtol=0, atol=1e-8)


def test_rank_deficient_upload_uses_pinv():
    rng = np.random.RandomState(4)
    anchors = _problem(rng, K=3, h=4)
    anchors[1] = np.hstack([anchors[1][:, :3], anchors[1][:, :1]])  # duplicated column
    lti = LTIAligner(n_components=3).fit(_uploads(anchors))
    assert lti.ranks_ == [4, 3, 4]
    assert_allclose(lti.coef_[1], np.linalg.pinv(anchors[1]) @ lti.target_matrix_, rtol=0,
                    atol=1e-10)
    assert np.all(np.isfinite(lti.transform(_uploads(anchors))))


def test_different_widths():
    rng = np.random.RandomState(5)
    anchors = [rng.standard_normal((30, h)) for h in (3, 5, 4)]
    lti = LTIAligner(n_components=3).fit(_uploads(anchors))
    assert [G.shape for G in lti.coef_] == [(3, 3), (5, 3), (4, 3)]
    assert lti.transform(_uploads(anchors)).shape == (90, 3)


def test_participant_order_and_anchor_row_permutation():
    rng = np.random.RandomState(6)
    anchors = _problem(rng)
    data = [rng.standard_normal((5, 5)) for _ in anchors]
    base = LTIAligner()
    out = _outputs(base, anchors, data).reshape(4, 5, -1)
    perm = [2, 0, 3, 1]
    swapped = LTIAligner()
    out_p = _outputs(swapped, [anchors[k] for k in perm], [data[k] for k in perm])
    assert_allclose(swapped.target_matrix_, base.target_matrix_, rtol=0, atol=1e-10)
    for j, k in enumerate(perm):
        assert_allclose(swapped.coef_[j], base.coef_[k], rtol=0, atol=1e-10)
    assert_allclose(out_p.reshape(4, 5, -1), out[perm], rtol=0, atol=1e-10)
    pi = rng.permutation(anchors[0].shape[0])
    rows = LTIAligner()
    out_r = _outputs(rows, [b[pi] for b in anchors], data)
    assert_allclose(rows.target_matrix_, base.target_matrix_[pi], rtol=0, atol=1e-10)
    assert_allclose(out_r, out.reshape(20, -1), rtol=0, atol=1e-10)


def test_bad_inputs():
    rng = np.random.RandomState(7)
    anchors = _problem(rng, n_a=6, K=2, h=3)
    with pytest.raises(ValueError, match="n_components=7 exceeds n_anchors"):
        LTIAligner(n_components=7).fit(_uploads(anchors))
    Y = _uploads(anchors)
    Y.anchors = [anchors[0], anchors[1][:5]]
    with pytest.raises(ValueError, match="same number of anchor rows n_anchors"):
        LTIAligner().fit(Y)
    with pytest.raises(TypeError, match="expects skdc.Uploads"):
        LTIAligner().fit(np.asarray(Y))


def test_centered_target_is_top_eigenspace_of_the_centered_projector_sum():
    rng = np.random.RandomState(30)
    anchors = _problem(rng, n_a=40, K=3, h=4)
    anchors = [b + rng.uniform(-2, 2, 4) for b in anchors]  # off-centre uploads
    lti = LTIAligner(n_components=3, center=True).fit(_uploads(anchors))
    WQ = np.hstack([_orth(b) for b in anchors])
    J = np.eye(40) - np.ones((40, 40)) / 40  # the projector on {x : 1^T x = 0}
    w, V = np.linalg.eigh(J @ WQ @ WQ.T @ J)
    top = V[:, ::-1][:, :3]
    Z = lti.target_matrix_
    assert_allclose(Z.sum(axis=0), 0, rtol=0, atol=1e-12)
    assert_allclose(Z.T @ Z, np.eye(3), rtol=0, atol=1e-12)
    assert_allclose(Z @ Z.T, top @ top.T, rtol=0, atol=1e-10)
    assert_allclose(lti.singular_values_**2, w[::-1][:3], rtol=1e-10)
    # the default (uncentred) target is not centred on these uploads
    uncentred = LTIAligner(n_components=3).fit(_uploads(anchors)).target_matrix_
    assert np.abs(uncentred.sum(0)).max() > 0.1
    for b, G in zip(anchors, lti.coef_):  # G^(k) = pinv(A~(k)) Z
        assert_allclose(G, np.linalg.pinv(b) @ Z, rtol=1e-8, atol=1e-12)


def test_centered_width_limit():
    rng = np.random.RandomState(31)
    anchors = _problem(rng, n_a=5, K=2, h=5)
    with pytest.raises(ValueError, match=r"n_anchors - 1 \(center=True\)"):
        LTIAligner(n_components=5, center=True).fit(_uploads(anchors))
    assert LTIAligner(n_components=5).fit(_uploads(anchors)).target_matrix_.shape == (5, 5)


def test_centering_on_digits_against_the_default():
    """Digits over 4 participants with per-participant PCA: the zero-sum target costs at most
    0.02 of accuracy (measured: 0.800 with and without, over these three splits)."""
    from sklearn.datasets import load_digits
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    from skdc.anchors import SMOTEAnchor
    from skdc.mechanisms import PCAMechanism

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    acc = {False: [], True: []}
    for seed in range(3):
        Xp, Xr, yp, yr = train_test_split(X, y, train_size=300, stratify=y, random_state=seed)
        Xtr, Xte, ytr, yte = train_test_split(
            Xr, yr, train_size=400, test_size=300, stratify=yr, random_state=seed
        )
        ptr, pte = np.arange(400) % 4, np.arange(300) % 4
        mech = PCAMechanism(4, n_components=8, anchor=SMOTEAnchor(200, Xp, yp, n_source=100),
                            random_state=seed).fit(Xtr, participant=ptr)
        Ytr, Yte = mech.transform(Xtr, participant=ptr), mech.transform(Xte, participant=pte)
        for center in (False, True):
            lti = LTIAligner(center=center)
            Z = lti.fit_transform(Ytr)
            if center:
                assert_allclose(lti.target_matrix_.sum(axis=0), 0, rtol=0, atol=1e-10)
            clf = LogisticRegression(max_iter=2000).fit(Z, ytr)
            acc[center].append(clf.score(lti.transform(Yte), yte))
    assert np.mean(acc[True]) >= np.mean(acc[False]) - 0.02
