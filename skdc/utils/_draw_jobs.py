"""The draws of a noise sweep as joblib jobs: one fitted pipeline, its scores and its attacks.

The engine shared by :func:`skdc.experiments.privacy_utility_sweep` and the audit
(:func:`skdc.audit.calibrate_noise`, :func:`skdc.audit.compare_options`). A draw clones the
estimator, sets the swept value and the draw's seeds, fits it and scores it. The data and the
fixed parts of a sweep (the estimator maker, the scorers) are pickled once into one byte array,
which joblib's ``loky`` backend hands over through shared memory and its Dask backend scatters
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

import numpy as np
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import get_scorer
from sklearn.utils.multiclass import type_of_target
from threadpoolctl import threadpool_limits

from ._progress import progress_bar

try:  # joblib bundles cloudpickle, unless a distribution unbundled it
    from joblib.externals import cloudpickle
except ImportError:  # pragma: no cover
    import cloudpickle

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
