"""Tests of the KTI paper's reconstruction label accuracy (skdc/metrics/_label_accuracy.py)."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import KNeighborsClassifier

from skdc.metrics import reconstruction_label_accuracy


def test_reconstruction_label_accuracy():
    rng = np.random.RandomState(0)
    y = np.arange(200) % 4
    X = rng.rand(200, 16) + y[:, None]  # four separated classes
    clf = KNeighborsClassifier(3).fit(X, y)
    assert reconstruction_label_accuracy(X, y, clf) == 1.0
    assert reconstruction_label_accuracy(rng.rand(*X.shape) * 10, y, clf) < 0.5
    with pytest.raises(NotFittedError):
        reconstruction_label_accuracy(X, y, KNeighborsClassifier())
