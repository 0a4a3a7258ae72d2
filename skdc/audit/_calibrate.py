"""Noise calibration: the smallest noise at which fresh deployments keep every attack's error
at or above a target, with a stated probability, whatever the errors' distribution.

A privacy-utility sweep answers "how private is the protocol at this noise?". A data team asks
the inverse question: *with what probability does a fresh deployment at this noise keep every
attack's error at or above the error we accept, and what does that cost in accuracy?*
:func:`calibrate_noise` answers it for any monotone noise knob (``align__v`` for the anchor
noise of noisy-anchor alignment [1]_, ``gdp__noise`` for private-data noise).

**One draw, one deployment.** A draw redraws everything a real deployment draws (the
participants' secrets, the anchor, the anchor and private-data noise: every ``random_state``
and ``noise_random_state`` of the pipeline) and keeps fixed only what is fixed in reality: the
rows and their partition among the participants. A draw *meets* the targets when every attack
meets every target (jointly: one draw, one verdict): its exact-source linkage accuracy at most
``max_linkage`` (by default chance + 0.05, the primary risk), and, when given, its relative
error at least ``min_error`` and its gain on a sensitive column at most
``max_sensitive_gain``.

**A distribution-free verdict.** Attack errors can be heavy-tailed (the Moore-Penrose attack's
error explodes on some draws), have atoms or be infinite, so a value is judged by the share of
its draws that meet, never by a mean and a standard deviation. The default rule
(``criterion="order"``) is the order-statistic (exchangeability) rule: with ``n`` draws of which
``m`` fail, a fresh draw fails with probability at most ``(m + 1) / (n + 1)``, for any
distribution of the errors; a value passes when that is at most ``1 - confidence``.
``criterion="clopper-pearson"`` asks more: the exact one-sided Clopper-Pearson lower confidence
bound, at level ``confidence``, on the share of deployments that meet must itself reach
``confidence``. ``criterion="normal"`` keeps the Gaussian prediction bound of each attack's
error as an explicit option and warns when the draws are plainly not Gaussian.

**Sequential draws.** Draws are the cost. A value's draws run in batches (``batch_size``, by
default the number of parallel workers) and the value is decided as soon as the remaining draws
cannot change the verdict: once more draws failed than the rule allows, the value fails without
running the rest. The verdict is the one all ``n_draws`` draws would give. The value is found by
bisection on a bracket; draw ``k`` uses the same seed at every value (common random numbers),
and the draws that failed at the nearest larger value run first.

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
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..utils._checkpoint import DrawCheckpoint
from ..utils._docstring import _GOPP_PIPELINE_EXAMPLE, Substitution
from ..utils._draw_jobs import (
    _check_param,
    _resolve_scoring,
)
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._criteria import (
    _CRITERIA,
    _MAX_DRAWS,
    _mean_interval,
    _min_draws,
    _not_gaussian,
    _ratio,
    _relax,
    _shortfall,
)
from ._draws import (
    _content_hash,
    _planned_values,
    _row_fields,
    _runner,
    _Search,
)
from ._split import _split_rows
from ._targets import (
    _MAX_LINKAGE,
    _check_ids,
    _fixed_partition,
    _judged,
    _n_participants,
    _resolve_target,
)

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
        The recommended noise: the smallest evaluated value that passes the criterion; NaN
        when no value in the range does.
    param : str
        The calibrated parameter.
    min_error : dict of {str: float}
        The target of each judged column (higher = more private): the error target of each
        attack, ``1 - max_linkage`` of each ``"NAME unlinked"`` column and ``1 -
        max_sensitive_gain`` of each ``"NAME sensitive"`` column.
    confidence : float
        The probability, asked of a fresh deployment, of meeting every target.
    attack_error : float
        Mean error of the binding attack over the draws at ``value`` (NaN without a value).
    attack_error_interval : tuple of (float, float)
        Lower and upper prediction bounds of the binding attack's error of a fresh draw at
        ``value``: order statistics (``"order"``, ``"clopper-pearson"``) or Gaussian bounds
        (``"normal"``).
    utility : float
        Mean utility score at ``value``.
    utility_interval : tuple of (float, float)
        Student-t confidence interval of the mean utility at level ``confidence``.
    utility_metric : str
        Name of the utility column.
    binding_attack : str
        The attack that decides the bracket: the one failing in most draws at the bracket's
        failing end (at the upper end of the range when nothing passes), or, when the lower
        end of the range already passes, the one closest to its target there.
    bracket : tuple of (float, float)
        ``(fails, passes)``: the largest evaluated value that fails and the smallest that
        passes (``value``); the smallest passing value lies in between. ``(low, low)`` when
        ``low`` already passes, ``(high, inf)`` when nothing passes.
    v_phase_transition : float
        :func:`~skdc.alignment.v_phase_transition` of the aligner (NaN when it has none).
    table : pandas.DataFrame
        Every draw the search ran: ``step`` (order of evaluation), ``value``, ``draw`` (the
        index shared across values), ``draw_seed``, ``meets`` (every attack at or above its
        target), the utility and attack columns, the solver diagnostics, ``seconds`` and
        ``v_phase_transition``.
    summary : pandas.DataFrame
        One row per evaluated value and attack: ``n_draws`` (run), ``failures`` (draws below
        this attack's target), ``mean``, ``median``, ``min``, ``max``, ``lower`` and
        ``upper`` (the criterion's prediction bounds from the draws run), ``target``.
    decisions : pandas.DataFrame
        One row per evaluated value, in order: ``n_draws`` (run), ``n_failed`` (draws where
        some attack is below its target), ``allowed_failures`` (of ``n_draws_max``),
        ``share_meeting``, ``share_lower`` (its exact Clopper-Pearson lower bound at
        ``confidence``), ``fresh_fail_bound`` (``(m + 1) / (n + 1)``), the mean utility,
        ``passes`` and ``why`` (the decision in words, with how many draws it needed).
    criterion : str
        ``"order"``, ``"clopper-pearson"`` or ``"normal"``.
    n_draws_max : int
        The draws a value runs when nothing stops it early.
    redraw : str
        ``"deployment"`` or ``"noise"``: what each draw redraws.
    n_draws_resumed : int
        Draws read back from the checkpoint instead of run.

    Examples
    --------
    {example}
    >>> import numpy as np
    >>> from skdc.audit import calibrate_noise
    >>> cal = calibrate_noise(pipe, X, y, param="align__v", attack="procrustes",
    ...                       min_error=0.2, max_linkage=None, confidence=0.8,
    ...                       bounds=(0.0, 0.4), xtol=0.1, random_state=0)
    >>> bool(np.isfinite(cal.value)), cal.n_draws_max
    (True, 4)
    >>> list(cal.decisions.columns)[:4]
    ['step', 'value', 'n_draws', 'n_failed']
    >>> int(cal.decisions["n_draws"].sum()) == cal.n_draws_run
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
    decisions: object = field(repr=False)
    criterion: str = "order"
    n_draws_max: int = 0
    redraw: str = "deployment"
    n_draws_resumed: int = 0

    @property
    def bracket_width(self):
        """``bracket[1] - bracket[0]``: how far ``value`` may lie above the smallest one."""
        return float(self.bracket[1] - self.bracket[0])

    @property
    def n_draws_run(self):
        """Number of draws (fits) the search ran or read back."""
        return int(len(self.table))

    @property
    def attack_errors(self):
        """``{attack: (mean, lower, upper)}`` at ``value`` (from :attr:`summary`)."""
        rows = self.summary[self.summary["value"] == self.value]
        return {r.attack: (r.mean, r.lower, r.upper) for r in rows.itertuples()}

    def plot(self, ax=None):
        """Every draw's worst attack error relative to its target, against the noise.

        A draw meets when the worst of its attacks is at or above its target (ratio 1, the
        dotted line). The y axis is logarithmic, since attack errors may span decades;
        ratios below 1e-3 (an exact reconstruction) are drawn at 1e-3 as triangles. Each
        evaluated value is labelled with its failing and run draws.

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

            _, ax = plt.subplots(figsize=(6, 3.8), layout="constrained")
        from ._figures import plot_calibration

        return plot_calibration(self, ax)


