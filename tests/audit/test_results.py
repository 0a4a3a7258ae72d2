"""What a comparison returns (skdc/audit/_results.py), on hand-built options (conftest.py): an
option's fields and defaults, and what :meth:`Comparison.save` writes, each file read back."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skdc.audit._results import ComparedOption, Comparison, _decisions  # noqa: E402


def test_an_option_measures_nothing_until_told():
    o = ComparedOption(name="local", label="Local", protection="nothing shared", setting="",
                       value=math.nan, utility=0.7, utility_interval=(0.6, 0.8),
                       interval_over="held-out rows (bootstrap)", n_draws=1)
    assert o.attack is None and o.meets is None and o.calibration is None and o.draws is None
    for name in ("attack_error", "attack_error_median", "linkage", "linkage_chance",
                 "inference", "inference_chance", "sensitive_gain", "epsilon", "delta"):
        assert math.isnan(getattr(o, name)), name
    other = ComparedOption(**{**o.__dict__, "extra": {}})
    other.extra["k"] = 1
    assert o.extra == {}  # each option its own dict
    assert o != other and o == o  # compared by identity: NaN fields never equal
    assert "calibration" not in repr(o) and "utility=0.7" in repr(o)


@pytest.fixture
def comparison(hand_comparison):
    """A hand-built comparison whose I-GDP option is deployed."""
    from skdc.audit._split import HeldOut

    options, table, s = hand_comparison()
    deployment = {"option": "igdp", "settings": {"mechanism": "IGDP", "anchor_noise": 0.2},
                  "fingerprint": "f00d", "commands": {"analyst": ["skdc", "analyst", "fit"]},
                  "text": "skdc participant upload --anchor-noise 0.2\n",
                  "draw": {"draw_seed": 100}}
    regulator = pd.DataFrame({"risk": ["singling out"], "column": ["linkage"]})
    held = HeldOut(*(np.zeros(2) for _ in range(6)))
    return Comparison(table=table, options=options, verdict={"decision": "collaborate"},
                      regulator=regulator, deployment=deployment, held_out=held, setting=s,
                      html="<html>page</html>\n")


def test_save_writes_the_page_the_tables_and_the_deployment(comparison, tmp_path):
    files = comparison.save(tmp_path / "out")
    assert files is comparison.files
    assert sorted(files) == ["commands", "comparison", "decisions", "deployment", "draws",
                             "regulator", "report"]
    assert {k: Path(files[k]).name for k in ("report", "deployment", "commands")} == {
        "report": "report.html", "deployment": "deployment.json",
        "commands": "deployment.txt"}
    assert (tmp_path / "out" / "report.html").read_text() == "<html>page</html>\n"
    assert (tmp_path / "out" / "deployment.txt").read_text() == (
        "skdc participant upload --anchor-noise 0.2\n")
    # the deployment's audited settings, their fingerprint and commands; not its seeds
    assert json.loads((tmp_path / "out" / "deployment.json").read_text()) == {
        "option": "igdp", "settings": {"mechanism": "IGDP", "anchor_noise": 0.2},
        "fingerprint": "f00d", "commands": {"analyst": ["skdc", "analyst", "fit"]}}
    table = pd.read_csv(files["comparison"])
    assert list(table["option"]) == ["local", "central", "igdp", "gaussmix@1"]
    assert list(pd.read_csv(files["regulator"]).columns) == ["risk", "column"]


def test_the_draws_and_decisions_name_their_option_first(comparison, tmp_path):
    files = comparison.save(tmp_path)
    draws = pd.read_csv(files["draws"])
    assert draws.columns[0] == "option"
    # I-GDP's eight calibration draws, then GaussMix's three; Local and Central have none
    assert list(draws["option"]) == ["igdp"] * 8 + ["gaussmix@1"] * 3
    assert_allclose(draws["balanced_accuracy"].iloc[8:], [0.74, 0.75, 0.76], rtol=1e-12)
    decisions = pd.read_csv(files["decisions"])
    assert decisions.columns[0] == "option"
    assert list(decisions["option"]) == ["igdp", "igdp"]  # its two noise values
    assert list(decisions["n_failed"]) == [2, 0]


def test_a_comparison_without_draws_or_deployment_writes_empty_tables(comparison, tmp_path):
    for o in comparison.options.values():
        o.draws, o.calibration = None, None
    comparison.deployment = None
    files = comparison.save(tmp_path)
    assert "deployment" not in files and not (tmp_path / "deployment.json").exists()
    assert (tmp_path / "draws.csv").read_text().strip() == "option"
    assert (tmp_path / "decisions.csv").read_text().strip() == "option"
    assert list(_decisions(comparison.options).columns) == ["option"]


def test_plot_draws_the_two_panels(comparison):
    try:
        left, right = comparison.plot()
        assert left.get_ylabel() == "balanced accuracy (held-out rows)"
        assert right.get_xlabel().startswith("epsilon")
    finally:
        plt.close("all")
