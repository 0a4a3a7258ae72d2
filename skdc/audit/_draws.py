"""The draw engine of the audit: fresh deployments drawn at planned noise values, each
checkpointed under a fingerprint of its code, data and settings, and the search that brackets
the smallest value meeting the criterion."""

# Licence: BSD 3 clause

import math
import types

import numpy as np
from joblib import delayed

from ..utils._draw_jobs import (
    _CONTEXTS,
    _Maker,
    _parallel,
    _run_draw,
    _SweepContext,
)
from ..utils._progress import stage_progress
from ._criteria import (
    _allowed_failures,
    _clopper_pearson_lower,
    _draw_margin,
    _draw_meets,
    _order_bounds,
    _prediction_bounds,
    _ratio,
)

# ----------------------------------------------------------------------------- fingerprints


def _code_content(code):
    """A code object as plain data: its bytecode, constants (nested code included), names
    and argument counts; not its file name nor its line numbers (``marshal`` output depends
    on reference counts, so it is not used)."""
    consts = tuple(_code_content(c) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return ("code", code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars,
            code.co_cellvars, code.co_argcount, code.co_kwonlyargcount)


def _content_hash(*objs):
    """A digest of the objects' content: arrays by their bytes, estimators by their
    parameters, functions by their code, defaults and closure (two lambdas differ; the same
    function in a restarted process hashes alike), so a checkpoint is never reused for
    another configuration."""
    from joblib.hashing import NumpyHasher

    class _Hasher(NumpyHasher):
        def save(self, obj):
            if isinstance(obj, types.FunctionType):
                cells = tuple(c.cell_contents for c in obj.__closure__ or ())
                obj = ("function", obj.__module__, obj.__qualname__,
                       _code_content(obj.__code__), obj.__defaults__, obj.__kwdefaults__,
                       cells)
            super().save(obj)

    return _Hasher().hash(objs)


def _data_digest(*arrays):
    """A SHA-256 digest of the arrays (shape, dtype and bytes), for fingerprints and reports.

    An array of Python objects (string labels from a pandas column) is digested by its values'
    types and reprs, not by its bytes, which are the objects' addresses.
    """
    import hashlib

    h = hashlib.sha256()
    stack = list(arrays)
    while stack:
        a = stack.pop(0)
        if isinstance(a, tuple):
            stack[:0] = list(a)
            continue
        if a is None:
            h.update(b"none")
            continue
        a = np.ascontiguousarray(np.asarray(a))
        h.update(f"{a.shape}{a.dtype.str}".encode())
        if a.dtype == object:
            h.update("\x1e".join(f"{type(v).__qualname__}:{v!r}" for v in a.ravel()).encode())
        else:
            h.update(a.tobytes())
    return h.hexdigest()


# utility scores that are rates (a checkpoint refuses a balanced accuracy of 7.5)
_SHARE_SCORES = ("balanced_accuracy", "accuracy", "roc_auc", "f1", "f1_macro", "precision",
                 "recall")
# attack columns by what they hold: a share (1 - a linkage or label accuracy), an error
_SHARE_SUFFIXES = (" unlinked", " linkage", " inference")
_ERROR_SUFFIXES = (" sensitive",)


def _column_kind(name, errors=()):
    """What a draw's column holds, for the checkpoint's checks: ``"share"`` (a rate, from 0
    to 1), ``"error"`` (a relative error, from 0 to 1e6) or ``"number"`` (a user's scorer).

    Examples
    --------
    >>> from skdc.audit._draws import _column_kind
    >>> _column_kind("balanced_accuracy"), _column_kind("mp unlinked"), _column_kind("x")
    ('share', 'share', 'number')
    """
    if name in _SHARE_SCORES or name.endswith(_SHARE_SUFFIXES):
        return "share"
    if name in errors or name.endswith(_ERROR_SUFFIXES):
        return "error"
    return "number"


def _row_fields(scorers, attacks, errors=()):
    """What a draw's row holds, for checking the rows a checkpoint reads back: rates within
    0 and 1, the named attacks' relative errors (``errors``) within 0 and 1e6, a user's own
    scorers any number."""
    fields = {name: _column_kind(name, errors) for name in [*scorers, *attacks]}
    fields.update({"seconds": "finite", "n_iter?": "int", "converged?": "bool",
                   "fixed_point_residual?": "number"})
    return fields


# ----------------------------------------------------------------------------- running draws


class _Runner:
    """Runs draws ``(value, seed)`` of one configuration in batches on joblib, reading and
    storing them in a checkpoint. The configuration (estimator, data, scorers) is pickled once
    and reaches each worker once, as in :func:`privacy_utility_sweep`."""

    def __init__(self, ctx, n_jobs, checkpoint, bar):
        self.ctx, self.n_jobs, self.checkpoint, self.bar = ctx, n_jobs, checkpoint, bar
        self.token, self.blob = ctx.pack()
        self.n_resumed = 0
        self._read_back = checkpoint.read_keys

    def __enter__(self):
        _CONTEXTS[self.token] = self.ctx  # in-process backends use it as it is
        return self

    def __exit__(self, *exc):
        _CONTEXTS.pop(self.token, None)
        if self.bar is not None:
            self.bar.close()

    def __call__(self, jobs):
        """Rows of ``jobs = [(value, seed)]``, in order (finished ones from the checkpoint)."""
        keys = [f"{float(v)!r}/{int(s)}" for v, s in jobs]
        rows = [self.checkpoint.get(k) for k in keys]
        todo = [k for k, row in enumerate(rows) if row is None]
        resumed = sum(1 for k, row in zip(keys, rows) if row is not None
                      and k in self._read_back)
        self.n_resumed += resumed
        if self.bar is not None and len(todo) < len(jobs):
            self.bar.update(len(jobs) - len(todo), resumed=True)
        if not todo:  # all read back: no pool to start (joblib warns about an empty one)
            return rows
        tasks = (delayed(_run_draw)(self.token, self.blob, float(jobs[k][0]), int(jobs[k][1]))
                 for k in todo)
        if self.bar is not None:
            self.bar.begin_batch()
        for k, row in zip(todo, _parallel(self.n_jobs)(tasks)):
            self.checkpoint.put(keys[k], row)
            rows[k] = self.checkpoint.get(keys[k])  # the stored (JSON round-tripped) row
            if self.bar is not None:
                self.bar.update(1)
        if self.bar is not None:
            self.bar.end_batch()
        return rows


def _runner(estimator, param, redraw, data, scorers, attacks, n_jobs, checkpoint, progress,
            desc, total=None, early=False):
    """A :class:`_Runner` over the draws of one configuration; its progress plans ``total``
    draws (at most, with ``early``: a sequential rule may decide a setting sooner)."""
    seed_param = "deployment" if redraw == "deployment" else "auto"
    ctx = _SweepContext(_Maker(estimator, param, seed_param), data, scorers, attacks,
                        inner_threads=1)
    bar = stage_progress(desc, total, progress, early=early)
    return _Runner(ctx, n_jobs, checkpoint, bar)


def _planned_values(low, high, xtol):
    """The most values :func:`_bisect` evaluates on ``[low, high]`` down to ``xtol``: both
    ends, then one per halving.

    Examples
    --------
    >>> from skdc.audit._draws import _planned_values
    >>> _planned_values(0.0, 1.0, 1 / 32)
    7
    """
    k, width = 0, float(high) - float(low)
    while width > xtol * (1 + 1e-9):
        width *= 0.5
        k += 1
    return 2 + k


class _Search:
    """Evaluates noise values: up to ``n`` draws each, in batches, stopping a value as soon as
    its verdict is certain."""

    def __init__(self, run, draw_seeds, targets, utility, confidence, criterion, batch):
        self.run, self.draw_seeds, self.targets = run, draw_seeds, targets
        self.utility, self.confidence, self.criterion = utility, confidence, criterion
        self.n = len(draw_seeds)
        self.allowed = _allowed_failures(self.n, confidence, criterion)
        self.batch = self.n if criterion == "normal" else batch
        self.rows = []       # every draw, in evaluation order
        self.summary = []    # one dict per value and attack
        self.decisions = []  # one dict per value
        self.results = {}    # value -> (passes, {draw: row})
        self.say = "{:.4g}".format  # a value in words, for the progress lines

    def _order(self, value):
        """Draw indices, the ones that fared worst at the nearest larger value first."""
        above = [v for v in self.results if v > value]
        if not above:
            return list(range(self.n))
        seen = self.results[min(above)][1]
        score = {k: _draw_margin(row, self.targets) for k, row in seen.items()}
        return sorted(range(self.n), key=lambda k: (score.get(k, math.inf), k))

    def __call__(self, value):
        value = float(value)
        if value in self.results:
            return self.results[value][0]
        order, rows, n_failed, early = self._order(value), {}, 0, None
        pos = 0
        while pos < self.n:
            ks = order[pos:pos + self.batch]
            pos += len(ks)
            for k, row in zip(ks, self.run([(value, self.draw_seeds[k]) for k in ks])):
                rows[k] = row
                n_failed += not _draw_meets(row, self.targets)
            if self.allowed is None or pos >= self.n:
                continue
            if n_failed > self.allowed:
                early = "fail"
                break
            if n_failed + (self.n - pos) <= self.allowed:
                early = "pass"
                break
        passes = self._decide(value, rows, n_failed, early)
        bar = getattr(self.run, "bar", None)
        if bar is not None:
            bar.decided(f"{self.say(value)} {self.decisions[-1]['why']}")
        return passes

    def _decide(self, value, rows, n_failed, early):
        step = len(self.results)
        ks = sorted(rows)
        for k in ks:
            self.rows.append({"step": step, "value": value, "draw": k,
                              "draw_seed": int(self.draw_seeds[k]),
                              "meets": _draw_meets(rows[k], self.targets), **rows[k]})
        lows = {}
        for name, target in self.targets.items():
            errs = np.array([rows[k][name] for k in ks], dtype=np.float64)
            if self.criterion == "normal":
                lower, upper = _prediction_bounds(errs, self.confidence, "normal")
            else:
                lower, upper = _order_bounds(errs, self.allowed + 1)
            lows[name] = lower
            with np.errstate(invalid="ignore"):
                self.summary.append({
                    "step": step, "value": value, "attack": name, "n_draws": len(ks),
                    "failures": int(np.sum(~(errs >= target))), "mean": float(np.mean(errs)),
                    "median": float(np.median(errs)), "min": float(np.min(errs)),
                    "max": float(np.max(errs)), "lower": lower, "upper": upper,
                    "target": target})
        n_run = len(ks)
        if self.criterion == "normal":
            passes = all(lows[a] >= t for a, t in self.targets.items())
        else:
            passes = n_failed <= self.allowed
        util = float(np.mean([rows[k][self.utility] for k in ks]))
        self.decisions.append({
            "step": step, "value": value, "n_draws": n_run, "n_failed": n_failed,
            "allowed_failures": self.allowed, "share_meeting": 1.0 - n_failed / n_run,
            "share_lower": _clopper_pearson_lower(n_run - n_failed, n_run, self.confidence),
            "fresh_fail_bound": (n_failed + 1) / (n_run + 1), "utility": util,
            "passes": bool(passes), "why": self._why(passes, n_run, n_failed, early, lows)})
        self.results[value] = (bool(passes), rows)
        return bool(passes)

    def _why(self, passes, n_run, n_failed, early, lows):
        """The decision in words, with the draws it needed."""
        if self.criterion == "normal":
            worst = min(lows, key=lambda a: _ratio(lows[a], self.targets[a]))
            return (f"Gaussian {self.confidence:.0%} prediction bound of {worst} "
                    f"{lows[worst]:.4g} {'>=' if passes else '<'} {self.targets[worst]:.4g} "
                    f"over {n_run} draws")
        allowed = f"at most {self.allowed} allowed" if self.allowed else "none allowed"
        if early == "fail":
            return (f"failed after {n_run} of {self.n} draws: {n_failed} failed, {allowed}")
        if early == "pass":
            return (f"passed after {n_run} of {self.n} draws: {n_failed} failed, and the "
                    f"rest cannot exceed the {self.allowed} allowed")
        return (f"{'passed' if passes else 'failed'}: {n_failed} of {n_run} draws failed, "
                f"{allowed}")
