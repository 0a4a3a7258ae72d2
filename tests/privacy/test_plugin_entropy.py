"""The plug-in entropy of Bourne and Allison (arXiv:2610.13768, eq. 11 and 31; Goldfeld et al.,
2020) on a source of known entropy, and its kernels: the own-centre-shifted NumPy kernel equals
the printed max-shifted formula whatever the threads and chunks, falls back to the row maximum
where exp could overflow, and the torch kernel (run here on the CPU) computes the same."""

import math

import numpy as np
import pytest

from skdc.privacy import mc_constant, mc_margin, plugin_entropy, sampling_margin


def test_plugin_entropy_of_a_one_dimensional_gaussian():
    truth = 0.5 * math.log2(2 * math.pi * math.e * 1.25)
    assert truth == pytest.approx(2.2081, abs=1e-4)
    estimates = []
    for seed in range(16):
        c = np.random.RandomState(seed).standard_normal((2000, 1))
        estimates.append(plugin_entropy(c, 0.5, 4, random_state=seed))
    # One estimate moves by about 0.024 bits from sample to sample (most of it the n = 2000
    # sample, not the Monte Carlo), so "2.208 +- 0.01" is a statement about the estimator's
    # mean: the mean of 16 independent estimates (standard error ~0.006) lies within 0.01.
    assert np.mean(estimates) == pytest.approx(truth, abs=0.01)
    assert max(estimates) < truth + 0.07
    # m_hat = E c^2 = 1 for the N(0, 1) source
    t_mc = mc_margin(mc_constant(1, 0.5, 1.0), 1, 2000, 4, 1, 0.025)
    assert t_mc == pytest.approx(1.31, abs=0.01)
    assert sampling_margin(2000, 1, 0.025) == pytest.approx(0.377, abs=1e-3)


def test_torch_kernel_agrees_with_numpy():
    """The GPU code path (run here on the CPU) estimates the same entropies."""
    torch = pytest.importorskip("torch")
    from skdc.privacy._plugin_entropy import _block_entropies_numpy, _block_entropies_torch

    rng = np.random.RandomState(0)
    C = rng.standard_normal((3, 300, 1))
    h_np = _block_entropies_numpy(C, 0.5, 64, [0, 0, 0])
    h_t = _block_entropies_torch(C, 0.5, 64, [0, 0, 0], "cpu", budget=2**20)
    np.testing.assert_allclose(h_t, h_np, rtol=0, atol=0.05)
    assert torch.get_default_dtype() == torch.float32  # the kernel forces float64 itself


def _printed_block_entropies(C, s, n_mc, seed):
    """Eq. 11 and 31 as printed: max-shifted log-sum-exp over all centres, one block at a time,
    with the kernel's dither stream (block b draws from default_rng([*seed, b]))."""
    from scipy.special import logsumexp

    out = []
    for b, c in enumerate(C):
        n, k = c.shape
        W = s * np.random.default_rng([*seed, b]).standard_normal((n * n_mc, k))
        P = np.repeat(c, n_mc, axis=0) + W
        logits = P @ c.T / s**2 - np.sum(c * c, axis=1) / (2 * s**2)
        lf = (-math.log(n) - 0.5 * k * math.log(2 * math.pi * s**2)
              - np.sum(P * P, axis=1) / (2 * s**2) + logsumexp(logits, axis=1))
        out.append(-lf.mean() / math.log(2))
    return np.array(out)


@pytest.mark.parametrize("k, s", [(1, 0.45), (4, 0.2), (16, 0.05)])
def test_kernel_equals_the_printed_formula_whatever_threads_and_chunks(k, s):
    """The own-centre-shifted kernel is the printed estimator to rounding, and the threads
    and chunk sizes do not change a bit of it."""
    from skdc.privacy._plugin_entropy import _block_entropies_numpy

    C = np.random.RandomState(k).standard_normal((5, 240, k)) / math.sqrt(k)
    n_mc = max(k, 2)
    expected = _printed_block_entropies(C, s, n_mc, [3, 1])
    one = _block_entropies_numpy(C, s, n_mc, [3, 1], n_threads=1)
    np.testing.assert_allclose(one, expected, rtol=0, atol=1e-12)
    two = _block_entropies_numpy(C, s, n_mc, [3, 1], n_threads=2, chunk_elems=1000)
    np.testing.assert_array_equal(np.round(two, 12), np.round(one, 12))


def test_kernel_falls_back_to_the_row_maximum(monkeypatch):
    """Where exp(E) could overflow (a dither of chi^2 / 2 > 600, never seen at k <= 32 but
    possible for a huge k) the kernel subtracts each row's maximum instead."""
    from skdc.privacy import _plugin_entropy

    C = np.random.RandomState(0).standard_normal((2, 80, 3))
    monkeypatch.setattr(_plugin_entropy, "_SHIFT_LIMIT", -1.0)
    h = _plugin_entropy._block_entropies_numpy(C, 0.3, 4, [0], n_threads=1)
    np.testing.assert_allclose(h, _printed_block_entropies(C, 0.3, 4, [0]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("limit", [600.0, -1.0])
def test_torch_kernel_is_the_printed_formula(monkeypatch, limit):
    """The device kernel (run here on the CPU) equals eq. 11/31 on its own dither, with the
    own-centre shift (limit 600) and with the row-maximum fallback (limit -1)."""
    torch = pytest.importorskip("torch")
    from scipy.special import logsumexp

    from skdc.privacy import _plugin_entropy

    monkeypatch.setattr(_plugin_entropy, "_SHIFT_LIMIT", limit)
    rng = np.random.RandomState(1)
    C, s, n_mc = rng.standard_normal((3, 120, 4)) / 2, 0.3, 4
    h = _plugin_entropy._block_entropies_torch(C, s, n_mc, [5], "cpu", budget=3 * 120 * 120 * n_mc)
    gen = torch.Generator().manual_seed(int(np.random.SeedSequence([5]).generate_state(1)[0]))
    W = s * torch.randn((3, 120 * n_mc, 4), generator=gen, dtype=torch.float64).numpy()
    for b, c in enumerate(C):  # one batch of blocks, one chunk of points: one draw of W
        P = np.repeat(c, n_mc, axis=0) + W[b]
        lf = (-math.log(120) - 2 * math.log(2 * math.pi * s**2) - np.sum(P * P, 1) / (2 * s**2)
              + logsumexp(P @ c.T / s**2 - np.sum(c * c, 1) / (2 * s**2), axis=1))
        assert h[b] == pytest.approx(-lf.mean() / math.log(2), abs=1e-12)
