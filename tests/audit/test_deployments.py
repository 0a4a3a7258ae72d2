"""Fresh deployments (skdc/audit/_deployments.py): the model a name gives, the labels in
numbers and the imbalance rule at its boundary, the class weights added, the deployments
table and its pipelines, and the default noise ranges against their closed forms."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.svm import LinearSVC

from skdc.alignment import GOPPAligner
from skdc.attacks import get_attack_names
from skdc.audit._deployments import (
    _DEPLOYMENTS,
    _IMBALANCED,
    _default_bounds,
    _labels,
    _model,
    _model_params,
    _pipeline,
)
from skdc.mechanisms import CGDP, IGDP

# ----------------------------------------------------------------------------- the model


def test_a_name_gives_the_audits_own_model():
    est = _model("logistic")
    assert type(est) is LogisticRegression and est.max_iter == 1000
    assert type(_model("ridge")) is RidgeClassifier
    assert _model("ridge", {"alpha": 3.0}).alpha == 3.0


def test_a_given_estimator_is_taken_as_it_is_or_cloned_never_changed():
    mine = LinearSVC(C=0.5)
    assert _model(mine) is mine and _model(mine, {}) is mine
    other = _model(mine, {"C": 2.0})
    assert other is not mine and other.C == 2.0 and mine.C == 0.5


def test_an_unknown_model_or_parameter_is_refused():
    with pytest.raises(ValueError, match="model must be 'logistic', 'ridge' or an estimator; "
                                         "got 'forest'"):
        _model("forest")
    with pytest.raises(ValueError, match=r"model_params= sets \['foo'\]: Invalid parameter"):
        _model("ridge", {"foo": 1})


# ----------------------------------------------------------------------------- the labels


def test_the_labels_in_numbers():
    labels = _labels(np.array(["a"] * 5 + ["b"] * 3 + ["c"] * 2))
    assert labels["n_classes"] == 3
    assert labels["imbalanced"] is True  # 2 of 10 rows: 0.2 < 0.8 / 3
    assert_allclose([labels["majority_share"], labels["smallest_share"]], [0.5, 0.2],
                    rtol=1e-12)


@pytest.mark.parametrize("n_small, imbalanced", [(4, False), (3, True)])
def test_two_classes_are_imbalanced_below_forty_percent(n_small, imbalanced):
    # an even share is 1/2; the rule's line is 0.8 * 1/2 = 0.4 of the rows: 4 of 10 is on it
    assert _IMBALANCED == 0.8
    y = np.array([0] * (10 - n_small) + [1] * n_small)
    assert _labels(y)["imbalanced"] is imbalanced


@pytest.mark.parametrize("counts, imbalanced", [((4, 3, 3), False), ((6, 2, 2), True),
                                                 ((8, 8, 3), True), ((7, 7, 6), False)])
def test_more_classes_are_imbalanced_below_eighty_percent_of_an_even_share(counts,
                                                                        imbalanced):
    y = np.repeat(np.arange(len(counts)), counts)
    smallest, even = min(counts) / sum(counts), 1 / len(counts)
    assert (smallest < 0.8 * even) is imbalanced  # the hand count agrees with the case
    assert _labels(y)["imbalanced"] is imbalanced


def test_class_weights_are_added_for_the_audits_models_on_imbalanced_labels_only():
    skewed, even = _labels([0] * 7 + [1] * 3), _labels([0] * 5 + [1] * 5)
    assert _model_params("logistic", None, skewed) == ({"class_weight": "balanced"}, True)
    assert _model_params("logistic", {"C": 2.0}, skewed) == (
        {"C": 2.0, "class_weight": "balanced"}, True)
    assert _model_params("logistic", None, even) == ({}, False)
    # the user's own choice stands, and the user's estimator is taken as configured
    assert _model_params("ridge", {"class_weight": None}, skewed) == (
        {"class_weight": None}, False)
    assert _model_params(LinearSVC(), {"C": 2.0}, skewed) == ({"C": 2.0}, False)


def test_the_callers_parameters_are_copied_not_changed():
    given = {"C": 2.0}
    _model_params("logistic", given, _labels([0] * 7 + [1] * 3))
    assert given == {"C": 2.0}


@pytest.mark.parametrize("params", [{1: 2}, {"max iter": 3}, {"": 1}])
def test_parameters_that_are_no_names_are_refused(params):
    with pytest.raises(ValueError, match="model_params must map parameter names to values"):
        _model_params("ridge", params, _labels([0, 1]))


# ----------------------------------------------------------------------------- the deployments


def test_each_deployment_names_its_noise_parameter_and_known_attacks():
    assert set(_DEPLOYMENTS) == {("igdp", "gopp"), ("cgdp", "none")}
    names = set(get_attack_names())
    for (mechanism, aligner), (param, attacks) in _DEPLOYMENTS.items():
        assert set(attacks) <= names and len(set(attacks)) == len(attacks)
        pipe = _pipeline(mechanism, aligner, 3, "ridge", 0)
        assert param in pipe.get_params(deep=True)  # the knob the calibration turns


def test_the_pipelines_steps():
    igdp = _pipeline("igdp", "gopp", 3, "logistic", 7, n_anchors=40)
    assert [name for name, _ in igdp.steps] == ["gdp", "align", "clf"]
    assert type(igdp["gdp"]) is IGDP and isinstance(igdp["align"], GOPPAligner)
    assert igdp["gdp"].n_participants == 3 and igdp["gdp"].random_state == 7
    assert igdp["gdp"].n_anchors == 40 and type(igdp["clf"]) is LogisticRegression
    assert _pipeline("igdp", "gopp", 3, "ridge", 7)["gdp"].n_anchors is None
    cgdp = _pipeline("cgdp", "none", 2, "ridge", 1, n_anchors=40)  # no anchor to size
    assert [name for name, _ in cgdp.steps] == ["gdp", "clf"]
    assert type(cgdp["gdp"]) is CGDP and type(cgdp["clf"]) is RidgeClassifier


def _v_pt(p, d, r):
    """Eq. (51) of the noisy-anchor paper: 1.89 sqrt(p) / (sqrt(p d) + sqrt(r - 1) +
    2 sqrt(p ln p))."""
    return 1.89 * math.sqrt(p) / (math.sqrt(p * d) + math.sqrt(r - 1)
                                  + 2 * math.sqrt(p * math.log(p)))


def test_the_anchor_noise_range_is_three_phase_transitions():
    X = np.zeros((20, 5))
    # r = 4 d anchor rows by default, the given count otherwise; one party counts as two
    for p, n_anchors, r, p_used in ((3, None, 20, 3), (4, 50, 50, 4), (1, None, 20, 2)):
        low, high = _default_bounds("align__v", p, X, n_anchors)
        assert low == 0.0
        assert_allclose(high, 3 * _v_pt(p_used, 5, r), rtol=1e-12)


def test_the_private_data_noise_range_is_four_root_mean_squares():
    X = np.array([[3.0, 0.0], [0.0, -4.0]], dtype=np.float32)
    low, high = _default_bounds("gdp__noise", 3, X)
    assert low == 0.0
    assert_allclose(high, 4 * math.sqrt((9 + 16) / 4), rtol=1e-12)  # the rms is 2.5
