"""The comparison's options, one runner each: Local and Central (the floor and the ceiling),
the calibrated I-GDP, C-GDP and KTI routes, and the GaussMix sketches at stated epsilons
(:class:`~skdc.linear_model.GaussMixCollaborationClassifier`).

Each runner takes the comparison's context and returns its :class:`ComparedOption` rows.
"""

# Licence: BSD 3 clause

import os
import warnings
from functools import partial

import numpy as np

from ..utils._checkpoint import DrawCheckpoint
from ..utils._draw_jobs import _Maker, _resolve_scoring, _SweepContext
from ..utils._progress import stage_progress
from ._calibrate import (
    _V_PT_COLUMN,
    _attacked_rows,
    _check_range,
    _FittedAttribute,
    _OnRows,
    _result,
)
from ._criteria import (
    _UNLINKED,
    _mean_interval,
    _order_bounds,
    _prediction_bounds,
)
from ._deployments import _DEPLOYMENTS, _default_bounds, _pipeline
from ._draws import (
    _content_hash,
    _planned_values,
    _row_fields,
    _Runner,
    _Search,
)
from ._results import ComparedOption
from ._steps import _COMPARE_NAMES
from ._tables import _where
from ._targets import _attack_of, _linkage_params

OPTIONS = ("local", "central", "igdp", "cgdp", "kti", "gaussmix")
# the checkpoint files a comparison writes in its folder (and `--fresh` may remove)
CHECKPOINT_FILES = tuple(f"compare_{o}.jsonl" for o in ("igdp", "cgdp", "kti", "gaussmix")) \
    + tuple(f"measure_{o}.jsonl" for o in ("igdp", "cgdp", "kti"))
_LABELS = {"local": "Local (each alone)", "central": "Central (raw rows pooled)",
           "igdp": "I-GDP + GOPP", "cgdp": "C-GDP", "kti": "{red} + KTI",
           "gaussmix": "GaussMix"}
_REDUCTIONS = {"kpca": "kernel PCA", "umap": "UMAP"}
# the KTI paper's attacks of Section 5.5: regress raw anchor rows on the target's anchor upload
_ANCHOR_ATTACKS = {"pinv": {"regressor": "pinv"}, "lr": {"regressor": "lr"},
                   "mlp": {"regressor": "mlp", "random_state": 0}}
_N_BOOTSTRAP = 2000
# the named attacks' relative-error columns (a checkpoint keeps them within 0 and 1e6)
_ERROR_ATTACKS = tuple(dict.fromkeys(a for _, names in _DEPLOYMENTS.values() for a in names))
_MAX_EPSILONS = 16
# below it GaussMix's noise is thousands of times the rows' bound: its model is at chance
# (balanced accuracy 0.500 measured at 0.001), and far below (1e-30) the report's log axis fails
_MIN_EPSILON = 1e-3


# ----------------------------------------------------------------------------- Local, Central


_BOOTSTRAP_CELLS = 4_000_000  # indices a batch of resamples holds at once


def _resampled_balanced_accuracy(y_true, correct, idx):
    """The balanced accuracy of each resample (a row of indices ``idx``)."""
    yt, ok = y_true[idx], correct[idx]
    recalls = []
    for c in np.unique(y_true):
        n_c = (yt == c).sum(axis=1)
        with np.errstate(invalid="ignore"):
            recalls.append(np.where(n_c > 0, (ok & (yt == c)).sum(axis=1) / np.maximum(n_c, 1),
                                    np.nan))
    return np.nanmean(np.vstack(recalls), axis=0)


