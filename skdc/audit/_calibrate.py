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
import types
import warnings
from dataclasses import dataclass, field
from functools import partial
from numbers import Integral, Real

import numpy as np
from joblib import delayed
from sklearn.utils import check_random_state

from ..utils._checkpoint import DrawCheckpoint
from ..utils._docstring import _GOPP_PIPELINE_EXAMPLE, Substitution
from ..utils._draw_jobs import (
    _CONTEXTS,
    _check_param,
    _is_classification,
    _Maker,
    _parallel,
    _resolve_scoring,
    _run_draw,
    _SweepContext,
)
from ..utils._progress import stage_progress
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params

__all__ = ["NoiseCalibration", "calibrate_noise"]

_V_PT_COLUMN = "v_phase_transition"
_CRITERIA = ("order", "clopper-pearson", "normal")
_MAX_DRAWS = 100_000


class _FittedAttribute:
    """Scorer reading a fitted attribute (``v_phase_transition_``) of the first step having it."""

    def __init__(self, attr):
        self.attr = attr

    def __call__(self, estimator, X, y=None):
        for step in [estimator, *[s for _, s in getattr(estimator, "steps", [])]]:
            if hasattr(step, self.attr):
                return float(getattr(step, self.attr))
        return float("nan")


# ----------------------------------------------------------------------------- the criteria


def _allowed_failures(n, confidence, criterion):
    """The most failing draws out of ``n`` with which a value still passes (-1: none passes).

    ``"order"``: ``m`` failures bound a fresh draw's failure probability by
    ``(m + 1) / (n + 1)``; the value passes while that is at most ``1 - confidence``.
    ``"clopper-pearson"``: the exact lower confidence bound on the share meeting, at level
    ``confidence``, must reach ``confidence``. ``"normal"``: ``None`` (no count decides).
    """
    if criterion == "order":
        return math.floor((n + 1) * (1.0 - confidence) + 1e-9) - 1
    if criterion == "clopper-pearson":
        m = -1
        while m + 1 <= n and _clopper_pearson_lower(n - m - 1, n, confidence) >= confidence:
            m += 1
        return m
    return None


def _min_draws(confidence, criterion):
    """The fewest draws with which a value can pass at all (``"normal"``: its default, 10)."""
    if criterion == "normal":
        return 10
    n = 1
    while _allowed_failures(n, confidence, criterion) < 0:
        n += 1
    return n


def _clopper_pearson_lower(k, n, confidence):
    """Exact one-sided lower confidence bound, at level ``confidence``, on a binomial share
    from ``k`` successes in ``n`` trials (Clopper and Pearson, Biometrika 1934)."""
    if n == 0 or k <= 0:
        return 0.0
    from scipy import stats

    return float(stats.beta.ppf(1.0 - confidence, k, n - k + 1))


def _order_bounds(values, j):
    """The ``j``-th smallest and ``j``-th largest of ``values`` (NaN counts as failing: the
    lowest); NaN when there are fewer than ``j`` values or ``j < 1``."""
    x = np.asarray(values, dtype=np.float64)
    if j < 1 or x.size < j:
        return float("nan"), float("nan")
    s = np.sort(np.where(np.isnan(x), -np.inf, x))
    t = np.sort(np.where(np.isnan(x), np.inf, x))
    return float(s[j - 1]), float(t[x.size - j])


def _prediction_bounds(values, confidence, bound):
    """One-sided lower and upper prediction bounds of a fresh draw, at ``confidence`` each.

    ``"normal"``: ``mean -/+ t_{confidence, n-1} s sqrt(1 + 1/n)``, the prediction bound of a
    Gaussian sample (exact coverage for Gaussian draws; NaN when a draw is not finite).
    ``"order"``: the ``j``-th smallest (largest) draw, ``j = floor((n + 1)(1 - confidence))``,
    whose coverage ``(n + 1 - j) / (n + 1) >= confidence`` holds for any distribution.
    """
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if bound == "order":
        return _order_bounds(x, _allowed_failures(n, confidence, "order") + 1)
    if n < 2 or not np.all(np.isfinite(x)):
        return float("nan"), float("nan")
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


