"""A privacy budget too small to mean anything is refused before any work, naming the flag."""

import numpy as np
import pytest

from skdc.__main__ import main
from skdc.experiments import compare_options


@pytest.mark.parametrize("eps", ["1e-300", "1e-30", "0.0009"])
def test_tiny_epsilon_is_refused_early_in_one_line(tmp_path, capsys, eps):
    # 1e-300 reached matplotlib's log axis and failed there without naming --epsilon
    rng = np.random.RandomState(0)
    np.save(tmp_path / "X.npy", rng.rand(30, 3))
    np.save(tmp_path / "y.npy", rng.randint(2, size=30))
    status = main(["audit", "--data", str(tmp_path / "X.npy"), "--labels",
                   str(tmp_path / "y.npy"), "--participants", "3", "--compare", "gaussmix",
                   "--epsilon", eps, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert "--epsilon must be a privacy budget in [0.001, 1000]" in err and f"got {eps}" in err
    assert "Give a larger --epsilon" in err
    assert not (tmp_path / "out").exists()


def test_tiny_epsilon_is_refused_by_the_function():
    X = np.random.RandomState(0).rand(30, 3)
    with pytest.raises(ValueError, match=r"in \[0.001, 1000\] \(below, GaussMix's model"):
        compare_options(X, np.arange(30) % 2, options=["gaussmix"], epsilons=[1e-300],
                        progress=False)
