"""The steps the audit and the comparison share: the rows and the parties checked, the
analyst's model, the checkpoint folder, a calibration on the split that speaks the audit's
words, the advice on time and draws, the scale of the rows, and what both record of a run
(its setting and the Python call that reproduces it)."""

# Licence: BSD 3 clause

import math
import os
import warnings
from numbers import Integral

import numpy as np

from ..utils._folders import ensure_folder
from ._calibrate import (
    calibrate_noise,
)
from ._deployments import _labels, _model, _model_params
from ._draws import _data_digest
from ._words import noise_label


def _check_rows(X, y, target_error, random_state):
    """``(X, y)``: finite float64 rows with one class label each; the target error and the
    seed checked (what every audit and comparison needs)."""
    from sklearn.utils.multiclass import type_of_target

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[0] < 10:
        raise ValueError(f"X must be a 2-D array of at least 10 rows; got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds NaN or infinite values; clean or impute them first.")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}); got shape "
                         f"{y.shape}.")
    if type_of_target(y) not in ("binary", "multiclass"):
        raise ValueError(f"y must hold class labels (the utility model is a classifier); got "
                         f"{type_of_target(y)} targets.")
    if not isinstance(random_state, Integral) or isinstance(random_state, bool) \
            or not 0 <= random_state < 2**32:
        raise ValueError(f"random_state must be an int in 0 .. 2**32 - 1 (the report prints "
                         f"it to reproduce the audit); got {random_state!r}.")
    if np.unique(y).size < 2:
        raise ValueError(f"y holds one class ({y[0]!r}) for all {y.size} rows: a classifier "
                         "on one class scores 1.0 whatever it learns, so utility would mean "
                         "nothing. Give rows of at least two classes.")
    if target_error is not None and (isinstance(target_error, bool)
                                     or not math.isfinite(target_error) or target_error < 0):
        raise ValueError(f"target_error must be a finite error >= 0 (a relative distance); "
                         f"got {target_error!r}.")
    return X, y


def _parties(participant, n_participants, X):
    """``(parties, n_participants)``: each row's party index from ``participant`` (``None``
    without one: the mechanism's keyed hash assigns rows) and the number of parties."""
    if participant is None:
        if not isinstance(n_participants, Integral) or isinstance(n_participants, bool) \
                or not 2 <= n_participants <= X.shape[0] // 2:
            raise ValueError(f"n_participants must be an int from 2 to half the rows "
                             f"({X.shape[0] // 2}); got {n_participants!r}.")
        return None, int(n_participants)
    participant = np.asarray(participant)
    if participant.shape != (X.shape[0],) or participant.dtype.kind not in "iu":
        raise ValueError(f"participant must hold one integer party id per row of X "
                         f"({X.shape[0]}); got shape {participant.shape}, dtype "
                         f"{participant.dtype}.")
    ids, parties = np.unique(participant, return_inverse=True)
    if ids.size < 2:
        raise ValueError("participant names a single party; a collaboration needs two.")
    return parties, int(ids.size)


def _checkpoint_folder(checkpoint):
    """The checkpoint folder, created (never reached through a link), or ``None``."""
    if checkpoint is None:
        return None
    return ensure_folder(checkpoint, "the checkpoint folder", allow_link=False)


def _analyst_model(model, model_params, y, cli):
    """``(estimator, words)``: the analyst's utility model, and what a run's setting records of
    it: the labels in numbers, ``cli`` (whether the command line runs it), whether the classes
    were weighed alike (``balanced``), the parameters set and the model's name."""
    labels = _labels(y)
    params, balanced = _model_params(model, model_params, labels)
    words = {**labels, "cli": cli, "balanced": balanced, "model_params": params,
             "model": model if isinstance(model, str) else type(model).__name__}
    return _model(model, params), words


# The audit's own names for calibrate_noise's parameters and words, in its warnings.
_AUDIT_NAMES = {"min_error=": "target_error=", "v_phase_transition = ": "v_PT = ",
                "Add anchor rows (v_PT grows with them)":
                "Add anchor rows (n_anchors=; v_PT grows with them)"}
# ... and those of the comparison, which takes no noise range (each option has its own)
_COMPARE_NAMES = {**_AUDIT_NAMES, "Widen bounds=, raise": "Raise",
                  "Widen bounds=, lower": "Lower"}


