"""Tests of make_attack_scorer inside scikit-learn's model selection tools."""

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import load_digits
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    cross_validate,
    permutation_test_score,
)
from sklearn.pipeline import Pipeline
from sklearn.random_projection import GaussianRandomProjection

from skdc.alignment import GOPPAligner
from skdc.attacks import KnownAnchorAttack, KnownInputAttack, collusion_view
from skdc.mechanisms import CGDP, IGDP
from skdc.metrics import (
    linkage_accuracy,
    make_attack_scorer,
    psnr,
    record_mse,
    relative_error,
)
from skdc.utils._sklearn_compat import InvalidParameterError


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:300] / 16.0, y[:300]


def _pipe(v=0.0, proj=False):
    steps = [("gdp", IGDP(n_participants=2, random_state=0)),
             ("align", GOPPAligner(v=v)),
             ("clf", LogisticRegression(max_iter=100))]
    if proj:
        steps.insert(0, ("proj", GaussianRandomProjection(
            24, compute_inverse_components=True, random_state=0)))
    return Pipeline(steps)


def test_grid_search_privacy_rises_with_v(digits):
    """The issue's grid: IGDP + GOPPAligner on digits, a privacy-utility table in one call."""
    X, y = digits
    search = GridSearchCV(
        _pipe(), {"align__v": [0.0, 0.02, 0.1, 0.3]},
        scoring={"acc": "balanced_accuracy",
                 "privacy": make_attack_scorer("procrustes", colluder=0, target=1),
                 "am": make_attack_scorer("alignment_map")},
        refit=False, cv=3).fit(X, y)
    res = search.cv_results_
    for key in ("mean_test_privacy", "mean_test_am"):
        privacy = res[key]
        assert privacy[0] < 1e-8  # exact at v = 0
        assert np.all(np.diff(privacy) > 0), privacy
    assert res["mean_test_acc"][0] > 0.8


def test_scorer_matches_attack_and_metrics(digits):
    X, y = digits
    pipe = _pipe(v=0.1, proj=True).fit(X, y)
    view = collusion_view(pipe, X)
    rec = KnownAnchorAttack("mp").reconstruct(view)
    Xt, yt = view.truth.X, y[view.target_rows]
    assert make_attack_scorer("mp")(pipe, X, y) == relative_error(Xt, rec.X)
    assert make_attack_scorer("mp", "mse")(pipe, X, y) == record_mse(Xt, rec.X)
    assert make_attack_scorer("mp", "psnr")(pipe, X, y) == -psnr(Xt, rec.X)
    link = make_attack_scorer("mp", "linkage",
                              metric_params={"auditor": "pca", "random_state": 0})
    assert link(pipe, X, y) == 1 - linkage_accuracy(Xt, rec.X, yt, auditor="pca",
                                                    random_state=0)
    label = make_attack_scorer("mp", "label_accuracy")(pipe, X, y)
    assert 0.0 <= label < 0.9  # the reconstructions still carry the label


def test_scorer_accepts_instances_and_attack_params(digits):
    X, y = digits
    pipe = _pipe().fit(X, y)
    s1 = make_attack_scorer("known_input", n_known=70, random_state=0)
    s2 = make_attack_scorer(KnownInputAttack(n_known=3), n_known=70, random_state=0)
    # digits has constant pixels, so the leaked records never span the space: near exact only
    assert s1(pipe, X, y) == s2(pipe, X, y) < 0.05


def test_cross_validate_and_permutation_test(digits):
    X, y = digits
    scorer = make_attack_scorer("procrustes")
    cv = cross_validate(_pipe(0.1), X, y, cv=3, scoring={"privacy": scorer})
    assert np.all(cv["test_privacy"] > 0)
    score, perm, _ = permutation_test_score(_pipe(0.1), X, y, scoring=scorer, cv=2,
                                            n_permutations=2, random_state=0)
    assert score > 0 and perm.shape == (2,)


def test_scorer_requests_routed_participant(digits):
    X, y = digits
    ids = np.arange(len(X)) % 2
    scorer = make_attack_scorer("procrustes")
    assert scorer.get_metadata_routing().score.requests == {"participant": True}
    with sklearn.config_context(enable_metadata_routing=True):
        cv = cross_validate(_pipe(0.1), X, y, cv=KFold(3), params={"participant": ids},
                            scoring={"acc": "balanced_accuracy", "privacy": scorer},
                            return_estimator=True)
        search = GridSearchCV(_pipe(), {"align__v": [0.0, 0.1]}, cv=KFold(2),
                              scoring={"privacy": scorer}, refit=False).fit(
                                  X, y, participant=ids)
    assert np.all(cv["test_privacy"] > 0)
    assert search.cv_results_["mean_test_privacy"][0] < 1e-8
    # the declared rows are the target's
    est = cv["estimator"][0]
    test_rows = np.arange(len(X))[: len(X) // 3]
    assert cv["test_privacy"][0] == scorer(est, X[test_rows], y[test_rows],
                                           participant=ids[test_rows])
    view = collusion_view(est, X[test_rows], participant=ids[test_rows])
    np.testing.assert_array_equal(view.target_rows, np.flatnonzero(ids[test_rows] == 1))
    scorer.set_score_request(participant=False)
    assert scorer.get_metadata_routing().score.requests == {"participant": False}


def test_scorer_errors_propagate_to_error_score(digits):
    X, y = digits
    pipe = Pipeline([("gdp", CGDP(2, random_state=0)), ("clf", LogisticRegression(max_iter=1000))])
    scorer = make_attack_scorer("procrustes")
    with pytest.raises(ValueError, match="needs the raw anchor A"):
        scorer(pipe.fit(X, y), X, y)
    with pytest.raises(ValueError, match="needs the raw anchor A"):
        cross_validate(pipe, X, y, cv=2, scoring=scorer, error_score="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (UserWarning, FitFailedWarning))
        cv = cross_validate(pipe, X, y, cv=2, scoring=scorer, error_score=np.nan)
    assert np.all(np.isnan(cv["test_score"]))


def test_scorer_pickles(digits):
    X, y = digits
    scorer = pickle.loads(pickle.dumps(make_attack_scorer("alignment_map")))
    cv = cross_validate(_pipe(0.05), X, y, cv=2, scoring={"am": scorer})
    assert np.all(cv["test_am"] > 0)


def test_make_attack_scorer_bad_input():
    with pytest.raises(InvalidParameterError, match="attack"):
        make_attack_scorer("linear")
    with pytest.raises(InvalidParameterError, match="metric"):
        make_attack_scorer("mp", metric="ssim")
    with pytest.raises(ValueError, match="colluder and target must be different"):
        make_attack_scorer("mp", colluder=1, target=1)
    with pytest.raises(ValueError, match="takes metric_params"):
        make_attack_scorer("mp", metric="mse", metric_params={"auditor": "pca"})
    with pytest.raises(TypeError, match="unexpected metadata"):
        make_attack_scorer("mp")(None, None, None, sample_weight=1)
