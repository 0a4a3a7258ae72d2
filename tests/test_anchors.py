import numpy as np
import pytest

from skdc.anchors import orthonormal_anchor, uniform_anchor


@pytest.mark.parametrize("r, d", [(12, 3), (400, 100), (1600, 400)])
def test_orthonormal_anchor_is_centered_and_orthonormal(r, d):
    # eq. (22) of Nosaka et al., arXiv:2608.18749
    A = orthonormal_anchor(r, d, random_state=0)
    assert A.shape == (r, d)
    assert np.abs(A.sum(axis=0)).max() < 1e-12
    assert np.abs(A.T @ A - np.eye(d)).max() < 1e-12


def test_orthonormal_anchor_reproducible_and_seeded():
    np.testing.assert_array_equal(orthonormal_anchor(9, 2, random_state=3),
                                  orthonormal_anchor(9, 2, random_state=3))
    assert not np.allclose(orthonormal_anchor(9, 2, random_state=3),
                           orthonormal_anchor(9, 2, random_state=4))


@pytest.mark.parametrize("r", [3, 4])
def test_orthonormal_anchor_needs_more_rows_than_features(r):
    with pytest.raises(ValueError, match="n_anchors >= n_features \\+ 1"):
        orthonormal_anchor(r, 4)


def test_uniform_anchor_range_and_errors():
    A = uniform_anchor(50, 3, low=-2, high=-1, random_state=0)
    assert A.min() >= -2 and A.max() <= -1
    with pytest.raises(ValueError, match="high > low"):
        uniform_anchor(5, 2, low=1, high=1)
