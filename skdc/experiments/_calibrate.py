"""Noise calibration: the smallest noise whose attack error stays above a target, with confidence.

A privacy-utility sweep answers "how private is the protocol at this noise?". A data team asks
the inverse question: *how much noise do we need so that a colluding analyst's best attack
stays above an error we can accept, and what does that cost in accuracy?*
:func:`calibrate_noise` answers it for any monotone noise knob (``align__v`` for the anchor
noise of noisy-anchor alignment [1]_, ``gdp__noise`` for private-data noise). It judges a noise
value by a one-sided lower *prediction* bound over noise draws, so that a fresh draw at the
returned value meets the target with the stated probability; a mean above the target would
fail about half the deployments near the threshold. The value is found by bisection on a
bracket, every draw of every evaluated value runs through :func:`privacy_utility_sweep` (its
``seed_param="auto"`` redraws the noise, the deployment stays fixed) and draw ``k`` uses the
same seed at every value (common random numbers), so the comparison between two values is not
blurred by independent noise.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import math
import os
import warnings
from dataclasses import dataclass, field
from functools import partial
from numbers import Integral, Real

import numpy as np
from joblib import delayed
from sklearn.utils import check_random_state

from ..utils._checkpoint import DrawCheckpoint
from ..utils._docstring import Substitution
from ..utils._progress import progress_bar
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._docstrings import _GOPP_PIPELINE_EXAMPLE
from ._sweep import _check_param, _parallel, _resolve_scoring, _split, privacy_utility_sweep

__all__ = ["NoiseCalibration", "calibrate_noise"]

_V_PT_COLUMN = "v_phase_transition"


class _FittedAttribute:
    """Scorer reading a fitted attribute (``v_phase_transition_``) of the first step having it."""

    def __init__(self, attr):
        self.attr = attr

    def __call__(self, estimator, X, y=None):
        for step in [estimator, *[s for _, s in getattr(estimator, "steps", [])]]:
            if hasattr(step, self.attr):
                return float(getattr(step, self.attr))
        return float("nan")


# ----------------------------------------------------------------------------- bounds


def _prediction_bounds(values, confidence, bound):
    """One-sided lower and upper prediction bounds of a fresh draw, at ``confidence`` each.

    ``"normal"``: ``mean -/+ t_{confidence, n-1} s sqrt(1 + 1/n)``, the prediction bound of a
    Gaussian sample (exact coverage for Gaussian draws). ``"order"``: the ``j``-th smallest
    (largest) draw, ``j = floor((n + 1)(1 - confidence))``, whose coverage ``(n + 1 - j) /
    (n + 1) >= confidence`` holds for any continuous distribution of the draws.
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n == 0 or not np.all(np.isfinite(x)):
        return float("nan"), float("nan")
    if bound == "order":
        j = math.floor((n + 1) * (1.0 - confidence) + 1e-12)
        s = np.sort(x)
        return float(s[j - 1]), float(s[n - j])
    from scipy import stats

    mean, sd = float(x.mean()), float(x.std(ddof=1))
    half = float(stats.t.ppf(confidence, n - 1)) * sd * math.sqrt(1.0 + 1.0 / n)
    return mean - half, mean + half


def _mean_interval(values, confidence):
    """Two-sided Student-t confidence interval of the mean at level ``confidence``."""
    from scipy import stats

    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if x.size < 2:
        m = float(x.mean()) if x.size else float("nan")
        return m, (m, m)
    m, se = float(x.mean()), float(x.std(ddof=1)) / math.sqrt(x.size)
    half = float(stats.t.ppf(0.5 + confidence / 2.0, x.size - 1)) * se
    return m, (m - half, m + half)


# ----------------------------------------------------------------------------- result