def _not_gaussian(values):
    """Why ``values`` are plainly not Gaussian (a phrase), or ``None``: a non-finite draw, or
    a Shapiro-Wilk test rejecting normality at the 1% level."""
    x = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        return "some draws are not finite"
    if x.size < 3 or np.ptp(x) == 0:
        return None
    from scipy import stats

    p = float(stats.shapiro(x).pvalue)
    skew = float(stats.skew(x))
    return f"Shapiro-Wilk p = {p:.2g}, skewness {skew:.2g}" if p < 0.01 else None


def _ratio(error, target):
    """An attack error relative to its target (1: at the target; NaN counts as failing)."""
    if math.isnan(error):
        return -math.inf
    return error / target if target > 0 else math.inf


def _draw_margin(row, targets):
    """The worst attack's error relative to its target in one draw (>= 1: the draw meets)."""
    return min(_ratio(float(row[a]), t) for a, t in targets.items())


def _draw_meets(row, targets):
    """Whether every attack's error in one draw is at or above its target (NaN: no)."""
    return all(float(row[a]) >= t for a, t in targets.items())


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
        from ._report import plot_calibration

        return plot_calibration(self, ax)


# ----------------------------------------------------------------------------- who is who


def _n_participants(estimator):
    """The mechanism's ``n_participants`` (``None`` without a mechanism)."""
    params = estimator.get_params(deep=True)
    keys = [k for k in params if k == "n_participants" or k.endswith("__n_participants")]
    return int(params[keys[0]]) if keys else None


def _resolve_target(colluder, target, n_participants):
    """The attacked participant, checked against the colluder(s) and the participants.

    The one place both :func:`calibrate_noise` and the audit resolve the roles: ``None``
    gives the smallest id that is not a colluder (1, or 0 when participant 1 colludes); the
    ids are checked by :func:`skdc.attacks.check_colluders`.

    Examples
    --------
    >>> from skdc.audit._calibrate import _resolve_target
    >>> _resolve_target(0, None, 3), _resolve_target(1, None, 3), _resolve_target([0, 1], 2, 3)
    (1, 0, 2)
    """
    from ..attacks import check_colluders

    if target is None:
        colluders = check_colluders(colluder, n_participants=n_participants)
        target = next(i for i in range(len(colluders) + 1) if i not in colluders)
        if n_participants is not None and target >= n_participants:
            raise ValueError("every participant colludes; leave one to attack.")
    check_colluders(colluder, target=target, n_participants=n_participants)
    return int(target)


def _check_ids(ids, n_rows, n_participants, what):
    """Participant ids of ``n_rows`` rows as an int array, each in ``0 .. n - 1``."""
    ids = np.asarray(ids)
    if ids.shape != (n_rows,) or ids.dtype.kind not in "iu":
        raise ValueError(f"{what} must hold one integer participant id per row ({n_rows}); "
                         f"got shape {ids.shape}, dtype {ids.dtype}.")
    if ids.size and (ids.min() < 0 or (n_participants is not None
                                       and ids.max() >= n_participants)):
        top = "" if n_participants is None else f" .. {n_participants - 1}"
        raise ValueError(f"{what} must hold ids 0{top}; got ids from {ids.min()} to "
                         f"{ids.max()}.")
    return ids.astype(np.int64)


def _fixed_partition(estimator, X_train, y_train, X_test):
    """``(ids of the training rows, ids of the held-out rows)`` as the pipeline's own
    mechanism assigns them (its keyed hash under its ``random_state``), computed once so that
    a draw redrawing the mechanism's seeds keeps the partition; ``(None, None)`` without a
    mechanism step."""
    from sklearn.base import clone

    from ..mechanisms import BaseMechanism

    steps = getattr(estimator, "steps", None)
    if steps is None:
        return None, None
    k = next((j for j, (_, s) in enumerate(steps) if isinstance(s, BaseMechanism)), None)
    if k is None:
        return None, None
    X_tr, X_te = X_train, X_test
    for _, step in steps[:k]:
        if step is None or step == "passthrough":
            continue
        step = clone(step)
        X_tr = step.fit_transform(X_tr, y_train)
        X_te = step.transform(X_te)
    mech = clone(steps[k][1]).fit(X_tr)
    return (np.asarray(mech.transform(X_tr).participant),
            np.asarray(mech.transform(X_te).participant))