# ----------------------------------------------------------------------------- setup


@dataclass
class _Setup:
    """What :func:`calibrate_noise` and the audit share: the split, the partition, scorers,
    seeds and how a draw runs."""

    X_train: object
    y_train: object
    test_data: tuple
    attacks: dict
    scoring: dict
    utility: str
    draw_seeds: np.ndarray
    target: int
    fit_params: dict
    p_train: object = None
    p_test: object = None
    targets: dict = None
    errors: list = None


def _attacked_rows(X_tr, y_tr, X_te, y_te, p_tr, p_te):
    """``(X, y, participant)`` of every row the attacks read: the training rows and the
    held-out ones, whose uploads the analyst holds alike (None without participant ids, or
    with a training set the held-out rows do not extend)."""
    if p_tr is None or p_te is None or np.ndim(X_tr) != 2 or np.ndim(X_te) != 2 \
            or np.shape(X_tr)[1] != np.shape(X_te)[1]:
        return None
    y = None if y_tr is None or y_te is None else np.concatenate([np.asarray(y_tr),
                                                                   np.asarray(y_te)])
    return (np.concatenate([np.asarray(X_tr), np.asarray(X_te)]), y,
            np.concatenate([np.asarray(p_tr), np.asarray(p_te)]))


class _OnRows:
    """An attack scorer evaluated on given rows, whatever rows the draw scores utility on.

    The colluder attacks every upload of the target it holds: its training rows and the
    held-out ones alike (the uploads of the training rows are the collaboration's real
    uploads). Scoring the attacks on all of them rather than the held-out rows only measures
    a deployment's leakage on about three times as many rows, so a linkage rate is not a
    rate over a few dozen rows.
    """

    def __init__(self, scorer, X, y):
        self.scorer, self.X, self.y = scorer, X, y

    def __call__(self, estimator, X=None, y=None):
        return self.scorer(estimator, self.X, self.y)