@Substitution(example=_GOPP_PIPELINE_EXAMPLE)
@dataclass(frozen=True, eq=False)
class NoiseCalibration:
    """The result of :func:`calibrate_noise`.

    Read more in the :ref:`User Guide <safety>`, and see the gallery example
    :ref:`sphx_glr_auto_examples_plot_calibrated_frontier.py`.

    Attributes
    ----------
    value : float
        The recommended noise: the smallest evaluated value whose every attack meets its
        target at ``confidence``; NaN when no value in the range does.
    param : str
        The calibrated parameter.
    min_error : dict of {str: float}
        The target error of each attack.
    confidence : float
        The one-sided coverage of the bounds.
    attack_error : float
        Mean error of the binding attack over the draws at ``value``.
    attack_error_interval : tuple of (float, float)
        One-sided lower and upper prediction bounds of the binding attack's error of a fresh
        draw at ``value``, each at ``confidence``; the lower one is the criterion.
    utility : float
        Mean utility score at ``value``.
    utility_interval : tuple of (float, float)
        Student-t confidence interval of the mean utility at level ``confidence``.
    utility_metric : str
        Name of the utility column.
    binding_attack : str
        The attack whose lower bound is closest to (or furthest below) its target at
        ``value``: the one that decides the noise.
    bracket : tuple of (float, float)
        ``(fails, meets)``: the largest evaluated value that fails and the smallest that
        meets (``value``); the smallest value that meets lies in between. ``(low, low)`` when
        ``low`` already meets, ``(high, inf)`` when nothing meets.
    v_phase_transition : float
        :func:`~skdc.alignment.v_phase_transition` of the aligner (NaN when it has none).
    table : pandas.DataFrame
        Every draw the search ran: ``step`` (order of evaluation), ``value``, ``draw`` (the
        index shared across values), ``draw_seed``, then the columns of
        :func:`privacy_utility_sweep` (``seed`` is the sweep's seed of the draw) and
        ``v_phase_transition`` (the aligner's ``v_phase_transition_``, NaN without one).
    summary : pandas.DataFrame
        One row per evaluated value and attack: ``n_draws``, ``mean``, ``lower``, ``upper``,
        ``target`` and ``meets``.
    bound : str
        ``"normal"`` or ``"order"``: how the bounds were formed.

    Examples
    --------
    {example}
    >>> import numpy as np
    >>> from skdc.experiments import calibrate_noise
    >>> cal = calibrate_noise(pipe, X, y, param="align__v", attack="procrustes",
    ...                       min_error=0.2, confidence=0.8, n_draws=3, bounds=(0.0, 0.4),
    ...                       xtol=0.1, random_state=0)
    >>> bool(np.isfinite(cal.value))
    True
    >>> list(cal.summary.columns)
    ['step', 'value', 'attack', 'n_draws', 'mean', 'lower', 'upper', 'target', 'meets']
    >>> cal.n_draws_run == 3 * cal.table["value"].nunique()
    True
    """

    value: float
    param: str
    min_error: dict
    confidence: float
    attack_error: float
    attack_error_interval: tuple
    utility: float
    utility_interval: tuple
    utility_metric: str
    binding_attack: str
    bracket: tuple
    v_phase_transition: float
    table: object = field(repr=False)
    summary: object = field(repr=False)
    bound: str = "normal"

    @property
    def bracket_width(self):
        """``bracket[1] - bracket[0]``: how far ``value`` may lie above the smallest one."""
        return float(self.bracket[1] - self.bracket[0])

    @property
    def n_draws_run(self):
        """Number of draws (fits) the search ran."""
        return int(len(self.table))

    @property
    def attack_errors(self):
        """``{attack: (mean, lower, upper)}`` at ``value`` (from :attr:`summary`)."""
        rows = self.summary[self.summary["value"] == self.value]
        return {r.attack: (r.mean, r.lower, r.upper) for r in rows.itertuples()}

    def plot(self, ax=None):
        """Attack errors of every draw against the noise, with bounds, target and answer.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.

        Returns
        -------
        ax : matplotlib Axes
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots(figsize=(5.5, 3.6), layout="constrained")
        for k, attack in enumerate(self.min_error):
            color = f"C{k}"
            ax.scatter(self.table["value"], self.table[attack], s=10, alpha=0.45,
                       color=color, linewidths=0)
            s = self.summary[self.summary["attack"] == attack].sort_values("value")
            ax.plot(s["value"], s["lower"], "v-", color=color, markersize=4, linewidth=1,
                    label=f"{attack}: lower bound ({self.confidence:.0%})")
            ax.axhline(self.min_error[attack], color=color, linestyle=":", linewidth=1)
        if np.isfinite(self.value):
            ax.axvline(self.value, color="k", linewidth=1.2,
                       label=f"calibrated {self.param} = {self.value:.4g}")
            ax.axvspan(*self.bracket, color="0.6", alpha=0.25, linewidth=0)
        if np.isfinite(self.v_phase_transition):
            ax.axvline(self.v_phase_transition, color="0.35", linestyle="--", linewidth=1,
                       label=f"v_PT = {self.v_phase_transition:.4g}")
        ax.set_xlabel(self.param)
        ax.set_ylabel("attack error (higher = more private)")
        ax.legend(fontsize="small", frameon=False)
        return ax


# ----------------------------------------------------------------------------- the search


def _one(estimator, X_train, y_train, test_data, param, value, seed, scoring, attacks,
         fit_params=None):
    """One draw through the sweep (``seed_param="auto"`` redraws the noise from ``seed``).

    ``fit_params`` (the training rows' ``participant`` ids) are routed to the mechanism, so
    metadata routing is switched on for the draw."""
    from contextlib import nullcontext

    from sklearn import config_context

    routing = config_context(enable_metadata_routing=True) if fit_params else nullcontext()
    with routing:
        df = privacy_utility_sweep(
            estimator, X_train, y_train, param=param, values=[value], n_draws=1,
            attacks=attacks, scoring=scoring, test_data=test_data, seed_param="auto",
            fit_params=fit_params, random_state=seed, n_jobs=1, progress=False,
        )
    row = df.iloc[0].to_dict()
    for col in ("draw", "param", "value"):
        row.pop(col, None)
    return row


def _attacks(attack, colluder, participant):
    """Attack scorers as ``{name: scorer}``; names through ``make_attack_scorer``."""
    if isinstance(attack, str) or callable(attack):
        attack = [attack]
    if isinstance(attack, dict):
        items = list(attack.items())
    else:
        items = [(a if isinstance(a, str) else getattr(a, "__name__", None), a)
                 for a in attack]
    if not items:
        raise ValueError("attack is empty; pass at least one attack name or scorer.")
    target = participant
    if target is None:
        target = 1 if colluder != 1 else 0
    out = {}
    for k, (name, a) in enumerate(items):
        if isinstance(a, str):
            from ..metrics import make_attack_scorer

            a = make_attack_scorer(a, colluder=colluder, target=target)
        elif not callable(a):
            raise TypeError(
                "Each attack must be a name of skdc.metrics.make_attack_scorer or a scorer "
                f"callable scorer(fitted, X, y) -> float; got {type(a).__name__}."
            )
        name = name or f"attack{k}"
        if name in out:
            raise ValueError(f"Two attacks are named {name!r}; pass a dict to name them.")
        out[name] = a
    return out


def _targets(min_error, names):
    if isinstance(min_error, dict):
        unknown = sorted(set(min_error) - set(names))
        lacking = [n for n in names if n not in min_error]
        if unknown or lacking:
            raise ValueError(
                f"min_error names the attacks {sorted(min_error)}, the attacks are "
                f"{list(names)}; give one target per attack (or one float for all)."
            )
        targets = {n: float(min_error[n]) for n in names}
    elif isinstance(min_error, Real) and not isinstance(min_error, bool):
        targets = {n: float(min_error) for n in names}
    else:
        raise TypeError(f"min_error must be a float or a dict {{attack: float}}; got "
                        f"{type(min_error).__name__}.")
    bad = {n: t for n, t in targets.items() if not np.isfinite(t)}
    if bad:
        raise ValueError(f"min_error must be finite; got {bad}.")
    return targets


def _run_draws(run_draw, jobs, checkpoint, n_jobs, bar):
    """Rows of the draws ``jobs = [(key, value, seed)]``, in order; finished ones are read
    from ``checkpoint``, the others run on joblib and are stored as each one finishes (at the
    end of the batch under a backend that cannot yield them one by one)."""
    rows = [checkpoint.get(key) for key, _, _ in jobs]
    todo = [k for k, row in enumerate(rows) if row is None]
    if bar is not None and len(todo) < len(jobs):
        bar.update(len(jobs) - len(todo))
    tasks = (delayed(run_draw)(jobs[k][1], jobs[k][2]) for k in todo)
    for k, row in zip(todo, _parallel(n_jobs)(tasks)):
        checkpoint.put(jobs[k][0], row)
        rows[k] = checkpoint.get(jobs[k][0])  # the stored (JSON round-tripped) row
        if bar is not None:
            bar.update(1)
    return rows


class _Search:
    """Evaluates noise values (``n_draws`` draws each, cached and checkpointed)."""

    def __init__(self, run_draw, draw_seeds, targets, utility, confidence, bound, n_jobs,
                 checkpoint, bar):
        self.run_draw = run_draw
        self.draw_seeds = draw_seeds
        self.targets = targets
        self.utility = utility
        self.confidence = confidence
        self.bound = bound
        self.n_jobs = n_jobs
        self.checkpoint = checkpoint
        self.bar = bar
        self.rows = []      # every draw, in evaluation order
        self.summary = []   # one dict per value and attack
        self.results = {}   # value -> (meets, margins)

    def __call__(self, value):
        value = float(value)
        if value in self.results:
            return self.results[value][0]
        step = len(self.results)
        jobs = [(f"{value!r}/{k}", value, int(seed)) for k, seed in enumerate(self.draw_seeds)]
        done = _run_draws(self.run_draw, jobs, self.checkpoint, self.n_jobs, self.bar)
        rows = [{"step": step, "value": value, "draw": k, "draw_seed": int(seed), **row}
                for k, (seed, row) in enumerate(zip(self.draw_seeds, done))]
        self.rows.extend(rows)
        margins = {}
        for name, target in self.targets.items():
            errs = [r[name] for r in rows]
            lower, upper = _prediction_bounds(errs, self.confidence, self.bound)
            margins[name] = lower - target if np.isfinite(lower) else -np.inf
            self.summary.append({"step": step, "value": value, "attack": name,
                                 "n_draws": len(errs), "mean": float(np.mean(errs)),
                                 "lower": lower, "upper": upper, "target": target,
                                 "meets": bool(margins[name] >= 0)})
        meets = all(m >= 0 for m in margins.values())
        self.results[value] = (meets, margins)
        return meets


@dataclass
class _Setup:
    """What :func:`calibrate_noise` and the audit share: split, scorers, seeds."""

    X_train: object
    y_train: object
    test_data: tuple
    attacks: dict
    scoring: dict
    utility: str
    draw_seeds: np.ndarray


def _setup(estimator, X, y, *, param, attack, colluder, participant, scoring, test_size,
           test_data, n_draws, random_state):
    if not hasattr(estimator, "fit"):
        raise TypeError(f"estimator must be an unfitted estimator (a Pipeline of a mechanism, "
                        f"an aligner and a model); got {type(estimator).__name__}.")
    _check_param(estimator, param)
    attacks = _attacks(attack, colluder, participant)
    scorers = _resolve_scoring(scoring)
    if not scorers:
        raise ValueError("scoring is empty; pass a utility metric such as 'balanced_accuracy'.")
    clash = set(scorers) & set(attacks)
    if clash:
        raise ValueError(f"Utility metrics and attacks share the names {sorted(clash)}.")
    utility = next(iter(scorers))
    scorers = {**scorers, _V_PT_COLUMN: _FittedAttribute("v_phase_transition_")}
    rng = check_random_state(random_state)
    X_train, X_test, y_train, y_test = _split(X, y, test_size, test_data, rng)
    test_data = (X_test, y_test)
    draw_seeds = rng.randint(2**31 - 1, size=n_draws)
    return _Setup(X_train, y_train, tuple(test_data), attacks, scorers, utility, draw_seeds)


def _check_common(confidence, n_draws, bound, bounds, xtol):
    if not isinstance(confidence, Real) or not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence!r}.")
    if bound not in ("normal", "order"):
        raise ValueError(f"bound must be 'normal' or 'order'; got {bound!r}.")
    if not isinstance(n_draws, Integral) or isinstance(n_draws, bool) or n_draws < 2:
        raise ValueError(f"n_draws must be an int of at least 2; got {n_draws!r}.")
    if bound == "order" and math.floor((n_draws + 1) * (1 - confidence) + 1e-12) < 1:
        need = math.ceil(1.0 / (1.0 - confidence) - 1.0 - 1e-12)
        raise ValueError(
            f"bound='order' at confidence={confidence} needs at least {need} draws per value "
            f"(the smallest of n draws covers a fresh one with probability n/(n+1)); got "
            f"n_draws={n_draws}. Raise n_draws or use bound='normal'."
        )
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"bounds must be (low, high); got {bounds!r}.") from exc
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"bounds must be finite with low < high; got {bounds!r}.")
    if xtol is None:
        xtol = (high - low) / 32.0
    if not isinstance(xtol, Real) or not xtol > 0:
        raise ValueError(f"xtol must be a positive float; got {xtol!r}.")
    return low, high, float(xtol)


# What calibrate_noise and the audit take alike (the audit adds its own settings); the
# semantic checks (n_draws for bound="order", low < high, one target per attack) stay in
# _check_common and _targets.
_RUN_CONSTRAINTS = {
    "confidence": [Interval(Real, 0, 1, closed="neither")],
    "n_draws": [Interval(Integral, 2, None, closed="left")],
    "xtol": [Interval(Real, 0, None, closed="neither"), None],
    "colluder": [Interval(Integral, 0, None, closed="left")],
    "participant": [Interval(Integral, 0, None, closed="left"), None],
    "test_size": [Interval(Real, 0, None, closed="neither")],
    "n_jobs": [Integral, None],
    "checkpoint": [str, os.PathLike, None],
    "progress": ["boolean", StrOptions({"auto"})],
}


@validate_params(
    {
        **_RUN_CONSTRAINTS,
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like", None],
        "param": [str],
        "attack": [str, callable, list, tuple, dict],
        "min_error": [Real, dict],
        "bounds": ["array-like"],
        "bound": [StrOptions({"normal", "order"})],
        "scoring": [str, callable, list, tuple, dict],
        "test_data": [tuple, None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references, example=_GOPP_PIPELINE_EXAMPLE)
def calibrate_noise(estimator, X, y=None, *, param, attack, min_error, confidence=0.95,
                    n_draws=10, bounds=(0.0, 1.0), xtol=None, bound="normal", colluder=0,
                    participant=None, scoring="balanced_accuracy", test_size=0.3,
                    test_data=None, random_state=None, n_jobs=None, checkpoint=None,
                    progress="auto"):
    """Find the smallest noise whose attack error meets a target at a stated confidence.

    A noise value *meets* the target when, for every attack, the one-sided lower prediction
    bound of the attack error of a fresh noise draw, at level ``confidence``, is at least
    ``min_error``: with ``n`` draws of mean ``m`` and standard deviation ``s``,
    ``m - t_{confidence, n-1} s sqrt(1 + 1/n) >= min_error`` (``bound="normal"``), or the
    ``j``-th smallest draw, ``j = floor((n + 1)(1 - confidence))``, is (``bound="order"``,
    distribution-free). Both bound the error of *one* future deployment, which is what a
    participant faces, not the mean over many. The noise knob must be monotone (more noise,
    larger errors). The search evaluates ``high``, then ``low``, then bisects the bracket
    until it is at most ``xtol`` wide, reusing evaluated values; each value runs ``n_draws``
    draws through :func:`privacy_utility_sweep` with ``seed_param="auto"`` (the deployment
    fixed, the noise redrawn), draw ``k`` with the same seed at every value.

    Read more in the :ref:`User Guide <safety>`, and see the gallery example
    :ref:`sphx_glr_auto_examples_plot_calibrated_frontier.py`.

    Parameters
    ----------
    estimator : estimator
        An unfitted pipeline of a mechanism, an aligner and a model.
    X : array-like of shape (n_samples, n_features)
        Rows.
    y : array-like of shape (n_samples,), default=None
        Targets.
    param : str
        The noise parameter (``"align__v"`` for anchor noise, ``"gdp__noise"`` for
        private-data noise).
    attack : str, callable, list or dict
        Attack names of :func:`skdc.metrics.make_attack_scorer` (built with ``colluder`` and
        ``participant``), scorers ``scorer(fitted, X, y) -> float`` (higher = more private),
        a list of them or a dict ``{name: attack}``. With several, the binding one decides.
    min_error : float or dict of {str: float}
        The acceptable attack error, one for all attacks or one per attack name.
    confidence : float, default=0.95
        Probability that a fresh draw at the returned noise meets the target.
    n_draws : int, default=10
        Noise draws per evaluated value.
    bounds : tuple of (float, float), default=(0.0, 1.0)
        The search range of ``param``.
    xtol : float, default=None
        Stop when the bracket is at most this wide; ``None``: ``(high - low) / 32``.
    bound : {"normal", "order"}, default="normal"
        How the lower bound is formed (see above); ``"order"`` needs
        ``n_draws >= 1 / (1 - confidence) - 1``.
    colluder : int, default=0
        The participant colluding with the analyst (named attacks).
    participant : int, default=None
        The attacked participant (the one auditing its privacy); ``None``: participant 1, or
        0 when the colluder is 1.
    scoring : str, callable or dict, default="balanced_accuracy"
        Utility metric(s); the first is reported.
    test_size : float, default=0.3
        Share of rows held out once (stratified), as in :func:`privacy_utility_sweep`.
    test_data : tuple of (X_test, y_test), default=None
        Explicit held-out rows; then all of ``X`` trains.
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the draws.
    n_jobs : int, default=None
        Parallel draws (joblib; choose the backend with ``joblib.parallel_config``).
    checkpoint : str or Path, default=None
        A JSON-lines file of finished draws; a rerun with the same settings reads them back
        instead of running them, so an interrupted calibration resumes where it stopped.
    progress : bool or "auto", default="auto"
        A tqdm bar over the draws; ``"auto"``: when stderr is a terminal.

    Returns
    -------
    calibration : NoiseCalibration
        The value, its bracket, the errors and utility with their intervals, every draw.

    Warns
    -----
    UserWarning
        When no value in ``bounds`` meets the target (``value`` is then NaN), and when the
        calibrated anchor noise lies above :func:`~skdc.alignment.v_phase_transition` (eq.
        (51) of [1]_), where alignment degrades sharply and utility drops.

    See Also
    --------
    privacy_utility_sweep : The sweep each evaluated value runs.
    audit : Calibration and a self-contained report for one participant.

    {references}

    Examples
    --------
    {example}
    >>> from skdc.experiments import calibrate_noise
    >>> cal = calibrate_noise(pipe, X, y, param="align__v", attack="procrustes",
    ...                       min_error=0.2, n_draws=4, bounds=(0.0, 0.4), xtol=0.05,
    ...                       random_state=0)
    >>> bool(cal.bracket[0] < cal.value <= cal.bracket[0] + 0.05)
    True
    >>> cal.binding_attack, cal.bracket_width <= 0.05
    ('procrustes', True)
    """
    import pandas as pd

    low, high, xtol = _check_common(confidence, n_draws, bound, bounds, xtol)
    setup = _setup(estimator, X, y, param=param, attack=attack, colluder=colluder,
                   participant=participant, scoring=scoring, test_size=test_size,
                   test_data=test_data, n_draws=n_draws, random_state=random_state)
    targets = _targets(min_error, list(setup.attacks))
    fingerprint = {"param": param, "bounds": [low, high], "xtol": xtol, "n_draws": n_draws,
                   "draw_seeds": [int(s) for s in setup.draw_seeds],
                   "attacks": {n: _stable_repr(a) for n, a in sorted(setup.attacks.items())},
                   "scoring": sorted(setup.scoring), "estimator": _stable_repr(estimator),
                   "data": _data_digest(setup.X_train, setup.y_train, setup.test_data)}
    ck = DrawCheckpoint(checkpoint, fingerprint)
    n_values = 2 + max(0, math.ceil(math.log2((high - low) / xtol)))
    bar = progress_bar(None, progress, total=n_values * n_draws, desc=f"calibrate {param}",
                       unit="draw")

    # a partial of a module-level function, not a closure: process-based joblib backends
    # that pickle without cloudpickle (multiprocessing) can send it
    run_draw = partial(_one, estimator, setup.X_train, setup.y_train, setup.test_data, param,
                       scoring=setup.scoring, attacks=setup.attacks)
    search = _Search(run_draw, setup.draw_seeds, targets, setup.utility, confidence, bound,
                     n_jobs, ck, bar)
    try:
        value, bracket = _bisect(search, low, high, xtol)
    finally:
        if bar is not None:
            bar.close()
    table = pd.DataFrame(search.rows)
    summary = pd.DataFrame(search.summary)
    return _result(search, table, summary, value, bracket, param, targets, confidence, bound,
                   setup.utility, low, high)


def _bisect(search, low, high, xtol):
    """``(value, bracket)`` of the smallest value meeting the target, to within ``xtol``."""
    if not search(high):
        return float("nan"), (high, float("inf"))
    if search(low):
        return low, (low, low)
    lo, hi = low, high
    while hi - lo > xtol * (1 + 1e-9):  # the halvings of (high - low) / 2**k stop on time
        mid = 0.5 * (lo + hi)
        if search(mid):
            hi = mid
        else:
            lo = mid
    return hi, (lo, hi)


def _result(search, table, summary, value, bracket, param, targets, confidence, bound,
            utility, low, high):
    at = value if np.isfinite(value) else high
    margins = search.results[at][1]
    binding = min(margins, key=margins.get)
    rows = table[table["value"] == at]
    v_pt = float(np.nanmedian(rows[_V_PT_COLUMN])) if rows[_V_PT_COLUMN].notna().any() \
        else float("nan")
    if np.isfinite(value):
        err = float(rows[binding].mean())
        interval = _prediction_bounds(rows[binding], confidence, bound)
        util, util_interval = _mean_interval(rows[utility], confidence)
    else:
        err, interval = float("nan"), (float("nan"), float("nan"))
        util, util_interval = float("nan"), (float("nan"), float("nan"))
        worst = summary[(summary["value"] == high) & (summary["attack"] == binding)].iloc[0]
        warnings.warn(
            f"No value of {param} in [{low:.4g}, {high:.4g}] meets the target: at {high:.4g} "
            f"the {binding} attack's {confidence:.0%} lower bound is {worst['lower']:.4g} < "
            f"{worst['target']:.4g}. Widen bounds=, lower min_error= or confidence=.",
            UserWarning, stacklevel=3,
        )
    if np.isfinite(value) and np.isfinite(v_pt) and param.endswith("__v") and value > v_pt:
        warnings.warn(
            f"The calibrated {param} = {value:.4g} lies above the phase-transition level "
            f"v_phase_transition = {v_pt:.4g} ({value / v_pt:.2f} x): above it the GOPP "
            "alignment degrades sharply, so the utility bought at this noise is fragile. Add "
            "anchor rows (v_PT grows with them) or accept a lower target error.",
            UserWarning, stacklevel=3,
        )
    return NoiseCalibration(
        value=float(value), param=param, min_error=dict(targets), confidence=float(confidence),
        attack_error=err, attack_error_interval=tuple(map(float, interval)), utility=util,
        utility_interval=tuple(map(float, util_interval)), utility_metric=utility,
        binding_attack=binding, bracket=(float(bracket[0]), float(bracket[1])),
        v_phase_transition=v_pt, table=table, summary=summary, bound=bound,
    )


def _stable_repr(obj):
    """``repr`` without memory addresses, so that a checkpoint's fingerprint survives a
    restart (functions are named by module and qualified name)."""
    import re

    if callable(obj) and hasattr(obj, "__qualname__") and not hasattr(obj, "get_params"):
        return f"{getattr(obj, '__module__', '')}.{obj.__qualname__}"
    return re.sub(r" at 0x[0-9a-fA-F]+", "", repr(obj))


def _data_digest(*arrays):
    """A SHA-256 digest of the arrays (shape, dtype and bytes), for fingerprints and reports."""
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
        h.update(a.tobytes())
    return h.hexdigest()
