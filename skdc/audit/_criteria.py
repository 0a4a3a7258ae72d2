"""The criteria that judge a noise value from its draws: how many failing draws a value may
have (the order statistic's distribution-free rule, Clopper-Pearson), the prediction and
mean intervals of the errors, and how far a draw is from the targets."""

# Licence: BSD 3 clause

import math

import numpy as np

_CRITERIA = ("order", "clopper-pearson", "normal")
_MAX_DRAWS = 100_000
_UNLINKED = " unlinked"  # column of 1 - linkage accuracy (higher = more private)
_SENSITIVE = " sensitive"  # column of the sensitive column's error ratio (see _Sensitive)


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
