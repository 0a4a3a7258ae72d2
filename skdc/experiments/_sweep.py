"""Privacy-utility sweeps: one fitted pipeline, one utility score and one attack per noise draw.

The papers' results are sweeps (Section 5.2 of the GDP paper): one fixed deployment, and only
the noise scale and the noise realization vary across draws; each draw trains its own model and
runs each attack once. :func:`privacy_utility_sweep` runs such a sweep for any scikit-learn
estimator and returns a tidy table. Draws are independent jobs dispatched through :mod:`joblib`,
so a sweep scales out by choosing a joblib backend (``loky`` on one machine, Dask or Ray on a
cluster); every random choice is made from one seed before dispatch, so the table does not
depend on the backend or on the number of workers. The data and the fixed parts of the sweep
(the estimator template, the scorers) travel to each worker once per sweep, not once per draw:
they are pickled once into one byte array, which joblib's ``loky`` backend hands over through
shared memory (memory-mapped, above ``max_nbytes``) and its Dask backend scatters to the cluster
once; each worker unpickles it once and keeps it for the sweep's remaining draws.
"""

# Licence: BSD 3 clause

import difflib
import threading
import time
import uuid
import warnings
from collections import OrderedDict
from contextlib import nullcontext
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import get_scorer
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target
from threadpoolctl import threadpool_limits

from ..utils._docstring import Substitution
from ..utils._progress import progress_bar
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)
from ._docstrings import _GOPP_PIPELINE_EXAMPLE

try:  # joblib bundles cloudpickle, unless a distribution unbundled it
    from joblib.externals import cloudpickle
except ImportError:  # pragma: no cover
    import cloudpickle

__all__ = ["privacy_utility_sweep"]

# Diagnostics read from the first pipeline step that has them (a solver-based aligner).
_DIAGNOSTICS = {"n_iter_": "n_iter", "converged_": "converged",
                "fixed_point_residual_": "fixed_point_residual"}


def _steps(estimator):
    """The estimator and, for a pipeline (or nested pipelines), its steps, in order."""
    yield estimator
    for _, step in getattr(estimator, "steps", []):
        if step is not None and step != "passthrough":
            yield from _steps(step)


def _diagnostics(fitted):
    for step in _steps(fitted):
        if any(hasattr(step, attr) for attr in _DIAGNOSTICS):
            return {col: _plain(getattr(step, attr, None)) for attr, col in _DIAGNOSTICS.items()}
    return {}


def _plain(value):
    if isinstance(value, np.ndarray):
        # a model's n_iter_ is an array (one count per class): the slowest class counts
        return value.item() if value.size == 1 else _plain(value.max()) if value.size else None
    if isinstance(value, np.generic):
        return value.item()
    return value


def _resolve_scoring(scoring):
    """Utility metrics as ``{name: scorer}``."""
    if scoring is None:
        return {}
    if isinstance(scoring, str):
        return {scoring: get_scorer(scoring)}
    if callable(scoring):
        return {"score": scoring}
    if isinstance(scoring, dict):
        return {name: get_scorer(s) if isinstance(s, str) else s for name, s in scoring.items()}
    return {name: get_scorer(name) for name in scoring}


def _resolve_attacks(attacks):
    """Attack scorers as ``{name: scorer}``; names go through ``skdc.metrics``."""
    if attacks is None:
        return {}
    if isinstance(attacks, str) or callable(attacks):
        attacks = [attacks]
    items = attacks.items() if isinstance(attacks, dict) else [(None, a) for a in attacks]
    out = {}
    for name, attack in items:
        if isinstance(attack, str):
            try:
                from ..metrics import make_attack_scorer
            except ImportError as exc:
                raise ImportError(
                    f"The attack {attack!r} is named by string, which needs "
                    "skdc.metrics.make_attack_scorer, and it could not be imported "
                    f"({exc}). Pass scorer callables scorer(fitted, X, y) -> float instead."
                ) from exc
            name = name or attack
            attack = make_attack_scorer(attack)
        elif not callable(attack):
            raise TypeError(
                "Each attack must be a name or a scorer callable scorer(fitted, X, y) -> float; "
                f"got {type(attack).__name__}."
            )
        name = name or getattr(attack, "__name__", None) or f"attack{len(out)}"
        if name in out:
            raise ValueError(f"Two attacks are named {name!r}; pass a dict to name them.")
        out[name] = attack
    return out