def _setup(estimator, X, y, *, param, attack, colluder, target, participant, scoring,
           test_size, test_data, n_draws, redraw, random_state, min_error=None,
           max_linkage=None, sensitive=None, max_sensitive_gain=None):
    if not hasattr(estimator, "fit"):
        raise TypeError(f"estimator must be an unfitted estimator (a Pipeline of a mechanism, "
                        f"an aligner and a model); got {type(estimator).__name__}.")
    _check_param(estimator, param)
    n_parts = _n_participants(estimator)
    target = _resolve_target(colluder, target, n_parts)
    rng = check_random_state(random_state)
    split = _split_rows(X, y, participant, test_size, test_data, rng)
    X_tr, y_tr, p_tr = split.X_train, split.y_train, split.participant_train
    X_te, y_te, p_te = split.X_test, split.y_test, split.participant_test
    if p_tr is not None:
        p_tr = _check_ids(p_tr, len(X_tr), n_parts, "participant")
        p_te = _check_ids(p_te, len(X_te), n_parts, "the held-out rows' participant ids")
    elif redraw == "deployment":
        # a mechanism without ids assigns rows by a hash keyed from its random_state, which a
        # deployment draw redraws: fix the partition once, as the given pipeline makes it
        p_tr, p_te = _fixed_partition(estimator, X_tr, y_tr, X_te)
    if p_te is not None and target not in set(np.unique(p_te).tolist()):
        raise ValueError(f"the attacked participant {target} has no held-out rows; give it "
                         "rows or choose another target.")
    attacked = _attacked_rows(X_tr, y_tr, X_te, y_te, p_tr, p_te)
    attacks, targets, errors = _judged(attack, colluder, target,
                                       p_te if attacked is None else attacked[2], min_error,
                                       max_linkage, sensitive, max_sensitive_gain,
                                       np.shape(X_tr)[1] if np.ndim(X_tr) == 2 else None)
    if attacked is not None:
        attacks = {name: _OnRows(a, *attacked[:2]) for name, a in attacks.items()}
    scorers = _resolve_scoring(scoring)
    if not scorers:
        raise ValueError("scoring is empty; pass a utility metric such as 'balanced_accuracy'.")
    clash = set(scorers) & set(attacks)
    if clash:
        raise ValueError(f"Utility metrics and attacks share the names {sorted(clash)}.")
    utility = next(iter(scorers))
    scorers = {**scorers, _V_PT_COLUMN: _FittedAttribute("v_phase_transition_")}
    draw_seeds = rng.randint(2**31 - 1, size=n_draws)
    fit_params = {} if p_tr is None else {"participant": p_tr}
    return _Setup(X_tr, y_tr, (X_te, y_te), attacks, scorers, utility, draw_seeds, target,
                  fit_params, p_tr, p_te, targets, errors)


