"""The deployment commands of a compared option: the `python -m skdc` commands and the Python
call that run, for real, the deployment the comparison audited (with its settings' fingerprint)."""

# Licence: BSD 3 clause

from ..protocol import settings_fingerprint
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
    flags = ["--n-participants", str(ctx.n_participants), "--mechanism", option.name,
             "--noise", repr(settings["noise"]), "--translation-scale",
             repr(settings["translation_scale"])]
    if igdp:
        flags += ["--anchor", "anchor.npy", "--anchor-noise", repr(settings["anchor_noise"])]
    fingerprint = settings_fingerprint(settings)
    commands, text = _commands(ctx, option, settings, flags, fingerprint)
    return {"option": option.name, "settings": settings, "fingerprint": fingerprint,
            "flags": flags, "commands": commands, "text": text,
            "draw": {"draw_seed": int(row["draw_seed"]),
                     "random_state": int(params["random_state"]),
                     "noise_random_state": int(params["noise_random_state"])}}


def _commands(ctx, option, settings, flags, fingerprint):
    """The commands of the deployment, and the text of ``deployment.txt`` (the analyst's
    model carries the comparison's model parameters)."""
    import json
    import shlex

    igdp = option.name == "igdp"
    anchor = (["python", "-m", "skdc", "anchor", "make", "--n-features",
               str(settings["n_features"]), "--n-anchors", str(settings["n_anchors"]),
               "--out", "anchor.npy"] if igdp else None)
    seeds = ([] if igdp else ["--seed", "SHARED_SEED"])
    uploads = [["python", "-m", "skdc", "participant", "upload", "--id", str(i), *flags,
                *seeds, "--data", f"X_{i}.npy", "--labels", f"y_{i}.npy", "--secret-out",
                f"secret_{i}.npz", "--out", f"upload_{i}.npz"]
               for i in range(ctx.n_participants)]
    model = (["--model", "logistic", "--model-param", "max_iter=1000",
              *(w for k, v in ctx.model_params.items()
                for w in ("--model-param", f"{k}={v if isinstance(v, str) else json.dumps(v)}"))]
             if ctx.model == "logistic" else [])
    fit = ["python", "-m", "skdc", "analyst", "fit",
           *[f"upload_{i}.npz" for i in range(ctx.n_participants)],
           "--aligner", "gopp" if igdp else "none", *model, "--audit-fingerprint",
           "deployment.json", "--out", "model/"]
    lines = [f"# The audited deployment: {option.label} at {option.setting}.",
             f"# Fingerprint of its settings: {fingerprint}",
             "# `skdc analyst fit --audit-fingerprint deployment.json` refuses any upload "
             "whose declared settings differ.", ""]
    if igdp:
        lines += ["# 1. Once, by one participant; give anchor.npy to every participant, "
                  "never to the analyst:", shlex.join(anchor), ""]
    lines += [f"# {'2' if igdp else '1'}. Each participant at home, on its own rows "
              "(X_i.npy, y_i.npy)."]
    if igdp:
        lines += ["#    No --seed: each draws its own private seeds from the operating "
                  "system."]
    else:
        lines += ["#    C-GDP shares one secret: one participant runs `python -m skdc "
                  "participant new-seed` (128 bits from the operating system) and gives its "
                  "output to every participant, never to the analyst; each passes it as "
                  "SHARED_SEED. Each draws its own noise seed from the operating system."]
    lines += [shlex.join(u) for u in uploads] + [""]
    lines += [f"# {'3' if igdp else '2'}. The analyst:", shlex.join(fit), ""]
    commands = ([anchor] if igdp else []) + uploads + [fit]
    return commands, "\n".join(lines)


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
    parameters as the user gave them, without the ``class_weight`` the labels added)."""
    kwargs = {
        "options": list(dict.fromkeys("gaussmix" if n.startswith("gaussmix@") else n
                                      for n in results)),
        "epsilons": list(epsilons), "n_participants": ctx.n_participants,
        "max_linkage": ctx.max_linkage, "target_error": ctx.target_error,
        "sensitive": ctx.sensitive, "max_sensitive_gain": ctx.max_sensitive_gain,
        "confidence": ctx.confidence, "colluder": ctx.colluder, "target": ctx.target,
        "criterion": ctx.criterion, "nonlinear": ctx.nonlinear, "random_state": random_state,
        "model": ctx.model}
    given = {k: v for k, v in ctx.model_params.items()
             if not (k == "class_weight" and ctx.words.get("balanced"))}
    if given:
        kwargs["model_params"] = given
    if ctx.n_anchors is not None:
        kwargs["n_anchors"] = ctx.n_anchors
    return _reproducing_call("compare_options", kwargs)
