"""The GDP paper's solver convergence counts (skdc.experiments._reproduce_gdp)."""

import pandas as pd
import pytest
from numpy.testing import assert_allclose

from skdc.experiments import reproduce_gopp_convergence

from .conftest import cli

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_gopp_convergence_cli(tmp_path, capsys):
    status, out = cli(["reproduce", "gopp-convergence", "--draws", "3", "--v-max", "0.02",
                       "--features", "4", "--anchors", "16", "--out-dir", str(tmp_path)],
                       capsys)
    assert status == 0 and "Fig. 4(b)" in out
    table = pd.read_csv(tmp_path / "gopp-convergence.csv")
    assert table[["p", "draws", "converged"]].values.tolist() == [[10, 3, 3]]
    draws = pd.read_csv(tmp_path / "gopp-convergence-draws.csv")
    assert len(draws) == 3 and draws["converged"].all()


def test_gopp_convergence_paper_numbers_only_at_paper_sizes():
    rep = reproduce_gopp_convergence("participants", n_draws=2, v_max=0.01,
                                     n_participants=[2, 3], n_features=3, n_anchors=12,
                                     progress=False)
    assert rep.table["paper_converged"].isna().all()  # other sizes: nothing to compare
    # draws are paired across participant counts (Fig. 11 of the GDP paper)
    draws = rep.extra_tables["draws"]
    assert_allclose(draws[draws["p"] == 2]["v"].to_numpy(), draws[draws["p"] == 3]["v"],
                    rtol=0)