def _check_range(bounds, xtol):
    """``(low, high, xtol)``: a finite range of non-negative noise, ``low < high``."""
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise ValueError(f"bounds must be (low, high) noise levels; got {bounds!r}.") from None
    if not (math.isfinite(low) and math.isfinite(high) and 0 <= low < high):
        raise ValueError(f"bounds must be finite noise levels with 0 <= low < high (a noise "
                         f"scale is not negative); got {bounds!r}.")
    if xtol is None:
        xtol = (high - low) / 32.0
    if not isinstance(xtol, Real) or not (math.isfinite(xtol) and xtol > 0):
        raise ValueError(f"xtol must be a positive float; got {xtol!r}.")
    return low, high, float(xtol)


def _check_draws(n_draws, confidence, criterion):
    """The draws per value: ``None`` gives the fewest with which a value can pass."""
    need = 2 if criterion == "normal" else _min_draws(confidence, criterion)
    if n_draws is None:
        return _min_draws(confidence, criterion)
    if n_draws < need:
        why = ("the best a value can show is no failure in n draws, a fresh failure "
               "probability of 1/(n+1)" if criterion == "order" else
               "the Clopper-Pearson bound of n successes out of n is (1-confidence)^(1/n)"
               if criterion == "clopper-pearson" else "a standard deviation needs two")
        raise ValueError(f"n_draws={n_draws} is too few: criterion={criterion!r} at "
                         f"confidence={confidence} needs n_draws >= {need} ({why}). Raise "
                         "n_draws= or leave it None.")
    return int(n_draws)


# What calibrate_noise and the audit take alike (the audit adds its own settings); the
# semantic checks (the draws a criterion needs, the range, one target per attack) are in
# _check_draws, _check_range and _targets.
_RUN_CONSTRAINTS = {
    "confidence": [Interval(Real, 0, 1, closed="neither")],
    "n_draws": [Interval(Integral, 2, _MAX_DRAWS, closed="both"), None],
    "xtol": [Interval(Real, 0, None, closed="neither"), None],
    "colluder": [Interval(Integral, 0, None, closed="left"), list, tuple],
    "target": [Interval(Integral, 0, None, closed="left"), None],
    "criterion": [StrOptions(set(_CRITERIA))],
    "batch_size": [Interval(Integral, 1, _MAX_DRAWS, closed="both"), None],
    "test_size": [Interval(Real, 0, None, closed="neither")],
    "n_jobs": [Integral, None],
    "checkpoint": [str, os.PathLike, None],
    "progress": ["boolean", StrOptions({"auto"})],
}
# What the single audit and the comparison take alike beyond those: the risks judged, the
# parties and the analyst's model.
_AUDIT_CONSTRAINTS = {
    "target_error": [Real, None],
    "max_linkage": [Interval(Real, 0, 1, closed="both"), None],
    "sensitive": [Interval(Integral, 0, None, closed="left"), None],
    "max_sensitive_gain": [Interval(Real, 0, 1, closed="both"), None],
    "colluder": [Interval(Integral, 0, None, closed="left")],
    "participant": ["array-like", None],
    "partition": ["array-like", None],  # the deprecated spelling of participant
    "model": [StrOptions({"logistic", "ridge"}), HasMethods(["fit"])],
    "model_params": [dict, None],
    "n_anchors": [Interval(Integral, 2, None, closed="left"), None],
}


