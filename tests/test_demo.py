"""The demo's frontier.png reads at a glance: accuracy panels on one scale, one
legend outside the panels that names the bands and the chance line, a caption explaining the
bands and v_PT, each sweep in one colour, and bands that never fill the whole axis."""

import os

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

pd = pytest.importorskip("pandas")

from skdc._demo import _PALETTE, _plot  # noqa: E402
from tests._fuzz import CASES  # noqa: E402

V_PT = 0.1176


def _sweeps(seed=0, n_levels=8, n_draws=3):
    """A table shaped like run_demo_sweeps' (8 levels x 3 draws per sweep)."""
    rng = np.random.RandomState(seed)
    frames = []
    for method, param, high in (("C-GDP + private noise", "gdp__noise", 0.48),
                                ("I-GDP + GOPP (anchor noise)", "align__v", 0.29)):
        value = np.repeat(np.linspace(high / n_levels, high, n_levels), n_draws)
        t = value / high
        acc = 0.95 - 0.6 * t + 0.03 * rng.randn(t.size)
        frames.append(pd.DataFrame({
            "method": method, "param": param, "value": value,
            "draw": np.tile(np.arange(n_draws), n_levels), "balanced_accuracy": acc,
            "strongest": 4 * t + 0.1 * rng.rand(t.size),
            "strongest_linkage": np.clip(0.5 * t**2 + 0.03 * rng.randn(t.size), 0, 1),
            "converged": None}))
    results = pd.concat(frames, ignore_index=True)
    results.attrs["I-GDP (unaligned)"] = 0.45
    return results


@pytest.fixture(scope="module")
def figure(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "frontier.png"
    captured = {}
    real_close = plt.close

    def keep(fig=None):  # keep the figure for inspection
        captured["fig"] = fig

    plt.close = keep
    try:
        _plot(_sweeps(), True, V_PT, out)
    finally:
        plt.close = real_close
    assert out.stat().st_size > 0
    yield captured["fig"]
    real_close(captured["fig"])


def test_accuracy_panels_share_one_scale(figure):
    axes = [ax for ax in figure.axes if ax.get_visible()]
    assert len(axes) == 3
    assert {ax.get_ylim() for ax in axes} == {(0.0, 1.0)}


def test_one_legend_outside_the_panels_names_bands_chance_and_v_pt(figure):
    assert all(ax.get_legend() is None for ax in figure.axes)  # nothing covers a line
    (legend,) = figure.legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert "chance accuracy (10 classes)" in labels and "chance" not in labels
    assert any("bootstrap band" in label for label in labels)
    assert any(label.startswith("v_PT = 0.118") for label in labels)
    caption = figure._supxlabel.get_text()  # Figure.get_supxlabel needs matplotlib 3.10
    assert "95% bootstrap bands" in caption and "v_PT = 0.118" in caption
    assert "eq. (51)" in caption


def test_x_labels_say_what_chance_means_on_their_axis(figure):
    linkage = figure.axes[0].get_xlabel()
    assert "chance 0.9" not in linkage and "a blind guess would score 0.9" in linkage
    assert figure.axes[2].get_xlabel() == "anchor noise v"


def test_each_sweep_keeps_its_colour_in_every_panel(figure):
    gopp = matplotlib.colors.to_rgb(_PALETTE["I-GDP + GOPP (anchor noise)"])
    for ax in (figure.axes[0], figure.axes[2]):
        fits = [line for line in ax.get_lines() if line.get_label() ==
                "I-GDP + GOPP (anchor noise)"]
        assert fits and matplotlib.colors.to_rgb(fits[0].get_color()) == pytest.approx(gopp)


def test_bands_never_fill_the_axis(figure):
    for ax in figure.axes:
        for band in (c for c in ax.collections if isinstance(c, PolyCollection)):
            for path in band.get_paths():
                xy = path.vertices
                # the band's height at each x: its widest vertical extent stays well inside
                heights = [np.ptp(xy[np.isclose(xy[:, 0], x), 1]) for x in np.unique(xy[:, 0])]
                assert max(heights) < 0.5, max(heights)


def test_fits_are_monotone_in_every_panel(figure):
    for ax in figure.axes:
        for line in ax.get_lines():
            x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
            if line.get_label() in _PALETTE and x.size > 10:
                order = np.argsort(x)
                assert np.all(np.diff(y[order]) <= 1e-9), line.get_label()


def test_the_figure_replaces_a_link_never_writes_through_it(tmp_path):
    """frontier.png is written through the file boundary: a link at --out is replaced."""
    CASES["output link"] += 1
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    os.symlink(victim, tmp_path / "frontier.png")
    _plot(_sweeps(), True, V_PT, tmp_path / "frontier.png")
    assert victim.read_bytes() == b"keep me"
    link = tmp_path / "frontier.png"
    assert not link.is_symlink() and link.read_bytes()[:4] == b"\x89PNG"


@pytest.fixture()
def demo_cli(monkeypatch):
    """``skdc demo`` in process, its table and sweeps replaced by the figure alone."""
    import skdc._demo as demo
    from skdc.__main__ import main

    calls = []
    monkeypatch.setattr(demo, "run_demo", lambda **kw: calls.append("table"))

    def sweeps(out, force, **kw):
        calls.append("sweeps")
        _plot(_sweeps(), True, V_PT, out, force)

    monkeypatch.setattr(demo, "run_demo_sweeps", sweeps)

    def run(*argv):
        calls.clear()
        return main(["demo", *map(str, argv)]), list(calls)

    return run


def test_a_rerun_replaces_the_demos_own_figure_and_nothing_else(demo_cli, tmp_path, capsys):
    """frontier.png is the demo's own (its PNG metadata says so): a rerun replaces it. Any
    other file at --out is refused before any work, unless --force."""
    out = tmp_path / "frontier.png"
    assert demo_cli("--out", out) == (0, ["table", "sweeps"])
    first = out.stat().st_ino
    assert demo_cli("--out", out) == (0, ["table", "sweeps"])  # its own picture: replaced
    assert out.stat().st_ino != first
    capsys.readouterr()
    # a picture the demo did not write (another program's PNG, a link to the demo's own)
    fig = plt.figure()
    other = tmp_path / "photo.png"
    fig.savefig(other)
    plt.close(fig)
    os.symlink(out, tmp_path / "link.png")
    for path in (other, tmp_path / "link.png"):
        before = os.readlink(path) if path.is_symlink() else path.read_bytes()
        assert demo_cli("--out", path) == (2, [])  # refused before any work
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{path}: --out already exists and is not a figure " \
            "the demo wrote" in err and "Pass --force" in err, err
        assert (os.readlink(path) if path.is_symlink() else path.read_bytes()) == before
        CASES["existing output without --force"] += 1
    theirs = other.read_bytes()
    assert demo_cli("--out", other, "--force") == (0, ["table", "sweeps"])
    assert other.read_bytes() != theirs
    assert demo_cli("--out", tmp_path / "link.png", "--force")[0] == 0
    assert not (tmp_path / "link.png").is_symlink() and out.is_file()
