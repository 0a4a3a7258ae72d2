"""Hadamard factors and Kronecker application (spec 4.2, checks A21-A22)."""

import numpy as np
import pytest

from skdc.privacy import (
    BlockEntropyLowerBound,
    apply_hadamard,
    hadamard,
    hadamard_factors,
    hadamard_order,
)


@pytest.mark.parametrize(
    "m, factors",
    [(784, [28, 28]), (3072, [12, 64, 4]), (12288, [12, 64, 16]), (49152, [12, 64, 64])],
)
def test_a21_paper_orders_factorise(m, factors):
    assert hadamard_order(m) == m
    Fs = hadamard_factors(m)
    assert [F.shape[0] for F in Fs] == factors
    for F in Fs:  # H H^T = m I for the product iff it holds for every factor
        assert set(np.unique(F)) == {-1.0, 1.0}
        np.testing.assert_array_equal(F @ F.T, F.shape[0] * np.eye(F.shape[0]))


@pytest.mark.parametrize("order", [12, 28, 20, 784])
def test_dense_hadamard_is_orthogonal(order):
    H = hadamard(order, factors=(12, 20, 28, 28))
    np.testing.assert_array_equal(H @ H.T, order * np.eye(order))


def test_kronecker_application_matches_dense():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((5, 784))
    np.testing.assert_allclose(apply_hadamard(X, hadamard_factors(784)), X @ hadamard(784).T,
                               atol=1e-10)


def test_a22_lpips_feature_count_and_padding():
    m = 64 * 15 * 15 + 192 * 7 * 7 + 384 * 3 * 3 + 256 * 3 * 3 + 256 * 3 * 3
    assert m == 31872
    # the paper pads to 2^15 = 32768 (H64 x H64 x H8), whose block sizes up to 32 are the
    # paper's LPIPS grid {1, 2, 4, 8, 16, 32}
    order = hadamard_order(m)
    assert order == 32768
    assert [F.shape[0] for F in hadamard_factors(order)] == [64, 64, 8]
    ent = BlockEntropyLowerBound(rotation="signs")
    ent.padded_dim_, ent.n_components_ = order, m
    assert ent._grid()[0] == [1, 2, 4, 8, 16, 32]


def test_each_listed_factor_is_used_at_most_once():
    assert hadamard_order(144) == 192  # 12 x 12 needs H12 twice: padded to 12 x 16
    assert hadamard_order(144, factors=(12, 12)) == 144


def test_no_construction_is_an_error():
    with pytest.raises(ValueError, match="zero-pad"):
        hadamard_factors(10)
