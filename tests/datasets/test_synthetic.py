"""Tests of the synthetic generators (skdc/datasets/_synthetic.py)."""

import numpy as np
import pytest
from sklearn.neighbors import NearestCentroid

from skdc.datasets import make_identity_images, make_image_classification


def test_image_classification_shapes_and_range():
    X, y = make_image_classification(200, 4, image_shape=(2, 6, 5), random_state=0)
    assert X.shape == (200, 60) and y.shape == (200,)
    assert X.min() >= 0 and X.max() <= 1
    np.testing.assert_array_equal(np.bincount(y), [50, 50, 50, 50])


def test_image_classification_reproducible(global_random_seed):
    a = make_image_classification(30, 3, random_state=global_random_seed)
    b = make_image_classification(30, 3, random_state=global_random_seed)
    c = make_image_classification(30, 3, random_state=global_random_seed + 1)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])


def test_classes_are_learnable(global_random_seed):
    """Each class is its prototype plus variation: a nearest-centroid rule separates them."""
    X, y = make_image_classification(400, 5, image_shape=(1, 10, 10), noise=0.05,
                                     random_state=global_random_seed)
    clf = NearestCentroid().fit(X[:300], y[:300])
    assert clf.score(X[300:], y[300:]) > 0.8


def test_identity_images():
    faces = make_identity_images(20, (2, 5), image_shape=(3, 8, 8), n_attributes=3,
                                 random_state=0)
    counts = np.bincount(faces.identity)
    assert counts.min() >= 2 and counts.max() <= 5 and counts.size == 20
    assert faces.data.shape == (counts.sum(), 192)
    assert set(np.unique(faces.attributes)) <= {0, 1}
    assert list(faces.attribute_names) == ["Smiling", "attr1", "attr2"]


def test_identity_images_are_identity_structured(global_random_seed):
    """Images of one identity are closer to each other than to other identities' images."""
    faces = make_identity_images(15, 4, image_shape=(1, 12, 12), random_state=global_random_seed)
    X, ident = faces.data, faces.identity
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    same = ident[:, None] == ident[None]
    off = ~np.eye(len(X), dtype=bool)
    assert D[same & off].mean() < D[~same].mean()
    nearest = np.where(off, D, np.inf).argmin(1)
    assert np.mean(ident[nearest] == ident) > 0.8


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"image_shape must be \(channels, height, width\)"):
        make_image_classification(10, 2, image_shape=(5, 5))
    with pytest.raises(ValueError, match="1 <= low <= high"):
        make_identity_images(3, (4, 2))
    with pytest.raises(ValueError, match="n_classes"):
        make_image_classification(10, 1)
