"""The reconstruction bound of Bourne and Allison, "From Pixels to Privacy-Sensitive Features"
(arXiv:2610.13768, 2026): the grid combiner of Corollary 3.7 and eq. 13-14 against Tables 4, 5, 6
and 8 (the MNIST pixel entropy grid shipped with the authors' code), the Shannon lower bound of
Theorem 3.6 on Gaussian sources (where it is tight), its invariances, and the per-block bound of
Proposition G.1."""

import math

import numpy as np
import pytest

from skdc.privacy import (
    BlockEntropyLowerBound,
    DPSGDLeakageAccountant,
    GaussianReleaseLeakage,
    ReconstructionBound,
    per_block_bound,
    shannon_lower_bound,
)

TWO_PI_E = 2 * math.pi * math.e


@pytest.fixture(scope="module")
def mnist_bound(mnist_pixel_grid):
    return ReconstructionBound(mnist_pixel_grid)


@pytest.mark.parametrize(
    "gamma, rho, k, nu2",
    [(0.048, 0.9067, 14, 1.6), (0.169, 0.8924, 16, 1.6), (0.570, 0.8453, 16, 1.6),
     (1.785, 0.7541, 28, 1.6), (5.042, 0.5558, 28, 0.8), (13.150, 0.1312, 28, 0.4),
     (32.883, 0.0, None, None)],
)
def test_table4_mnist_pixel_bounds(mnist_bound, gamma, rho, k, nu2):
    r, k_star, nu2_star = mnist_bound.rho_star(gamma)
    assert r == pytest.approx(rho, abs=5e-5)
    assert (k_star, nu2_star) == (k, nu2)


def test_table5_printed_sigma_reproduces_table4_within_rounding(mnist_bound):
    # gamma recomputed from the printed (rounded) MNIST sigma moves rho* by <= 0.001
    acct = DPSGDLeakageAccountant()
    for sigma, rho in [(5.574, 0.907), (3.028, 0.892), (1.741, 0.845), (1.110, 0.754)]:
        gamma = acct.leakage_bits(1 / 49, sigma, 4900)
        assert mnist_bound.rho_star(gamma)[0] == pytest.approx(rho, abs=1.5e-3)


@pytest.mark.parametrize("gamma, rho", [(0.72, 0.8308), (2.89, 0.6732), (8.01, 0.3967),
                                        (72.13, 0.0)])
def test_table6_bound_row(mnist_bound, gamma, rho):
    assert mnist_bound.rho_star(gamma)[0] == pytest.approx(rho, abs=5e-5)


def test_table8_rho_star(mnist_bound):
    expected = [0.8091, 0.7387, 0.6649, 0.6063, 0.5578, 0.5074, 0.4543, 0.3972]
    got = [mnist_bound.rho_star(float(r))[0] for r in range(1, 9)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-5)


def test_zero_leakage_floor_and_point_estimate(mnist_bound):
    assert mnist_bound.rho_star(0.0)[:2] == (pytest.approx(0.9131, abs=5e-5), 14)
    assert mnist_bound.rho_star(0.0)[2] == 1.6
    assert mnist_bound.rho_point(0.0481)[0] == pytest.approx(0.9740, abs=5e-5)


def test_shannon_bound_is_the_mmse_of_an_isotropic_gaussian():
    m, gamma = 4, GaussianReleaseLeakage(1.0, cov=np.eye(4)).leakage_bits()
    h = 2 * math.log2(TWO_PI_E)
    mse = shannon_lower_bound(h, gamma, m)
    assert mse == pytest.approx(2.0, rel=1e-12)  # = the MMSE m lam sig^2 / (lam + sig^2)
    assert math.sqrt(mse / m) == pytest.approx(0.707107, rel=1e-6)


def test_shannon_bound_of_an_isotropic_gaussian_with_dither():
    m, s2 = 4, 0.1
    h = 2 * math.log2(TWO_PI_E * 1.1)
    mse = shannon_lower_bound(h, 2.0, m, dither_var=s2)
    assert mse == pytest.approx(m * 1 * (1 - s2) / (1 + 1), rel=1e-12)
    assert math.sqrt(mse / m) == pytest.approx(0.670820, rel=1e-6)


