"""The Renyi DP of the Gaussian mixing mechanism of Lev, Srinivasan, Shenfeld, Ligett, Sekhari
and Wilson (arXiv:2505.24603, 2025): the curve of Lemma 1 (its values, tight on orthogonal data,
an upper bound on random data, its KL limit), the conversion of Proposition 1, truncated CDP
(Corollary 1), calibration, and the threshold of the adaptive Algorithm 1."""

import math

import numpy as np
import pytest

from skdc.privacy import (
    GaussMixAccountant,
    adaptive_threshold,
    auto_sketch_rows,
    calibrate_gaussmix,
    gaussmix_epsilon,
    gaussmix_rdp,
    paper_budget,
)


def _exact_renyi(alpha, S1, S2):
    """D_alpha(N(0, S1) || N(0, S2)) for zero-mean Gaussians (nats)."""
    _, ld_mix = np.linalg.slogdet(alpha * S2 + (1 - alpha) * S1)
    _, ld1 = np.linalg.slogdet(S1)
    _, ld2 = np.linalg.slogdet(S2)
    return -(ld_mix - (1 - alpha) * ld1 - alpha * ld2) / (2 * (alpha - 1))


@pytest.mark.parametrize(
    "alpha, k, zeta, expected",
    [(2, 1, 10, 0.0062113), (2, 10, 5, 0.3226926), (1.5, 1, 2, 0.3465736),
     (4.5, 10, 5, 1.8549130), (50, 100, 100, 0.1945208)],
)
def test_lemma1_phi_values(alpha, k, zeta, expected):
    assert gaussmix_rdp(alpha, k, zeta) == pytest.approx(expected, abs=6e-8)


@pytest.mark.parametrize(
    "C, sigma, d, k, alpha, forward, reverse",
    [(1, 1, 5, 1, 1.5, 0.346574, 0.123430), (1, 2, 5, 10, 2, 0.322693, 0.204110),
     (10, 5, 3, 7, 1.125, 13.775088, 2.964348)],
)
def test_lemma1_is_tight_on_orthogonal_data(C, sigma, d, k, alpha, forward, reverse):
    X = C * np.eye(d)
    S1 = X.T @ X + sigma**2 * np.eye(d)
    x = X[0]
    S2 = S1 - np.outer(x, x)
    zeta = (C**2 + sigma**2) / C**2
    assert gaussmix_rdp(alpha, k, zeta) == pytest.approx(forward, abs=6e-7)
    assert k * _exact_renyi(alpha, S1, S2) == pytest.approx(gaussmix_rdp(alpha, k, zeta),
                                                             rel=1e-10)
    assert k * _exact_renyi(alpha, S2, S1) == pytest.approx(reverse, abs=6e-7)
    assert k * _exact_renyi(alpha, S2, S1) < gaussmix_rdp(alpha, k, zeta)  # phi bounds both


def test_exact_divergence_equals_phi_on_semi_orthogonal_data(global_random_seed):
    """X = C [Q; 0] with Q orthogonal: X^T X = C^2 I and every nonzero row has norm C."""
    rng = np.random.RandomState(global_random_seed)
    d, C, sigma, k = 6, 2.0, 3.0, 9
    Q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    X = C * np.vstack([Q, np.zeros((4, d))])
    Sigma = X.T @ X + sigma**2 * np.eye(d)
    zeta = (C**2 + sigma**2) / C**2
    for row in range(d):
        x = X[row]
        S2 = Sigma - np.outer(x, x)
        for alpha in rng.uniform(1.01, zeta - 0.01, size=3):
            assert k * _exact_renyi(alpha, Sigma, S2) == pytest.approx(
                gaussmix_rdp(alpha, k, zeta), rel=1e-9
            )


