"""The baselines of the GaussMix paper (Lev et al., arXiv:2505.24603): AdaSSP (Wang, 2018,
Algorithm 2) and Sheffet's sketch (Sheffet, 2017, Algorithm 1; ``w2`` in the review's form and
in the authors' code's)."""

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from skdc.linear_model import (
    AdaSSPRegressor,
    SheffetSketchRegressor,
    adassp_constants,
    sheffet_w2,
)


def test_adassp_constants():
    c, shift, threshold = adassp_constants(10, 1.0, 1e-6, rho=0.05, row_bound_x=1.0)
    assert c == pytest.approx(11.851811, abs=1e-6)
    assert shift == pytest.approx(46.821810, abs=1e-6)
    assert threshold == pytest.approx(107.936428, abs=1e-6)


def test_sheffet_w2():
    assert sheffet_w2(25, 1.0, 1e-6, 1.0) == pytest.approx(239.92469, abs=1e-5)
    assert sheffet_w2(25, 1.0, 1e-6, 1.0, form="code") == pytest.approx(176.34488, abs=1e-5)


@pytest.fixture(scope="module")
def problem(regression_problem):
    """The training half of the shared least-squares problem (conftest.py)."""
    X, y, _, _ = regression_problem
    return X, y


def test_adassp_within_ten_percent_at_eps_one(problem):
    X, y = problem
    r2 = LinearRegression(fit_intercept=False).fit(X, y).score(X, y)
    for s in range(3):
        reg = AdaSSPRegressor(epsilon=1.0, random_state=s).fit(X, y)
        assert reg.score(X, y) >= 0.9 * r2
    assert reg.privacy_spent_["eps"] == 1.0
    c = adassp_constants(5, 1.0, 1e-6)[0]
    assert reg.privacy_spent_["rdp"](2.0) == pytest.approx(3 * 2.0 / (2 * c**2))


def test_adassp_ridge_grows_on_ill_conditioned_data():
    rng = np.random.RandomState(0)
    X = np.zeros((500, 3))
    X[:, 0] = rng.uniform(-0.5, 0.5, 500)
    y = X[:, 0]
    reg = AdaSSPRegressor(random_state=0).fit(X, y)
    assert reg.ridge_ > 0


def test_sheffet_runs_noisy_or_not(problem):
    X, y = problem
    reg = SheffetSketchRegressor(k=100, random_state=0).fit(X, y)
    assert reg.noisy_  # lambda_min of [X, y] is small: the residual direction
    assert reg.score(X, y) > 0.5
    assert reg.w2_ == pytest.approx(sheffet_w2(100, 1.0, 1e-6, 2.0))
    # a huge, well-spread sample passes the test and is released without noise
    rng = np.random.RandomState(1)
    Z = rng.uniform(-1, 1, (400000, 2)) / 2
    reg2 = SheffetSketchRegressor(k=20, random_state=0).fit(Z[:, :1], Z[:, 1])
    assert not reg2.noisy_


def test_bounds_enforced():
    X = np.array([[2.0, 0.0], [0.0, 0.1], [0.1, 0.1]])
    y = np.array([0.1, 0.2, 0.3])
    for est in (AdaSSPRegressor(), SheffetSketchRegressor()):
        with pytest.raises(ValueError, match="exceed the declared bound"):
            est.fit(X, y)
        est.set_params(clip=True, random_state=0).fit(X, y)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: adassp_constants(0, 1.0, 1e-6), "n_features"),
        (lambda: adassp_constants(3, 1.0, 1e-6, rho=1.5), "rho"),
        (lambda: sheffet_w2(25, 1.0, 1e-6, 1.0, form="paper"), "form"),
        (lambda: sheffet_w2(25, -1.0, 1e-6, 1.0), "epsilon"),
    ],
)
def test_constants_validate_their_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()