def test_shannon_bound_of_an_anisotropic_gaussian():
    gamma = GaussianReleaseLeakage(1.0, cov=np.diag([4.0, 1.0])).leakage_bits()
    h = 0.5 * math.log2(TWO_PI_E**2 * 4.0)
    slb = shannon_lower_bound(h, gamma, 2)
    mmse = 4 * 1 / 5 + 1 * 1 / 2
    assert slb == pytest.approx(1.264911, rel=1e-6) and slb < mmse
    # Hadamard k = 1 blocks: each block has variance tr = 5
    assert shannon_lower_bound(0.5 * math.log2(TWO_PI_E * 5), gamma, 1) == pytest.approx(0.5)


def test_floor_is_monotone_in_leakage_and_never_above_one(mnist_bound):
    gammas = np.linspace(0, 40, 81)
    rhos = [mnist_bound.rho_star(g)[0] for g in gammas]
    assert all(a >= b for a, b in zip(rhos, rhos[1:]))
    assert max(rhos) <= 1.0
    # a point-estimate grid above the cap is capped with a warning
    with pytest.warns(RuntimeWarning, match="capped"):
        rb = ReconstructionBound([{"k": 1, "nu2": 0.2, "h_lb": 10.0}])
        assert rb.rho_star(0.0)[0] == 1.0


def test_floor_is_invariant_under_rescale_and_shift():
    rng = np.random.RandomState(3)
    X = rng.standard_normal((300, 4)) @ np.diag([1.0, 2.0, 0.5, 1.5])
    Xp = rng.standard_normal((60, 4)) @ np.diag([1.0, 2.0, 0.5, 1.5])
    kw = dict(block_sizes=[1, 2], nu2=(0.8, 3.2), device="cpu", random_state=0)
    rb1 = ReconstructionBound(BlockEntropyLowerBound(**kw).fit(X, X_perp=Xp))
    rb2 = ReconstructionBound(BlockEntropyLowerBound(**kw).fit(5 * X - 2, X_perp=5 * Xp - 2))
    for g in (0.0, 0.5, 2.0):
        assert rb1.rho_star(g)[0] == pytest.approx(rb2.rho_star(g)[0], abs=1e-9)
        assert rb2.mse_floor(g) == pytest.approx(25 * rb1.mse_floor(g), rel=1e-8)


def test_ucb_normaliser_lowers_the_bound(mnist_pixel_grid):
    rng = np.random.RandomState(0)
    X, Xp = rng.uniform(0, 1, (300, 4)), rng.uniform(0, 1, (200, 4))
    ent = BlockEntropyLowerBound(block_sizes=[1, 2, 4], nu2=(0.8, 3.2), device="cpu",
                                 diameter_sq=4.0).fit(X, X_perp=Xp)
    assert ent.trace_ < ent.trace_ucb_ < 4.0 / 2
    for g in (0.0, 0.5):
        assert ReconstructionBound(ent, normaliser="ucb").rho_star(g)[0] <= ReconstructionBound(
            ent).rho_star(g)[0]
    # MNIST: normalising by a 2.5 % larger trace lowers rho* by at most 0.026
    trace = 3432192.04
    point = ReconstructionBound(mnist_pixel_grid, trace=trace)
    ucb = ReconstructionBound(mnist_pixel_grid, normaliser=1.025 * trace, trace=trace)
    for g in (0.048, 1.785, 5.042):
        assert 0 < point.rho_star(g)[0] - ucb.rho_star(g)[0] <= 0.026
        assert ucb.mse_floor(g) == pytest.approx(point.mse_floor(g), rel=1e-12)
    with pytest.raises(ValueError, match="diameter_sq"):
        ent2 = BlockEntropyLowerBound(block_sizes=[4], nu2=(0.8,), device="cpu")
        ReconstructionBound(ent2.fit(X, X_perp=Xp), normaliser="ucb").rho_star(0.5)


def test_bound_needs_fitted_entropy():
    with pytest.raises(TypeError, match="fitted BlockEntropyLowerBound"):
        ReconstructionBound(BlockEntropyLowerBound()).rho_star(1.0)
    with pytest.raises(ValueError, match="gamma_bits must be"):
        ReconstructionBound([{"k": 1, "nu2": 0.2, "h_lb": 1.0}]).rho_star(-1.0)