def test_lemma1_bounds_random_instances(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    worst = 0.0
    for _ in range(200):
        n, d, k = rng.randint(2, 8), rng.randint(1, 5), rng.randint(1, 20)
        X = rng.standard_normal((n, d)) * rng.uniform(0.1, 3)
        C = np.linalg.norm(X, axis=1).max()
        sigma = C * rng.uniform(1.01, 4.0)
        lam = max(np.linalg.eigvalsh(X.T @ X)[0], 0.0)
        zeta = (sigma**2 + lam) / C**2
        alpha = 1 + (zeta - 1) * rng.uniform(0.01, 0.99)
        Sigma = X.T @ X + sigma**2 * np.eye(d)
        x = X[rng.randint(n)]
        S2 = Sigma - np.outer(x, x)
        phi = gaussmix_rdp(alpha, k, zeta)
        worst = max(worst, k * _exact_renyi(alpha, Sigma, S2) / phi,
                    k * _exact_renyi(alpha, S2, Sigma) / phi)
    assert worst <= 1 + 1e-9


@pytest.mark.parametrize(
    "k, zeta, expected", [(1, 10, 0.0028753), (10, 5, 0.1342822), (100, 10, 0.2875298)]
)
def test_kl_limit(k, zeta, expected):
    assert gaussmix_rdp(1.0, k, zeta) == pytest.approx(expected, rel=1e-5)
    assert gaussmix_rdp(1 + 1e-6, k, zeta) == pytest.approx(expected, rel=1e-5)


def test_corollary1_truncated_cdp():
    worst = 0.0
    for gamma in np.geomspace(2.51, 1e4, 60):
        rho, omega = GaussMixAccountant(k=3, row_bound=1.0).tcdp(math.sqrt(gamma))
        assert rho == pytest.approx(3 / (2 * gamma**2))
        alphas = np.linspace(1 + 1e-6, omega, 200)
        ratio = gaussmix_rdp(alphas, 3, gamma) / (rho * alphas)
        worst = max(worst, float(ratio.max()))
    assert worst <= 1.0
    assert worst == pytest.approx(0.972, abs=2e-3)


@pytest.mark.parametrize(
    "k, zeta, delta, eps, alpha, classic",
    [(1, 10, 1e-5, 1.09405, 9.60, 1.46587), (10, 100, 1e-6, 0.15732, 77.3, 0.22554),
     (25, 50, 1e-6, 0.45268, 33.0, 0.58900), (250, 1000, 1e-6, 0.04737, 289, 0.06845)],
)
def test_proposition1_conversion(k, zeta, delta, eps, alpha, classic):
    e, a = gaussmix_epsilon(k, zeta, delta)
    assert e == pytest.approx(eps, abs=6e-6)
    assert a == pytest.approx(alpha, rel=5e-3)
    assert gaussmix_epsilon(k, zeta, delta, conversion="classic")[0] == pytest.approx(
        classic, abs=6e-6
    )


@pytest.mark.parametrize(
    "k, eps, gamma", [(25, 1, 24.4121), (25, 10, 3.7837), (250, 1, 58.5793), (25, 0.1, 200.234)]
)
def test_inverse_calibration(k, eps, gamma):
    sigma, zeta = GaussMixAccountant(k=k, row_bound=1.0).calibrate(eps, 1e-6)
    assert zeta == pytest.approx(gamma, abs=1e-4 * max(1, gamma / 100))
    assert sigma == pytest.approx(math.sqrt(zeta))
    # with row_bound C and lambda_low the noise is sigma^2 = zeta C^2 - lambda_low
    s2, z2 = GaussMixAccountant(k=k, row_bound=2.0, lambda_low=1.0).calibrate(eps, 1e-6)
    assert z2 == pytest.approx(zeta, rel=1e-9)
    assert s2**2 == pytest.approx(4 * zeta - 1, rel=1e-9)


def test_algorithm2_budget_targets():
    """The gamma targets of Algorithm 2's budget with eta = gamma / sqrt(k) (the paper prints
    none; computed independently of this code)."""
    from skdc.privacy import smallest_scale

    for k, eps, target in [(25, 1, 51.77), (25, 10, 6.10), (250, 1, 144.95)]:
        g = smallest_scale(lambda z, k=k: paper_budget(z / math.sqrt(k), z, k, 1e-6), eps)
        assert g == pytest.approx(target, abs=0.01)


def test_monotone_in_zeta_and_divergent_at_alpha_zeta():
    zetas = np.geomspace(1.5, 500, 30)
    phis = [gaussmix_rdp(1.2, 5, z) for z in zetas]
    assert all(a > b for a, b in zip(phis, phis[1:]))
    eps = [gaussmix_epsilon(5, z, 1e-6)[0] for z in zetas[5:]]
    assert all(a > b for a, b in zip(eps, eps[1:]))
    # logarithmic divergence at alpha -> zeta: each factor 1000 closer adds (k/(2(zeta-1))) ln 1000
    near = [gaussmix_rdp(10 - t, 5, 10.0) for t in (1e-3, 1e-6, 1e-9, 1e-12)]
    steps = np.diff(near)
    np.testing.assert_allclose(steps, 5 / 18 * math.log(1000), rtol=1e-3)


def test_algorithm1_threshold():
    assert adaptive_threshold(1e-6) == pytest.approx(5.461524, rel=1e-6)
    assert adaptive_threshold(1e-5) == pytest.approx(5.022258, rel=1e-6)
    assert adaptive_threshold(1e-6, exact=True) < adaptive_threshold(1e-6)


def test_accountant_composition_and_leakage():
    acct = GaussMixAccountant(k=10, row_bound=1.0)
    eps0 = acct.epsilon(5.0, 1e-6)[0]
    assert acct.rdp(2.0, 5.0) == pytest.approx(gaussmix_rdp(2.0, 10, 25.0))
    acct.compose(lambda a: gaussmix_rdp(a, 10, 25.0))
    # composing the same release doubles the RDP and raises epsilon
    assert acct.rdp(2.0, 5.0) == pytest.approx(2 * gaussmix_rdp(2.0, 10, 25.0))
    assert acct.epsilon(5.0, 1e-6)[0] > eps0
    assert acct.leakage_bits(math.sqrt(10)) == pytest.approx(0.0414818, rel=1e-5)


@pytest.mark.parametrize("alpha", [1.0 - 1e-3, 0.5, 10.0, 12.0])
def test_alpha_outside_range_refused(alpha):
    with pytest.raises(ValueError, match=r"alpha must lie in \(1, zeta\)"):
        gaussmix_rdp(alpha, 3, 10.0)


def test_bad_accountant_inputs():
    with pytest.raises(ValueError, match="sigma must be > 0"):
        GaussMixAccountant(k=3, row_bound=1.0).rdp(2.0, 0.0)
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        GaussMixAccountant(k=3, row_bound=1.0).epsilon(5.0, 1.5)
    with pytest.raises(ValueError, match="zeta"):
        gaussmix_epsilon(3, 0.9, 1e-6)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        gaussmix_rdp(2.0, 0, 5.0)


def test_calibrate_gaussmix_lives_beside_its_accounting():
    """The calibration reaches its budget in the accounting it inverts; the mechanisms' room
    hands out the same function (its public path before issue 35)."""
    import skdc.mechanisms

    assert skdc.mechanisms.calibrate_gaussmix is calibrate_gaussmix
    gamma, eta = calibrate_gaussmix(10, 1.0, 1e-6, False)
    assert eta is None
    assert gaussmix_epsilon(10, gamma, 1e-6)[0] <= 1.0 + 1e-9
    assert gaussmix_epsilon(10, gamma * (1 - 1e-6), 1e-6)[0] > 1.0


@pytest.mark.parametrize("d, k", [(1, 3), (2, 5), (4, 10), (5, 13), (784, 1960)])
def test_auto_sketch_rows_is_the_ceiling_of_two_and_a_half_columns(d, k):
    assert auto_sketch_rows(d) == k == math.ceil(5 * d / 2)


def test_every_auto_sketch_takes_the_one_rule():
    """``k="auto"`` of the mechanism, the mixing regressions and the sketch baseline."""
    from skdc.linear_model import LinearMixingRegressor, SheffetSketchRegressor
    from skdc.mechanisms import GaussMix

    rng = np.random.RandomState(0)
    X = rng.randn(40, 3)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.clip(X @ np.array([0.3, -0.2, 0.1]), -1, 1)
    assert GaussMix(random_state=0).fit(X).k_ == auto_sketch_rows(3)
    assert LinearMixingRegressor(random_state=0).fit(X, y).k_ == auto_sketch_rows(4)
    auto = SheffetSketchRegressor(random_state=0).fit(X, y)  # it keeps no k_: same draws
    fixed = SheffetSketchRegressor(k=auto_sketch_rows(4), random_state=0).fit(X, y)
    np.testing.assert_array_equal(auto.coef_, fixed.coef_)
    other = SheffetSketchRegressor(k=auto_sketch_rows(4) + 1, random_state=0).fit(X, y)
    assert not np.array_equal(auto.coef_, other.coef_)
