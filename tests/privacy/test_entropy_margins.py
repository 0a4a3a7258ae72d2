"""The margins of the block entropy lower bound of Bourne and Allison (arXiv:2610.13768): the
sampling margin of Proposition 5.1 at the estimation-sample sizes of Table 3 and of the shipped
MNIST grid, the Monte Carlo margin and its constant (eq. 33, App. E), and the trace upper
confidence bound (App. G.2)."""

import math

import numpy as np
import pytest

from skdc.privacy import mc_constant, mc_margin, sampling_margin, trace_ucb


@pytest.mark.parametrize(
    "n, n_pairs, expected",
    [(59000, 48, 0.13840), (49000, 60, 0.15171), (44000, 60, 0.15864), (10000, 60, 0.29059),
     (59000, 36, 0.13574)],
)
def test_sampling_margin(n, n_pairs, expected):
    assert sampling_margin(n, n_pairs, 0.025) == pytest.approx(expected, abs=6e-6)


def test_sampling_margin_of_the_shipped_mnist_grid():
    assert sampling_margin(59000, 48, 0.025) == pytest.approx(0.13840286575, rel=1e-9)


def test_mc_margin():
    assert mc_margin(195.5515, 784, 59000, 2, 48, 0.025) == pytest.approx(0.091885, abs=6e-7)
    assert mc_margin(1491.329, 28, 59000, 28, 48, 0.025) == pytest.approx(0.358851, abs=6e-7)


def test_mc_constant_eq33():
    assert mc_constant(1, math.sqrt(0.2), 1.0) == pytest.approx(195.68, abs=5e-3)
    assert mc_constant(1, math.sqrt(0.2), 0.9985) < 195.68


def test_trace_ucb_covers_the_trace():
    rng = np.random.RandomState(0)
    Z = rng.uniform(0, 1, size=(2000, 5))
    ucb = trace_ucb(Z, diameter_sq=5.0, delta=0.05, random_state=0)
    assert 5 / 12 < ucb < 5 / 12 * 1.5
    with pytest.raises(ValueError, match="not an upper bound"):
        trace_ucb(Z, diameter_sq=0.1)
