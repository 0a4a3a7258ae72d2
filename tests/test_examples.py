"""Every gallery script ``examples/plot_*.py`` runs offline to the end and makes its figures.

Each script runs in its own interpreter with the non-interactive Agg backend, in a temporary
folder (so nothing is written into the repository), with no network needed, and at the small
size the examples take under ``SKDC_EXAMPLE_SIZE=small`` (the gallery runs the full size).
``plt.show()`` is replaced by a recorder that saves the figures it would show, as
sphinx-gallery captures them: every call must show at least one figure with something drawn
in it, and no figure may be left unshown at the end.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))

# Runs one example with plt.show() recording instead of showing; writes figures.json.
_RUNNER = r"""
import json, runpy, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

shows, figures = [], []


def _describe(fig, tag):
    path = f"figure_{len(figures)}.png"
    fig.savefig(path, dpi=40)
    axes = [{"lines": len(ax.lines), "collections": len(ax.collections),
             "images": len(ax.images), "patches": len(ax.patches)} for ax in fig.axes]
    figures.append({"tag": tag, "path": path, "axes": axes})


def _show(*args, **kwargs):
    nums = plt.get_fignums()
    shows.append(len(nums))
    for num in nums:
        _describe(plt.figure(num), "shown")
    plt.close("all")  # an interactive show returns once its windows are closed


plt.show = _show
runpy.run_path(sys.argv[1], run_name="__main__")
for num in plt.get_fignums():
    _describe(plt.figure(num), "never shown")
with open("figures.json", "w") as fh:
    json.dump({"shows": shows, "figures": figures}, fh)
"""


def test_there_are_examples():
    assert EXAMPLES, f"no examples/plot_*.py under {ROOT}"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_makes_its_figures(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore",
               SKDC_EXAMPLE_SIZE="small")
    proc = subprocess.run([sys.executable, "-c", _RUNNER, str(script)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stderr[-3000:]}"
    record = json.loads((tmp_path / "figures.json").read_text())
    n_calls = len(re.findall(r"^plt\.show\(\)", script.read_text(), flags=re.M))
    assert n_calls >= 1, f"{script.name} never calls plt.show()"
    assert len(record["shows"]) == n_calls, f"{script.name}: plt.show() was not reached"
    assert all(k >= 1 for k in record["shows"]), f"{script.name}: a plt.show() showed nothing"
    unshown = [f for f in record["figures"] if f["tag"] == "never shown"]
    assert not unshown, f"{script.name}: {len(unshown)} figure(s) made after the last show"
    for fig in record["figures"]:
        assert (tmp_path / fig["path"]).stat().st_size > 0
        drawn = [ax for ax in fig["axes"] if any(ax.values())]
        assert drawn, f"{script.name}: a figure with nothing drawn in it"