# ----------------------------------------------------------------------------- attacks, targets


def _attack_scorers(attack, colluder, target, test_participant=None):
    """Attack scorers as ``{name: scorer}``; names through ``make_attack_scorer`` built with
    ``colluder`` and ``target``. With ``test_participant``, the named attacks read the
    held-out rows' participants from it (the fixed partition), not from the mechanism."""
    if isinstance(attack, str) or callable(attack):
        attack = [attack]
    if isinstance(attack, dict):
        items = list(attack.items())
    else:
        items = [(a if isinstance(a, str) else getattr(a, "__name__", None), a)
                 for a in attack]
    if not items:
        raise ValueError("attack is empty; pass at least one attack name or scorer.")
    out = {}
    for k, (name, a) in enumerate(items):
        if isinstance(a, str):
            from ..metrics import make_attack_scorer

            a = make_attack_scorer(a, colluder=colluder, target=target)
            if test_participant is not None:
                a = partial(a, participant=test_participant)
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


# The default linkage target: exact-source linkage at most chance (0.1 with ten-way
# galleries) + 0.05, the GDP paper's standard (its MNIST headline at 12.4 % linkage)
_MAX_LINKAGE = 0.15
_UNLINKED = " unlinked"  # column of 1 - linkage accuracy (higher = more private)
_SENSITIVE = " sensitive"  # column of the sensitive column's error ratio (see _Sensitive)


def _attack_of(column):
    """The attack behind a judged column (``"mp unlinked"`` -> ``"mp"``)."""
    for suffix in (_UNLINKED, _SENSITIVE):
        if column.endswith(suffix):
            return column[:-len(suffix)]
    return column


def _linkage_params():
    """The attacker's matcher of exact-source linkage, defined once for the calibration, the
    audit and the comparison: the best of the matchers :mod:`skdc.metrics` offers
    (``matcher="best"``: Euclidean, cosine, PCA embedding and Mahalanobis under the
    colluder's covariance; not the CNN auditor, which is for images), its expected accuracy
    over every ten-way gallery (``galleries='all'``: exact, so no gallery draw adds noise to
    a deployment's linkage); on a target of more than 2,000 rows, 2,000 of them query, the
    same ones in every draw (``random_state=0``), so the cost stays linear in the rows."""
    return {"matcher": "best", "auditor": "pca", "galleries": "all", "random_state": 0}


def _named(attack):
    """``{column: attack name}`` of the attacks given by name (a scorer callable has no
    reconstruction to link or read a column from)."""
    if isinstance(attack, str):
        return {attack: attack}
    if isinstance(attack, dict):
        return {k: a for k, a in attack.items() if isinstance(a, str)}
    if callable(attack):
        return {}
    return {a: a for a in attack if isinstance(a, str)}


class _Sensitive:
    """How much worse than the attacker's own guess the reconstructions predict a sensitive
    column (higher = more private): ``MSE(reconstruction) / MSE(prior guess)``, the prior
    guess of a target row being the mean of the column over the colluders' rows of its label
    (the labels reach the analyst in every option; the colluders' rows are the attacker's
    own). 1 - this ratio is how much better the attacker predicts the column from the
    reconstructions than from what it already holds (at most 1: an exact reconstruction);
    the ratio is capped at 1e6."""

    def __init__(self, attack, column, colluder, target, participant=None):
        self.attack, self.column = attack, int(column)
        self.colluder, self.target, self.participant = colluder, target, participant

    def __call__(self, estimator, X, y=None):
        from ..attacks import collusion_view
        from ..metrics import make_attack

        view = collusion_view(estimator, X, colluder=self.colluder, target=self.target,
                              participant=self.participant)
        rec = make_attack(self.attack).reconstruct(view)
        j = self.column
        y = None if y is None else np.asarray(y)
        prior = _prior_guess(view.colluder_X_input[:, j],
                             None if y is None else y[view.colluder_rows],
                             None if y is None else y[view.target_rows],
                             len(view.target_rows))
        return _error_ratio(view.truth.X[:, j], rec.X[:, j], prior)