def _balanced_accuracy_bootstrap(y_true, y_pred, confidence, seed):
    """Balanced accuracy and its percentile bootstrap interval over the held-out rows."""
    from sklearn.metrics import balanced_accuracy_score

    y_true, correct = np.asarray(y_true), np.asarray(y_true) == np.asarray(y_pred)
    n, rng = len(y_true), np.random.RandomState(seed)
    # resamples in batches of at most ~4 million indices, drawn in the order of one draw of
    # all of them (the same stream): memory stays linear in the rows
    batch = max(1, min(_N_BOOTSTRAP, _BOOTSTRAP_CELLS // max(n, 1)))
    boot = np.concatenate([
        _resampled_balanced_accuracy(y_true, correct,
                                     rng.randint(n, size=(min(batch, _N_BOOTSTRAP - start), n)))
        for start in range(0, _N_BOOTSTRAP, batch)])
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return float(balanced_accuracy_score(y_true, y_pred)), (float(low), float(high))


def _fit_baseline(ctx, cls):
    from sklearn import config_context

    h = ctx.held
    est = cls(ctx.estimator)
    with config_context(enable_metadata_routing=True):
        est.fit(h.X_train, h.y_train, participant=h.participant_train)
        return est.predict(h.X_test, participant=h.participant_test)


def _run_local(ctx):
    from ._baselines import Local

    util, ci = _balanced_accuracy_bootstrap(ctx.held.y_test, _fit_baseline(ctx, Local),
                                            ctx.confidence, ctx.seeds["local"])
    return ComparedOption(
        name="local", label=_LABELS["local"], protection="nothing shared", setting="",
        value=float("nan"), utility=util, utility_interval=ci,
        interval_over="held-out rows (bootstrap)", n_draws=1, meets=None)


def _run_central(ctx):
    """The analyst holds the raw rows: the target's rows are its 'reconstruction'."""
    from ._baselines import Central

    h = ctx.held
    util, ci = _balanced_accuracy_bootstrap(h.y_test, _fit_baseline(ctx, Central),
                                            ctx.confidence, ctx.seeds["central"])
    # the target's rows and the colluder's, all of them, as the attacks read them
    X, y, p = _attacked_rows(h.X_train, h.y_train, h.X_test, h.y_test, h.participant_train,
                             h.participant_test)
    X_t, y_t = X[p == ctx.target], y[p == ctx.target]
    link, link_chance = _linkage(X_t, X_t, y_t)
    infer = _inference(X_t, y_t, X[p == ctx.colluder], y[p == ctx.colluder])
    return ComparedOption(
        name="central", label=_LABELS["central"], protection="none", setting="raw rows",
        value=float("nan"), utility=util, utility_interval=ci,
        interval_over="held-out rows (bootstrap)", n_draws=1, attack="raw rows",
        attack_error=0.0, attack_error_median=0.0, linkage=link, linkage_chance=link_chance,
        inference=infer, inference_chance=_majority_share(y_t),
        meets=False)


def _linkage(X_true, X_hat, y):
    from ..metrics import linkage_accuracy

    acc = linkage_accuracy(X_true, X_hat, y, **_linkage_params())
    return float(acc), float(acc.chance)


def _inference(X_hat, y_target, X_colluder, y_colluder):
    """ReconAcc with the attack scorer's default reader: a random forest on the colluder's
    clean rows labels the reconstructions."""
    from sklearn.ensemble import RandomForestClassifier

    from ..metrics import reconstruction_label_accuracy

    reader = RandomForestClassifier(n_estimators=50, random_state=0).fit(X_colluder,
                                                                        y_colluder)
    return float(reconstruction_label_accuracy(X_hat, y_target, reader))


def _deployments(n):
    return f"{n} deployment{'' if n == 1 else 's'}"


def _majority_share(y):
    _, counts = np.unique(y, return_counts=True)
    return float(counts.max() / counts.sum())


def _linkage_chance(y, n_candidates=10):
    """A random guess's exact-source linkage: a gallery holds the source and up to
    ``n_candidates - 1`` same-label rows."""
    _, inv, counts = np.unique(y, return_inverse=True, return_counts=True)
    return float(np.mean(1.0 / np.minimum(counts[inv], n_candidates)))


# ----------------------------------------------------------------------------- calibrated options


def _scorers(specs, metric, ctx, metric_params=None):
    """``{name: scorer}`` of named attacks (``{name: (attack, params)}``) under ``metric``,
    scored on every row of the target (training and held-out: the analyst holds both
    uploads), the participants read from the fixed partition."""
    from ..metrics import make_attack_scorer

    h = ctx.held
    X, y, participant = _attacked_rows(h.X_train, h.y_train, h.X_test, h.y_test,
                                       h.participant_train, h.participant_test)
    out = {}
    for name, (attack, params) in specs.items():
        s = make_attack_scorer(attack, metric=metric, colluder=ctx.colluder, target=ctx.target,
                               metric_params=metric_params, **params)
        out[name] = _OnRows(partial(s, participant=participant), X, y)
    return out


def _runner(ctx, maker, scorers, attacks, filename, extra, desc, total=None, early=False):
    """A checkpointed :class:`_Runner` of one option's draws on the comparison's split; its
    progress plans ``total`` draws (at most, with ``early``)."""
    h = ctx.held
    fit_params = {"participant": h.participant_train}
    fingerprint = {"param": maker.param, "redraw": "deployment",
                   "columns": [*scorers, *attacks],
                   "content": _content_hash(maker.estimator, attacks, scorers, h.X_train,
                                            h.y_train, (h.X_test, h.y_test), fit_params,
                                            extra)}
    path = None if ctx.folder is None else os.path.join(ctx.folder, filename)
    ck = DrawCheckpoint(path, fingerprint, _row_fields(
        scorers, attacks, [a for a in attacks if a in _ANCHOR_ATTACKS or a in _ERROR_ATTACKS]))
    data = (h.X_train, h.X_test, h.y_train, h.y_test, fit_params)
    bar = stage_progress(desc, total, ctx.progress, early=early)
    return _Runner(_SweepContext(maker, data, scorers, attacks, inner_threads=1), ctx.n_jobs,
                   ck, bar)


def _utility_scoring():
    return {**_resolve_scoring("balanced_accuracy"),
            _V_PT_COLUMN: _FittedAttribute("v_phase_transition_")}


def _batch(ctx):
    if ctx.batch_size is not None:
        return int(ctx.batch_size)
    from joblib import effective_n_jobs

    return max(1, int(effective_n_jobs(ctx.n_jobs)))


def _run_gdp(ctx, kind):
    """I-GDP + GOPP (anchor noise) or C-GDP (private-data noise), calibrated as the audit
    calibrates them, then measured at the calibrated noise."""
    from ._steps import _calibrate

    mechanism, aligner = {"igdp": ("igdp", "gopp"), "cgdp": ("cgdp", "none")}[kind]
    param, names = _DEPLOYMENTS[(mechanism, aligner)]
    pipe = _pipeline(mechanism, aligner, ctx.n_participants, ctx.estimator, ctx.seeds[kind],
                     ctx.n_anchors)
    _, low, high, xtol = _gdp_range(ctx, kind)
    cal = _calibrate(pipe, ctx.held, param, list(names), ctx.targets, ctx.confidence,
                     ctx.n_draws, (low, high), xtol, ctx.criterion, ctx.colluder, ctx.target,
                     np.random.RandomState(ctx.seeds[kind]), ctx.n_jobs, ctx.batch_size,
                     ctx.folder, ctx.progress, filename=f"compare_{kind}.jsonl",
                     words=_COMPARE_NAMES)
    ctx.resumed.append(cal.n_draws_resumed)
    at, _ = _where(cal)
    specs = {a: (a, {}) for a in names}
    measured = _measure(ctx, kind, _Maker(pipe, param, "deployment"), at, cal, specs)
    words = {"igdp": "anchor noise v", "cgdp": "private-data noise sigma"}[kind]
    return _calibrated_option(ctx, kind, _LABELS[kind], cal, at, f"{words} = {at:.4g}",
                              measured, pipe=pipe, param=param)


def _gdp_range(ctx, kind):
    """``(param, low, high, xtol)``: the noise and the range an I-GDP or C-GDP option
    calibrates over."""
    mechanism, aligner = {"igdp": ("igdp", "gopp"), "cgdp": ("cgdp", "none")}[kind]
    param, _ = _DEPLOYMENTS[(mechanism, aligner)]
    low, high = _default_bounds(param, ctx.n_participants, ctx.X, ctx.n_anchors)
    return (param, *_check_range((low, high), None if ctx.xtol is None
                                 else ctx.xtol * (high - low)))


def _measure(ctx, kind, maker, value, cal, specs):
    """``n_measure`` deployments at ``value`` (the calibration's first draw seeds): exact-source
    linkage and attribute inference of each attack's reconstructions."""
    import pandas as pd

    scorers = {**_resolve_scoring("balanced_accuracy")}
    link = _scorers(specs, "linkage", ctx, _linkage_params())
    infer = _scorers(specs, "label_accuracy", ctx)
    attacks = {**{f"{a} linkage": s for a, s in link.items()},
               **{f"{a} inference": s for a, s in infer.items()}}
    seeds = cal.table.sort_values("draw").drop_duplicates("draw")["draw_seed"]
    seeds = [int(s) for s in seeds][: ctx.n_measure]
    with _runner(ctx, maker, scorers, attacks, f"measure_{kind}.jsonl", specs,
                 "measure linkage and inference", len(seeds)) as run:
        rows = run([(float(value), s) for s in seeds])
    ctx.resumed.append(run.n_resumed)
    table = pd.DataFrame([{"value": float(value), "draw_seed": s, **r}
                          for s, r in zip(seeds, rows)])
    # the scorers say 1 - accuracy (higher = more private): back to accuracies
    out = {}
    for a in specs:
        out[a] = (1.0 - float(table[f"{a} linkage"].mean()),
                  1.0 - float(table[f"{a} inference"].mean()))
    return table, out


def _error_bound(cal, errors):
    """The relative error a fresh deployment exceeds at the calibration's confidence, by its
    criterion (an order statistic, or the Gaussian prediction bound)."""
    if cal.criterion == "normal":
        return float(_prediction_bounds(errors, cal.confidence, "normal")[0])
    return float(_order_bounds(errors, int(cal.decisions["allowed_failures"].iloc[0]) + 1)[0])


def _calibrated_option(ctx, name, label, cal, at, setting, measured, **extra):
    """A calibrated option's row: utility where the verdict is read, the binding attack's
    bounds there, the strongest linkage and inference of the measurement."""
    import pandas as pd

    rows = cal.table[cal.table["value"] == at]
    util, ci = _mean_interval(rows["balanced_accuracy"], ctx.confidence)
    attack = _attack_of(cal.binding_attack)
    bound = _error_bound(cal, rows[attack])
    sens = [c for c in rows.columns if c.endswith(" sensitive")]
    gain = max((1.0 - float(rows[c].median()) for c in sens), default=float("nan"))
    table, by_attack = measured
    strongest_link = max(by_attack.values(), key=lambda t: t[0])[0]
    strongest_infer = max(by_attack.values(), key=lambda t: t[1])[1]
    h = ctx.held
    y_t = np.r_[h.y_train[h.participant_train == ctx.target],
                h.y_test[h.participant_test == ctx.target]]  # the attacked rows' labels
    draws = pd.concat([cal.table.assign(stage="calibration"),
                       table.assign(stage="measurement")], ignore_index=True)
    draws.insert(0, "stage", draws.pop("stage"))
    return ComparedOption(
        name=name, label=label, protection="empirical", setting=setting, value=float(at),
        utility=util, utility_interval=ci, interval_over=_deployments(len(rows)),
        n_draws=int(len(rows)), attack=attack,
        attack_error=bound, attack_error_median=float(rows[attack].median()),
        sensitive_gain=gain,
        linkage=strongest_link, linkage_chance=_linkage_chance(y_t),
        inference=strongest_infer, inference_chance=_majority_share(y_t),
        meets=bool(np.isfinite(cal.value)), calibration=cal, draws=draws,
        extra={"measured": by_attack, **extra})


# ----------------------------------------------------------------------------- the KTI route


class _DimensionMaker(_Maker):
    """A draw's estimator with ``top - k`` components, ``k`` the draw's value (dimensions
    dropped: the knob grows with privacy, as a noise does)."""

    def __init__(self, estimator, param, seed_param, dim_param, top):
        super().__init__(estimator, param, seed_param)
        self.dim_param, self.top = dim_param, top

    def __call__(self, value, seed):
        est = super().__call__(value, seed)
        return est.set_params(**{self.dim_param: self.top - int(round(value))})


def _kti_pipeline(ctx, top):
    from sklearn.pipeline import Pipeline

    from ..alignment import KTIAligner
    from ..anchors import SMOTEAnchor
    from ..mechanisms import KernelPCAMechanism, UMAPMechanism

    h = ctx.held
    if ctx.public is None:
        own = h.participant_train == ctx.colluder
        X_pub, y_pub = h.X_train[own], h.y_train[own]
    else:
        X_pub, y_pub = (np.asarray(a) for a in ctx.public)
    n_anchors = int(min(max(4 * h.X_train.shape[1], 60), 400))
    anchor = SMOTEAnchor(n_anchors, X_pub, y_pub, k_neighbors=10)
    if ctx.nonlinear == "umap":
        mech = UMAPMechanism(ctx.n_participants, n_components=top, init="pca", n_epochs=100,
                             anchor=anchor, random_state=ctx.seeds["kti"])
    else:
        mech = KernelPCAMechanism(ctx.n_participants, n_components=top, anchor=anchor,
                                  random_state=ctx.seeds["kti"])
    # KTI+TSL, the integration of Table 3 of [2] (C = I, no centering)
    return Pipeline([("dr", mech), ("align", KTIAligner(graph="tsl")),
                     ("clf", ctx.estimator)])


def _top_dimension(ctx):
    """The largest dimension tried: the rows' width, at most the smallest party's rows less
    one (a reduction has no more components) and ``max_components``."""
    h = ctx.held
    smallest = int(np.bincount(h.participant_train, minlength=ctx.n_participants).min())
    top = min(h.X_train.shape[1], smallest - 1)
    if ctx.max_components is not None:
        top = min(top, int(ctx.max_components))
    if ctx.nonlinear == "umap":
        top = min(top, smallest - 2)
    if top < 1:
        raise ValueError(f"the KTI route needs parties of at least 2 training rows; the "
                         f"smallest has {smallest}. Give more rows or fewer participants.")
    return int(top)


def _bisect_dimensions(search, top):
    """``(value, bracket)`` of the fewest dimensions dropped that pass, over ``0 .. top - 1``
    (``(nan, (top - 1, inf))`` when even one dimension fails)."""
    most = top - 1
    if not search(most):
        return float("nan"), (float(most), float("inf"))
    if search(0):
        return 0.0, (0.0, 0.0)
    lo, hi = 0, most
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if search(mid):
            hi = mid
        else:
            lo = mid
    return float(hi), (float(lo), float(hi))


def _run_kti(ctx):
    """The nonlinear route: the largest dimension whose fresh deployments keep the paper's
    anchor-regression attacks at or above the target, by the calibration's rule."""
    from sklearn.utils import check_random_state

    top = _top_dimension(ctx)
    pipe = _kti_pipeline(ctx, top)
    specs = {a: ("anchor_regression", _ANCHOR_ATTACKS[a]) for a in ("pinv", "lr")}
    attacks = _scorers(specs, "relative_error", ctx)
    targets = {} if ctx.target_error is None else dict.fromkeys(attacks, ctx.target_error)
    if ctx.max_linkage is not None:
        link = _scorers(specs, "linkage", ctx, _linkage_params())
        attacks.update((a + _UNLINKED, sc) for a, sc in link.items())
        targets.update((a + _UNLINKED, 1.0 - ctx.max_linkage) for a in link)
    maker = _DimensionMaker(pipe, "dimensions dropped", "deployment", "dr__n_components", top)
    rng = check_random_state(ctx.seeds["kti"])
    draw_seeds = rng.randint(2**31 - 1, size=ctx.n_draws)
    values = 1 if top == 1 else _planned_values(0, top - 1, 1)
    with _runner(ctx, maker, _utility_scoring(), attacks, "compare_kti.jsonl", top,
                 "calibrate KTI dimension", ctx.n_draws * values, early=True) as run:
        search = _Search(run, draw_seeds, targets, "balanced_accuracy", ctx.confidence,
                         ctx.criterion, _batch(ctx))
        search.say = lambda v: f"dimension {top - int(round(v))} (of {top})"
        value, bracket = _bisect_dimensions(search, top)
    ctx.resumed.append(run.n_resumed)
    with warnings.catch_warnings():  # said below in the route's own words
        warnings.simplefilter("ignore", UserWarning)
        cal = _result(search, value, bracket, "dimensions dropped", 0.0, float(top - 1),
                      "deployment", run.n_resumed)
    cal.decisions.insert(2, "n_components", top - cal.decisions["value"].astype(int))
    at, _ = _where(cal)
    dim = top - int(round(at))
    if not np.isfinite(cal.value):
        s = cal.summary[(cal.summary["value"] == at)
                        & (cal.summary["attack"] == cal.binding_attack)].iloc[0]
        from ._criteria import _relax, _shortfall

        warnings.warn(
            f"The KTI route meets the targets at no dimension, not even 1: there "
            f"{_shortfall(cal.binding_attack, s)}. {_relax(cal.binding_attack).capitalize()} "
            "or lower confidence=.", UserWarning, stacklevel=3)
    measured = _measure(ctx, "kti", maker, at, cal, specs)
    red = _REDUCTIONS[ctx.nonlinear]
    return _calibrated_option(ctx, "kti", _LABELS["kti"].format(red=red), cal, at,
                              f"{red} dimension d = {dim} (of {top})", measured, pipe=pipe,
                              top=top, dimension=dim)


# ----------------------------------------------------------------------------- GaussMix


def _run_gaussmix(ctx, epsilons):
    """GaussMix at each stated epsilon: utility over fresh deployments (fresh sketches and
    noise); the guarantee is the accountant's epsilon of the noise actually added."""
    import pandas as pd
    from sklearn.utils import check_random_state

    from ..linear_model import GaussMixCollaborationClassifier

    est = GaussMixCollaborationClassifier(ctx.n_participants, delta=ctx.delta,
                                          row_bound_x=ctx.row_bound,
                                          random_state=ctx.seeds["gaussmix"])
    rng = check_random_state(ctx.seeds["gaussmix"])
    seeds = [int(s) for s in rng.randint(2**31 - 1, size=ctx.n_draws)]
    maker = _Maker(est, "epsilon", "deployment")
    scorers = _resolve_scoring("balanced_accuracy")
    out = []
    with _runner(ctx, maker, scorers, {}, "compare_gaussmix.jsonl", None,
                 "draws at each epsilon", len(epsilons) * len(seeds)) as run:
        rows = run([(e, s) for e in epsilons for s in seeds])
    ctx.resumed.append(run.n_resumed)
    h = ctx.held
    for j, eps in enumerate(epsilons):
        part = rows[j * len(seeds):(j + 1) * len(seeds)]
        table = pd.DataFrame([{"stage": "utility", "value": eps, "draw": k, "draw_seed": s,
                               **r} for k, (s, r) in enumerate(zip(seeds, part))])
        util, ci = _mean_interval(table["balanced_accuracy"], ctx.confidence)
        fitted = maker(eps, seeds[0]).fit(h.X_train, h.y_train,
                                          participant=h.participant_train)
        out.append(ComparedOption(
            name=f"gaussmix@{eps:g}", label=f"GaussMix, epsilon = {eps:g}",
            protection="formal", setting=f"epsilon = {eps:g}, delta = {ctx.delta:g}",
            value=eps, utility=util, utility_interval=ci,
            interval_over=_deployments(len(seeds)), n_draws=len(seeds),
            epsilon=float(fitted.epsilon_), delta=ctx.delta, meets=None, draws=table,
            extra={"k": fitted.k_, "scale": fitted.scale_, "noise": fitted.noise_,
                   "row_bound": ctx.row_bound, "clipped": fitted.clipped_,
                   "row_bound_z": fitted.row_bound_z_}))
    return out


_RUNNERS = {"local": _run_local, "central": _run_central,
            "igdp": partial(_run_gdp, kind="igdp"), "cgdp": partial(_run_gdp, kind="cgdp"),
            "kti": _run_kti}
