"""The scorers of the provable reconstruction floor (skdc/metrics/_bound_scorer.py): the ratio
and the slack, the floor of a pipeline's mechanism in a grid search, and the slack scorer."""

import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.utils._param_validation import InvalidParameterError

from skdc import metrics
from skdc.mechanisms import CGDP
from skdc.metrics import (
    bound_slack_score,
    make_bound_scorer,
    make_slack_scorer,
    reconstruction_ratio_score,
)
from skdc.privacy import GaussianReleaseLeakage, ReconstructionBound


def test_ratio_and_slack_scores():
    Z = np.ones((4, 2))
    assert reconstruction_ratio_score(Z, np.zeros((4, 2)), 8.0) == 0.5
    assert bound_slack_score(0.8, 0.5) == pytest.approx(0.3)
    assert bound_slack_score([0.9, 0.7], lambda: 0.6) == pytest.approx(0.2)
    assert bound_slack_score(lambda: 0.4, 0.5) < 0  # a negative slack flags a bug


def test_bound_scorer_in_grid_search(mnist_pixel_grid):
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(240, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    # the scorer only needs a bound on the population: the shipped grid stands in for one
    rb = ReconstructionBound(mnist_pixel_grid, trace=4 / 3)
    radius = 2.0  # rows of [-1, 1]^4 lie within 2 of the origin
    pipe = Pipeline([("gdp", CGDP(n_participants=2, random_state=0)),
                     ("clf", LogisticRegression())])
    search = GridSearchCV(
        pipe, {"gdp__noise": [0.5, 2.0, 8.0]},
        scoring={"acc": "accuracy", "floor": make_bound_scorer(rb, radius=radius)},
        refit="acc", cv=2,
    ).fit(X, y)
    floors = search.cv_results_["mean_test_floor"]
    assert np.all(np.diff(floors) >= 0) and floors[-1] > floors[0]
    assert np.all((floors >= 0) & (floors <= 1))
    gamma = GaussianReleaseLeakage(8.0, radius=radius).leakage_bits()
    assert floors[-1] == pytest.approx(rb.rho_star(gamma)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rmse = make_bound_scorer(rb, radius=radius, units="rmse")(search.best_estimator_, X)
    assert rmse >= 0

    def known_secret_rho(estimator, X, y=None):  # an attack scorer, as the attacks room has
        mech = estimator.named_steps["gdp"]
        X_hat = mech.inverse_transform(mech.transform(X))
        return reconstruction_ratio_score(X, X_hat, np.trace(np.cov(X, rowvar=False)))

    slack = make_slack_scorer(known_secret_rho, make_bound_scorer(rb, radius=radius))
    search2 = GridSearchCV(pipe, {"gdp__noise": [0.5, 8.0]},
                           scoring={"acc": "accuracy", "slack": slack}, refit="acc", cv=2)
    assert np.all(search2.fit(X, y).cv_results_["mean_test_slack"] > 0)


# One wrong call per public function: (name, args, kwargs).
WRONG_CALLS = [
    ("bound_slack_score", ("0.5", 0.2), {}),
    ("make_bound_scorer", (object(),), {"radius": 1.0}),
    ("make_slack_scorer", (1.0, 2.0), {}),
    ("reconstruction_ratio_score", (np.ones(2), np.ones(2), 0.0), {}),
]


@pytest.mark.parametrize("name, args, kwargs", WRONG_CALLS, ids=[c[0] for c in WRONG_CALLS])
def test_public_function_validates_its_parameters(name, args, kwargs):
    with pytest.raises(InvalidParameterError, match=f"of {name} must be"):
        getattr(metrics, name)(*args, **kwargs)