def _prior_guess(x_colluder, y_colluder, y_target, n_target):
    """The attacker's guess of a column without the reconstructions: the colluders' mean of
    it among their rows of the target row's label (their overall mean for a label they lack,
    or without labels)."""
    overall = float(np.mean(x_colluder)) if x_colluder.size else 0.0
    guess = np.full(n_target, overall)
    if y_colluder is None or y_target is None:
        return guess
    for label in np.unique(y_target):
        own = y_colluder == label
        if own.any():
            guess[y_target == label] = float(np.mean(x_colluder[own]))
    return guess


def _error_ratio(truth, guess, prior):
    """``MSE(guess) / MSE(prior)`` of a column (1 when both are exact; at most 1e6; a NaN
    guess counts as exact, failing the target as NaN errors do)."""
    mse = float(np.mean((np.asarray(truth) - np.asarray(guess)) ** 2))
    base = float(np.mean((np.asarray(truth) - np.asarray(prior)) ** 2))
    if math.isnan(mse):
        return 0.0
    if base <= 0.0:
        return 1.0 if mse <= 0.0 else 1e6
    return float(min(mse / base, 1e6))


def _judged(attack, colluder, target, test_participant, min_error, max_linkage, sensitive,
            max_sensitive_gain, n_features=None):
    """``(attacks, targets, errors)``: every column a draw scores (each attack's relative
    error; for the attacks given by name, ``"NAME unlinked"``, one minus its exact-source
    linkage accuracy, when ``max_linkage`` is given, and ``"NAME sensitive"``, the error
    ratio of the sensitive column, when ``sensitive`` is), the target of each judged column
    (higher is more private: 1 - ``max_linkage``, 1 - ``max_sensitive_gain``) and the names
    of the relative-error columns."""
    from ..metrics import make_attack_scorer

    attacks = _attack_scorers(attack, colluder, target, test_participant)
    named = _named(attack)
    targets = {} if min_error is None else _targets(min_error, list(attacks))
    if max_linkage is not None:
        if not named:
            if min_error is None:
                raise ValueError("max_linkage= judges the attacks given by name; the attacks "
                                 "are scorer callables. Name them, or give min_error=.")
        link = _linkage_params()
        for col, name in named.items():
            s = make_attack_scorer(name, metric="linkage", colluder=colluder, target=target,
                                   metric_params=link)
            if test_participant is not None:
                s = partial(s, participant=test_participant)
            attacks[col + _UNLINKED] = s
            targets[col + _UNLINKED] = 1.0 - float(max_linkage)
    if sensitive is not None:
        if isinstance(sensitive, bool) or not isinstance(sensitive, Integral) or not (
                0 <= sensitive < (n_features if n_features is not None else sensitive + 1)):
            raise ValueError(f"sensitive must be a column index from 0 to {n_features - 1}; "
                             f"got {sensitive!r}.")
        for col, name in named.items():
            attacks[col + _SENSITIVE] = _Sensitive(name, sensitive, colluder, target,
                                                   test_participant)
            if max_sensitive_gain is not None:
                targets[col + _SENSITIVE] = 1.0 - float(max_sensitive_gain)
    elif max_sensitive_gain is not None:
        raise ValueError("max_sensitive_gain= is a target for the sensitive column; name it "
                         "with sensitive=.")
    if not targets:
        raise ValueError("Nothing is judged: give a linkage target (max_linkage=) or an error "
                         "target (min_error=).")
    return attacks, targets, list(named)