def _check_param(estimator, param):
    """One clear message, before any work, when the estimator has no parameter ``param``."""
    names = sorted(estimator.get_params(deep=True))
    if param in names:
        return
    close = difflib.get_close_matches(param, names, n=3)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    raise ValueError(
        f"The estimator {type(estimator).__name__} has no parameter {param!r} to sweep.{hint} "
        f"Its parameters are: {', '.join(names)}. Pass param= one of them (pipeline "
        "parameters are 'step__name')."
    )


def _seed_param(estimator, param):
    """The parameters a draw redraws: the mechanisms' noise seeds, else the swept step's seed.

    A draw redraws the participants' noise (anchor noise and private-data noise), which the
    mechanisms draw from their ``noise_random_state``; the deployment they also hold (secrets,
    anchor, partition, seeded by ``random_state``) stays fixed. Without a mechanism, the
    ``random_state`` of the step owning ``param`` is redrawn.
    """
    names = estimator.get_params(deep=True)
    noise_seeds = [k for k in names
                   if k == "noise_random_state" or k.endswith("__noise_random_state")]
    if noise_seeds:
        return noise_seeds
    candidate = param.rsplit("__", 1)[0] + "__random_state" if "__" in param else "random_state"
    return [candidate] if candidate in names else []


def _deployment_seed_params(estimator):
    """Every seed of a deployment, sorted: each step's ``random_state`` and
    ``noise_random_state`` (a mechanism's secrets, anchor, row hash and noise; an aligner's
    restarts; the model's own randomness)."""
    return sorted(k for k in estimator.get_params(deep=True)
                  if k.rsplit("__", 1)[-1] in ("random_state", "noise_random_state"))


def _draw_seeds(estimator, param, seed_param, seed):
    """``{parameter: seed}`` of one draw. ``"deployment"`` gives each seed of the deployment
    its own int derived from ``seed`` (so the secret and noise streams never share a seed);
    ``"auto"`` and a named parameter get ``seed`` itself."""
    if seed_param == "deployment":
        names = _deployment_seed_params(estimator)
        seeds = np.random.RandomState(seed).randint(2**31 - 1, size=len(names))
        return {k: int(s) for k, s in zip(names, seeds)}
    if seed_param == "auto":
        names = _seed_param(estimator, param)
    else:
        names = [] if seed_param is None else [seed_param]
    return dict.fromkeys(names, seed)


def _split(X, y, test_size, test_data, rng):
    """``(X_train, X_test, y_train, y_test)``: ``test_data`` as given, else one split drawn
    from ``rng`` (stratified on a classification ``y``)."""
    if test_data is not None:
        X_test, y_test = test_data
        return X, X_test, y, y_test
    stratify = y if y is not None and _is_classification(y) else None
    split = train_test_split(X, *(() if y is None else (y,)), test_size=test_size,
                             stratify=stratify, random_state=rng.randint(2**31 - 1))
    if y is None:
        return split[0], split[1], None, None
    return tuple(split)


def _draw_values(values, n_draws, rng):
    if hasattr(values, "rvs"):
        if n_draws is None:
            raise ValueError(
                "values is a distribution (it has .rvs); pass n_draws, the number of draws."
            )
        return np.asarray(values.rvs(size=n_draws, random_state=rng), dtype=np.float64)
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size == 0:
        raise ValueError("values is empty; pass at least one noise value or a distribution.")
    return np.repeat(values, 1 if n_draws is None else n_draws)


def _one_draw(make, value, seed, data, scorers, attacks, inner_threads):
    X_train, X_test, y_train, y_test, fit_params = data
    est = make(value, seed)
    start = time.perf_counter()
    limits = nullcontext() if inner_threads is None else threadpool_limits(inner_threads)
    # routed metadata (participant=) needs routing on in the worker, whatever its config
    routing = config_context(enable_metadata_routing=True) if fit_params else nullcontext()
    with limits, routing, warnings.catch_warnings():
        # Non-convergence above the phase transition is part of the result: the `converged`
        # column records it, the warning would only flood the output of a sweep.
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X_train, y_train, **fit_params)
        row = {name: float(s(est, X_test, y_test)) for name, s in scorers.items()}
        row.update({name: float(a(est, X_test, y_test)) for name, a in attacks.items()})
    row.update(_diagnostics(est))
    row["seconds"] = time.perf_counter() - start
    return row


# Sweep contexts unpickled in this process, by token (a few recent sweeps; a worker process
# serves the draws of one sweep after another).
_CONTEXTS = OrderedDict()
_CONTEXTS_KEPT = 2
_CONTEXTS_LOCK = threading.Lock()  # a Dask worker may run draws in several threads


