"""Tests of the reconstruction-error metrics."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skdc.metrics import psnr, record_mse, relative_error


def test_relative_error_definition():
    rng = np.random.RandomState(0)
    X, E = rng.randn(20, 4), rng.randn(20, 4)
    assert_allclose(relative_error(X, X + E), np.linalg.norm(E) / np.linalg.norm(X), rtol=1e-12)
    assert relative_error(X, X) == 0.0
    assert relative_error(np.zeros((2, 2)), np.ones((2, 2))) == pytest.approx(2 / 1e-15)


def test_record_mse_and_psnr_per_record():
    X = np.array([[0.0, 1.0], [1.0, 0.0]])
    X_hat = np.array([[0.1, 1.0], [1.0, 0.0]])
    assert_allclose(record_mse(X, X_hat, average=False), [0.005, 0.0], rtol=1e-12)
    assert_allclose(record_mse(X, X_hat), 0.0025, rtol=1e-12)
    per = psnr(X, X_hat, average=False)
    assert_allclose(per[0], 10 * np.log10(1 / 0.005), rtol=1e-12)
    assert per[1] == np.inf
    assert_allclose(psnr(X, X_hat, data_range=2.0, average=False)[0],
                    10 * np.log10(4 / 0.005), rtol=1e-12)


def test_shape_and_range_errors():
    with pytest.raises(ValueError, match="must have the same shape"):
        relative_error(np.ones((3, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="X_true is constant"):
        psnr(np.ones((3, 2)), np.zeros((3, 2)))
