"""Tests of skdc.experiments.plot_noise_curves and plot_frontier."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

from skdc.experiments import (  # noqa: E402
    column_label,
    fit_spline_band,
    plot_frontier,
    plot_noise_curves,
)


@pytest.fixture
def sweep():
    rng = np.random.RandomState(0)
    frames = []
    for method, slope in (("anchor", 1.0), ("private", 2.0)):
        v = np.r_[0.0, rng.uniform(0, 0.5, 40)]
        frames.append(pd.DataFrame({
            "method": method, "value": v,
            "leak": 0.4 - 0.5 * v + 0.01 * rng.randn(41),
            "acc": 0.9 - slope * v / 2 + 0.01 * rng.randn(41),
        }))
    yield pd.concat(frames, ignore_index=True)
    plt.close("all")


def test_noise_curves_draw_fit_band_and_references(sweep):
    ax = plot_noise_curves(sweep, ["leak", "acc"], x_range=(0, 0.5), n_boot=200,
                           references={"chance": 0.1})
    # one fitted line per (method, column), plus the reference line
    assert len(ax.lines) == 5
    assert len(ax.collections) == 8  # 4 scatters + 4 bands
    labels = ax.get_legend_handles_labels()[1]
    assert "anchor leak" in labels and "chance" in labels
    # the drawn line is the spline fitted without the v = 0 control
    rows = sweep[(sweep["method"] == "anchor") & (sweep["value"] > 0)]
    band = fit_spline_band(rows["value"], rows["leak"], x_range=(0, 0.5), y_range=(0, 1),
                           n_boot=0)
    assert_allclose(ax.lines[0].get_ydata(), band.fit[:, 0], rtol=1e-12)


def test_noise_curves_with_too_few_points_draws_points_only():
    df = pd.DataFrame({"value": [0.1, 0.2, 0.3], "acc": [0.9, 0.8, 0.7]})
    ax = plot_noise_curves(df, "acc", n_boot=10)
    assert len(ax.lines) == 0 and len(ax.collections) == 1
    plt.close("all")


@pytest.mark.parametrize("fit", ["direct", "parametric", None])
def test_frontier(sweep, fit):
    fig, ax = plt.subplots()
    out = plot_frontier(sweep, "leak", "acc", fit=fit, x_range=(0, 0.5), n_boot=100, ax=ax,
                        references={"I-GDP": 0.5})
    assert out is ax
    assert ax.get_xlabel() == "leak" and ax.get_ylabel() == "acc"
    assert len(ax.lines) == (3 if fit else 1)
    if fit == "parametric":
        # the curve is (leak_fit(v), acc_fit(v)) on the noise grid
        rows = sweep[(sweep["method"] == "anchor") & (sweep["value"] > 0)]
        band = fit_spline_band(rows["value"], rows[["leak", "acc"]], x_range=(0, 0.5), n_boot=0)
        assert_allclose(ax.lines[0].get_xdata(), band.fit[:, 0], rtol=1e-12)
        assert_allclose(ax.lines[0].get_ydata(), band.fit[:, 1], rtol=1e-12)


def test_missing_columns(sweep):
    with pytest.raises(ValueError, match=r"no column\(s\) \['linkage'\]"):
        plot_frontier(sweep, "linkage", "acc")
    with pytest.raises(ValueError, match="no column"):
        plot_noise_curves(sweep, "nope")
    with pytest.raises(ValueError, match="fit must be"):
        plot_frontier(sweep, "leak", "acc", fit="loess")


# -- ranges, labels, vertical references ---------------------------------------------------

@pytest.fixture
def edge_sweep():
    """Scores pressed against their bounds: accuracy near 1 then near 0, attack error near 0.

    With few noisy draws an unclipped spline band overshoots both ends (checked below).
    """
    rng = np.random.RandomState(3)
    v = np.r_[0.0, np.sort(rng.uniform(0.01, 0.5, 14))]
    acc = np.clip(np.where(v < 0.25, 0.99, 0.01) + 0.03 * rng.randn(v.size), 0, 1)
    err = np.clip(0.002 + 0.4 * (v > 0.4) + 0.02 * rng.randn(v.size), 0, None)
    yield pd.DataFrame({"method": "AA-I-GDP", "param": "align__v", "value": v,
                        "balanced_accuracy": acc, "procrustes": err})
    plt.close("all")


def _band_vertices(ax):
    """Vertices of every filled band on ``ax`` (scatters excluded)."""
    from matplotlib.collections import PathCollection

    out = [c.get_paths()[0].vertices for c in ax.collections
           if not isinstance(c, PathCollection) and c.get_paths()]
    out += [p.get_xy() for p in ax.patches]
    return out


def test_unclipped_band_would_leave_the_range(edge_sweep):
    # the premise of the range tests: without clipping the band leaves [0, 1] and [0, inf)
    rows = edge_sweep[edge_sweep["value"] > 0]
    acc = fit_spline_band(rows["value"], rows["balanced_accuracy"], n_boot=300, random_state=0)
    err = fit_spline_band(rows["value"], rows["procrustes"], n_boot=300, random_state=0)
    assert np.nanmax(acc.upper) > 1 and np.nanmin(acc.lower) < 0
    assert np.nanmin(err.lower) < 0


@pytest.mark.parametrize("y_range", ["auto", None])
def test_noise_curve_bands_stay_in_the_metric_range(edge_sweep, y_range):
    # None is what `python -m skdc sweep` passes (several columns of different ranges): the
    # known quantities still keep their own range
    ax = plot_noise_curves(edge_sweep, ["balanced_accuracy", "procrustes"], n_boot=300,
                           y_range=y_range)
    acc_band, err_band = _band_vertices(ax)
    assert acc_band[:, 1].min() >= 0 and acc_band[:, 1].max() <= 1
    assert err_band[:, 1].min() >= 0
    acc_line, err_line = ax.lines
    assert np.all((acc_line.get_ydata() >= 0) & (acc_line.get_ydata() <= 1))
    assert np.all(err_line.get_ydata() >= 0)


@pytest.mark.parametrize("fit", ["direct", "parametric"])
def test_frontier_bands_stay_in_the_metric_range(edge_sweep, fit):
    ax = plot_frontier(edge_sweep, "procrustes", "balanced_accuracy", fit=fit, n_boot=300)
    (band,) = _band_vertices(ax)
    assert band[:, 0].min() >= 0  # attack errors are never negative
    assert band[:, 1].min() >= 0 and band[:, 1].max() <= 1


def test_unknown_columns_get_the_range_of_their_values():
    rng = np.random.RandomState(0)
    v = rng.uniform(0, 1, 15)
    df = pd.DataFrame({"value": v, "rate": np.clip(1.2 - 2 * v + 0.1 * rng.randn(15), 0, 1),
                       "gain": 1.0 - 2 * v + 0.1 * rng.randn(15)})
    ax = plot_noise_curves(df, ["rate", "gain"], n_boot=200)
    rate_band, gain_band = _band_vertices(ax)
    assert rate_band[:, 1].min() >= 0 and rate_band[:, 1].max() <= 1
    assert gain_band[:, 1].min() < 0  # a signed score is not clipped
    # an explicit per-column range wins
    ax = plot_noise_curves(df, "gain", y_range={"gain": (-0.5, 0.5)}, n_boot=200, ax=None)
    (band,) = _band_vertices(ax)
    assert band[:, 1].min() >= -0.5 and band[:, 1].max() <= 0.5
    plt.close("all")


def test_human_labels_and_title(edge_sweep):
    ax = plot_noise_curves(edge_sweep, "balanced_accuracy", n_boot=0, title="digits, OP")
    assert ax.get_xlabel() == "anchor noise v"  # from the table's param column
    assert ax.get_ylabel() == "balanced accuracy"
    assert ax.get_title() == "digits, OP"
    ax = plot_frontier(edge_sweep, "procrustes", "balanced_accuracy", n_boot=0)
    assert ax.get_xlabel() == "known-anchor (Procrustes) attack error"
    assert ax.get_ylabel() == "balanced accuracy"
    ax = plot_frontier(edge_sweep, "procrustes", "balanced_accuracy", n_boot=0,
                       xlabel="OP error", ylabel="acc", title="t")
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("OP error", "acc", "t")
    ax = plot_noise_curves(edge_sweep.assign(param="gdp__noise"), "procrustes", n_boot=0)
    assert ax.get_xlabel() == "private-data noise σ"
    ax = plot_noise_curves(edge_sweep.assign(mp=edge_sweep["procrustes"]), ["mp", "procrustes"],
                           n_boot=0)
    assert ax.get_ylabel().startswith("attack relative error")
    assert "AA-I-GDP known-anchor (Moore-Penrose) attack error" in ax.get_legend_handles_labels()[1]


def test_column_label():
    assert column_label("align__v") == "anchor noise v"
    assert column_label("gdp__noise") == "private-data noise σ"
    assert column_label("mp") == "known-anchor (Moore-Penrose) attack error"
    assert column_label("strongest_attack").startswith("strongest attack")
    assert column_label("align__gamma") == "align__gamma"  # unknown: left as it is
    two = pd.DataFrame({"param": ["align__v", "gdp__noise"], "value": [0.1, 0.2]})
    assert column_label("value", two) == "noise level"


def test_vertical_reference_label_clear_of_the_chance_line(edge_sweep):
    chance = 0.1
    ax = plot_noise_curves(edge_sweep, "balanced_accuracy", n_boot=0,
                           references={"chance": chance}, x_references={"v_PT": 0.3})
    (text,) = [t for t in ax.texts if t.get_text().strip() == "v_PT"]
    low, high = ax.get_ylim()
    y_text = text.get_position()[1]  # axes fraction
    assert abs(y_text - (chance - low) / (high - low)) > 0.15
    # and clear of the fitted curve at v_PT
    line = ax.lines[0]
    y_curve = np.interp(0.3, line.get_xdata(), line.get_ydata())
    assert abs(y_text - (y_curve - low) / (high - low)) > 0.15
    assert any(np.allclose(ln.get_xdata(), 0.3, rtol=0, atol=0) for ln in ax.lines[1:])


def test_bad_y_range(sweep):
    with pytest.raises(ValueError, match="y_range must be"):
        plot_noise_curves(sweep, "acc", y_range="clip")
