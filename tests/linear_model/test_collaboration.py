"""GaussMixCollaborationClassifier: each participant's GaussMix sketch, stacked and solved."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn import config_context
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdc.linear_model import GaussMixCollaborationClassifier, MixingLogisticRegression
from skdc.mechanisms import gaussmix_release
from skdc.privacy import GaussMixAccountant, calibrate_gaussmix, gaussmix_epsilon


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(3000, 3))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X, y, np.arange(len(X)) % 3


def test_each_release_is_calibrated_to_the_stated_epsilon(problem):
    X, y, participant = problem
    clf = GaussMixCollaborationClassifier(3, epsilon=2.0, delta=1e-6, row_bound_x=2.0,
                                          random_state=0).fit(X, y, participant=participant)
    assert clf.k_ == 15  # ceil(2.5 (3 features + 1 + 2 classes))
    assert clf.scale_ == calibrate_gaussmix(15, 2.0, 1e-6, False)[0]
    assert clf.row_bound_z_ == pytest.approx(np.sqrt(3.0))
    # the non-adaptive noise: sqrt(gamma) times the bound of a sketched row
    assert clf.noise_ == pytest.approx(np.sqrt(clf.scale_) * np.sqrt(3.0))
    assert clf.epsilon_ == gaussmix_epsilon(15, clf.scale_, 1e-6)[0]
    assert clf.epsilon_ == pytest.approx(2.0, rel=1e-4) and clf.epsilon_ <= 2.0 + 1e-9
    eps, _ = GaussMixAccountant(15, row_bound=np.sqrt(3.0)).epsilon(clf.noise_, 1e-6)
    assert eps == pytest.approx(clf.epsilon_, rel=1e-9)
    assert clf.privacy_spent_["eps"] == 2.0 and clf.privacy_spent_["delta"] == 1e-6
    assert clf.privacy_spent_["rdp"](2.0) == pytest.approx(
        GaussMixAccountant(k=15, row_bound=np.sqrt(3.0)).rdp(2.0, clf.noise_))


def test_the_fit_is_the_stacked_releases_solved_by_hand(problem):
    X, y, participant = problem
    C = 1.5
    clf = GaussMixCollaborationClassifier(3, epsilon=4.0, row_bound_x=C, random_state=7)
    clf.fit(X, y, participant=participant)
    scaled = X / C
    scaled = scaled / np.maximum(np.linalg.norm(scaled, axis=1, keepdims=True), 1.0)
    Z = np.hstack([scaled, np.ones((len(X), 1)), np.eye(2)[y]])
    rng = np.random.RandomState(7)
    M = np.vstack([gaussmix_release(Z[participant == i], k=15, row_bound=np.sqrt(3.0),
                                    gamma=clf.scale_, random_state=rng)[0] for i in range(3)])
    ref = MixingLogisticRegression().fit_sketch(M, np.array([0, 1]))
    assert_allclose(clf.model_.coef_, ref.coef_, rtol=1e-12)
    assert_allclose(clf.model_.intercept_, ref.intercept_, rtol=1e-12)
    assert_allclose(clf.clipped_, np.mean(np.linalg.norm(X, axis=1) > C))
    assert np.array_equal(clf.predict(X), ref.predict(scaled))
    assert clf.score(X, y) > 0.85


def test_participant_ids_route_rows_to_their_release(problem):
    X, y, participant = problem
    fit = GaussMixCollaborationClassifier(3, random_state=0).fit
    # the ids are the rows' owners: relabelling the participants changes the releases
    a = fit(X, y, participant=participant).model_.coef_
    b = fit(X, y, participant=(participant + 1) % 3).model_.coef_
    assert not np.allclose(a, b)
    # without ids every row is participant 0's; the others release noise only
    none = fit(X, y).model_.coef_
    assert_allclose(none, fit(X, y, participant=np.zeros(len(X), int)).model_.coef_)
    with pytest.raises(ValueError, match=r"0 \.\. n_participants - 1 = 2; got id 3"):
        fit(X, y, participant=np.full(len(X), 3))
    with pytest.raises(ValueError, match="one id per row"):
        fit(X, y, participant=participant[:-1])


def test_participant_is_routed_metadata(problem):
    X, y, participant = problem
    # requested by default, as every skdc step requests it
    pipe = make_pipeline(FunctionTransformer(), GaussMixCollaborationClassifier(3, random_state=0))
    with config_context(enable_metadata_routing=True):
        scores = cross_val_score(pipe, X, y, cv=3, params={"participant": participant})
    assert np.all(scores > 0.8)
