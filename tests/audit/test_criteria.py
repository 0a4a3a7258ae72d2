"""The calibration's criteria (skdc/audit/_criteria.py), each against an independent count or
closed form: the order statistic's rule, Clopper and Pearson's bound, the prediction and
mean intervals, and the per-draw margins."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from skdc.audit._criteria import (
    _allowed_failures,
    _clopper_pearson_lower,
    _draw_margin,
    _draw_meets,
    _mean_interval,
    _min_draws,
    _order_bounds,
    _prediction_bounds,
)


@pytest.mark.parametrize("n, confidence", [(19, 0.95), (59, 0.95), (100, 0.9), (39, 0.8)])
def test_order_rule_allows_the_failures_whose_bound_stays_under_the_risk(n, confidence):
    # m failures in n draws bound a fresh draw's failure probability by (m + 1) / (n + 1)
    expected = max(m for m in range(-1, n + 1) if (m + 1) / (n + 1) <= 1 - confidence + 1e-12)
    assert _allowed_failures(n, confidence, "order") == expected


def test_fewest_draws_match_the_closed_forms():
    # order rule: one failure-free draw in n bounds the risk by 1 / (n + 1) <= 5 %: n = 19
    assert _min_draws(0.95, "order") == 19
    # Clopper-Pearson with n successes: the lower bound is alpha ** (1 / n) >= 0.95
    assert _min_draws(0.95, "clopper-pearson") == math.ceil(math.log(0.05) / math.log(0.95))
    assert _min_draws(0.95, "normal") == 10


@pytest.mark.parametrize("k, n", [(5, 10), (59, 59), (90, 100)])
def test_clopper_pearson_lower_bound_leaves_alpha_above_it(k, n):
    p = _clopper_pearson_lower(k, n, 0.95)
    # at the exact lower bound, k or more successes have probability alpha = 5 %
    assert_allclose(stats.binom.sf(k - 1, n, p), 0.05, rtol=1e-9)
    assert _clopper_pearson_lower(0, n, 0.95) == 0.0


def test_clopper_pearson_failures_are_the_largest_count_that_passes():
    n, confidence = 100, 0.9
    m = _allowed_failures(n, confidence, "clopper-pearson")
    assert _clopper_pearson_lower(n - m, n, confidence) >= confidence
    assert _clopper_pearson_lower(n - m - 1, n, confidence) < confidence


def test_order_bounds_count_a_nan_draw_as_failing():
    assert _order_bounds([3.0, 1.0, np.nan, 2.0], 2) == (1.0, 3.0)
    low, high = _order_bounds([3.0, 1.0, np.nan, 2.0], 1)
    assert low == -math.inf and high == math.inf
    assert all(math.isnan(b) for b in _order_bounds([1.0, 2.0], 3))


def test_normal_prediction_bounds_follow_the_student_formula():
    x = np.array([0.61, 0.55, 0.70, 0.52, 0.66, 0.59])
    low, high = _prediction_bounds(x, 0.95, "normal")
    half = stats.t.ppf(0.95, x.size - 1) * x.std(ddof=1) * math.sqrt(1 + 1 / x.size)
    assert_allclose([low, high], [x.mean() - half, x.mean() + half], rtol=1e-12)


def test_order_prediction_bounds_are_order_statistics():
    x = np.arange(39, dtype=float)  # j = floor(40 * 0.1) = 4 at 90 %
    assert _prediction_bounds(x, 0.9, "order") == (3.0, 35.0)


def test_mean_interval_matches_scipy():
    x = [0.2, 0.4, 0.3, 0.5, np.nan]
    mean, (low, high) = _mean_interval(x, 0.9)
    finite = np.array([0.2, 0.4, 0.3, 0.5])
    expected = stats.t.interval(0.9, finite.size - 1, loc=finite.mean(), scale=stats.sem(finite))
    assert_allclose([mean, low, high], [finite.mean(), *expected], rtol=1e-12)


def test_a_draw_meets_when_every_attack_reaches_its_target():
    targets = {"procrustes": 0.5, "known_secret": 0.4}
    assert _draw_meets({"procrustes": 0.6, "known_secret": 0.4}, targets)
    assert not _draw_meets({"procrustes": 0.6, "known_secret": np.nan}, targets)
    assert_allclose(_draw_margin({"procrustes": 0.6, "known_secret": 0.3}, targets), 0.75,
                    rtol=1e-12)
    assert _draw_margin({"procrustes": np.nan, "known_secret": 0.3}, targets) == -math.inf
