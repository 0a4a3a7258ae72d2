"""The steps the audit and the comparison share (skdc/audit/_steps.py): the rows and the
parties checked, the analyst's model in words, the checkpoint folder, the calibration's
warnings in the audit's words, the advice on time, the scale of the rows, the recorded
setting and the Python call that reproduces a run."""

import ast
import math
import os
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.linear_model import LogisticRegression
from sklearn.svm import LinearSVC

from skdc.audit import _steps
from skdc.audit._draws import _data_digest
from skdc.audit._split import HeldOut
from skdc.audit._steps import (
    _COMPARE_NAMES,
    _advice,
    _analyst_model,
    _calibrate,
    _check_rows,
    _checkpoint_folder,
    _parties,
    _recorded_setting,
    _reproducing_call,
    _scale,
)
from skdc.utils._files import FileError

X10 = np.arange(20, dtype=np.float64).reshape(10, 2)
Y10 = np.arange(10) % 2

# ----------------------------------------------------------------------------- rows and parties


def test_the_rows_come_back_as_float64_and_the_labels_as_an_array():
    X, y = _check_rows(X10.astype(np.int32).tolist(), list(Y10), 0.5, 0)
    assert X.dtype == np.float64 and isinstance(y, np.ndarray)
    assert_array_equal(X, X10)
    assert_array_equal(y, Y10)
    _check_rows(X10, Y10, None, 2**32 - 1)  # no target error; the largest seed


@pytest.mark.parametrize("X, y, target_error, random_state, match", [
    (X10[:, 0], Y10, None, 0, "2-D array of at least 10 rows; got shape \\(10,\\)"),
    (X10[:9], Y10[:9], None, 0, "at least 10 rows; got shape \\(9, 2\\)"),
    (np.where(X10 == 3, np.nan, X10), Y10, None, 0, "NaN or infinite"),
    (np.where(X10 == 3, np.inf, X10), Y10, None, 0, "NaN or infinite"),
    (X10, Y10[:9], None, 0, "one label per row of X \\(10\\); got shape \\(9,\\)"),
    (X10, np.linspace(0, 1, 10), None, 0, "class labels .* got continuous targets"),
    (X10, Y10, None, -1, "random_state must be an int in 0 .. 2\\*\\*32 - 1"),
    (X10, Y10, None, 2**32, "random_state must be an int"),
    (X10, Y10, None, True, "random_state must be an int"),
    (X10, Y10, None, 1.0, "random_state must be an int"),
    (X10, np.zeros(10, dtype=int), None, 0, "y holds one class \\(0\\) for all 10 rows"),
    (X10, Y10, -0.1, 0, "target_error must be a finite error >= 0"),
    (X10, Y10, math.inf, 0, "target_error must be a finite error >= 0"),
    (X10, Y10, True, 0, "target_error must be a finite error >= 0"),
])
def test_rows_labels_seed_and_target_are_refused(X, y, target_error, random_state, match):
    with pytest.raises(ValueError, match=match):
        _check_rows(X, y, target_error, random_state)


def test_the_parties_are_the_given_ids_renumbered_or_the_count():
    parties, n = _parties(np.array([5, 7, 5, 9, 7, 5]), 99, np.zeros((6, 1)))
    assert_array_equal(parties, [0, 1, 0, 2, 1, 0])
    assert n == 3
    assert _parties(None, 5, np.zeros((10, 1))) == (None, 5)  # 5 = half of 10 rows


@pytest.mark.parametrize("n_participants", [1, 6, True, 2.0])
def test_a_party_count_out_of_two_to_half_the_rows_is_refused(n_participants):
    with pytest.raises(ValueError, match="n_participants must be an int from 2 to half the "
                                         "rows \\(5\\)"):
        _parties(None, n_participants, np.zeros((10, 1)))


@pytest.mark.parametrize("participant, match", [
    (np.array([0.0, 1.0, 0.0]), "one integer party id per row of X \\(3\\)"),
    (np.array([0, 1]), "got shape \\(2,\\)"),
    (np.array([4, 4, 4]), "single party"),
])
def test_ids_that_are_no_parties_are_refused(participant, match):
    with pytest.raises(ValueError, match=match):
        _parties(participant, 2, np.zeros((3, 1)))


