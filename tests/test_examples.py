"""Every gallery script ``examples/plot_*.py`` runs offline to the end.

Each script runs in its own interpreter with the non-interactive Agg backend, in a temporary
folder (so nothing is written into the repository), with no network needed.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("plot_*.py"))


def test_there_are_examples():
    assert EXAMPLES, f"no examples/plot_*.py under {ROOT}"


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(script, tmp_path):
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=str(ROOT), OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONWARNINGS="ignore")
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{script.name} failed:\n{proc.stderr[-3000:]}"