@validate_params(
    {
        **_RUN_CONSTRAINTS,
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like"],
        "y": ["array-like", None],
        "param": [str],
        "attack": [str, callable, list, tuple, dict],
        "min_error": [Real, dict, None],
        "max_linkage": [Interval(Real, 0, 1, closed="both"), None],
        "sensitive": [Interval(Integral, 0, None, closed="left"), None],
        "max_sensitive_gain": [Interval(Real, 0, 1, closed="both"), None],
        "bounds": ["array-like"],
        "participant": ["array-like", None],
        "redraw": [StrOptions({"deployment", "noise"})],
        "scoring": [str, callable, list, tuple, dict],
        "test_data": [tuple, None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references, example=_GOPP_PIPELINE_EXAMPLE)
def calibrate_noise(estimator, X, y=None, *, param, attack, min_error=None,
                    max_linkage=_MAX_LINKAGE, sensitive=None, max_sensitive_gain=None,
                    confidence=0.95, n_draws=None, bounds=(0.0, 1.0), xtol=None, criterion="order",
                    colluder=0, target=None, participant=None, redraw="deployment",
                    scoring="balanced_accuracy", test_size=0.3, test_data=None,
                    random_state=None, n_jobs=None, batch_size=None, checkpoint=None,
                    progress="auto"):
    """Find the smallest noise at which fresh deployments meet a target attack error.

    A *draw* is one simulated deployment: its secrets, anchor, anchor noise and private
    noise are drawn afresh (``redraw="deployment"``), the rows and their partition stay. It
    *meets* when every attack's error is at or above its ``min_error``. A noise value
    *passes* when its draws show that a fresh deployment meets with probability at least
    ``confidence``; the default rule holds for any distribution of the errors (heavy tails,
    atoms, infinities):

    * ``criterion="order"``: with ``n`` draws of which ``m`` fail, a fresh draw fails with
      probability at most ``(m + 1) / (n + 1)`` (the draws and the fresh one are
      exchangeable); the value passes when this is at most ``1 - confidence``. At 95%, 19
      draws without a failure pass, and so do 39 with one.
    * ``criterion="clopper-pearson"``: the exact one-sided Clopper-Pearson lower confidence
      bound, at level ``confidence``, on the share of deployments meeting must reach
      ``confidence`` (59 draws without a failure at 95%): the share itself, not only one
      fresh draw, is then vouched for.
    * ``criterion="normal"``: each attack's one-sided Gaussian prediction bound,
      ``mean - t_{confidence, n-1} s sqrt(1 + 1/n)``, must reach its target. It assumes
      Gaussian errors, and warns when the draws are plainly not Gaussian.

    A value's draws run in batches of ``batch_size``; with ``"order"`` and
    ``"clopper-pearson"`` the value is decided as soon as the remaining draws cannot change
    the verdict (a failing value usually stops after its first batch), and the verdict is
    the one all ``n_draws`` draws would give. The noise knob must be monotone (more noise,
    larger errors). The search evaluates ``high``, then ``low``, then bisects the bracket
    until it is at most ``xtol`` wide; draw ``k`` has the same seed at every value (common
    random numbers), so when each deployment's error grows with the noise, the answer is an
    order statistic of the deployments' own crossing points, and the guarantee above holds
    for the returned value itself.

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
        ``target``), scorers ``scorer(fitted, X, y) -> float`` (higher = more private), a
        list of them or a dict ``{name: attack}``. A draw meets only when all of them do.
    min_error : float or dict of {str: float}, default=None
        The acceptable attack error (finite, at least 0), one for all attacks or one per
        attack name; ``None``: errors are recorded, not judged.
    max_linkage : float or None, default=0.15
        The largest acceptable exact-source linkage accuracy of each attack given by name
        (:func:`skdc.metrics.linkage_accuracy` with ten-way same-label galleries, so chance is
        0.1 and the default is chance + 0.05, the GDP paper's standard), by the attacker's
        best matcher. It is judged as column ``"NAME unlinked"``, one minus the accuracy
        (higher = more private), against ``1 - max_linkage``, jointly with the error
        targets. ``None``: linkage is not judged (nor measured).
    sensitive : int, default=None
        A column of ``X`` whose values are sensitive: each attack given by name adds column
        ``"NAME sensitive"``, the mean squared error of the column read off the
        reconstructions divided by that of the attacker's own guess (the colluders' mean of
        the column among their rows of the target row's label): below 1, the reconstructions
        tell the attacker more than it already holds.
    max_sensitive_gain : float, default=None
        The largest acceptable gain ``1 - ratio`` on ``sensitive`` (0: the reconstructions
        must predict it no better than the attacker's own guess); ``None``: measured, not
        judged.
    confidence : float, default=0.95
        Probability that a fresh deployment at the returned noise meets every target.
    n_draws : int, default=None
        Most draws per evaluated value; ``None``: the fewest with which a value can pass (19
        at 95% for ``"order"``, 59 for ``"clopper-pearson"``, 10 for ``"normal"``). More
        draws tolerate a few failing ones and make the answer less conservative.
    bounds : tuple of (float, float), default=(0.0, 1.0)
        The search range of ``param`` (``0 <= low < high``).
    xtol : float, default=None
        Stop when the bracket is at most this wide; ``None``: ``(high - low) / 32``.
    criterion : {"order", "clopper-pearson", "normal"}, default="order"
        How a value is judged (see above).
    colluder : int or list of int, default=0
        The participant(s) colluding with the analyst (named attacks).
    target : int, default=None
        The attacked participant (the one auditing its privacy); ``None``: the smallest id
        that does not collude (1, or 0 when participant 1 colludes).
    participant : array-like of int of shape (n_samples,), default=None
        The participant of each row of ``X`` (routed to the mechanism as metadata, so the
        partition reaches every draw). With ``test_data``, pass the held-out rows' ids as
        its third element. ``None``: the partition the pipeline's mechanism makes by its
        keyed hash under its ``random_state``, computed once and then kept fixed.
    redraw : {"deployment", "noise"}, default="deployment"
        What each draw redraws: ``"deployment"``, every ``random_state`` and
        ``noise_random_state`` of the pipeline (a fresh deployment); ``"noise"``, only the
        mechanisms' noise seeds (one fixed deployment, as in the papers' sweeps).
    scoring : str, callable or dict, default="balanced_accuracy"
        Utility metric(s); the first is reported.
    test_size : float, default=0.3
        Share of rows held out once (stratified), as in :func:`privacy_utility_sweep`.
    test_data : tuple, default=None
        Explicit held-out rows ``(X_test, y_test)`` or ``(X_test, y_test,
        participant_test)``; then all of ``X`` trains.
    random_state : int, RandomState instance or None, default=None
        Seeds the split and the draws.
    n_jobs : int, default=None
        Parallel draws (joblib; choose the backend with ``joblib.parallel_config``).
    batch_size : int, default=None
        Draws run together before the verdict is checked; ``None``: the number of workers
        (:func:`joblib.effective_n_jobs`). It changes how many draws a failing value runs,
        never the verdict.
    checkpoint : str or Path, default=None
        A JSON-lines file of finished draws; a rerun with the same settings reads them back
        instead of running them, so an interrupted calibration resumes where it stopped.
        Its rows depend only on the pipeline, data, attacks and seeds, so calibrations for
        other targets or confidences share it.
    progress : bool or "auto", default="auto"
        A tqdm bar over the draws with their planned total (at most ``n_draws`` per value
        the bisection can evaluate; a value decided early needs fewer), the time spent and
        an estimate; ``"auto"``: the bar when stderr is a terminal, else one line on stderr
        per value decided (and one a minute while draws run), for a log file; ``False``:
        nothing.

    Returns
    -------
    calibration : NoiseCalibration
        The value, its bracket, each decision with the draws it needed, the errors and
        utility with their intervals, every draw.

    Warns
    -----
    UserWarning
        When no value in ``bounds`` passes (``value`` is then NaN); when the calibrated
        anchor noise lies above :func:`~skdc.alignment.v_phase_transition` (eq. (51) of
        [1]_), where alignment degrades sharply and utility drops; with
        ``criterion="normal"``, when the draws are plainly not Gaussian.

    See Also
    --------
    privacy_utility_sweep : Sweeps one fixed deployment over noise values.
    audit : Calibration and a self-contained report for one participant.

    {references}

    Examples
    --------
    {example}
    >>> from skdc.audit import calibrate_noise
    >>> cal = calibrate_noise(pipe, X, y, param="align__v", attack="procrustes",
    ...                       min_error=0.2, max_linkage=None, confidence=0.9,
    ...                       bounds=(0.0, 0.4), xtol=0.05, random_state=0)
    >>> bool(cal.bracket[0] < cal.value <= cal.bracket[0] + 0.05), cal.n_draws_max
    (True, 9)
    >>> cal.binding_attack, cal.bracket_width <= 0.05
    ('procrustes', True)

    Judged by linkage (the default target, 0.15, is out of reach of these 24 rows' anchor
    noise; 0.5 is not), column ``"procrustes unlinked"`` holds one minus the accuracy:

    >>> cal = calibrate_noise(pipe, X, y, param="align__v", attack="procrustes",
    ...                       max_linkage=0.5, confidence=0.9, bounds=(0.0, 1.0), xtol=0.05,
    ...                       random_state=0)
    >>> cal.binding_attack, cal.min_error, bool(np.isfinite(cal.value))
    ('procrustes unlinked', {'procrustes unlinked': 0.5}, True)
    """
    low, high, xtol = _check_range(bounds, xtol)
    n_draws = _check_draws(n_draws, confidence, criterion)
    setup = _setup(estimator, X, y, param=param, attack=attack, colluder=colluder,
                   target=target, participant=participant, scoring=scoring,
                   test_size=test_size, test_data=test_data, n_draws=n_draws, redraw=redraw,
                   random_state=random_state, min_error=min_error, max_linkage=max_linkage,
                   sensitive=sensitive, max_sensitive_gain=max_sensitive_gain)
    targets = setup.targets
    if batch_size is None:
        from joblib import effective_n_jobs

        batch_size = max(1, int(effective_n_jobs(n_jobs)))
    # what a row depends on, by content: never the targets, the criterion or the range
    fingerprint = {"param": param, "redraw": redraw, "columns": [*setup.scoring,
                                                                  *setup.attacks],
                   "content": _content_hash(estimator, setup.attacks, setup.scoring,
                                            setup.X_train, setup.y_train, setup.test_data,
                                            setup.fit_params)}
    ck = DrawCheckpoint(checkpoint, fingerprint, _row_fields(setup.scoring, setup.attacks,
                                                             setup.errors))
    data = (setup.X_train, setup.test_data[0], setup.y_train, setup.test_data[1],
            setup.fit_params)
    with _runner(estimator, param, redraw, data, setup.scoring, setup.attacks, n_jobs, ck,
                 progress, f"calibrate {param}", n_draws * _planned_values(low, high, xtol),
                 early=True) as run:
        search = _Search(run, setup.draw_seeds, targets, setup.utility, confidence, criterion,
                         batch_size)
        search.say = f"{param} = {{:.4g}}".format
        value, bracket = _bisect(search, low, high, xtol)
    return _result(search, value, bracket, param, low, high, redraw, run.n_resumed)


def _bisect(search, low, high, xtol):
    """``(value, bracket)`` of the smallest value passing, to within ``xtol``."""
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


def _binding(summary, value, bracket, high):
    """The attack deciding the bracket: most failing draws at its failing end (ties: the
    lowest error relative to its target), else the closest to its target at ``value``."""
    fail_at = high if not np.isfinite(value) else bracket[0] if bracket[0] != value else None
    if fail_at is not None:
        s = summary[summary["value"] == fail_at]
        ratios = [_ratio(m, t) for m, t in zip(s["min"], s["target"])]
        k = np.lexsort((ratios, -s["failures"].to_numpy()))[0]  # most failures, then lowest
        return s["attack"].iloc[k]
    s = summary[summary["value"] == value]
    ratios = [_ratio(lo, t) for lo, t in zip(s["lower"], s["target"])]
    return s["attack"].iloc[int(np.argmin(ratios))]


def _result(search, value, bracket, param, low, high, redraw, n_resumed):
    import pandas as pd

    table = pd.DataFrame(search.rows)
    summary = pd.DataFrame(search.summary)
    decisions = pd.DataFrame(search.decisions)
    binding = _binding(summary, value, bracket, high)
    at = value if np.isfinite(value) else high
    rows = table[table["value"] == at]
    v_pt = float(np.nanmedian(rows[_V_PT_COLUMN])) if rows[_V_PT_COLUMN].notna().any() \
        else float("nan")
    nan2 = (float("nan"), float("nan"))
    err, interval, util, util_interval = float("nan"), nan2, float("nan"), nan2
    if np.isfinite(value):
        s = summary[(summary["value"] == value) & (summary["attack"] == binding)].iloc[0]
        err, interval = float(s["mean"]), (float(s["lower"]), float(s["upper"]))
        util, util_interval = _mean_interval(rows[search.utility], search.confidence)
    _warn(search, summary, value, binding, param, low, high, v_pt)
    return NoiseCalibration(
        value=float(value), param=param, min_error=dict(search.targets),
        confidence=float(search.confidence), attack_error=err,
        attack_error_interval=tuple(map(float, interval)), utility=util,
        utility_interval=tuple(map(float, util_interval)), utility_metric=search.utility,
        binding_attack=binding, bracket=(float(bracket[0]), float(bracket[1])),
        v_phase_transition=v_pt, table=table, summary=summary, decisions=decisions,
        criterion=search.criterion, n_draws_max=search.n, redraw=redraw,
        n_draws_resumed=int(n_resumed),
    )


def _warn(search, summary, value, binding, param, low, high, v_pt):
    """The calibration's warnings; they name the parameters (``bounds=``, ``min_error=``,
    ``confidence=``) that the command line turns into its flags."""
    if not np.isfinite(value):
        s = summary[(summary["value"] == high) & (summary["attack"] == binding)].iloc[0]
        warnings.warn(
            f"No value of {param} in [{low:.4g}, {high:.4g}] meets the targets: at "
            f"{high:.4g} {_shortfall(binding, s)}. Widen bounds=, "
            f"{_relax(binding)} or lower confidence=.", UserWarning, stacklevel=3)
    if search.criterion == "normal":
        for v, attack in summary[["value", "attack"]].itertuples(index=False):
            errs = [r[attack] for r in search.rows if r["value"] == v]
            doubt = _not_gaussian(errs)
            if doubt:
                warnings.warn(
                    f"criterion='normal' assumes Gaussian attack errors, but the {attack} "
                    f"errors at {param} = {v:.4g} are plainly not ({doubt}); its bound can "
                    "be wrong in either direction. Use criterion='order' (distribution-free).",
                    UserWarning, stacklevel=3)
                break
    if np.isfinite(value) and np.isfinite(v_pt) and param.endswith("__v") and value > v_pt:
        warnings.warn(
            f"The calibrated {param} = {value:.4g} lies above the phase-transition level "
            f"v_phase_transition = {v_pt:.4g} ({value / v_pt:.2f} x): above it the GOPP "
            "alignment degrades sharply, so the utility bought at this noise is fragile. Add "
            f"anchor rows (v_PT grows with them) or {_relax(binding)}.",
            UserWarning, stacklevel=3)
