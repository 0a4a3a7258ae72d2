"""Hadamard factors and their Kronecker application: the rotation of Remark C.1 of Bourne and
Allison (arXiv:2610.13768), at the orders of App. G.2 and the LPIPS width of App. G.3."""

import numpy as np
import pytest

from skdc.privacy import (
    BlockEntropyLowerBound,
    apply_hadamard,
    hadamard,
    hadamard_factors,
    hadamard_order,
)


@pytest.mark.parametrize(
    "m, factors",
    [(784, [28, 28]), (3072, [12, 64, 4]), (12288, [12, 64, 16]), (49152, [12, 64, 64])],
)
def test_the_papers_orders_factorise(m, factors):
    assert hadamard_order(m) == m
    Fs = hadamard_factors(m)
    assert [F.shape[0] for F in Fs] == factors
    for F in Fs:  # H H^T = m I for the product iff it holds for every factor
        assert set(np.unique(F)) == {-1.0, 1.0}
        np.testing.assert_array_equal(F @ F.T, F.shape[0] * np.eye(F.shape[0]))


@pytest.mark.parametrize("order", [12, 28, 20, 784])
def test_dense_hadamard_is_orthogonal(order):
    H = hadamard(order, factors=(12, 20, 28, 28))
    np.testing.assert_array_equal(H @ H.T, order * np.eye(order))


def test_kronecker_application_matches_dense():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((5, 784))
    np.testing.assert_allclose(apply_hadamard(X, hadamard_factors(784)), X @ hadamard(784).T,
                               rtol=0, atol=1e-10)


class _AlexNetLPIPSFeatures:
    """The five ReLU taps of AlexNet's conv stack (LPIPS' layers), concatenated, random weights."""

    def __init__(self, torch):
        nn = torch.nn
        torch.manual_seed(0)
        self.torch = torch
        self.layers = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 64, 11, stride=4, padding=2), nn.ReLU()),
            nn.Sequential(nn.MaxPool2d(3, 2), nn.Conv2d(64, 192, 5, padding=2), nn.ReLU()),
            nn.Sequential(nn.MaxPool2d(3, 2), nn.Conv2d(192, 384, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.Conv2d(384, 256, 3, padding=1), nn.ReLU()),
            nn.Sequential(nn.Conv2d(256, 256, 3, padding=1), nn.ReLU()),
        ])

    def transform(self, X):
        h = self.torch.as_tensor(np.asarray(X, dtype=np.float32).reshape(-1, 3, 64, 64))
        taps = []
        with self.torch.no_grad():
            for layer in self.layers:
                h = layer(h)
                taps.append(h.flatten(1))
        return self.torch.cat(taps, 1).double().numpy()


def test_lpips_feature_count_and_padding():
    torch = pytest.importorskip("torch")
    # the paper's LPIPS representation at 64 x 64 has 31,872 features; skdc pads it to
    # 2^15 = 32768 (H64 x H64 x H8), whose block sizes up to 32 are the paper's LPIPS grid
    X = np.random.RandomState(0).uniform(0, 1, (16, 3 * 64 * 64))
    lpips = _AlexNetLPIPSFeatures(torch)
    ent = BlockEntropyLowerBound(block_sizes=[32], nu2=(1.6,), rotation="signs", n_mc=1,
                                 representation=lpips, trace=1.0, device="cpu")
    ent.fit(X)
    assert ent.n_components_ == 31872
    assert ent.padded_dim_ == 32768
    assert [F.shape[0] for F in hadamard_factors(ent.padded_dim_)] == [64, 64, 8]
    # the default grid of block sizes on that dimension (named by the error for a bad size)
    with pytest.raises(ValueError, match=r"divisors of 32768, e\.g\. \[1, 2, 4, 8, 16, 32\]\."):
        ent.set_params(block_sizes=[3]).fit(X)


def test_each_listed_factor_is_used_at_most_once():
    assert hadamard_order(144) == 192  # 12 x 12 needs H12 twice: padded to 12 x 16
    assert hadamard_order(144, factors=(12, 12)) == 144


def test_no_construction_is_an_error():
    with pytest.raises(ValueError, match="zero-pad"):
        hadamard_factors(10)
