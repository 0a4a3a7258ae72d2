"""The median bandwidth rule, shared by the participants' kernel PCA and the analyst's KTI."""

import numpy as np
from numpy.testing import assert_allclose

import skdc.utils._kernels as kernels
from skdc.mechanisms import median_heuristic_gamma


def test_the_public_name_is_the_ground_floor_rule():
    assert median_heuristic_gamma is kernels.median_heuristic_gamma


def test_median_heuristic_gamma_is_one_over_twice_the_squared_median_distance():
    X = np.random.RandomState(0).randn(30, 4)
    distances = [np.linalg.norm(X[i] - X[j]) for i in range(30) for j in range(i + 1, 30)]
    assert_allclose(median_heuristic_gamma(X), 1 / (2 * np.median(distances) ** 2), rtol=1e-12)


def test_median_heuristic_gamma_ignores_zero_distances():
    X = np.array([[0.0], [0.0], [1.0], [3.0]])  # nonzero distances 1, 1, 3, 3, 2: median 2
    assert median_heuristic_gamma(X) == 0.125
    assert median_heuristic_gamma(np.ones((3, 2))) == 1.0