def test_the_checkpoint_folder_is_created_and_never_a_link(tmp_path):
    assert _checkpoint_folder(None) is None
    folder = tmp_path / "a" / "b"
    assert os.path.samefile(_checkpoint_folder(str(folder)), folder) and folder.is_dir()
    (tmp_path / "link").symlink_to(folder)
    with pytest.raises(FileError, match="link"):
        _checkpoint_folder(str(tmp_path / "link"))


# ----------------------------------------------------------------------------- the model


def test_the_analysts_model_and_what_the_setting_records_of_it():
    y = np.array([0] * 7 + [1] * 3)  # 30 % < 0.8 * 50 %: imbalanced
    est, words = _analyst_model("logistic", {"C": 2.0}, y, cli=True)
    assert type(est) is LogisticRegression and est.C == 2.0 and est.class_weight == "balanced"
    assert words == {"n_classes": 2, "majority_share": 0.7, "smallest_share": 0.3,
                     "imbalanced": True, "cli": True, "balanced": True,
                     "model_params": {"C": 2.0, "class_weight": "balanced"},
                     "model": "logistic"}
    mine = LinearSVC()
    est, words = _analyst_model(mine, None, y, cli=False)
    assert est is mine and words["model"] == "LinearSVC" and words["balanced"] is False


# ----------------------------------------------------------------------------- the calibration


def test_the_calibration_runs_on_the_split_and_speaks_the_audits_words(monkeypatch, tmp_path):
    seen = {}

    def fake_calibrate_noise(pipe, X, y, **kw):
        seen.update(kw, pipe=pipe, X=X, y=y)
        warnings.warn("No value of align__v meets min_error=: Widen bounds=, raise the "
                      "noise (v_phase_transition = 0.2). Add anchor rows (v_PT grows with "
                      "them).", UserWarning)
        return "the calibration"

    monkeypatch.setattr(_steps, "calibrate_noise", fake_calibrate_noise)
    split = HeldOut(X10, Y10, Y10, X10[:3], Y10[:3], Y10[:3])
    targets = {"target_error": 0.5, "max_linkage": 0.15, "sensitive": None,
               "max_sensitive_gain": None}
    args = ("pipe", split, "align__v", ["mp"], targets, 0.9, 19, (0.0, 1.0), 0.1, "order",
            0, 1)
    with pytest.warns(UserWarning) as record:
        cal = _calibrate(*args, np.random.RandomState(3), 1, None, str(tmp_path), False,
                         filename="igdp.jsonl")
    assert cal == "the calibration"
    assert str(record[0].message) == (
        "No value of anchor noise v meets target_error=: Widen bounds=, raise the noise "
        "(v_PT = 0.2). Add anchor rows (n_anchors=; v_PT grows with them).")
    assert seen["X"] is split.X_train and seen["participant"] is split.participant_train
    assert seen["test_data"] == (split.X_test, split.y_test, split.participant_test)
    assert seen["checkpoint"] == os.path.join(str(tmp_path), "igdp.jsonl")
    assert seen["random_state"] == np.random.RandomState(3).randint(2**31 - 1)
    assert (seen["min_error"], seen["max_linkage"], seen["redraw"], seen["scoring"]) == (
        0.5, 0.15, "deployment", "balanced_accuracy")
    with pytest.warns(UserWarning) as record:
        _calibrate(*args, np.random.RandomState(3), 1, None, None, False, words=_COMPARE_NAMES)
    assert "meets target_error=: Raise the noise" in str(record[0].message)
    assert seen["checkpoint"] is None


# ----------------------------------------------------------------------------- the advice


@pytest.mark.parametrize("cli", [True, False])
def test_the_advice_on_time_in_flags_or_parameters(monkeypatch, cli):
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    text = _advice(cli, 1, "grid")
    parallel = "--n-jobs -1" if cli else "n_jobs=-1"
    assert text.startswith(f"{parallel} (draws in parallel on this machine's 8 cores; now 1 "
                           "worker), ")
    assert text.endswith("fewer --grid values or --grid-draws" if cli
                         else "a smaller n_grid= or grid_draws=")
    assert ("--backend dask --scheduler ADDRESS" in text) is cli
    assert ("joblib.parallel_config(backend='dask')" in text) is not cli
    assert _advice(cli, 2, "options").endswith(
        ("fewer options in --compare" if cli else "fewer options=")
        + " (the kti option's draws cost the most)")
    assert "now 2 workers" in _advice(cli, 2, "options")
    # every core already at work: no advice to parallelize
    assert not _advice(cli, 8, "grid").startswith(parallel)


