"""Tests for skdc.anchors.SMOTEAnchor (Section 5.1 of Suetake et al., arXiv:2605.27219)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skdc.anchors import SMOTEAnchor
from skdc.mechanisms import PCAMechanism


def _public(rng, n_per_class=20, n_classes=10, d=6):
    X = rng.rand(n_per_class * n_classes, d)
    y = np.repeat(np.arange(n_classes), n_per_class)
    return X, y


def test_class_balance_sources_and_segments():
    rng = np.random.RandomState(0)
    X, y = _public(rng)
    A, a_y = SMOTEAnchor(100, X, y, n_source=50, k_neighbors=3, random_state=0).make_anchor(6)
    assert A.shape == (100, 6)
    assert_array_equal(np.bincount(a_y), np.full(10, 10))
    assert A.min() >= 0 and A.max() <= 1
    for c in range(10):
        rows = A[a_y == c]
        pool = X[y == c]
        sources = rows[:5]
        # the sources are included verbatim and are public rows of class c
        assert all(np.any(np.all(np.isclose(pool, s, rtol=0, atol=0), axis=1)) for s in sources)
        # every synthetic row lies on a segment between two same-class sources
        for a in rows[5:]:
            found = False
            for i in range(5):
                for j in range(5):
                    diff = sources[j] - sources[i]
                    if i == j or not diff.any():
                        continue
                    u = diff @ (a - sources[i]) / (diff @ diff)
                    if -1e-12 <= u <= 1 + 1e-12 and np.allclose(sources[i] + u * diff, a,
                                                                  rtol=0, atol=1e-8):
                        found = True
            assert found


def test_single_source_per_class_duplicates_with_noise():
    rng = np.random.RandomState(1)
    X, y = _public(rng, n_classes=3)
    A, a_y = SMOTEAnchor(30, X, y, n_source=3, random_state=0).make_anchor(6)
    for c in range(3):
        rows = A[a_y == c]
        assert_allclose(rows[1:], np.repeat(rows[:1], 9, axis=0), rtol=0, atol=0.1)


def test_reproducible_and_seed_dependent():
    rng = np.random.RandomState(2)
    X, y = _public(rng, n_classes=3)
    a = SMOTEAnchor(30, X, y, n_source=9, random_state=0).make_anchor(6)[0]
    b = SMOTEAnchor(30, X, y, n_source=9, random_state=0).make_anchor(6)[0]
    c = SMOTEAnchor(30, X, y, n_source=9, random_state=1).make_anchor(6)[0]
    assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_mechanism_carries_anchor_labels():
    rng = np.random.RandomState(3)
    X_pub, y_pub = _public(rng, n_classes=3)
    X = rng.rand(40, 6)
    mech = PCAMechanism(2, n_components=2, anchor=SMOTEAnchor(30, X_pub, y_pub, n_source=9),
                        random_state=0)
    Y = mech.fit_transform(X)
    assert_array_equal(np.bincount(Y.anchor_y), [10, 10, 10])
    assert Y.anchors[0].shape == (30, 2)


def test_bad_inputs():
    rng = np.random.RandomState(4)
    X, y = _public(rng, n_per_class=3, n_classes=2)
    with pytest.raises(ValueError, match=r"X_public must have shape \(n_public, 4\)"):
        SMOTEAnchor(10, X, y).make_anchor(4)
    with pytest.raises(ValueError, match="fewer than the 4 sources"):
        SMOTEAnchor(10, X, y, n_source=8).make_anchor(6)
    with pytest.raises(ValueError, match="n_source >= the number of classes"):
        SMOTEAnchor(10, X, y, n_source=1).make_anchor(6)
