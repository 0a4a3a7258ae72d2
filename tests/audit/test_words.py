"""The audit's words (skdc/audit/_words.py): advice in the caller's own words, the
learns-nothing threshold, and every judged column named."""

import pytest

from skdc.audit._words import attack_label, learns_nothing, noise_label, say, targets_words


@pytest.mark.parametrize("cli", [True, False])
def test_advice_names_flags_on_the_command_line_and_parameters_in_python(cli):
    s = {"n_classes": 2, "majority_share": 0.8, "imbalanced": True, "model": "logistic",
         "model_params": {}, "cli": cli}
    text = learns_nothing(s, 0.5)
    flags = ("--model-param class_weight=balanced", "--model-param C=10", "--model ridge",
             "--data")
    params = ("model_params={'class_weight': 'balanced'}", "model_params={'C': 10.0}",
              "model='ridge'", "columns in X")
    for word in flags if cli else params:
        assert word in text
    for word in params if cli else flags:
        assert word not in text
    assert say(s, "a=", "--a") == ("--a" if cli else "a=")


def test_learns_nothing_within_five_points_of_chance_only():
    s = {"n_classes": 4, "majority_share": 0.4, "model": "ridge"}
    assert learns_nothing(s, 0.25 + 0.049) is not None  # chance is 1 / 4
    assert learns_nothing(s, 0.25 + 0.05) is None
    assert learns_nothing(s, float("nan")) is None and learns_nothing({}, 0.1) is None
    assert "the ceiling" in learns_nothing(s, 0.2, where="at the ceiling")


def test_balanced_weights_are_not_advised_twice():
    s = {"n_classes": 2, "majority_share": 0.8, "imbalanced": True, "model": "logistic",
         "model_params": {"class_weight": "balanced"}, "cli": True}
    assert "class_weight" not in learns_nothing(s, 0.5)


def test_every_attack_the_audit_runs_has_words():
    from skdc.audit._deployments import _DEPLOYMENTS

    for _, names in _DEPLOYMENTS.values():
        for name in names:
            assert attack_label(name) != name  # each in words, not its key
            assert attack_label(f"{name} unlinked") == f"{attack_label(name)} (linkage)"
    assert attack_label("known_secret sensitive") == "known secret (sensitive column)"


def test_noise_and_targets_in_words():
    assert noise_label("pipe__mech__v") == "anchor noise v"
    assert noise_label("gamma_scale") == "gamma scale"
    assert targets_words({"max_linkage": None, "target_error": None}) == ""
    both = targets_words({"max_linkage": 0.2, "target_error": 0.5})
    assert both.startswith("exact-source linkage at most 0.2") and "error at least 0.5" in both