def _targets(min_error, names):
    """One target error per attack: finite and not negative (an error is a distance)."""
    if isinstance(min_error, dict):
        unknown = sorted(set(min_error) - set(names))
        lacking = [n for n in names if n not in min_error]
        if unknown or lacking:
            raise ValueError(
                f"min_error names the attacks {sorted(min_error)}, the attacks are "
                f"{list(names)}; give one target per attack (or one float for all)."
            )
        targets = dict(min_error)
    else:
        targets = dict.fromkeys(names, min_error)
    for name, t in targets.items():
        if not isinstance(t, (Real, np.floating)) or isinstance(t, (bool, np.bool_)):
            raise TypeError(f"min_error must be a float or a dict {{attack: float}}; got "
                            f"{t!r} for {name}.")
        if not (math.isfinite(t) and t >= 0):
            raise ValueError(f"min_error must be a finite error >= 0 (an attack error is a "
                             f"distance); got {t!r} for {name}.")
    return {n: float(t) for n, t in targets.items()}


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
    >>> from skdc.audit._calibrate import _column_kind
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
    >>> from skdc.audit._calibrate import _planned_values
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


def _split_rows(X, y, participant, test_size, test_data, rng):
    """``(X_tr, y_tr, X_te, y_te, p_tr, p_te)``: ``test_data`` as given, else one split drawn
    from ``rng`` (stratified on a classification ``y``), the ids split alongside."""
    from sklearn.model_selection import train_test_split

    if test_data is not None:
        if len(test_data) not in (2, 3):
            raise ValueError("test_data must be (X_test, y_test) or (X_test, y_test, "
                             f"participant_test); got a tuple of {len(test_data)}.")
        X_te, y_te, p_te = (*test_data, None)[:3]
        if participant is not None and p_te is None:
            raise ValueError("participant= gives the training rows' ids; with test_data pass "
                             "the held-out rows' ids too: test_data=(X_test, y_test, "
                             "participant_test).")
        return X, y, X_te, y_te, participant, p_te
    arrays = [X] + ([] if y is None else [y]) + ([] if participant is None else [participant])
    stratify = y if y is not None and _is_classification(y) else None
    parts = train_test_split(*arrays, test_size=test_size, stratify=stratify,
                             random_state=rng.randint(2**31 - 1))
    X_tr, X_te = parts[0], parts[1]
    y_tr, y_te = (parts[2], parts[3]) if y is not None else (None, None)
    p_tr, p_te = (parts[-2], parts[-1]) if participant is not None else (None, None)
    return X_tr, y_tr, X_te, y_te, p_tr, p_te


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
    X_tr, y_tr, X_te, y_te, p_tr, p_te = _split_rows(X, y, participant, test_size, test_data,
                                                     rng)
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


def _shortfall(column, s):
    """What a judged column misses at one value, in words, from its summary row ``s``."""
    if column.endswith(_UNLINKED):
        return (f"the {column[:-len(_UNLINKED)]} attack links more than "
                f"{1 - s['target']:.4g} of the rows in {s['failures']} of {s['n_draws']} "
                f"draws (median linkage {1 - s['median']:.4g})")
    if column.endswith(_SENSITIVE):
        return (f"the {column[:-len(_SENSITIVE)]} attack predicts the sensitive column "
                f"better than allowed (gain above {1 - s['target']:.4g}) in {s['failures']} "
                f"of {s['n_draws']} draws (median gain {1 - s['median']:.4g})")
    return (f"the {column} attack stays below {s['target']:.4g} in {s['failures']} of "
            f"{s['n_draws']} draws (median error {s['median']:.4g})")


def _relax(column):
    """The parameter that relaxes a column's target (its name, as the warnings print it)."""
    if column.endswith(_UNLINKED):
        return "raise max_linkage="
    if column.endswith(_SENSITIVE):
        return "raise max_sensitive_gain="
    return "lower min_error="


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