def _calibrate(pipe, split, param, names, targets, confidence, n_draws, bounds, xtol,
               criterion, colluder, target, rng, n_jobs, batch_size, folder, progress,
               filename="calibration.jsonl", words=None):
    """:func:`calibrate_noise` on the audit's split and partition (checkpointed in
    ``folder/filename``); its warnings speak the audit's parameter names (``words``: the
    replacements, :data:`_AUDIT_NAMES` by default) and the noise in words."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cal = calibrate_noise(
            pipe, split.X_train, split.y_train,
            test_data=(split.X_test, split.y_test, split.participant_test),
            participant=split.participant_train, param=param, attack=names,
            min_error=targets["target_error"], max_linkage=targets["max_linkage"],
            sensitive=targets["sensitive"], max_sensitive_gain=targets["max_sensitive_gain"],
            confidence=confidence, n_draws=n_draws, bounds=bounds, xtol=xtol,
            criterion=criterion, colluder=colluder, target=target, redraw="deployment",
            scoring="balanced_accuracy", random_state=rng.randint(2**31 - 1), n_jobs=n_jobs,
            batch_size=batch_size,
            checkpoint=None if folder is None else os.path.join(folder, filename),
            progress=progress)
    for w in caught:
        text = str(w.message)
        for old, new in (_AUDIT_NAMES if words is None else words).items():
            text = text.replace(old, new)
        text = text.replace(param, noise_label(param))
        warnings.warn(text, w.category, stacklevel=3)
    return cal


def _advice(cli, n_jobs, fewer):
    """How to shorten a run, in the command line's flags (``cli``) or the function's
    parameters; ``fewer``: ``"grid"`` (the audit) or ``"options"`` (the comparison).

    Examples
    --------
    >>> from skdc.audit._steps import _advice
    >>> print(_advice(True, 1, "options"))  # doctest: +ELLIPSIS
    --n-jobs -1 (draws in parallel on this machine's ... cores; now 1 worker), ...
    """
    from joblib import effective_n_jobs
    from joblib.parallel import get_active_backend

    workers, cores = int(effective_n_jobs(n_jobs)), os.cpu_count() or 1
    on_dask = "Dask" in type(get_active_backend()[0]).__name__
    parallel = ("--n-jobs -1" if cli else "n_jobs=-1") + (
        f" (draws in parallel on this machine's {cores} cores; now "
        f"{workers} worker{'s' if workers != 1 else ''})")
    if on_dask:
        cluster = (f"more Dask workers (now {workers}): `dask worker ADDRESS` on another "
                   "machine joins the cluster")
        parallel = ("--n-jobs -1" if cli else "n_jobs=-1") + " (every worker of the cluster)"
    else:
        cluster = ("--backend dask --scheduler ADDRESS (draws on a Dask cluster of several "
                   "machines)" if cli else "joblib.parallel_config(backend='dask') under a "
                   "distributed.Client (draws on a Dask cluster)")
    if fewer == "grid":
        less = ("fewer --grid values or --grid-draws" if cli else
                "a smaller n_grid= or grid_draws=")
    else:
        less = (("fewer options in --compare" if cli else "fewer options=")
                + " (the kti option's draws cost the most)")
    wide = workers >= (cores if not on_dask else effective_n_jobs(-1))
    return ", ".join(([] if wide else [parallel]) + [cluster, less])


def _scale(X):
    """Whether the columns look standardized, and the spread of their scales."""
    mean, sd = X.mean(axis=0), X.std(axis=0)
    rms = np.sqrt(np.mean(X**2, axis=0))
    positive = rms[rms > 0]
    spread = float(positive.max() / positive.min()) if positive.size else 1.0
    standardized = bool(np.all(np.abs(mean) <= 0.1) and np.all(np.abs(sd - 1) <= 0.1))
    return {"standardized": standardized, "scale_spread": spread,
            "largest_rms": float(rms.max()), "largest_column": int(np.argmax(rms)),
            "mean_offset": float(np.linalg.norm(mean) / max(np.linalg.norm(rms), 1e-300))}


def _recorded_setting(X, y, participant, split, *, n_participants, colluder, target, targets,
                      confidence, criterion, random_state, words, n_anchors, command_line,
                      n_resumed, n_draws_all):
    """What the audit and the comparison record alike in their ``setting``: the rows and their
    split, the roles, the targets as ``targets`` gives them and the rule, the analyst's model
    (``words``, from :func:`_analyst_model`), the seed, the input's digest and scale, the
    command that reproduces the run, and the draws resumed and run."""
    return {
        "n_rows": int(X.shape[0]), "n_features": int(X.shape[1]),
        "n_train": int(split.X_train.shape[0]), "n_test": int(split.X_test.shape[0]),
        "n_participants": int(n_participants), "colluder": int(colluder),
        "target": int(target),
        "target_rows": int(np.sum(split.participant_train == target)
                           + np.sum(split.participant_test == target)),  # the attacked rows
        **targets, "confidence": float(confidence), "criterion": criterion,
        **words, "n_anchors": n_anchors,
        "random_state": int(random_state), "partition": participant is not None,
        "input_sha256": _data_digest(X, y, participant), "scale": _scale(X),
        "command_line": command_line,
        "n_resumed": int(n_resumed), "n_draws_all": int(n_draws_all),
    }


def _reproducing_call(function, kwargs):
    """The Python call of ``skdc.audit.<function>`` on ``X, y`` with ``kwargs`` in order (an
    estimator, which no repr rebuilds, is left out): what the report prints to reproduce a run
    that the command line did not start.

    Examples
    --------
    >>> from skdc.audit._steps import _reproducing_call
    >>> _reproducing_call("audit", {"n_participants": 3, "model": "ridge"})
    "skdc.audit.audit(X, y, n_participants=3, model='ridge')"
    """
    inner = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if not hasattr(v, "fit"))
    return f"skdc.audit.{function}(X, y, {inner})"
