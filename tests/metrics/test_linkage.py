"""Tests of linkage accuracy and reconstruction label accuracy."""

import importlib.util

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import KNeighborsClassifier

from skdc.metrics import linkage_accuracy, reconstruction_label_accuracy


def _pool(seed=0, n=200, d=16, n_classes=4):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % n_classes
    X = rng.rand(n, d) + y[:, None]
    return X, y, rng


class _CountingAuditor:
    """Identity embedding that counts transform calls."""

    def __init__(self):
        self.n_calls = 0

    def transform(self, X):
        self.n_calls += 1
        return np.asarray(X)


def test_exact_reconstructions_are_all_linked():
    X, y, _ = _pool()
    acc = linkage_accuracy(X, X, y, auditor="pca", random_state=0)
    assert float(acc) == 1.0
    assert acc.chance == pytest.approx(0.1)
    assert acc.n_queries == len(X)


def test_random_reconstructions_link_at_chance():
    X, y, rng = _pool(n=2000)
    X_hat = rng.rand(*X.shape) + y[:, None]  # right label, unrelated record
    acc = linkage_accuracy(X, X_hat, y, auditor=_CountingAuditor(), random_state=0)
    assert abs(float(acc) - 0.1) < 4 * np.sqrt(0.09 / len(X))


def test_each_record_embedded_once_and_ranks():
    X, y, rng = _pool()
    auditor = _CountingAuditor()
    acc = linkage_accuracy(X, X + 0.5 * rng.randn(*X.shape), y, auditor=auditor,
                           random_state=0)
    assert auditor.n_calls == 2
    assert acc.ranks.min() >= 1 and acc.ranks.max() <= 10
    assert float(acc) == np.mean(acc.ranks == 1)


def test_small_classes_shrink_gallery_and_chance():
    X, _, _ = _pool(n=12)
    y = np.array([0] * 4 + [1] * 8)
    acc = linkage_accuracy(X, X, y, auditor="pca", random_state=0)
    assert acc.chance == pytest.approx((4 / 4 + 8 / 8) / 12)
    acc = linkage_accuracy(X, X, None, auditor="pca", n_candidates=5, random_state=0)
    assert acc.chance == pytest.approx(0.2)


def test_explicit_fitted_transformer_and_unfitted_error():
    X, y, rng = _pool()
    acc = linkage_accuracy(X, X + 0.01 * rng.randn(*X.shape), y,
                           auditor=PCA(5).fit(X), random_state=0)
    assert float(acc) > 0.9
    with pytest.raises(NotFittedError):
        linkage_accuracy(X, X, y, auditor=PCA(5))
    with pytest.raises(ValueError, match="one label per record"):
        linkage_accuracy(X, X, y[:-1], auditor="pca")


@pytest.mark.skipif(importlib.util.find_spec("skdc.nn") is not None,
                    reason="skdc.nn present: the default is the CNN auditor")
def test_default_auditor_falls_back_to_pca():
    X, y, rng = _pool()
    X_hat = X + 0.3 * rng.randn(*X.shape)
    assert float(linkage_accuracy(X, X_hat, y, random_state=0)) == float(
        linkage_accuracy(X, X_hat, y, auditor="pca", random_state=0))


def test_reconstruction_label_accuracy():
    X, y, rng = _pool()
    clf = KNeighborsClassifier(3).fit(X, y)
    assert reconstruction_label_accuracy(X, y, clf) == 1.0
    assert reconstruction_label_accuracy(rng.rand(*X.shape) * 10, y, clf) < 0.5
    with pytest.raises(NotFittedError):
        reconstruction_label_accuracy(X, y, KNeighborsClassifier())
