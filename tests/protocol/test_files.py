"""Anchor, alignment-map and model files."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression, SGDClassifier
from sklearn.svm import LinearSVC

from skdc.protocol import (
    AlignmentMap,
    UploadError,
    load_anchor,
    load_model,
    make_anchor,
    save_model,
)
from skdc.protocol._container import write_container
from skdc.utils import haar_orthogonal


def test_make_anchor_is_centered_orthonormal_and_reproducible(tmp_path):
    A = make_anchor(tmp_path / "a.npy", 4, random_state=0)
    assert_array_equal(load_anchor(tmp_path / "a.npy"), A)
    np.testing.assert_allclose(A.T @ A, np.eye(4), rtol=0, atol=1e-12)
    np.testing.assert_allclose(A.sum(axis=0), 0, rtol=0, atol=1e-12)
    assert_array_equal(make_anchor(tmp_path / "b.npy", 4, random_state=0), A)
    assert make_anchor(tmp_path / "c.npy", 4, n_anchors=5, kind="uniform").shape == (5, 4)
    with pytest.raises(ValueError, match="'kind' parameter of make_anchor must be a str among"):
        make_anchor(tmp_path / "d.npy", 4, kind="smote")


@pytest.mark.parametrize(
    "content, match",
    [
        (np.zeros(5), "2-D numeric array"),
        (np.array([["a", "b"]] * 4), "2-D numeric array"),
        (np.full((5, 2), np.nan), "NaN or infinity"),
        (np.ones((2, 2)), "needs at least n_features \\+ 1 = 3"),
        (np.ones((6, 2)), "rank-deficient"),
    ],
)
def test_load_anchor_refuses_bad_anchors(tmp_path, content, match):
    np.save(tmp_path / "a.npy", content)
    with pytest.raises(UploadError, match=match):
        load_anchor(tmp_path / "a.npy")


def test_load_anchor_refuses_pickles_and_warns_on_ill_conditioning(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([object()]), allow_pickle=True)
    with pytest.raises(UploadError, match="the anchor: dtype object is not a plain"):
        load_anchor(tmp_path / "obj.npy")
    A = make_anchor(tmp_path / "a.npy", 3, random_state=0) * np.array([1.0, 1.0, 1e-8])
    np.save(tmp_path / "ill.npy", A)
    with pytest.warns(UserWarning, match="ill-conditioned.*condition number 1e\\+08"):
        load_anchor(tmp_path / "ill.npy")


@pytest.mark.parametrize("kind", ["gopp", "reference", "identity"])
def test_alignment_map_round_trip(tmp_path, kind):
    rng = np.random.RandomState(0)
    R, b, c = haar_orthogonal(3, random_state=0), rng.rand(3), rng.rand(3)
    arrays = {"gopp": (R, b, None), "reference": (R, b, c), "identity": (None, None, None)}
    m = AlignmentMap(2, kind, *arrays[kind])
    loaded = AlignmentMap.load(m.save(tmp_path / "m.npz"))
    Y = rng.rand(5, 3)
    assert_array_equal(loaded.apply(Y), m.apply(Y))
    expected = {"gopp": (Y - b) @ R, "reference": (Y - b) @ R + c, "identity": Y}[kind]
    assert_array_equal(m.apply(Y), expected)
    if kind != "identity":
        with pytest.raises(ValueError, match="takes rows of width 3; got shape"):
            m.apply(Y[:, :2])


def test_alignment_map_refuses_bad_files(tmp_path):
    path = tmp_path / "m.npz"
    write_container(path, "skdc-map", {"participant_id": 0, "kind": "gopp"},
                     {"rotation": 2 * np.eye(3), "offset_in": np.zeros(3)})
    with pytest.raises(UploadError, match="field 'rotation' is not orthogonal"):
        AlignmentMap.load(path)
    write_container(path, "skdc-map", {"participant_id": 0, "kind": "shear"}, {})
    with pytest.raises(UploadError, match="field 'kind' is 'shear'; expected one of"):
        AlignmentMap.load(path)
    write_container(path, "skdc-map", {"participant_id": 0, "kind": "gopp"},
                     {"rotation": np.eye(3), "offset_in": np.zeros(2)})
    with pytest.raises(UploadError, match=r"field 'offset_in' has shape \(2,\).*must be \(3,\)"):
        AlignmentMap.load(path)


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
    (lambda p: make_anchor(p, 0), "n_features"),
    (lambda p: make_anchor(p, 3, n_anchors=1.5), "n_anchors"),
    (lambda p: make_anchor(p, 3, random_state="seed"), "random_state"),
    (lambda p: make_anchor(3, 3), "path"),
    (lambda p: load_anchor(None), "path"),
    (lambda p: load_model(3), "path"),
    (lambda p: save_model(p, "LogisticRegression"), "model"),
    (lambda p: save_model(p, LinearRegression().fit([[0.0], [1.0]], [0, 1]), run_id=1),
     "run_id"),
])
def test_file_functions_validate_their_parameters(tmp_path, call, param):
    with pytest.raises((ValueError, TypeError), match=f"'{param}' parameter of"):
        call(tmp_path / "f")
    assert not (tmp_path / "f").exists()
