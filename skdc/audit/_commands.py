"""The deployment commands of a compared option: the `python -m skdc` commands and the Python
call that run, for real, the deployment the comparison audited (with its settings' fingerprint)."""

# Licence: BSD 3 clause

from ..protocol import deployment_commands
from ..utils._draw_jobs import _Maker
from ._steps import _recorded_setting, _reproducing_call


def _deployment(ctx, option):
    """The audited settings of a deployable option, their fingerprint and the commands each
    party runs; the audited deployment's seeds, which the flags reproduce bit for bit."""
    h = ctx.held
    cal, pipe, param = option.calibration, option.extra["pipe"], option.extra["param"]
    row = cal.table[cal.table["value"] == option.value].sort_values("draw").iloc[0]
    mech = _Maker(pipe, param, "deployment")(option.value, int(row["draw_seed"]))[0]
    mech.fit(h.X_train, participant=h.participant_train)
    params = mech.get_params()
    igdp = option.name == "igdp"
    settings = {"mechanism": type(mech).__name__, "n_participants": ctx.n_participants,
                "n_features": int(h.X_train.shape[1]), "noise": float(params["noise"]),
                "translation_scale": float(params["translation_scale"]),
                "anchor_noise": float(option.value) if igdp else 0.0,
                "n_anchors": 0 if mech.anchor_ is None else int(mech.anchor_.shape[0])}
    return {"option": option.name, "settings": settings, **_commands(ctx, option, settings),
            "draw": {"draw_seed": int(row["draw_seed"]),
                     "random_state": int(params["random_state"]),
                     "noise_random_state": int(params["noise_random_state"])}}


def _commands(ctx, option, settings):
    """The settings' fingerprint, flags, commands and ``deployment.txt`` text, built by
    :func:`~skdc.protocol.deployment_commands` (the analyst's model carries the comparison's
    model parameters)."""
    model = ({"model": "logistic", "model_params": {"max_iter": 1000, **ctx.model_params}}
             if ctx.model == "logistic" else {})
    return deployment_commands(settings, label=f"{option.label} at {option.setting}", **model)


def _setting(ctx, X, y, participant, results, epsilons, command_line, random_state):
    """The comparison's settings in words and numbers, as its report prints them: what every
    run records (:func:`_recorded_setting`) and the options compared."""
    setting = _recorded_setting(
        X, y, participant, ctx.held, n_participants=ctx.n_participants, colluder=ctx.colluder,
        target=ctx.target, targets=ctx.targets, confidence=ctx.confidence,
        criterion=ctx.criterion, random_state=random_state, words=ctx.words,
        n_anchors=ctx.n_anchors,
        command_line=command_line or _python_call(ctx, results, epsilons, random_state),
        n_resumed=sum(ctx.resumed),
        n_draws_all=sum(0 if o.draws is None else len(o.draws) for o in results.values()))
    setting.update(n_draws=ctx.n_draws, options=list(results), epsilons=list(epsilons),
                   delta=ctx.delta, row_bound=ctx.row_bound, nonlinear=ctx.nonlinear,
                   n_measure=ctx.n_measure)
    return setting


def _python_call(ctx, results, epsilons, random_state):
    """The :func:`compare_options` call that reproduces the comparison (the model's
    parameters as the user gave them, without the ``class_weight`` the labels added; every
    setting that changes a result, the defaults resolved; public rows, an array, are named
    only)."""
    kwargs = {
        "options": list(dict.fromkeys("gaussmix" if n.startswith("gaussmix@") else n
                                      for n in results)),
        "epsilons": list(epsilons), "n_participants": ctx.n_participants,
        "max_linkage": ctx.max_linkage, "target_error": ctx.target_error,
        "sensitive": ctx.sensitive, "max_sensitive_gain": ctx.max_sensitive_gain,
        "confidence": ctx.confidence, "colluder": ctx.colluder, "target": ctx.target,
        "criterion": ctx.criterion, "nonlinear": ctx.nonlinear, "random_state": random_state,
        "model": ctx.model, "n_draws": ctx.n_draws, "xtol": ctx.xtol,
        "n_measure": ctx.n_measure, "delta": ctx.delta, "row_bound": ctx.row_bound,
        "max_components": ctx.max_components, "test_size": ctx.test_size}
    given = {k: v for k, v in ctx.model_params.items()
             if not (k == "class_weight" and ctx.words.get("balanced"))}
    if given:
        kwargs["model_params"] = given
    if ctx.n_anchors is not None:
        kwargs["n_anchors"] = ctx.n_anchors
    return _reproducing_call("compare_options", kwargs)
