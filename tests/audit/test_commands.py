"""The deployment commands of a compared option (skdc/audit/_commands.py): the Python call that
reproduces a comparison, the comparison's recorded setting, the commands each party runs and
the audited deployment's settings and seeds, on a small hand-made comparison context."""

import inspect
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from skdc.audit import compare_options
from skdc.audit._commands import _commands, _deployment, _python_call, _setting
from skdc.audit._deployments import _pipeline
from skdc.audit._split import HeldOut
from skdc.audit._steps import _recorded_setting
from skdc.protocol import settings_fingerprint
from skdc.utils._params import parse_model_params


def _context(**changes):
    """What :func:`_python_call` and :func:`_setting` read of a comparison's context."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((20, 3))
    p = np.arange(20) % 2
    held = HeldOut(X[:14], p[:14], p[:14], X[14:], p[14:], p[14:])
    ctx = SimpleNamespace(
        held=held, n_participants=2, max_linkage=0.15, target_error=None, sensitive=None,
        max_sensitive_gain=None, confidence=0.9, colluder=0, target=1, criterion="order",
        nonlinear="kpca", model="logistic", model_params={}, n_anchors=None,
        words={"balanced": False, "model": "logistic"}, resumed=[3, 0], n_draws=19,
        delta=1e-6, row_bound=2.0, n_measure=5, xtol=None, max_components=None, test_size=0.3)
    ctx.__dict__.update(changes)
    ctx.targets = {"target_error": ctx.target_error, "max_linkage": ctx.max_linkage,
                   "sensitive": ctx.sensitive, "max_sensitive_gain": ctx.max_sensitive_gain}
    return ctx


def _called(call):
    """The keywords a printed ``compare_options`` call passes, by running it on a recorder."""
    audit = SimpleNamespace(compare_options=lambda X, y, **kwargs: kwargs)
    return eval(call, {"skdc": SimpleNamespace(audit=audit), "X": None, "y": None})


RESULTS = dict.fromkeys(["local", "igdp", "gaussmix@1", "gaussmix@8"],
                        SimpleNamespace(draws=None))

# ----------------------------------------------------------------------------- the Python call


def test_the_call_runs_back_to_the_comparisons_arguments():
    kwargs = _called(_python_call(_context(), RESULTS, [1.0, 8.0], 7))
    assert kwargs == {
        "options": ["local", "igdp", "gaussmix"], "epsilons": [1.0, 8.0],
        "n_participants": 2, "max_linkage": 0.15, "target_error": None, "sensitive": None,
        "max_sensitive_gain": None, "confidence": 0.9, "colluder": 0, "target": 1,
        "criterion": "order", "nonlinear": "kpca", "random_state": 7, "model": "logistic",
        "n_draws": 19, "xtol": None, "n_measure": 5, "delta": 1e-6, "row_bound": 2.0,
        "max_components": None, "test_size": 0.3}
    assert set(kwargs) <= set(inspect.signature(compare_options).parameters)


def test_the_call_keeps_the_users_model_params_and_anchors_not_the_added_weights():
    ctx = _context(model_params={"C": 0.5, "class_weight": "balanced"}, n_anchors=40,
                   words={"balanced": True})
    kwargs = _called(_python_call(ctx, RESULTS, [], 0))
    assert kwargs["model_params"] == {"C": 0.5} and kwargs["n_anchors"] == 40
    # the user's own class_weight stays; a model without parameters prints none
    ctx = _context(model_params={"class_weight": "balanced"}, words={"balanced": False})
    assert _called(_python_call(ctx, RESULTS, [], 0))["model_params"] == {
        "class_weight": "balanced"}
    ctx = _context(model_params={"class_weight": "balanced"}, words={"balanced": True})
    assert "model_params" not in _called(_python_call(ctx, RESULTS, [], 0))


def test_the_call_carries_every_setting_that_changes_the_comparison():
    ctx = _context(n_draws=29, xtol=0.1, n_measure=2, delta=1e-5, max_components=4,
                   test_size=0.5, row_bound=3.0)
    kwargs = _called(_python_call(ctx, RESULTS, [1.0], 0))
    assert {k: kwargs.get(k) for k in ("n_draws", "xtol", "n_measure", "delta",
                                       "max_components", "test_size", "row_bound")} == {
        "n_draws": 29, "xtol": 0.1, "n_measure": 2, "delta": 1e-5, "max_components": 4,
        "test_size": 0.5, "row_bound": 3.0}


# ----------------------------------------------------------------------------- the setting


def test_the_setting_is_the_recorded_one_and_the_options_compared():
    ctx = _context()
    X, y, participant = np.zeros((20, 3)), np.arange(20) % 2, None
    results = {"local": SimpleNamespace(draws=None),
               "igdp": SimpleNamespace(draws=pd.DataFrame({"a": range(12)})),
               "cgdp": SimpleNamespace(draws=pd.DataFrame({"a": range(5)}))}
    s = _setting(ctx, X, y, participant, results, [1.0], None, 7)
    assert s["n_resumed"] == 3 and s["n_draws_all"] == 17  # 3 + 0 resumed; 12 + 5 drawn
    assert s["command_line"] == _python_call(ctx, results, [1.0], 7)
    assert {k: s[k] for k in ("n_draws", "options", "epsilons", "delta", "row_bound",
                              "nonlinear", "n_measure")} == {
        "n_draws": 19, "options": ["local", "igdp", "cgdp"], "epsilons": [1.0],
        "delta": 1e-6, "row_bound": 2.0, "nonlinear": "kpca", "n_measure": 5}
    recorded = _recorded_setting(
        X, y, participant, ctx.held, n_participants=2, colluder=0, target=1,
        targets=ctx.targets, confidence=0.9, criterion="order", random_state=7,
        words=ctx.words, n_anchors=None, command_line=s["command_line"], n_resumed=3,
        n_draws_all=17)
    assert {k: s[k] for k in recorded} == recorded
    assert _setting(ctx, X, y, participant, results, [1.0], "skdc audit --compare",
                    7)["command_line"] == "skdc audit --compare"


# ----------------------------------------------------------------------------- the deployment

C_GDP = SimpleNamespace(name="cgdp", label="C-GDP", setting="sigma = 1")
SETTINGS = {"mechanism": "CGDP", "n_participants": 2, "n_features": 3, "noise": 1.0,
            "translation_scale": 1.0, "anchor_noise": 0.0, "n_anchors": 0}


def test_the_deployed_analyst_fit_carries_the_model_params():
    ctx = SimpleNamespace(n_participants=2, model="logistic",
                          model_params={"class_weight": "balanced", "C": 0.5, "tol": None})
    fit = _commands(ctx, C_GDP, SETTINGS)["commands"][-1]
    given = [fit[k + 1] for k, w in enumerate(fit) if w == "--model-param"]
    assert parse_model_params(given) == {"max_iter": 1000, "class_weight": "balanced",
                                         "C": 0.5, "tol": None}


def test_another_model_writes_no_model_flag():
    ctx = SimpleNamespace(n_participants=2, model="ridge", model_params={"alpha": 2.0})
    out = _commands(ctx, C_GDP, SETTINGS)
    assert not any(w.startswith("--model") for w in out["commands"][-1])
    assert out["fingerprint"] == settings_fingerprint(SETTINGS)
    assert "C-GDP at sigma = 1" in out["text"]


@pytest.mark.parametrize("name, aligner, param, value", [("igdp", "gopp", "align__v", 0.1),
                                                         ("cgdp", "none", "gdp__noise", 0.5)])
def test_the_deployment_is_the_audited_draw_with_its_seeds(name, aligner, param, value):
    ctx = _context()
    pipe = _pipeline(name, aligner, 2, "logistic", 0)
    # the draws at the option's value, out of order: the first draw (draw 1) is deployed
    table = pd.DataFrame({"value": [value, value, 2 * value], "draw": [3, 1, 0],
                          "draw_seed": [111, 222, 333]})
    option = SimpleNamespace(name=name, label=name.upper(), setting=f"{param} = {value}",
                             value=value, calibration=SimpleNamespace(table=table),
                             extra={"pipe": pipe, "param": param})
    d = _deployment(ctx, option)
    igdp = name == "igdp"
    assert d["settings"] == {
        "mechanism": name.upper(), "n_participants": 2, "n_features": 3,
        "noise": 0.0 if igdp else value, "translation_scale": 1.0,
        "anchor_noise": value if igdp else 0.0, "n_anchors": 4 * 3 if igdp else 0}
    assert d["option"] == name and d["fingerprint"] == settings_fingerprint(d["settings"])
    # every seed of the deployment, sorted by name, drawn from the draw's seed
    names = sorted(k for k in pipe.get_params(deep=True)
                   if k.rsplit("__", 1)[-1] in ("random_state", "noise_random_state"))
    seeds = dict(zip(names, np.random.RandomState(222).randint(2**31 - 1, size=len(names))))
    assert d["draw"] == {"draw_seed": 222, "random_state": seeds["gdp__random_state"],
                         "noise_random_state": seeds["gdp__noise_random_state"]}
