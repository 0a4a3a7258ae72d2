"""The README's instructions work as written.

- The deployment walk-through ("Deploying across organisations") is copy-paste runnable: its
  bash blocks run top to bottom in an empty folder, with the upload step run by two
  participants, each on its own rows of scikit-learn's digits.
- The wheel the README tells users to build holds the whole package, importable from the wheel
  alone, under the file name the README gives.
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
N_PARTICIPANTS = 2


def _section(title):
    """The text of the README's ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, flags=re.M | re.S)
    assert match, f"README.md has no section '## {title}'"
    return match.group(1)


def _bash_blocks(text):
    """The ```bash blocks of ``text``, dedented (blocks inside list items are indented)."""
    blocks = re.findall(r"^([ \t]*)```bash\n(.*?)^[ \t]*```", text, flags=re.M | re.S)
    return [textwrap.dedent(body) for _, body in blocks]


def _env():
    return dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg", OPENBLAS_NUM_THREADS="1",
                OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))


def _run(block, cwd):
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (
        f"README block failed (exit {proc.returncode}):\n{block}\n"
        f"stdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    )
    return proc.stdout


def test_deployment_walkthrough_runs_as_written(tmp_path):
    blocks = _bash_blocks(_section("Deploying across organisations"))
    assert [b for b in blocks if "participant upload" in b], "no upload step in the README"
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_new, y_new = X[-60:], y[-60:]
    np.save(tmp_path / "X_new.npy", X_new)
    rows = np.array_split(np.arange(600), N_PARTICIPANTS)
    for block in blocks:
        if "participant upload" not in block:
            _run(block, tmp_path)
            continue
        assert "--id 0" in block and "_0.npz" in block, block
        for i, own in enumerate(rows):
            # participant i at home: its own rows, its own id and file names
            np.save(tmp_path / "X.npy", X[own])
            np.save(tmp_path / "y.npy", y[own])
            _run(block.replace("--id 0", f"--id {i}").replace("_0.npz", f"_{i}.npz"),
                 tmp_path)
    assert sorted(p.name for p in (tmp_path / "uploads").iterdir()) == [
        f"upload_{i}.npz" for i in range(N_PARTICIPANTS)]
    assert {f"map_{i}.npz" for i in range(N_PARTICIPANTS)} <= {
        p.name for p in (tmp_path / "model").iterdir()}
    y_pred = np.load(tmp_path / "y_pred.npy")
    assert y_pred.shape == y_new.shape
    # 600 training rows of digits, aligned through a lightly noisy anchor: a usable model
    assert np.mean(y_pred == y_new) > 0.8


def test_readme_wheel_holds_the_package(tmp_path):
    # the README's build command, run on a copy of the sources (nothing is written into the
    # repository); the build backend is the one installed here (no build isolation, offline)
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.cfg", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "skdc", src / "skdc",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    assert "pip wheel --no-deps -w dist ." in README
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "--no-index", "-q", "-w", "dist", "."],
                          cwd=src, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = (src / "dist").glob("*.whl")
    assert f"dist/{wheel.name}" in README, (
        f"the README names another wheel than the build makes ({wheel.name})")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        entry_points = next(zf.read(n).decode() for n in names
                            if n.endswith(".dist-info/entry_points.txt"))
        zf.extractall(tmp_path / "site")
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "skdc").rglob("*.py")}
    assert sources <= names, f"missing from the wheel: {sorted(sources - names)[:5]}"
    assert not any(n.startswith(("tests/", "examples/", "docs/")) for n in names)
    assert re.search(r"^skdc = skdc\.__main__:main$", entry_points, flags=re.M)
    # the wheel alone is an importable package
    proc = subprocess.run([sys.executable, "-c", "import skdc; print(skdc.__file__)"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(tmp_path / "site")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert Path(proc.stdout.strip()).is_relative_to(tmp_path / "site")

