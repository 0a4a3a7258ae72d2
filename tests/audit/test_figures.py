"""The audit's figures (skdc/audit/_figures.py) on a hand-built calibration (conftest.py): PNG
bytes of the promised size, the error axis's ends, the capped points, and each figure's axes,
labels and marks as the page promises them."""

import base64
import struct
from dataclasses import replace

import numpy as np
import pytest
from numpy.testing import assert_allclose

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skdc.audit._figures import (  # noqa: E402
    _attack_name,
    _capped,
    _error_axis,
    _png,
    figures,
    plot_calibration,
)
from skdc.audit._tables import _tables  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _figures(cal, draws, s, picture=None):
    return figures(cal, draws, _tables(cal, draws, s), s, picture)


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_a_png_is_base64_of_the_figures_size_at_100_dpi_and_closes_it():
    fig = plt.figure(figsize=(2.0, 1.5))
    data = base64.b64decode(_png(fig))
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    assert struct.unpack(">II", data[16:24]) == (200, 150)
    assert not plt.fignum_exists(fig.number)


def test_the_error_axis_is_logarithmic_when_errors_span_decades():
    assert _error_axis([]) == (False, 0.0, 1.0)
    assert _error_axis([np.nan, 0.0, -1.0]) == (False, 0.0, 1.0)  # nothing positive
    log, low, high = _error_axis([1.0, 1.5, 2.0])  # 2 < 30 x the 5th percentile: linear
    assert not log and low == 0.0
    assert_allclose(high, 1.08 * 2.0, rtol=1e-12)
    # the 5th percentile of nineteen 0.3 and one 100 is 0.3: 100 > 9, ends 10^-1 and 10^2
    assert _error_axis([0.3] * 19 + [100.0]) == (True, 0.1, 100.0)
    # an infinite error alone makes it logarithmic: 1 / 3 -> 0.1 below, 1 above
    assert _error_axis([1.0, 1.0, np.inf]) == (True, 0.1, 1.0)
    # the low end is at least 1e-6 and the high end at most a million times the low end
    assert _error_axis([1e-7] * 19 + [1e6]) == (True, 1e-6, 1.0)


def test_points_beyond_the_axis_are_drawn_at_its_ends_and_counted():
    _, ax = plt.subplots()
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    y = [0.5, 1e-5, np.nan, 1e4, 2.0]  # NaN counts as failing: at the floor
    assert _capped(ax, x, y, 1e-3, 1e3, label="draws") == 3
    inside, below, above = (c.get_offsets() for c in ax.collections)
    assert_allclose(inside, [[1.0, 0.5], [5.0, 2.0]], rtol=1e-12)
    assert_allclose(below, [[2.0, 1e-3], [3.0, 1e-3]], rtol=1e-12)
    assert_allclose(above, [[4.0, 1e3]], rtol=1e-12)
    assert [c.get_label() for c in ax.collections][0] == "draws"


def test_the_calibration_plot_shows_each_draws_worst_ratio_and_the_counts(hand_audit):
    cal, _, _ = hand_audit()
    _, ax = plt.subplots()
    assert plot_calibration(cal, ax) is ax
    assert ax.get_yscale() == "log"
    assert ax.get_xlabel() == "anchor noise v"
    assert ax.get_ylabel() == "worst judged column / its target (>= 1 meets)"
    # the failing draws, both at 0.1: draw 0 min(0.3 / 0.5, 0.5 / 0.7), draw 2
    # min(0.45 / 0.5, 0.75 / 0.7)
    fails = ax.collections[[c.get_label() for c in ax.collections].index("draw fails")]
    assert_allclose(fails.get_offsets(), [[0.1, 0.6], [0.1, 0.9]], rtol=1e-12)
    assert [t.get_text() for t in ax.texts] == ["2/4", "0/4"]  # failing / run, per value
    assert _legend(ax)[-2:] == ["recommended v = 0.2", "v_PT = 0.15"]
    assert "beyond the axis" not in ax.get_title()


def test_nothing_passing_draws_no_recommended_line(hand_audit):
    cal, _, _ = hand_audit(passes=False)
    _, ax = plt.subplots()
    plot_calibration(cal, ax)
    assert [t.get_text() for t in ax.texts] == ["2/4", "1/4"]
    assert not any(t.startswith("recommended") for t in _legend(ax))


