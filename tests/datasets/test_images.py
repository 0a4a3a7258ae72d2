"""Tests of the shipped image data sets (skdc/datasets/_images.py)."""

import numpy as np
import pytest

from skdc.datasets import load_digit_images, load_lfw_subset


def test_load_digit_images():
    d = load_digit_images()
    assert d.data.shape == (1797, 64) and d.images.shape == (1797, 8, 8)
    assert d.data.min() == 0.0 and d.data.max() == 1.0
    np.testing.assert_array_equal(d.images.reshape(1797, -1), d.data)
    assert d.image_shape == (1, 8, 8)
    X, y = load_digit_images(return_X_y=True)
    np.testing.assert_array_equal(X, d.data)
    assert sorted(set(y.tolist())) == list(range(10))


def test_load_lfw_subset():
    pytest.importorskip("skimage")
    d = load_lfw_subset()
    assert d.data.shape == (200, 625) and d.images.shape == (200, 25, 25)
    assert 0.0 <= d.data.min() and d.data.max() <= 1.0
    np.testing.assert_array_equal(d.target, np.r_[np.ones(100), np.zeros(100)])
    assert list(d.target_names) == ["non-face", "face"]
    X, y = load_lfw_subset(return_X_y=True)
    assert X.shape == (200, 625) and y.sum() == 100


def test_bad_argument():
    with pytest.raises(ValueError, match="return_X_y"):
        load_digit_images(return_X_y="yes")
