"""Linear Mixing regression and GaussMix logistic regression."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from skdc.linear_model import LinearMixingRegressor, MixingLogisticRegression
from skdc.privacy import GaussMixAccountant, gaussmix_epsilon


@pytest.mark.parametrize("adaptive", [True, False])
def test_within_ten_percent_of_non_private_r2_at_eps_one(regression_problem, adaptive):
    X, y, Xt, yt = regression_problem
    r2 = LinearRegression(fit_intercept=False).fit(X, y).score(Xt, yt)
    scores = [
        LinearMixingRegressor(epsilon=1.0, k=100, adaptive=adaptive, random_state=s)
        .fit(X, y).score(Xt, yt)
        for s in range(3)
    ]
    assert min(scores) >= 0.9 * r2


def test_privacy_spent_matches_accountant(regression_problem):
    X, y, _, _ = regression_problem
    reg = LinearMixingRegressor(epsilon=1.0, delta=1e-6, adaptive=False, random_state=0)
    reg.fit(X, y)
    assert reg.k_ == 15  # ceil(2.5 (d + 1))
    eps, _ = gaussmix_epsilon(reg.k_, reg.scale_, 1e-6)
    assert eps == pytest.approx(1.0, abs=1e-6)
    assert reg.privacy_spent_["eps"] == 1.0 and reg.privacy_spent_["delta"] == 1e-6
    _, zeta = GaussMixAccountant(k=15, row_bound=1.0).calibrate(1.0, 1e-6)
    assert reg.scale_ == pytest.approx(zeta, rel=1e-9)
    # non-adaptive noise: sqrt(gamma) times the row bound of [x, y]
    assert reg.noise_ == pytest.approx(np.sqrt(reg.scale_ * 2.0))
    assert reg.privacy_spent_["rdp"](2.0) == pytest.approx(
        GaussMixAccountant(k=15, row_bound=1.0).rdp(2.0, np.sqrt(reg.scale_))
    )


def test_adaptive_budget_includes_eigenvalue_release(regression_problem):
    X, y, _, _ = regression_problem
    a = LinearMixingRegressor(epsilon=1.0, adaptive=True, random_state=0).fit(X, y)
    b = LinearMixingRegressor(epsilon=1.0, adaptive=False, random_state=0).fit(X, y)
    assert a.scale_ > b.scale_  # part of the budget pays for lambda_min
    eta = a.scale_ / np.sqrt(a.k_)
    assert a.privacy_spent_["rdp"](2.0) == pytest.approx(
        GaussMixAccountant(k=a.k_, row_bound=1.0).rdp(2.0, np.sqrt(a.scale_)) + 2.0 / (2 * eta**2)
    )


def test_intercept(regression_problem):
    X, y, Xt, yt = regression_problem
    reg = LinearMixingRegressor(epsilon=1.0, k=100, fit_intercept=True, bound_y=1.0, clip=True,
                                random_state=0).fit(X, 0.5 * y + 0.3)
    assert reg.intercept_ == pytest.approx(0.3, abs=0.05)


def test_rows_over_the_bound_refused(regression_problem):
    X, y, _, _ = regression_problem
    with pytest.raises(ValueError, match="exceed the declared bound"):
        LinearMixingRegressor(row_bound_x=0.1).fit(X, y)
    with pytest.raises(ValueError, match="target"):
        LinearMixingRegressor(bound_y=0.01).fit(X, y)
    LinearMixingRegressor(row_bound_x=0.1, bound_y=0.01, clip=True, random_state=0).fit(X, y)


def test_same_seed_same_model(regression_problem):
    X, y, _, _ = regression_problem
    a = LinearMixingRegressor(random_state=3).fit(X, y).coef_
    np.testing.assert_array_equal(a, LinearMixingRegressor(random_state=3).fit(X, y).coef_)
    assert not np.allclose(a, LinearMixingRegressor(random_state=4).fit(X, y).coef_)


def test_logistic_binary_and_multiclass():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, (20000, 3)) / np.sqrt(3)
    w = np.array([1.0, -1.0, 0.5])
    y = (X @ w > 0).astype(int)
    clf = MixingLogisticRegression(epsilon=1.0, k=100, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.85
    assert clf.coef_.shape == (1, 3) and clf.decision_function(X).shape == (20000,)
    y3 = np.digitize(X @ w, [-0.2, 0.2])
    clf3 = MixingLogisticRegression(epsilon=1.0, k=100, random_state=0).fit(X, y3)
    assert clf3.coef_.shape == (3, 3) and clf3.score(X, y3) > 0.5
    assert clf3.privacy_spent_["eps"] == 1.0


def test_logistic_refuses_unbounded_rows():
    with pytest.raises(ValueError, match="exceed the declared bound"):
        MixingLogisticRegression().fit(np.array([[2.0, 0.0], [0.0, 0.1]]), [0, 1])