def _picture(side):
    rng = np.random.RandomState(0)
    return {"truth": rng.rand(3, 4), "reconstruction": rng.rand(3, 4), "side": side,
            "value": 0.2, "error": 0.25, "draw": 0, "attack": "procrustes"}


def test_the_figures_are_the_curves_the_frontier_and_the_calibration(hand_audit):
    cal, draws, s = hand_audit()
    figs = _figures(cal, draws, s, _picture(side=None))
    assert set(figs) == {"curves", "frontier", "calibration"}  # rows, not images: no picture
    left, right = figs["curves"].axes
    assert left.get_xlabel() == right.get_xlabel() == "anchor noise v"
    # a linkage target: the left panel is linkage, with the target and chance
    assert left.get_ylabel() == "exact-source linkage accuracy (lower = more private)"
    assert {"target: at most 0.3", "chance 0.1"} <= set(_legend(left))
    assert right.get_ylabel() == "balanced accuracy (held-out rows)"
    mean = [line for line in right.lines if line.get_label() == "mean"][0]
    # the mean balanced accuracy at 0 (the grid's 0.90, 0.88), 0.1, 0.2 and 0.3
    assert_allclose(mean.get_ydata(), [0.89, 0.7975, 0.7425, 0.70], rtol=1e-12)
    frontier = figs["frontier"].axes[0]
    assert frontier.get_xlabel() == "Procrustes attack error (the binding attack)"
    assert frontier.get_ylabel() == "balanced accuracy (held-out rows)"
    star = [line for line in frontier.lines if line.get_marker() == "*"][0]
    # at the binding attack's lower bound at 0.2 (its smallest draw, 0.55), mean accuracy
    assert_allclose(np.asarray(star.get_data(), dtype=float).ravel(), [0.55, 0.7425],
                    rtol=1e-12)
    low, high = frontier.get_xlim()
    assert low <= 0.55 <= high
    assert figs["calibration"].axes[0].get_yscale() == "log"


def test_without_a_linkage_target_the_left_panel_is_the_error(hand_audit):
    cal, draws, s = hand_audit(max_linkage=None)
    left = _figures(cal, draws, s)["curves"].axes[0]
    assert left.get_ylabel().startswith("attack error")
    # at non-zero noise the errors run 0.3 .. 1.5 (less than 30 x apart): a linear axis
    assert left.get_yscale() == "linear"
    assert "target error 0.5" in _legend(left)


def test_a_linkage_binding_frontier_draws_the_risk(hand_audit):
    cal, draws, s = hand_audit(passes=False)
    cal = replace(cal, binding_attack="procrustes unlinked")
    frontier = _figures(cal, draws, s)["frontier"].axes[0]
    assert frontier.get_xlabel() == "Procrustes linkage accuracy (the binding attack)"
    assert frontier.get_title() == ("no noise in the range meets the targets: no "
                                    "recommended point")
    assert not [line for line in frontier.lines if line.get_marker() == "*"]
    points = frontier.collections[0].get_offsets()
    assert_allclose(points[:, 0], 1.0 - draws["procrustes unlinked"], rtol=1e-12)
    assert _legend(frontier) == [f"target: at most {1 - 0.7:.3g}"]


def test_image_rows_get_their_picture(hand_audit):
    cal, draws, s = hand_audit()
    picture = _picture(side=2)
    fig = _figures(cal, draws, s, picture)["picture"]
    assert len(fig.axes) == 2 * 3  # originals over reconstructions, three rows
    assert [ax.get_ylabel() for ax in fig.axes[::3]] == ["original", "attack"]
    assert_allclose(fig.axes[4].images[0].get_array(), picture["reconstruction"][1]
                    .reshape(2, 2), rtol=1e-12)
    assert fig._suptitle.get_text() == "Procrustes reconstruction, relative error 0.250"


def test_a_judged_columns_attack_is_its_name_less_the_suffix():
    assert _attack_name("mp unlinked") == "mp"
    assert _attack_name("known_secret sensitive") == "known_secret"
    assert _attack_name("procrustes") == "procrustes"
