"""Tests of skdc.experiments.plot_noise_curves and plot_frontier."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

from skdc.experiments import fit_spline_band, plot_frontier, plot_noise_curves  # noqa: E402


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
