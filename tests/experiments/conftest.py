"""Fixtures and helpers shared by the experiments' tests."""

import gzip
import struct

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from skdc.__main__ import main


@pytest.fixture
def one_blas_thread():
    """One BLAS thread, as the reproductions' draws run: the same numbers on any machine."""
    with threadpool_limits(limits=1):
        yield


def cli(argv, capsys):
    """``skdc ARGV`` in process: ``(status, stdout)``."""
    status = main(argv)
    return status, capsys.readouterr().out


def run_cli(argv, capsys):
    """``skdc ARGV`` in process: ``(status, stdout, stderr)``."""
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def _write_idx(path, arr):
    header = bytes([0, 0, 8, arr.ndim]) + b"".join(struct.pack(">i", s) for s in arr.shape)
    with gzip.open(path, "wb") as f:
        f.write(header + arr.astype(np.uint8).tobytes())


@pytest.fixture(scope="module")
def mnist_dir(tmp_path_factory):
    """Tiny MNIST-format IDX files: class k lights a bar at rows 2k..2k+5."""
    rng = np.random.RandomState(0)
    path = tmp_path_factory.mktemp("mnist")
    for split, n in (("train", 150), ("t10k", 60)):
        y = np.arange(n) % 10
        X = (rng.rand(n, 28, 28) * 60).astype(np.uint8)
        for k in range(10):
            X[y == k, 2 * k:2 * k + 6, 5:20] = 200
        _write_idx(path / f"{split}-images-idx3-ubyte.gz", X)
        _write_idx(path / f"{split}-labels-idx1-ubyte.gz", y)
    return path
