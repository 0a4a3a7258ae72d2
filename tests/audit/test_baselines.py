"""Tests for skdc.audit Central and Local."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.tree import DecisionTreeClassifier

from skdc.audit import Central, Local


def _data(rng, n=90):
    X = rng.standard_normal((n, 4))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    return X, y, np.arange(n) % 3


def test_central_pools_every_row():
    rng = np.random.RandomState(0)
    X, y, part = _data(rng)
    central = Central(LogisticRegression()).fit(X, y, participant=part)
    ref = LogisticRegression().fit(X, y)
    assert_array_equal(central.predict(X), ref.predict(X))
    assert central.score(X, y, participant=part) == ref.score(X, y)
    assert central.__sklearn_tags__().estimator_type == "classifier"


def test_local_uses_only_own_rows_and_averages_scores():
    rng = np.random.RandomState(1)
    X, y, part = _data(rng)
    local = Local(DecisionTreeClassifier(max_depth=1, random_state=0)).fit(
        X, y, participant=part
    )
    Xt, yt, pt = _data(rng, 60)
    per = []
    for i in range(3):
        ref = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X[part == i], y[part == i])
        assert_array_equal(local.predict(Xt[pt == i], participant=pt[pt == i]),
                           ref.predict(Xt[pt == i]))
        per.append(ref.score(Xt[pt == i], yt[pt == i]))
    assert local.score(Xt, yt, participant=pt) == pytest.approx(np.mean(per))


def test_local_regressor_and_errors():
    rng = np.random.RandomState(2)
    X, _, part = _data(rng)
    y = X @ np.arange(4.0)
    local = Local(LinearRegression()).fit(X, y, participant=part)
    assert local.score(X, y, participant=part) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="Local needs each row's participant"):
        local.predict(X)
    with pytest.raises(ValueError, match=r"participant id\(s\) \[7\] were not seen"):
        local.predict(X[:1], participant=[7])
