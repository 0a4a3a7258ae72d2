"""skdc.participant_fit_params: participant ids reach the mechanism with or without routing."""

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_allclose
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from skdc import IGDP, ReferenceAligner, participant_fit_params


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.randn(90, 5)
    y = (X[:, 0] > 0).astype(int)
    # participant 2 holds the first 30 rows: not the mechanism's own assignment
    ids = np.repeat([2, 0, 1], 30)
    return X, y, ids


def _pipe():
    return Pipeline([("gdp", IGDP(3, random_state=0)), ("align", ReferenceAligner()),
                     ("clf", LogisticRegression())])


def test_without_routing_sklearn_refuses_participant_and_the_helper_routes_it(data):
    X, y, ids = data
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.raises(ValueError, match="does not accept the participant parameter"):
            _pipe().fit(X, y, participant=ids)
        params = participant_fit_params(_pipe(), ids)
        assert list(params) == ["gdp__participant"]
        pipe = _pipe().fit(X, y, **params)
    # the ids arrived: the mechanism's per-participant row counts are the declared ones
    assert pipe.named_steps["gdp"].n_samples_per_participant_.tolist() == [30, 30, 30]
    with sklearn.config_context(enable_metadata_routing=True):
        params = participant_fit_params(_pipe(), ids)
        assert list(params) == ["participant"]
        routed = _pipe().fit(X, y, **params)
    # the same deployment either way: the same model
    assert_allclose(routed.named_steps["clf"].coef_, pipe.named_steps["clf"].coef_, rtol=1e-12)


def test_nested_pipeline_and_search(data):
    X, y, ids = data
    outer = Pipeline([("inner", _pipe())])
    search = GridSearchCV(_pipe(), {"clf__C": [1.0]}, cv=2)
    with sklearn.config_context(enable_metadata_routing=False):
        assert list(participant_fit_params(outer, ids)) == ["inner__gdp__participant"]
        assert list(participant_fit_params(search, ids)) == ["gdp__participant"]
        assert list(participant_fit_params(IGDP(3), ids)) == ["participant"]


def test_no_mechanism_is_a_clear_error(data):
    X, y, ids = data
    with pytest.raises(ValueError, match="holds no skdc mechanism .* would reach no step"):
        participant_fit_params(Pipeline([("clf", LogisticRegression())]), ids)