# ----------------------------------------------------------------------------- the setting


def test_the_scale_of_standardized_columns():
    X = np.array([[-1.0, 1.0], [1.0, 1.0], [-1.0, -1.0], [1.0, -1.0]])  # means 0, sds 1
    assert _scale(X) == {"standardized": True, "scale_spread": 1.0, "largest_rms": 1.0,
                         "largest_column": 0, "mean_offset": 0.0}


def test_the_scale_of_raw_columns_by_hand():
    X = np.array([[1.0, 10.0], [3.0, 10.0]])  # means 2 and 10, sds 1 and 0
    s = _scale(X)
    assert s["standardized"] is False and s["largest_column"] == 1
    # root mean squares sqrt(5) and 10; the offset |mean| / |rms| = sqrt(104) / sqrt(105)
    assert_allclose([s["scale_spread"], s["largest_rms"], s["mean_offset"]],
                    [10 / math.sqrt(5), 10.0, math.sqrt(104 / 105)], rtol=1e-12)


def test_silent_columns_leave_the_spread_alone():
    assert _scale(np.array([[0.0, 2.0], [0.0, -2.0]]))["scale_spread"] == 1.0
    s = _scale(np.zeros((3, 2)))
    assert (s["scale_spread"], s["largest_rms"], s["mean_offset"]) == (1.0, 0.0, 0.0)


def test_the_recorded_setting_of_a_run():
    X = np.array([[1.0, 10.0], [3.0, 10.0]] * 5)
    y, participant = Y10, np.array([0, 1, 2, 1, 0, 2, 1, 1, 0, 2])
    split = HeldOut(X[:7], y[:7], participant[:7], X[7:], y[7:], participant[7:])
    targets = {"max_linkage": 0.15, "target_error": None}
    words = {"n_classes": 2, "model": "ridge", "balanced": False}
    s = _recorded_setting(X, y, participant, split, n_participants=3, colluder=0, target=1,
                          targets=targets, confidence=0.9, criterion="order", random_state=4,
                          words=words, n_anchors=None, command_line="skdc audit ...",
                          n_resumed=2, n_draws_all=40)
    assert s == {
        "n_rows": 10, "n_features": 2, "n_train": 7, "n_test": 3, "n_participants": 3,
        "colluder": 0, "target": 1, "target_rows": 4,  # participant 1: rows 1, 3, 6 and 7
        "max_linkage": 0.15, "target_error": None, "confidence": 0.9, "criterion": "order",
        "n_classes": 2, "model": "ridge", "balanced": False, "n_anchors": None,
        "random_state": 4, "partition": True, "input_sha256": _data_digest(X, y, participant),
        "scale": _scale(X), "command_line": "skdc audit ...", "n_resumed": 2,
        "n_draws_all": 40}
    unsplit = _recorded_setting(X, y, None, split, n_participants=3, colluder=0, target=1,
                                targets=targets, confidence=0.9, criterion="order",
                                random_state=4, words=words, n_anchors=None,
                                command_line=None, n_resumed=0, n_draws_all=0)
    assert unsplit["partition"] is False
    assert unsplit["input_sha256"] == _data_digest(X, y, None) != s["input_sha256"]


def _parsed(call):
    """``(function path, positional names, {keyword: value})`` of a printed call."""
    node = ast.parse(call, mode="eval").body
    assert isinstance(node, ast.Call)
    return (ast.unparse(node.func), [ast.unparse(a) for a in node.args],
            {k.arg: ast.literal_eval(k.value) for k in node.keywords})


def test_the_reproducing_call_parses_back_to_its_arguments_in_order():
    kwargs = {"n_participants": 3, "attacks": ["mp", "procrustes"], "target_error": None,
              "confidence": 0.95, "model_params": {"C": 0.1, "class_weight": "balanced"},
              "bounds": (0.0, 0.37), "label": "it's \"quoted\"", "images": False}
    function, args, back = _parsed(_reproducing_call("audit", kwargs))
    assert (function, args) == ("skdc.audit.audit", ["X", "y"])
    assert back == kwargs and list(back) == list(kwargs)


def test_an_estimator_is_left_out_of_the_call():
    kwargs = {"n_participants": 3, "model": LinearSVC(C=0.5), "confidence": 0.9}
    function, _, back = _parsed(_reproducing_call("compare_options", kwargs))
    assert function == "skdc.audit.compare_options"
    assert back == {"n_participants": 3, "confidence": 0.9}
