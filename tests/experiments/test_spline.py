"""Tests of skdc.experiments.fit_spline_band (the noisy-anchor paper's figure captions and the
authors' reference code, as the user guide's spline_bands section describes)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skdc.experiments import SplineBand, fit_spline_band


def _truncated_power(t, coef):
    knots = np.arange(1, 6) / 6
    cols = [np.ones_like(t), t, t**2, t**3] + [np.clip(t - k, 0, None) ** 3 for k in knots]
    return np.stack(cols, axis=1) @ coef


def test_recovers_a_spline_in_its_basis():
    # A response that is exactly a cubic spline with knots at j/6 is fitted exactly, up to the
    # bias of the tiny ridge on an ill-conditioned truncated-power basis.
    rng = np.random.RandomState(0)
    coef = rng.randn(9)
    x = rng.uniform(0, 0.5, size=60)
    y = _truncated_power(x / 0.5, coef)
    band = fit_spline_band(x, y, x_range=(0, 0.5), n_boot=0)
    assert isinstance(band, SplineBand)
    assert band.grid.shape == (201,) and band.fit.shape == (201, 1)
    assert_allclose(band.grid[[0, -1]], [0.0, 0.5], rtol=0)
    assert_allclose(band.fit[:, 0], _truncated_power(np.linspace(0, 1, 201), coef),
                    rtol=1e-3, atol=1e-3)
    # and it reproduces the observations themselves
    assert_allclose(band.predict(x), y, rtol=1e-3, atol=1e-3)
    assert np.all(np.isnan(band.lower)) and np.all(np.isnan(band.upper))


def test_x_is_normalised_and_clipped():
    rng = np.random.RandomState(1)
    x = rng.uniform(0, 1, size=40)
    y = 2 * x
    band = fit_spline_band(x, y, x_range=(0, 0.5), n_boot=0)
    # x beyond x_range is clipped to 1, so the fit sees 2 * min(x, 0.5) ... except the data
    # beyond 0.5 all map to t = 1 with different y: the fit at the upper end is their mean.
    assert_allclose(band.predict(0.25), [0.5], rtol=0, atol=0.05)
    assert_allclose(band.predict([2.0]), band.predict([0.5]), rtol=1e-12)


def test_band_width_matches_least_squares_theory():
    # For y = f(x) + sigma eps, the bootstrap band of the fit at a point is close to the
    # normal-theory interval 2 * 1.96 * sigma * sqrt(g^T (D^T D)^-1 g).
    rng = np.random.RandomState(2)
    n, sigma = 400, 0.1
    x = rng.uniform(0, 1, size=n)
    y = np.sin(3 * x) + sigma * rng.randn(n)
    band = fit_spline_band(x, y, x_range=(0, 1), n_boot=2000, random_state=0)
    t = x
    knots = np.arange(1, 6) / 6
    D = np.stack([np.ones_like(t), t, t**2, t**3] + [np.clip(t - k, 0, None) ** 3
                                                        for k in knots], axis=1)
    cov = np.linalg.inv(D.T @ D)
    for k in (50, 100, 150):
        tt = band.grid[k]
        g = np.array([1, tt, tt**2, tt**3] + [max(tt - kk, 0) ** 3 for kk in knots])
        width = 2 * 1.96 * sigma * np.sqrt(g @ cov @ g)
        ratio = (band.upper[k, 0] - band.lower[k, 0]) / width
        assert 0.75 < ratio < 1.3, ratio
        assert band.lower[k, 0] < np.sin(3 * tt) < band.upper[k, 0]


def test_paired_columns_share_resamples():
    rng = np.random.RandomState(3)
    x = rng.uniform(0, 1, size=50)
    y = 1 - x + 0.05 * rng.randn(50)
    z = 0.3 * x + 0.05 * rng.randn(50)
    both = fit_spline_band(x, np.column_stack([y, z]), n_boot=300, random_state=4)
    one = fit_spline_band(x, y, n_boot=300, random_state=4)
    two = fit_spline_band(x, z, n_boot=300, random_state=4)
    assert_allclose(both.fit[:, 0], one.fit[:, 0], rtol=1e-10, atol=1e-12)
    assert_allclose(both.lower[:, 1], two.lower[:, 0], rtol=1e-10, atol=1e-12)
    assert_allclose(both.upper[:, 0], one.upper[:, 0], rtol=1e-10, atol=1e-12)


def test_reproducible_from_seed():
    rng = np.random.RandomState(5)
    x = rng.uniform(0, 1, size=30)
    y = x**2 + 0.1 * rng.randn(30)
    a = fit_spline_band(x, y, n_boot=100, random_state=7)
    b = fit_spline_band(x, y, n_boot=100, random_state=7)
    c = fit_spline_band(x, y, n_boot=100, random_state=8)
    assert_array_equal(a.lower, b.lower)
    assert not np.array_equal(a.lower, c.lower)


def test_y_range_clips_fit_and_band():
    rng = np.random.RandomState(6)
    x = rng.uniform(0, 1, size=40)
    y = 1.2 - x + 0.05 * rng.randn(40)
    band = fit_spline_band(x, y, y_range=(0.0, 1.0), n_boot=100, random_state=0)
    assert band.fit.max() <= 1.0 and band.upper.max() <= 1.0
    assert band.lower.min() >= 0.0


def test_crossing_of_a_linear_fit():
    x = np.linspace(0, 0.5, 30)
    band = fit_spline_band(x, 1 - 2 * x, x_range=(0, 0.5), n_boot=0)
    assert_allclose(band.crossing(0.5), [0.25], rtol=0, atol=1e-6)
    assert band.crossing(5.0).size == 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"x": np.arange(5.0), "y": np.arange(5.0), "n_knots": 5},
         "needs at least that many observations"),
        ({"x": np.ones(20), "y": np.arange(20.0)}, "low < high"),
        ({"x": np.arange(20.0), "y": np.arange(19.0)}, "one row per value of x"),
        ({"x": np.r_[np.arange(19.0), np.nan], "y": np.arange(20.0)}, "must be finite"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        fit_spline_band(**kwargs, n_boot=0)


# -- a spline over a few noise levels with a few draws each carries no more freedom than the
# levels do: n_knots='auto', monotone fits and resampling within levels -------------------

def _levels_sweep(seed, n_levels=8, n_draws=3):
    """A demo-like sweep: accuracy falling smoothly with the noise, plus draw noise."""
    rng = np.random.RandomState(seed)
    v = np.repeat(np.linspace(0.04, 0.3, n_levels), n_draws)
    acc = 0.95 - 0.35 / (1 + np.exp(-(v - 0.17) / 0.04)) + 0.03 * rng.randn(v.size)
    return v, acc


def _wiggle(curve):
    """How far a curve goes up and down beyond its net change (0 for a monotone curve)."""
    return np.abs(np.diff(curve)).sum() - abs(curve[-1] - curve[0])


@pytest.mark.parametrize("n_levels, knots", [(8, 0), (10, 1), (12, 2), (18, 5), (200, 5)])
def test_auto_knots_follow_the_distinct_levels(n_levels, knots):
    x = np.repeat(np.linspace(0, 1, n_levels), 3)
    band = fit_spline_band(x, np.sin(3 * x), n_boot=0)
    assert band.coef.shape == (knots + 4, 1)  # at most half as many coefficients as levels


def test_five_knots_over_eight_levels_wiggle_auto_and_monotone_do_not():
    wiggle = {"five": [], "auto": [], "monotone": []}
    for seed in range(20):
        v, acc = _levels_sweep(seed)
        wiggle["five"].append(_wiggle(fit_spline_band(v, acc, n_knots=5, n_boot=0).fit[:, 0]))
        wiggle["auto"].append(_wiggle(fit_spline_band(v, acc, n_boot=0).fit[:, 0]))
        mono = fit_spline_band(v, acc, monotone="decreasing", n_boot=0).fit[:, 0]
        assert np.all(np.diff(mono) <= 1e-12)
        wiggle["monotone"].append(_wiggle(mono))
    # the paper's five knots over eight levels follow the draw noise up and down (about 0.09
    # of accuracy on average here); the cubic "auto" chooses moves several times less, the
    # monotone fit not at all
    assert np.mean(wiggle["five"]) > 4 * np.mean(wiggle["auto"]), wiggle
    assert max(wiggle["monotone"]) < 1e-9, wiggle


def test_monotone_bands_move_one_way_and_stay_in_the_draws_range():
    v, acc = _levels_sweep(0)
    band = fit_spline_band(v, acc, monotone="decreasing", strata=v, n_boot=400,
                           random_state=0)
    for edge in (band.fit, band.lower, band.upper):
        assert np.all(np.diff(edge[:, 0]) <= 1e-12)
        assert acc.min() - 1e-12 <= edge.min() and edge.max() <= acc.max() + 1e-12
    assert np.all(band.lower <= band.fit + 1e-12) and np.all(band.fit <= band.upper + 1e-12)
    assert band.basis == "b-spline"
    assert_allclose(band.predict(band.grid), np.clip(band.predict(band.grid), acc.min(),
                                                     acc.max()), rtol=0, atol=0.05)


def test_monotone_fit_recovers_a_monotone_cubic():
    # a cubic that falls on [0, 1] is a cubic B-spline with falling coefficients: recovered
    x = np.repeat(np.linspace(0, 1, 12), 2)
    y = 1 - 0.5 * x - 0.3 * x**3
    band = fit_spline_band(x, y, monotone="decreasing", n_knots=2, n_boot=0)
    t = np.linspace(0, 1, 201)
    assert_allclose(band.fit[:, 0], 1 - 0.5 * t - 0.3 * t**3, rtol=0, atol=1e-8)
    assert_allclose(band.predict([0.25]), [1 - 0.125 - 0.3 / 64], rtol=0, atol=1e-8)


def test_paired_responses_take_one_direction_each():
    x = np.repeat(np.linspace(0, 1, 8), 3)
    rng = np.random.RandomState(1)
    y = np.column_stack([x + 0.05 * rng.randn(24), 1 - x + 0.05 * rng.randn(24)])
    band = fit_spline_band(x, y, monotone=["increasing", "decreasing"], n_boot=50,
                           random_state=0)
    assert np.all(np.diff(band.fit[:, 0]) >= -1e-12)
    assert np.all(np.diff(band.fit[:, 1]) <= 1e-12)


def test_resampling_within_levels_keeps_every_level():
    # without strata a resample can drop both draws at an end level and extrapolate freely;
    # within levels every resample keeps each level, so the end of the band stays narrow
    v, acc = _levels_sweep(3, n_levels=8, n_draws=2)
    free = fit_spline_band(v, acc, n_boot=500, random_state=0)
    within = fit_spline_band(v, acc, strata=v, n_boot=500, random_state=0)
    width = lambda b: b.upper[:, 0] - b.lower[:, 0]  # noqa: E731
    assert width(within)[-1] < width(free)[-1]
    with pytest.raises(ValueError, match="one label per observation"):
        fit_spline_band(v, acc, strata=v[:-1], n_boot=10)


def test_bad_monotone():
    x = np.linspace(0, 1, 20)
    with pytest.raises(ValueError, match="monotone must be None, 'increasing', 'decreasing'"):
        fit_spline_band(x, np.column_stack([x, x]), monotone=["up", None], n_boot=0)
