"""Tests for skdc.alignment MPPAligner, GEPAligner and ODCAligner.

The integrations of Section 3.1 of Suetake et al., arXiv:2605.27219.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from threadpoolctl import threadpool_limits

from skdc.alignment import GEPAligner, LTIAligner, MPPAligner, ODCAligner
from skdc.utils import haar_orthogonal

from .conftest import _uploads


@pytest.fixture(autouse=True)
def _single_thread_blas():
    """Small dense problems: one BLAS thread (threads only spin on a shared 2-core box)."""
    with threadpool_limits(limits=1):
        yield



def _problem(rng, n_a=60, K=4, h=5):
    return [rng.standard_normal((n_a, h)) * (k + 1) for k in range(K)]


def test_mpp_target_is_top_left_singular_subspace():
    rng = np.random.RandomState(0)
    anchors = _problem(rng)
    mpp = MPPAligner(n_components=4).fit(_uploads(anchors))
    U, s, _ = np.linalg.svd(np.hstack(anchors), full_matrices=False)
    assert_allclose(np.abs(mpp.target_matrix_), np.abs(U[:, :4]), rtol=0, atol=1e-10)
    assert_allclose(mpp.singular_values_, s[:4], rtol=1e-10)
    for b, G in zip(anchors, mpp.coef_):
        assert_allclose(G, np.linalg.pinv(b) @ mpp.target_matrix_, rtol=0, atol=1e-10)
    # sign convention: each column's largest-magnitude entry is positive
    Z = mpp.target_matrix_
    assert np.all(Z[np.argmax(np.abs(Z), axis=0), np.arange(4)] > 0)


def test_gep_constraint_and_relation_to_lti():
    rng = np.random.RandomState(1)
    anchors = _problem(rng)
    Y = _uploads(anchors)
    gep, lti = GEPAligner().fit(Y), LTIAligner().fit(Y)
    for j in range(5):
        total = sum(np.linalg.norm(b @ G[:, j]) ** 2 for b, G in zip(anchors, gep.coef_))
        assert_allclose(total, 1.0, rtol=0, atol=1e-10)
    assert_allclose(gep.eigenvalues_, lti.singular_values_**2, rtol=1e-8)
    for Gg, Gl in zip(gep.coef_, lti.coef_):
        ratio = Gg / Gl
        assert_allclose(ratio.std(axis=0), 0, rtol=0, atol=1e-6)
        assert_allclose(np.abs(ratio.mean(axis=0)), 1 / lti.singular_values_, rtol=1e-6)
    assert gep.target_matrix_ is None


def test_gep_singular_blocks_get_a_ridge():
    rng = np.random.RandomState(2)
    anchors = _problem(rng, K=3, h=4)
    anchors[0] = np.hstack([anchors[0][:, :3], anchors[0][:, :1]])
    gep = GEPAligner(n_components=3).fit(_uploads(anchors))
    assert np.all(np.isfinite(gep.eigenvalues_))
    assert np.all(np.isfinite(gep.transform(_uploads(anchors))))


def test_odc_orthogonal_maps_and_exact_recovery():
    rng = np.random.RandomState(3)
    A1 = rng.standard_normal((30, 4))
    R = [np.eye(4)] + [haar_orthogonal(4, random_state=rng) for _ in range(3)]
    anchors = [A1 @ r for r in R]
    odc = ODCAligner().fit(_uploads(anchors))
    assert_allclose(odc.coef_[0], np.eye(4), rtol=0, atol=1e-10)
    for b, G in zip(anchors, odc.coef_):
        assert_allclose(G.T @ G, np.eye(4), rtol=0, atol=1e-10)
        assert_allclose(b @ G, A1, rtol=0, atol=1e-10)
    assert_allclose(odc.transform(_uploads(anchors)).reshape(4, 30, 4), np.stack([A1] * 4),
                    rtol=0, atol=1e-10)


def test_odc_depends_on_reference():
    rng = np.random.RandomState(4)
    anchors = _problem(rng, K=3, h=3)
    a, b = ODCAligner(reference=0).fit(_uploads(anchors)), ODCAligner(reference=2).fit(
        _uploads(anchors)
    )
    assert_allclose(a.target_matrix_, anchors[0], rtol=1e-12)
    assert_allclose(b.target_matrix_, anchors[2], rtol=1e-12)
    assert_allclose(b.coef_[2], np.eye(3), rtol=0, atol=1e-10)


@pytest.mark.parametrize("Aligner", [MPPAligner, GEPAligner])
def test_participant_order_invariance(Aligner):
    rng = np.random.RandomState(5)
    anchors = _problem(rng)
    perm = [3, 1, 0, 2]
    base = Aligner().fit(_uploads(anchors))
    swapped = Aligner().fit(_uploads([anchors[k] for k in perm]))
    for j, k in enumerate(perm):
        assert_allclose(swapped.coef_[j], base.coef_[k], rtol=0, atol=1e-8)


def test_bad_inputs():
    rng = np.random.RandomState(6)
    anchors = [rng.standard_normal((20, h)) for h in (3, 4)]
    with pytest.raises(ValueError, match="same width"):
        ODCAligner().fit(_uploads(anchors))
    with pytest.raises(ValueError, match="reference=5 is not a participant"):
        ODCAligner(reference=5).fit(_uploads([anchors[0], anchors[0]]))
    with pytest.raises(ValueError, match="n_components=9 exceeds the total width"):
        GEPAligner(n_components=9).fit(_uploads(anchors))
    with pytest.raises(ValueError, match="n_components=30 exceeds"):
        MPPAligner(n_components=30).fit(_uploads(anchors))


@pytest.mark.parametrize("Aligner", [MPPAligner, GEPAligner, ODCAligner, LTIAligner])
def test_target_is_a_deprecated_spelling_of_target_matrix(Aligner):
    """``target`` names the attacked party; the integration target is ``target_matrix_``, and
    ``target_`` reads it with a FutureWarning until skdc 0.3."""
    rng = np.random.default_rng(0)
    anchors = [rng.standard_normal((30, 3)) for _ in range(3)]
    fitted = Aligner().fit(_uploads(anchors))
    with pytest.warns(FutureWarning, match=rf"{Aligner.__name__}\.target_ is deprecated"):
        old = fitted.target_
    assert old is fitted.target_matrix_