class _SweepContext:
    """What every draw of one sweep shares: the estimator maker, the data and the scorers."""

    def __init__(self, make, data, scorers, attacks, inner_threads):
        self.make, self.data = make, data
        self.scorers, self.attacks, self.inner_threads = scorers, attacks, inner_threads

    def pack(self):
        """The context pickled once, as a uint8 array, and a token naming it.

        An array, not bytes: joblib memory-maps large arrays for its process workers and its
        Dask backend scatters them, so the context crosses to each worker once per sweep.
        """
        blob = np.frombuffer(cloudpickle.dumps(self), dtype=np.uint8)
        return uuid.uuid4().hex, blob


def _context(token, blob):
    """The sweep context of ``token``, unpickled from ``blob`` on first use in this process."""
    with _CONTEXTS_LOCK:
        ctx = _CONTEXTS.get(token)
        if ctx is None:
            ctx = cloudpickle.loads(np.asarray(blob).tobytes())
            _CONTEXTS[token] = ctx
            while len(_CONTEXTS) > _CONTEXTS_KEPT:
                _CONTEXTS.popitem(last=False)
        return ctx


def _run_draw(token, blob, value, seed):
    ctx = _context(token, blob)
    return _one_draw(ctx.make, value, seed, ctx.data, ctx.scorers, ctx.attacks,
                     ctx.inner_threads)


class _Maker:
    """Builds the unfitted estimator of one draw (picklable for process-based backends)."""

    def __init__(self, estimator, param, seed_param):
        self.estimator = estimator
        self.param = param
        self.seed_param = seed_param

    def __call__(self, value, seed):
        if hasattr(self.estimator, "fit"):
            est = clone(self.estimator)
        else:
            est = self.estimator(value)
        params = {}
        if self.param in est.get_params(deep=True):
            params[self.param] = value
        params.update(_draw_seeds(est, self.param, self.seed_param, seed))
        return est.set_params(**params) if params else est


