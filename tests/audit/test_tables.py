"""The audit's tables (skdc/audit/_tables.py) on a hand-built calibration (conftest.py): where
the verdict is read, each attack there and at the bracket's failing end, the diagnostics and
the headline numbers, each against a hand count; and the reconstruction picture of one tiny
deployment."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

from skdc.audit._tables import (
    _attack_table,
    _column_names,
    _measure_words,
    _reconstruction_picture,
    _tables,
    _utility_at,
    _where,
    strongest_linkage,
)


def test_the_verdict_is_read_at_the_value_or_at_the_largest_noise(hand_audit):
    cal, _, _ = hand_audit()
    assert _where(cal) == (0.2, 0.1)
    # the lower end of the range already passes: no failing end
    assert _where(replace(cal, bracket=(0.2, 0.2))) == (0.2, None)
    cal, _, _ = hand_audit(passes=False)  # nothing passes: the largest noise tried
    assert _where(cal) == (0.2, None)


def test_each_attack_at_the_recommended_noise_and_at_the_failing_end(hand_audit):
    cal, _, _ = hand_audit()
    t = _attack_table(cal, ["procrustes", "procrustes unlinked"])
    assert list(t["where"]) == ["recommended noise"] * 2 + ["bracket low end (fails)"] * 2
    assert list(t["noise"]) == [0.2, 0.2, 0.1, 0.1]
    # errors at 0.2: 0.8, 0.9, 0.55, 1.2 (none under 0.5); at 0.1: 0.3, 0.6, 0.45, 0.7
    assert list(t["below_target"]) == [0, 0, 2, 1]
    assert_allclose(t[["min_error", "median_error", "max_error"]].to_numpy()[[0, 2]],
                    [[0.55, (0.8 + 0.9) / 2, 1.2], [0.3, (0.45 + 0.6) / 2, 0.7]], rtol=1e-12)
    assert list(t["binding"]) == [True, False, True, False]
    assert list(t["measure"][:2]) == ["relative error", "1 - linkage accuracy"]
    failed, _, _ = hand_audit(passes=False)
    t = _attack_table(failed, ["procrustes"])
    assert list(t["where"]) == ["largest noise tried"] and list(t["below_target"]) == [1]


def test_each_judged_column_is_said_in_words():
    assert _measure_words("mp") == "relative error"
    assert _measure_words("mp unlinked") == "1 - linkage accuracy"
    assert _measure_words("known_secret sensitive").startswith("sensitive column")


def test_the_strongest_linkage_is_the_highest_median_over_the_draws(hand_audit):
    cal, _, _ = hand_audit()
    # 1 - unlinked at 0.2: 0.15, 0.1, 0.05, 0.2 -> median 0.125, largest 0.2
    attack, median, largest, n = strongest_linkage(cal, 0.2)
    assert (attack, n) == ("procrustes", 4)
    assert_allclose([median, largest], [0.125, 0.2], rtol=1e-12)
    stronger = replace(cal, table=cal.table.assign(**{"mp unlinked": 0.5}))  # 0.5 each draw
    assert strongest_linkage(stronger, 0.2)[:2] == ("mp", 0.5)
    assert strongest_linkage(cal, 0.15) is None  # no draw there
    unmeasured = replace(cal, table=cal.table.drop(columns=["procrustes unlinked"]))
    assert strongest_linkage(unmeasured, 0.2) is None


def test_utility_at_a_value_counts_every_stage_within_rounding(hand_audit):
    _, draws, _ = hand_audit()
    assert_allclose(_utility_at(draws, 0.0), (0.89, 2), rtol=1e-12)  # the grid's two at 0
    assert_allclose(_utility_at(draws, 0.2 + 1e-13), (0.7425, 4), rtol=1e-12)
    mean, n = _utility_at(draws, 0.5)
    assert np.isnan(mean) and n == 0


def test_the_diagnostics_are_read_off_the_draws_where_the_verdict_is_read(hand_audit):
    cal, draws, s = hand_audit()
    t = _tables(cal, draws, s)
    diag = dict(zip(t["diagnostics"]["quantity"], t["diagnostics"]["value"]))
    accuracy = np.array([0.74, 0.76, 0.72, 0.75])
    low, high = stats.t.interval(0.75, 3, loc=accuracy.mean(), scale=stats.sem(accuracy))
    expected = {"anchor noise v where the verdict is read": 0.2, "draws at this noise": 4,
                "share of draws converged": 0.75, "median solver iterations": 13.0,
                "median fixed-point residual": 2.5e-9, "v_PT (phase transition)": 0.15,
                "v / v_PT": 0.2 / 0.15, "balanced accuracy (mean)": accuracy.mean(),
                "balanced accuracy CI low": low, "balanced accuracy CI high": high,
                "balanced accuracy at anchor noise v = 0": 0.89}
    assert list(diag) == list(expected)
    assert_allclose(list(diag.values()), list(expected.values()), rtol=1e-12)
    assert_allclose([t["utility"], *t["utility_ci"], t["baseline"]],
                    [accuracy.mean(), low, high, 0.89], rtol=1e-12)
    assert t["at"] == 0.2 and t["linkage"][0] == "procrustes"
    leak = _tables(cal, draws, s, leakage=1.5)["diagnostics"]
    assert list(leak.iloc[-1]) == ["leakage bound (bits per record)", 1.5]


@pytest.mark.parametrize("passes", [True, False])
def test_the_summary_opens_with_the_decision_and_counts_the_draws(hand_audit, passes):
    cal, draws, s = hand_audit(passes=passes, max_linkage=None)
    summary = _tables(cal, draws, s)["summary"]
    head = dict(zip(summary["quantity"], summary["value"]))
    assert summary["quantity"].iloc[0] == "decision"
    assert head["decision"] == ("collaborate" if passes else "do not collaborate")
    assert head["recommended noise"] == (0.2 if passes else "none")
    assert head["bracket low (fails)"] == (0.1 if passes else 0.2)
    assert head["bracket high (passes)"] == (0.2 if passes else "none")
    assert head["max linkage"] == "not judged" and head["target error"] == 0.5
    # the binding column at 0.2: draw 2 is 0.55 (passes) or 0.45 (fails)
    third = 0.55 if passes else 0.45
    assert_allclose(head["binding column (mean) at 0.2"], (0.8 + 0.9 + third + 1.2) / 4,
                    rtol=1e-12)
    assert head["binding column short of its target at 0.2"] == (
        "0 of 4 draws" if passes else "1 of 4 draws")
    assert (head["calibration draws"], head["grid draws"], head["draws run (all)"]) == (8, 3, 11)
    assert head["draws read back from a checkpoint"] == 0


def test_column_names_are_a_frames_only():
    assert _column_names(pd.DataFrame([[1, 2]], columns=["age", 7])) == ["age", "7"]
    assert _column_names(np.zeros((1, 2))) is None


@pytest.fixture(scope="module")
def tiny_deployment():
    """60 rows of 4 features, 3 parties, an I-GDP + GOPP pipeline (no fit yet)."""
    from skdc.audit._deployments import _pipeline
    from skdc.audit._split import HeldOut

    rng = np.random.RandomState(0)
    X, y, p = rng.randn(60, 4), np.arange(60) % 2, np.arange(60) % 3
    split = HeldOut(X[:45], y[:45], p[:45], X[45:], y[45:], p[45:])
    return _pipeline("igdp", "gopp", 3, "ridge", 0), split


def test_the_picture_repeats_the_first_draw_at_the_verdicts_noise(hand_audit, tiny_deployment):
    pipe, split = tiny_deployment
    cal, _, _ = hand_audit()
    pic = _reconstruction_picture(cal, pipe, split, "align__v", 0, 1, images=True)
    # participant 1's rows, the training ones then the held-out ones, as the draws attack them
    truth = np.r_[split.X_train[split.participant_train == 1],
                  split.X_test[split.participant_test == 1]]
    assert_array_equal(pic["truth"], truth)
    assert pic["reconstruction"].shape == truth.shape
    assert_allclose(pic["error"], np.linalg.norm(pic["reconstruction"] - truth)
                    / np.linalg.norm(truth), rtol=1e-12)
    assert (pic["side"], pic["value"], pic["draw"], pic["attack"]) == (2, 0.2, 0, "procrustes")
    # the first draw's seed alone decides it, whatever the table's order and other seeds
    table = cal.table.iloc[::-1].copy()
    table.loc[table["draw"] > 0, "draw_seed"] += 1
    again = _reconstruction_picture(replace(cal, table=table), pipe, split, "align__v", 0, 1)
    assert again["side"] is None
    assert_array_equal(again["reconstruction"], pic["reconstruction"])
    table.loc[table["draw"] == 0, "draw_seed"] += 1  # another first draw: another deployment
    other = _reconstruction_picture(replace(cal, table=table), pipe, split, "align__v", 0, 1)
    assert not np.array_equal(other["reconstruction"], pic["reconstruction"])
