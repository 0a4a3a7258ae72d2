"""The GaussMix paper's Figures 1, 2 and 4 (skdc.experiments._reproduce_gaussmix)."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from skdc.experiments import reproduce_gaussmix_noise, reproduce_gaussmix_regression

from .conftest import cli

pytestmark = pytest.mark.usefixtures("one_blas_thread")


def test_gaussmix_noise_matches_lemma_1_and_sheffet():
    rep = reproduce_gaussmix_noise(k_values=[25], epsilons=[1.0])
    row = rep.table.iloc[0]
    # Lemma 1 + the improved conversion and Sheffet's w^2 at k = 25, eps = 1, delta = 1e-6
    assert_allclose([row["gaussmix_scale"], row["sheffet_scale"]], [24.412, 239.925],
                    rtol=1e-4)


def test_gaussmix_cli(tmp_path, capsys):
    status, out = cli(["reproduce", "gaussmix-noise", "--out-dir", str(tmp_path)], capsys)
    assert status == 0 and "Fig. 1" in out
    assert len(pd.read_csv(tmp_path / "gaussmix-noise.csv")) == 26


def test_gaussmix_regression_x_only_is_what_helps():
    """On well-conditioned data whose labels fit well, lambda_min of the sketched [X, y] is
    small, so the private Linear Mixing adds the full noise; reading lambda_min(X^T X)
    instead (the authors' code) drops it, and only then does Linear Mixing beat AdaSSP."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((4000, 5))
    y = X @ rng.standard_normal(5) + 0.01 * rng.standard_normal(4000)
    rep = reproduce_gaussmix_regression({"synthetic": (X, y)}, epsilons=[1.0], n_repeats=3,
                                        progress=False)
    mse = rep.table.set_index("method")["mse"]
    assert mse["Linear Mixing, lambda_min of X only"] < mse["AdaSSP"] < mse["Linear Mixing"]
    scales = rep.details["scales"].iloc[0]
    assert scales["lambda_min_Xy"] < scales["gamma"] < scales["lambda_min_X"]


def test_gaussmix_regression_cli(tmp_path, capsys, monkeypatch):
    from sklearn.datasets import load_diabetes

    from skdc.experiments import _cli_papers

    monkeypatch.setattr(_cli_papers, "_regression_datasets",
                        lambda: {"diabetes": load_diabetes(return_X_y=True)})
    status, out = cli(["reproduce", "gaussmix-regression", "--repeats", "2", "--out-dir",
                       str(tmp_path)], capsys)
    assert status == 0 and "diabetes" in out
    table = pd.read_csv(tmp_path / "gaussmix-regression.csv")
    assert set(table["method"]) == {"Linear Mixing", "AdaSSP", "Sheffet", "OLS (not private)",
                                    "Linear Mixing, lambda_min of X only"}
    assert len(table) == 5 * 5