@Substitution(example=_GOPP_PIPELINE_EXAMPLE)
@validate_params(
    {
        "estimator": [HasMethods(["fit"]), callable],
        "X": "no_validation",  # the data are checked by the split and the estimator
        "y": ["array-like", None],
        "param": [str],
        "values": ["array-like", HasMethods(["rvs"]), None],
        "n_draws": "no_validation",  # checked in the body, with a message of its own
        "attacks": [str, callable, list, tuple, dict, None],
        "scoring": [str, callable, list, tuple, dict],
        "test_size": [Interval(RealNotInt, 0, 1, closed="neither")],
        "test_data": [tuple, list, None],
        "seed_param": [str, None],
        "fit_params": [dict, None],
        "label": [str, None],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "inner_threads": "no_validation",  # checked in the body, with a message of its own
        "progress": ["boolean", StrOptions({"auto"})],
    },
    prefer_skip_nested_validation=True,
)
def privacy_utility_sweep(estimator, X, y=None, *, param="align__v", values=None, n_draws=None,
                          attacks=None, scoring="balanced_accuracy", test_size=0.3,
                          test_data=None, seed_param="auto", fit_params=None, label=None,
                          random_state=None, n_jobs=None, inner_threads=1, progress="auto"):
    """Fit one estimator per noise draw and score its utility and each attack's leakage.

    For each draw, the estimator is cloned, ``param`` is set to the draw's noise value and
    ``seed_param`` (by default the mechanism's ``noise_random_state``, for instance
    ``gdp__noise_random_state``, for ``align__v`` and ``gdp__noise`` alike) to the draw's own
    seed, so each draw has its own noise realization, drawn on the participants' side, while the
    rest of the deployment (partition, secrets, anchor) stays fixed, as in the paper's sweeps
    (Section 5.2 of the GDP paper). The clone is fitted on the training rows and scored on the
    held-out rows, once per utility metric and once per attack.

    Read more in the :ref:`User Guide <experiments>`, and on clusters in
    :ref:`sweeps_on_a_cluster`; the gallery's
    :ref:`sphx_glr_auto_examples_plot_privacy_utility.py` plots a sweep's frontier.

    Draws run as :mod:`joblib` jobs: choose the backend with
    ``joblib.parallel_config(backend=...)`` (``"loky"``, ``"threading"``, ``"dask"`` with a
    ``distributed.Client``, ``"ray"`` after ``ray.util.joblib.register_ray()``). Values, seeds
    and the split are drawn from ``random_state`` before dispatch, so the table is the same
    whatever the backend and ``n_jobs`` (with ``inner_threads`` fixed); only ``seconds``
    differs. The estimator, the data and the scorers are pickled once per sweep and reach
    each worker once (loky shares them through memory-mapped files above its ``max_nbytes``,
    Dask scatters them), so a draw only sends its value and seed and returns one row.
    Draws are dispatched largest value first (solvers take longer at higher noise, so the
    workers finish together); the rows come back in draw order.

    Parameters
    ----------
    estimator : estimator or callable
        An unfitted estimator (typically a ``Pipeline`` of a mechanism, an aligner and a
        model), cloned for every draw; or a factory ``estimator(value) -> estimator`` called
        once per draw (``param`` is then set too when the built estimator has it, and is
        otherwise only the column label).
    X : array-like of shape (n_samples, n_features)
        Rows.
    y : array-like of shape (n_samples,), default=None
        Targets.
    param : str, default="align__v"
        The noise parameter to sweep (``"align__v"`` for anchor noise, ``"gdp__noise"`` for
        private-data noise).
    values : array-like or distribution
        The noise values, one draw each, or a frozen ``scipy.stats`` distribution (anything
        with ``rvs(size, random_state)``) sampled ``n_draws`` times.
    n_draws : int, default=None
        Draws from the distribution; with an array of ``values``, draws per value.
    attacks : str, callable, list or dict, default=None
        Leakage scorers ``scorer(fitted_estimator, X, y) -> float`` (higher means more
        private), a list of them, or a dict ``{column: scorer}``. Strings are attack names
        resolved through ``skdc.metrics.make_attack_scorer``. Attacks see the held-out rows.
    scoring : str, callable, list or dict, default="balanced_accuracy"
        Utility metrics on the held-out rows, as in :func:`sklearn.model_selection.cross_validate`.
    test_size : float, default=0.3
        Share of rows held out (stratified on ``y`` when ``y`` is given), split once from
        ``random_state``; ignored when ``test_data`` is given.
    test_data : tuple of (X_test, y_test), default=None
        Explicit held-out rows; then all of ``X`` trains.
    seed_param : str, "auto", "deployment" or None, default="auto"
        Parameter set to each draw's seed. ``"auto"``: every mechanism's ``noise_random_state``
        (the participants' noise stream; the deployment stays fixed, as in the papers'
        sweeps); without a mechanism, the ``random_state`` of the step that owns ``param``, if
        any. ``"deployment"``: every ``random_state`` and ``noise_random_state`` of the
        pipeline, each from its own seed derived from the draw's, so each draw is a fresh
        deployment (secrets, anchor, anchor and private noise); pass the partition as
        ``fit_params={"participant": ids}`` to keep it fixed, since a mechanism without it
        assigns rows by a hash keyed from its ``random_state``. ``None``: no per-draw seed
        (draws at one value are identical).
    fit_params : dict, default=None
        Passed to ``fit`` (for instance ``participant=`` under metadata routing); must be
        indexed like the training rows.
    label : str, default=None
        Value of a ``method`` column (handy when concatenating sweeps).
    random_state : int, RandomState instance or None, default=None
        Seeds the split, the draws of ``values`` and each draw's seed.
    n_jobs : int, default=None
        Parallel jobs, as in joblib (``None``: one, unless a backend context says otherwise).
    inner_threads : int or None, default=1
        Threads of the BLAS and OpenMP libraries inside each draw (through threadpoolctl).
        Draws are the parallel unit, so one thread each avoids oversubscription, and the same
        count under every backend keeps the table identical to the last bit (thread counts
        change the rounding of BLAS reductions). ``None`` leaves the libraries' setting.
    progress : bool or "auto", default="auto"
        A tqdm progress bar; ``"auto"`` shows it when stderr is a terminal.

    Returns
    -------
    results : pandas.DataFrame
        One row per draw, in draw order: ``draw``, ``method`` (when ``label`` is given),
        ``param``, ``value``, ``seed``, one column per utility metric, one per attack, the
        solver diagnostics of the first step that has them (``n_iter``, ``converged``,
        ``fixed_point_residual``) and ``seconds`` (fit plus scoring).

    See Also
    --------
    fit_spline_band : Spline fits with bootstrap bands of a sweep's columns.
    plot_frontier : The privacy-utility frontier of one or several sweeps.
    calibrate_noise : The noise that reaches a target attack error.

    Examples
    --------
    {example}
    >>> from skdc.experiments import privacy_utility_sweep
    >>> df = privacy_utility_sweep(pipe, X, y, param="align__v", values=[0.0, 0.1],
    ...                            n_draws=2, random_state=0)
    >>> df[["draw", "value", "balanced_accuracy", "converged"]].shape
    (4, 4)
    """
    import pandas as pd

    _check_sweep(estimator, param, seed_param, values, n_draws, inner_threads, fit_params,
                 test_data)
    scorers, attack_scorers = _resolve_columns(scoring, attacks)
    rng = check_random_state(random_state)
    X_train, X_test, y_train, y_test = _split(X, y, test_size, test_data, rng)
    vals = _draw_values(values, n_draws, rng)
    seeds = rng.randint(2**31 - 1, size=vals.shape[0])

    data = (X_train, X_test, y_train, y_test, dict(fit_params or {}))
    ctx = _SweepContext(_Maker(estimator, param, seed_param), data, scorers, attack_scorers,
                        inner_threads)
    rows = _dispatch(ctx, vals, seeds, n_jobs=n_jobs, progress=progress, desc=f"sweep {param}")

    head = {"draw": np.arange(vals.shape[0])}
    if label is not None:
        head["method"] = label
    head.update({"param": param, "value": vals, "seed": seeds})
    return pd.concat([pd.DataFrame(head), pd.DataFrame(rows)], axis=1)


