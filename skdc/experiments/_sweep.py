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

from numbers import Integral

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state

from ..utils._docstring import _GOPP_PIPELINE_EXAMPLE, Substitution
from ..utils._draw_jobs import (
    _check_param,
    _dispatch,
    _is_classification,
    _Maker,
    _resolve_scoring,
    _SweepContext,
)
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)

__all__ = ["privacy_utility_sweep"]

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
