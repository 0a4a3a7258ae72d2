"""The model file (skdc/protocol/_model.py): allow-listed linear models as arrays, never a
pickle, every field checked on load."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression, SGDClassifier
from sklearn.svm import LinearSVC

from skdc.protocol import UploadError, load_model, save_model
from skdc.protocol._container import write_container


@pytest.mark.parametrize(
    "model, task",
    [(LogisticRegression(), "clf"), (SGDClassifier(random_state=0), "clf"),
     (LinearSVC(), "clf"), (LinearRegression(), "reg"), (LogisticRegression(), "binary")],
)
def test_model_round_trip_predicts_identically(tmp_path, model, task):
    if task == "reg":
        X, y = make_regression(n_samples=40, n_features=4, random_state=0)
    else:
        X, y = make_classification(n_samples=60, n_features=4, n_informative=3, n_redundant=0,
                                   n_classes=2 if task == "binary" else 3, random_state=0)
        y = np.array(["a", "b", "c"])[y]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    loaded = load_model(save_model(tmp_path / "model.npz", model))
    assert type(loaded) is type(model)
    assert_array_equal(loaded.predict(X), model.predict(X))
    assert loaded.get_params() == model.get_params()


def test_model_refusals(tmp_path):
    X, y = make_classification(n_samples=30, n_features=3, n_informative=2, n_redundant=0,
                               random_state=0)
    with pytest.raises(TypeError, match="exports only linear models.*got RandomForest"):
        save_model(tmp_path / "m.npz", RandomForestClassifier(n_estimators=2).fit(X, y))
    with pytest.raises(ValueError, match="is not fitted"):
        save_model(tmp_path / "m.npz", LogisticRegression())
    write_container(tmp_path / "m.npz", "skdc-model",
                     {"estimator": "os.system", "params": {}, "n_features_in": 3},
                     {"coef_": np.zeros((1, 3)), "intercept_": np.zeros(1)})
    with pytest.raises(UploadError, match="field 'estimator' is 'os.system'"):
        load_model(tmp_path / "m.npz")
    write_container(tmp_path / "m.npz", "skdc-model",
                     {"estimator": "LogisticRegression", "params": {"C": 1.0},
                      "n_features_in": 3},
                     {"coef_": np.zeros((1, 3)), "intercept_": np.zeros(1)})
    with pytest.raises(UploadError, match="field 'classes_' must list the 2 classes"):
        load_model(tmp_path / "m.npz")
    write_container(tmp_path / "m.npz", "skdc-model",
                     {"estimator": "LinearRegression", "params": {"nonsense": 1},
                      "n_features_in": 3},
                     {"coef_": np.zeros(3), "intercept_": np.zeros(1)})
    with pytest.raises(UploadError, match="field 'params' is invalid for LinearRegression"):
        load_model(tmp_path / "m.npz")


@pytest.mark.parametrize("call, param", [
    (lambda p: load_model(3), "path"),
    (lambda p: save_model(p, "LogisticRegression"), "model"),
    (lambda p: save_model(p, LinearRegression().fit([[0.0], [1.0]], [0, 1]), run_id=1),
     "run_id"),
])
def test_model_functions_validate_their_parameters(tmp_path, call, param):
    with pytest.raises((ValueError, TypeError), match=f"'{param}' parameter of"):
        call(tmp_path / "f")
    assert not (tmp_path / "f").exists()
