"""The bound paper's MNIST attack reproduction (skdc.experiments._reproduce_bound), through
the command line."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from .conftest import cli

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_bound_attack_cli_digits(tmp_path, capsys):
    status, out = cli(["reproduce", "bound-attack", "--dataset", "digits", "--targets", "10",
                       "--perp-rows", "100", "--est-rows", "60", "--leakages", "0.72,500",
                       "--block-sizes", "1,16", "--out-dir", str(tmp_path)], capsys)
    assert status == 0
    assert "Table 3" in out and "Table 6" in out
    table = pd.read_csv(tmp_path / "bound-attack.csv")
    assert table[["gamma", "q"]].values.tolist() == [[0.72, 1.0], [0.72, 0.02], [500.0, 1.0],
                                                     [500.0, 0.02]]
    # the paper's Table 6 at 0.72 bits beside the measurement, Fig. 9's two decimals at 500
    assert_allclose(table["paper_rho"], [0.987, 1.006, 0.62, np.nan], rtol=0)
    assert (table["high"] >= table["low"]).all()
    # no attack beats the floor on average (the bound's claim)
    assert (table["rho"] >= table["bound"]).all()
    assert (tmp_path / "bound-attack-table3.csv").exists()
    assert (tmp_path / "bound-attack.png").exists()
