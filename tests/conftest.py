"""Fixtures shared by the tests of several rooms (the bound in skdc.privacy, its scorers in
skdc.metrics).

The MNIST pixel entropy grid shipped with the code of Bourne and Allison, "From Pixels to
Privacy-Sensitive Features: An Information-Theoretic Framework for Reconstruction Bounds",
arXiv:2610.13768, 2026: ``(k, nu2, h_hat, h_lb)`` in bits on the unit-trace scale, at
n = 59000, |G| = 48, alpha = 0.05, t_MD = 0.13840286575 bits. The numbers live in
``tests/data/mnist_pixel_grid.csv``, one grid pair a row.
"""

import csv
from pathlib import Path

import pytest

_GRID_CSV = Path(__file__).with_name("data") / "mnist_pixel_grid.csv"


def _read_grid():
    with open(_GRID_CSV, newline="") as f:
        return [
            (int(r["k"]), float(r["nu2"]), float(r["h_hat"]), float(r["h_lb"]))
            for r in csv.DictReader(f)
        ]


@pytest.fixture(scope="session")
def mnist_pixel_grid():
    """The shipped MNIST pixel grid as records on the unit-trace scale."""
    return [{"k": k, "nu2": v, "h_hat": hh, "h_lb": hl} for k, v, hh, hl in _read_grid()]
