"""The comparison's verdict (skdc/audit/_verdict.py) on hand-made option sets: the decision
("collaborate" or "do not collaborate") and the sentence that opens with it, the deployable
option, the warnings, the comparison table and the regulator's table."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skdc.audit._results import ComparedOption
from skdc.audit._verdict import _cost, _linked, _meets_words, _regulator, _table, _verdict

NAN = float("nan")
LABELS = {"local": "Local", "central": "Central", "igdp": "I-GDP + GOPP", "cgdp": "C-GDP",
          "kti": "KTI", "gaussmix@1": "GaussMix"}
PROTECTION = {"local": "nothing shared", "central": "none", "igdp": "empirical",
              "cgdp": "empirical", "kti": "empirical", "gaussmix@1": "formal"}
SETTINGS = {"igdp": "v = 0.19", "cgdp": "sigma = 1.2", "kti": "dimension 3",
            "gaussmix@1": "epsilon = 1"}
TAIL = (" The verdict holds for the attacks run here, not for every attack; anchor noise and "
        "private-data noise are no differential privacy.")


def _option(name, utility, meets=None, **measured):
    """An option as a comparison returns it; an empirical one carries its strongest attack."""
    if PROTECTION[name] == "empirical":
        measured = {"attack": "mp", "linkage": 0.12, "linkage_chance": 0.1, **measured}
    if name.startswith("gaussmix"):
        measured = {"epsilon": 1.0, "delta": 1e-6, **measured}
    return ComparedOption(name=name, label=LABELS[name], protection=PROTECTION[name],
                          setting=SETTINGS.get(name, ""), value=NAN, utility=utility,
                          utility_interval=(utility - 0.02, utility + 0.02),
                          interval_over="draws", n_draws=19, meets=meets, **measured)


def _results(*options):
    return {o.name: o for o in options}


def _ctx(max_linkage=0.15, target_error=None, **words):
    return SimpleNamespace(max_linkage=max_linkage, target_error=target_error, sensitive=None,
                           max_sensitive_gain=None, confidence=0.95, delta=1e-6,
                           words={"n_classes": 2, "majority_share": 0.5, "model": "ridge",
                                  **words})


LOCAL, CENTRAL = _option("local", 0.70), _option("central", 0.90)

# ----------------------------------------------------------------------------- the decision


def test_collaborate_when_the_best_option_meeting_the_targets_beats_local():
    results = _results(LOCAL, CENTRAL, _option("cgdp", 0.75, True), _option("igdp", 0.80, True),
                       _option("kti", 0.95, False))
    v = _verdict(_ctx(), results)
    assert v["decision"] == "collaborate"
    assert (v["meeting"], v["best"], v["deploy"], v["formal"]) == (["igdp", "cgdp"], "igdp",
                                                                  "igdp", [])
    assert v["sentence"] == (
        "Collaborate: I-GDP + GOPP at v = 0.19: a fresh deployment keeps exact-source linkage "
        "at most 0.15 (chance 0.1) under every attack tried, with probability at least 95%; "
        "balanced accuracy 0.800 (+0.100 against Local (0.700), -0.100 against Central "
        "(0.900))." + TAIL)
    assert v["warnings"] == []


@pytest.mark.parametrize("utility", [0.65, 0.70])
def test_do_not_collaborate_when_local_does_as_well(utility):
    results = _results(LOCAL, _option("igdp", utility, True))
    v = _verdict(_ctx(), results)
    assert (v["decision"], v["best"], v["deploy"]) == ("do not collaborate", "igdp", "igdp")
    assert v["sentence"] == (
        f"Do not collaborate: each participant alone gets 0.700, more than any option that "
        f"meets the targets (the best, I-GDP + GOPP at v = 0.19, gets {utility:.3f})." + TAIL)


def test_without_local_any_option_meeting_the_targets_is_a_collaboration():
    v = _verdict(_ctx(), _results(CENTRAL, _option("cgdp", 0.10, True)))
    assert v["decision"] == "collaborate" and v["sentence"].endswith(
        "balanced accuracy 0.100 (-0.800 against Central (0.900))." + TAIL)


def test_the_deployable_option_when_the_best_is_not_uploaded_by_skdc():
    results = _results(LOCAL, _option("kti", 0.90, True), _option("cgdp", 0.80, True))
    v = _verdict(_ctx(), results)
    assert (v["best"], v["deploy"]) == ("kti", "cgdp")
    assert v["sentence"].endswith(
        "The best that skdc participant upload deploys is C-GDP." + TAIL)
    v = _verdict(_ctx(), _results(LOCAL, _option("kti", 0.90, True),
                                  _option("cgdp", 0.80, False)))
    assert (v["best"], v["deploy"]) == ("kti", None)
    assert v["sentence"].endswith(" skdc participant upload runs I-GDP and C-GDP only, and "
                                  "neither meets the targets." + TAIL)


def test_nothing_meets_the_targets():
    results = _results(LOCAL, _option("igdp", 0.80, False, linkage=0.4),
                       _option("cgdp", 0.75, False, linkage=NAN), _option("gaussmix@1", 0.66))
    v = _verdict(_ctx(cli=True), results)
    assert (v["decision"], v["meeting"], v["best"], v["deploy"]) == (
        "do not collaborate", [], None, None)
    assert v["formal"] == ["gaussmix@1"]
    assert v["sentence"].startswith(
        "Do not collaborate: no option meets exact-source linkage at most 0.15 (chance 0.1) in "
        "the ranges tried; GaussMix at epsilon = 1 carries a formal guarantee at 0.660. At "
        "the largest setting tried the strongest attack still links 40% of the rows under "
        "I-GDP + GOPP (v = 0.19) (chance 10%). What would help: private-data noise")
    assert "--compare gaussmix --epsilon 1" in v["sentence"]  # the command line's words


def test_no_collaboration_judged_by_attacks():
    v = _verdict(_ctx(), _results(LOCAL, CENTRAL, _option("gaussmix@1", 0.66)))
    assert v["sentence"] == ("Do not collaborate: no collaboration judged by attacks was "
                             "compared; GaussMix at epsilon = 1 carries a formal guarantee at "
                             "0.660." + TAIL)


def test_a_formal_option_is_named_beside_a_collaboration():
    v = _verdict(_ctx(), _results(LOCAL, _option("igdp", 0.80, True),
                                  _option("gaussmix@1", 0.66)))
    assert v["decision"] == "collaborate" and v["sentence"].endswith(
        " GaussMix carries a formal (epsilon, delta = 1e-06)-DP guarantee, its attacks not "
        "measured: balanced accuracy 0.660 at epsilon = 1." + TAIL)


# ----------------------------------------------------------------------------- the warnings


def test_an_error_target_alone_warns_about_linked_reconstructions():
    results = _results(LOCAL, _option("igdp", 0.80, True, linkage=0.5))
    (warning,) = _verdict(_ctx(max_linkage=None, target_error=0.5), results)["warnings"]
    assert warning == ("Meeting the error target is not enough against singling out: "
                       "I-GDP + GOPP links 50% of its reconstructions to their own row "
                       "(chance 10%). Give a linkage target (max_linkage=).")
    assert _verdict(_ctx(target_error=0.5), results)["warnings"] == []  # a linkage target


def test_a_model_that_learns_nothing_without_noise_is_warned_about():
    results = _results(LOCAL, _option("central", 0.52), _option("igdp", 0.51, True))
    (warning,) = _verdict(_ctx(), results)["warnings"]
    assert warning.startswith("The model learns almost nothing: without noise (Central, the "
                              "raw rows pooled) its balanced accuracy is 0.520, within 0.05 "
                              "of chance (0.500;")
    (warning,) = _verdict(_ctx(), _results(_option("local", 0.54)))["warnings"]
    assert "with nothing shared (Local) its balanced accuracy is 0.540" in warning


@pytest.mark.parametrize("linkage, chance, linked", [
    (0.2, 0.1, False), (0.2001, 0.1, True), (0.6, 0.3, False), (0.61, 0.3, True),
    (NAN, 0.1, False)])
def test_linked_means_twice_chance_and_ten_points_above_it(linkage, chance, linked):
    option = _option("igdp", 0.8, True, linkage=linkage, linkage_chance=chance)
    assert _linked(option) is linked


# ----------------------------------------------------------------------------- the tables


def test_whether_an_option_meets_in_words():
    assert _meets_words(_option("local", 0.7, True)) == "nothing shared"
    assert [_meets_words(_option("igdp", 0.7, m)) for m in (None, True, False)] == [
        "not measured", "yes", "no"]


def test_the_cost_against_local_and_central_in_words():
    igdp = _option("igdp", 0.8, True)
    assert _cost(igdp, _results(LOCAL, CENTRAL)) == ("+0.100 against Local (0.700), -0.100 "
                                                     "against Central (0.900)")
    assert _cost(igdp, _results(igdp)) == ""


def test_the_comparison_table_reads_every_number_off_the_options():
    results = _results(LOCAL, CENTRAL, _option("igdp", 0.80, True, attack_error=0.6))
    table = _table(results)
    assert list(table["option"]) == ["local", "central", "igdp"]
    assert list(table["meets_target"]) == ["nothing shared", "not measured", "yes"]
    assert list(table["strongest_attack"]) == ["none applies", "none applies", "mp"]
    assert_allclose(table["vs_local"], [0.0, 0.2, 0.1], rtol=1e-12)
    assert_allclose(table["vs_central"], [-0.2, 0.0, -0.1], rtol=1e-12)
    assert_allclose(table[["utility_low", "utility_high"]].to_numpy()[2], [0.78, 0.82],
                    rtol=1e-12)
    assert table.loc[2, "attack_error_bound"] == 0.6 and table.loc[2, "draws"] == 19
    assert np.isnan(_table(_results(_option("igdp", 0.8, True)))["vs_local"][0])


def test_the_regulators_table_names_the_three_risks_and_what_the_options_show():
    results = _results(LOCAL, _option("igdp", 0.80, True, linkage=0.4, attack_error=0.55,
                                      inference=0.6, inference_chance=0.55),
                       _option("cgdp", 0.75, True, linkage=0.12, attack_error=0.7))
    table = _regulator(results)
    assert list(table.columns) == ["risk", "the guidance asks", "measured by", "column",
                                   "what the measurement is", "not measured",
                                   "what the options show"]
    assert list(table["risk"]) == ["singling out", "linkability", "inference"]
    shown = list(table["what the options show"])
    linkage = ("linkage accuracy: I-GDP + GOPP 0.40, C-GDP 0.12 (chance 0.10); not measured "
               "for Local (nothing shared, or bounded by epsilon)")
    assert shown[:2] == [linkage, linkage]
    assert shown[2] == ("reconstruction error bound: I-GDP + GOPP 0.55, C-GDP 0.70; label "
                        "inference accuracy: I-GDP + GOPP 0.60 (majority label 0.55); not "
                        "measured for Local (nothing shared, or bounded by epsilon)")
    assert math.isnan(results["cgdp"].sensitive_gain)  # no column named: no gain listed
