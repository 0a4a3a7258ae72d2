"""``skdc sweep``'s figure: utility and attack error each on an axis of its own,
named after what it shows, under a title that fits the figure."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

pd = pytest.importorskip("pandas")

from skdc.experiments._cli import _plot_sweep  # noqa: E402


def _results(seed=0, n=16):
    rng = np.random.RandomState(seed)
    v = rng.uniform(0, 0.3, n)
    return pd.DataFrame({"draw": np.arange(n), "param": "align__v", "value": v,
                         "seed": rng.randint(1000, size=n),
                         "balanced_accuracy": 0.95 - v + 0.02 * rng.randn(n),
                         "procrustes": 4 * v + 0.05 * rng.randn(n),
                         "mp": 3 * v + 0.05 * rng.randn(n),
                         "n_iter": 100, "converged": True, "fixed_point_residual": 1e-9,
                         "seconds": 0.5})


def _figure(results, sweep, config, path, monkeypatch):
    captured = {}
    monkeypatch.setattr(plt, "close", lambda fig=None: captured.setdefault("fig", fig))
    _plot_sweep(results, sweep, config, path)
    assert path.stat().st_size > 0
    return captured["fig"]


def test_utility_and_attack_error_on_their_own_axes(tmp_path, monkeypatch):
    config = {"data": {"dataset": "csv", "path": "clinic_records_2024.csv"}}
    sweep = {"param": "align__v", "attacks": ["procrustes", "mp"]}
    fig = _figure(_results(), sweep, config, tmp_path / "sweep.png", monkeypatch)
    top, bottom = fig.axes
    assert top.get_ylabel() == "balanced accuracy"
    assert bottom.get_ylabel().startswith("attack relative error")
    assert "score" not in top.get_ylabel() + bottom.get_ylabel()
    assert {line.get_label() for line in top.get_lines()} == {"balanced accuracy"}
    assert {line.get_label() for line in bottom.get_lines()} == {
        "known-anchor (Procrustes) attack error", "known-anchor (Moore-Penrose) attack error"}
    # the title names the data and the attacks once, and lies inside the figure
    title = fig._suptitle.get_text()
    assert title.replace("\n", " ").startswith("clinic_records_2024: anchor noise v against")
    assert "attack error attack" not in title.replace("\n", " ")
    fig.canvas.draw()
    box = fig._suptitle.get_window_extent()
    assert box.x0 >= 0 and box.x1 <= fig.bbox.x1 and box.y1 <= fig.bbox.y1
    plt.close(fig)


def test_without_attacks_one_axis(tmp_path, monkeypatch):
    results = _results().drop(columns=["procrustes", "mp"])
    fig = _figure(results, {"param": "align__v"}, {"data": {"dataset": "digits"}},
                  tmp_path / "sweep.png", monkeypatch)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "balanced accuracy"
    assert fig._suptitle.get_text() == "digits: anchor noise v"
    plt.close(fig)
