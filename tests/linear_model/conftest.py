"""Shared fixtures of the private linear models' tests."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def regression_problem():
    """Well-conditioned synthetic least squares within the public bounds."""
    rng = np.random.RandomState(0)
    n, d = 20000, 5
    theta = rng.uniform(-1, 1, d)
    theta /= 1.2 * np.linalg.norm(theta)
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    y = np.clip(X @ theta + 0.05 * rng.standard_normal(n), -1, 1)
    Xt = rng.uniform(-1, 1, (4000, d)) / np.sqrt(d)
    yt = Xt @ theta + 0.05 * rng.standard_normal(4000)
    return X, y, Xt, yt