def _check_sweep(estimator, param, seed_param, values, n_draws, inner_threads, fit_params,
                 test_data):
    """Refuse a sweep that cannot run, before any draw (with what to pass instead)."""
    if values is None:
        raise ValueError(
            "Pass values=, the noise values to sweep (an array) or a distribution with n_draws."
        )
    if inner_threads is not None and (not isinstance(inner_threads, Integral)
                                      or inner_threads < 1):
        raise ValueError(f"inner_threads must be a positive int or None; got {inner_threads!r}.")
    if n_draws is not None and (not isinstance(n_draws, Integral) or n_draws < 1):
        raise ValueError(f"n_draws must be a positive int or None; got {n_draws!r}.")
    if hasattr(estimator, "fit"):
        _check_param(estimator, param)
        if seed_param not in ("auto", "deployment", None):
            _check_param(estimator, seed_param)
    if fit_params and test_data is None:
        raise ValueError(
            "fit_params are indexed like the training rows; with fit_params pass the split "
            "yourself: X, y = training rows and test_data=(X_test, y_test)."
        )


def _resolve_columns(scoring, attacks):
    """The utility scorers and the attack scorers, by column name (no name in both)."""
    scorers = _resolve_scoring(scoring)
    attack_scorers = _resolve_attacks(attacks)
    clash = set(scorers) & set(attack_scorers)
    if clash:
        raise ValueError(f"Utility metrics and attacks share the names {sorted(clash)}.")
    return scorers, attack_scorers


def _dispatch(ctx, vals, seeds, *, n_jobs, progress, desc):
    """Run the draws as joblib jobs, the largest noise first; the rows come back in draw order.

    The sweep's context travels to each worker once. Solvers need more iterations at higher
    noise, so the draws go out in decreasing order of their value, longest first: the workers
    then finish together, instead of one of them running the last, longest draws of a rising
    grid alone. Equal values keep their draw order, and each draw's seed is fixed already, so
    the order changes only the wall time.
    """
    token, blob = ctx.pack()
    _CONTEXTS[token] = ctx  # in-process backends (sequential, threading) use it as it is
    order = np.argsort(-vals, kind="stable")
    try:
        jobs = (delayed(_run_draw)(token, blob, float(vals[i]), int(seeds[i])) for i in order)
        done = _parallel(n_jobs)(jobs)
        rows = [None] * vals.shape[0]
        for i, row in zip(order, progress_bar(done, progress, total=vals.shape[0], desc=desc,
                                              unit="draw")):
            rows[i] = row
        return rows
    finally:
        _CONTEXTS.pop(token, None)


def _parallel(n_jobs):
    """A joblib ``Parallel`` that yields the rows as the draws finish (for the progress bar), or,
    under a backend that cannot yield (Ray's, ``multiprocessing``), returns them at the end."""
    try:
        return Parallel(n_jobs=n_jobs, return_as="generator")
    except ValueError:  # "Backend ... does not support return_as=generator"
        return Parallel(n_jobs=n_jobs)


def _is_classification(y):
    return type_of_target(y) in ("binary", "multiclass")
