"""Linear-algebra primitives (skdc/utils/_linalg.py): the law of the Haar draw, the polar factor
as the nearest orthogonal matrix, its batched form, and centering. Orthogonality of every draw
is a property test in tests/test_properties.py."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from skdc.utils import center, haar_orthogonal, polar, polar_batched


def test_haar_draw_has_the_law_of_scipys_ortho_group():
    """Haar on O(d): the sign correction of the QR draw is what makes it so (without it the law
    leans on the QR's sign convention). Compared with scipy.stats.ortho_group by two-sample
    Kolmogorov-Smirnov tests on an entry and on the trace, and by the moments E[O] = 0,
    E[O_ij^2] = 1 / d and P(det O = -1) = 1/2."""
    rng, d, n = np.random.RandomState(0), 3, 3000
    ours = np.stack([haar_orthogonal(d, rng) for _ in range(n)])
    ref = stats.ortho_group.rvs(d, size=n, random_state=np.random.RandomState(1))
    for stat_of in (lambda O: O[:, 0, 0], lambda O: np.trace(O, axis1=1, axis2=2)):
        assert stats.ks_2samp(stat_of(ours), stat_of(ref)).pvalue > 1e-3
    assert_allclose(ours.mean(axis=0), 0, rtol=0, atol=0.05)
    assert_allclose((ours**2).mean(axis=0), 1 / d, rtol=0.1)
    assert np.mean(np.linalg.det(ours) < 0) == pytest.approx(0.5, abs=0.04)


def test_haar_draw_is_reproducible_from_an_int_seed():
    assert_allclose(haar_orthogonal(4, 7), haar_orthogonal(4, 7), rtol=0, atol=0)
    assert not np.allclose(haar_orthogonal(4, 7), haar_orthogonal(4, 8))


def test_polar_factor_is_the_orthogonal_maximiser_of_the_inner_product():
    """Pi(S) = U V^T maximises <S, R> over orthogonal R (eq. (30) of the GDP paper)."""
    rng = np.random.RandomState(0)
    S = rng.standard_normal((4, 4))
    P = polar(S)
    assert_allclose(P.T @ P, np.eye(4), rtol=0, atol=1e-12)
    best = np.sum(S * P)
    assert best == pytest.approx(np.linalg.svd(S, compute_uv=False).sum(), rel=1e-12)
    assert all(np.sum(S * haar_orthogonal(4, rng)) <= best for _ in range(200))
    Q = haar_orthogonal(4, rng)
    assert_allclose(polar(Q), Q, rtol=0, atol=1e-12)  # an orthogonal matrix is its own factor


def test_polar_batched_is_the_polar_factor_of_each_block():
    M = np.random.RandomState(1).standard_normal((5, 3, 3))
    assert_allclose(polar_batched(M), np.stack([polar(m) for m in M]), rtol=0, atol=1e-12)


def test_center_returns_the_column_means_and_the_centered_rows():
    B = np.random.RandomState(2).standard_normal((6, 3)) + [1.0, -2.0, 5.0]
    b, Bbar = center(B)
    assert_allclose(b, B.sum(axis=0) / 6, rtol=1e-12)
    assert_allclose(Bbar + b, B, rtol=1e-12)
    assert_allclose(Bbar.sum(axis=0), 0, rtol=0, atol=1e-12)