def test_inverse_use_targets_a_floor(mnist_bound):
    """Algorithm 1, step 7: the largest leakage keeping rho* >= target, then the DP-SGD noise
    multiplier reaching it (Theorem 4.1)."""
    gamma_max = mnist_bound.max_leakage(0.754)
    assert mnist_bound.rho_star(gamma_max)[0] >= 0.754 > mnist_bound.rho_star(gamma_max + 1e-3)[0]
    acct = DPSGDLeakageAccountant()
    sigma = acct.calibrate_sigma(gamma_max, q=1 / 49, steps=4900)
    assert mnist_bound.rho_star(acct.leakage_bits(1 / 49, sigma, 4900))[0] >= 0.754 - 1e-9
    assert sigma == pytest.approx(1.11, abs=0.01)  # Table 5, MNIST at epsilon = 8
    with pytest.raises(ValueError, match="above the floor at zero leakage"):
        mnist_bound.max_leakage(0.95)


# -- the per-block bound of a release of cells (Prop. G.1 of Bourne and Allison) -----------------
@pytest.fixture(scope="module")
def clustered_entropy():
    """Four tight clusters in 4-D (a low-entropy source, so the floor is informative), their
    labels, and an entropy bound calibrated on a disjoint sample."""
    rng = np.random.RandomState(0)
    centres = 3 * rng.standard_normal((4, 4))

    def draw(n):
        label = rng.randint(4, size=n)
        return centres[label] + 0.3 * rng.standard_normal((n, 4)), label

    X_perp, _ = draw(100)
    X, label = draw(400)
    ent = BlockEntropyLowerBound(block_sizes=[1], nu2=(0.2,), device="cpu", progress=False,
                                 random_state=0)
    return ent.fit(X, X_perp=X_perp), X, label


def test_per_block_bound_without_leakage_ignores_the_cells(clustered_entropy):
    """With gamma = 0 every block is charged nothing, so the cells cannot matter."""
    ent, X, label = clustered_entropy
    by_sign = (X[:, 0] > 0).astype(int)
    a = per_block_bound(ent, X, label, 0.0)
    assert a == pytest.approx(per_block_bound(ent, X, by_sign, 0.0), rel=1e-12)
    assert 0 < a < 1


def test_per_block_bound_charges_each_block_what_the_cells_tell(clustered_entropy):
    """gamma_b = I(z~_b; Q): cells drawn independently of the rows tell nothing (the bound stays
    at its gamma = 0 value, up to the plug-ins' error); the cluster labels tell the most, and the
    bound falls as the cap on gamma_b grows."""
    ent, X, label = clustered_entropy
    floor0 = per_block_bound(ent, X, label, 0.0)
    independent = np.random.RandomState(1).randint(4, size=X.shape[0])
    # (the plug-ins on 100 rows a cell overstate I(z~_b; Q) a little: 0.85 against 0.88 here)
    assert per_block_bound(ent, X, independent, 2.0) == pytest.approx(floor0, abs=0.05)
    rhos = [per_block_bound(ent, X, label, gamma) for gamma in (0.0, 0.1, 1.0, 2.0)]
    assert all(a > b for a, b in zip(rhos, rhos[1:]))
    by_sign = (X[:, 0] > 0).astype(int)  # one bit: coarser than the four clusters
    assert rhos[-1] < per_block_bound(ent, X, by_sign, 2.0) < floor0


def test_per_block_bound_refuses_bad_cells(clustered_entropy):
    ent, X, _ = clustered_entropy
    with pytest.raises(ValueError, match=r"one cell per row of X \(400\)"):
        per_block_bound(ent, X, np.zeros(399, dtype=int), 1.0)
    with pytest.raises(ValueError, match="1-D integer array"):
        per_block_bound(ent, X, np.zeros(400), 1.0)
    with pytest.raises(ValueError, match=r"cells must lie in \[0, 2\)"):
        per_block_bound(ent, X, np.arange(400) % 3, 1.0, n_cells=2)
    with pytest.raises(ValueError, match=r"cell 2 holds 0 of 400"):
        per_block_bound(ent, X, np.arange(400) % 2, 1.0, n_cells=3)
    with pytest.raises(TypeError, match="fitted BlockEntropyLowerBound"):
        per_block_bound(object(), X, np.arange(400) % 2, 1.0)
