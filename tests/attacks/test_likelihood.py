"""Prior-aware likelihood attack (App. G.5): posterior weights, limits, and the bound it obeys."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_digits

from skdc.attacks import PriorAwareLikelihoodAttack
from skdc.metrics import bound_slack_score
from skdc.privacy import (
    BlockEntropyLowerBound,
    DPSGDLeakageAccountant,
    ReconstructionBound,
)


@pytest.fixture(scope="module")
def digits_split():
    """Disjoint D_perp (100), D_est (800), D_shadow (797) and targets (100) of the digits."""
    X, _ = load_digits(return_X_y=True)
    X = X[np.random.RandomState(0).permutation(X.shape[0])].astype(np.float64)
    return X[:100], X[100:900], X[900:-100], X[-100:]


def _brute_force_weights(Y, Z, sigma, C, q):
    """``w_j`` proportional to ``prod_t [(1 - q) + q exp(L_tj)]``, by loops in the plain domain."""
    w = np.ones(Z.shape[0])
    for j, z in enumerate(Z):
        c = min(1.0, C / np.linalg.norm(z)) * z
        for y in Y:
            L = (2 * y @ c - c @ c) / (2 * sigma**2 * C**2)
            w[j] *= (1 - q) + q * math.exp(L)
    return w / w.sum()


@pytest.mark.parametrize("q, steps", [(1.0, 1), (1.0, 3), (0.3, 4)])
def test_posterior_weights_equal_brute_force(q, steps):
    rng = np.random.RandomState(0)
    X_shadow, X_target = rng.standard_normal((40, 3)), rng.standard_normal((5, 3))
    attack = PriorAwareLikelihoodAttack(
        2.0, max_grad_norm=1.0, sample_rate=q, steps=steps, chunk_size=7, random_state=0
    ).fit(X_shadow)
    Y = attack.release(X_target)
    log_w = attack.log_posterior(Y)
    Z = X_shadow - X_shadow.mean(axis=0)
    for i in range(X_target.shape[0]):
        assert_allclose(np.exp(log_w[i]), _brute_force_weights(Y[i], Z, 2.0, 1.0, q),
                        rtol=1e-10, atol=1e-15)
    # the reconstruction is the posterior mean, back in the input space
    assert_allclose(attack.attack(Y), np.exp(log_w) @ Z + X_shadow.mean(axis=0), rtol=1e-10)
    # chunking over candidates changes nothing
    big = PriorAwareLikelihoodAttack(
        2.0, max_grad_norm=1.0, sample_rate=q, steps=steps, random_state=0
    ).fit(X_shadow)
    assert_allclose(big.log_posterior(Y), log_w, rtol=1e-12, atol=1e-12)
    # one target as a (steps, n_features) array
    assert_allclose(attack.log_posterior(Y[0]), log_w[:1], rtol=1e-12)


def test_release_law():
    rng = np.random.RandomState(1)
    X = rng.standard_normal((50, 4)) * 3
    attack = PriorAwareLikelihoodAttack(
        1e-9, max_grad_norm=0.3, sample_rate=0.5, steps=40, random_state=0
    ).fit(X)
    Y, part = attack.release(X[:10], return_participation=True)
    assert Y.shape == (10, 40, 4) and part.shape == (10, 40)
    assert 0.3 < part.mean() < 0.7
    u = X[:10] - X.mean(axis=0)
    clipped = 0.3 * u / np.linalg.norm(u, axis=1, keepdims=True)  # every gradient is clipped
    assert_allclose(Y, part[..., None] * clipped[:, None, :], rtol=0, atol=1e-8)
    # reproducible; another seed differs
    assert_array_equal(attack.release(X[:10]), Y)
    other = PriorAwareLikelihoodAttack(1.0, sample_rate=0.5, steps=40, random_state=1).fit(X)
    assert not np.array_equal(other.release(X[:10], return_participation=True)[1], part)
    # q = 1: every step participates
    full = PriorAwareLikelihoodAttack(1.0, steps=5, random_state=0).fit(X)
    assert full.release(X[:3], return_participation=True)[1].all()


def test_tiny_noise_recovers_the_target_from_the_candidates(digits_split):
    _, _, X_shadow, _ = digits_split
    attack = PriorAwareLikelihoodAttack(
        1e-4, max_grad_norm=0.3, sample_rate=1.0, steps=1, random_state=0
    ).fit(X_shadow)
    targets = X_shadow[:20]  # the only test whose targets are candidates
    with pytest.warns(UserWarning, match="targets are also candidates"):
        X_hat = attack.release_and_attack(targets)
    assert_allclose(X_hat, targets, rtol=0, atol=1e-6)
    best = attack.log_posterior(attack.release(targets)).argmax(axis=1)
    assert_allclose(X_shadow[best], targets, rtol=0)


def test_huge_noise_returns_the_prior_mean(digits_split):
    _, _, X_shadow, X_target = digits_split
    attack = PriorAwareLikelihoodAttack(1e4, sample_rate=0.5, steps=3, random_state=0)
    X_hat = attack.fit(X_shadow).release_and_attack(X_target)
    assert_allclose(X_hat, np.tile(X_shadow.mean(axis=0), (X_target.shape[0], 1)),
                    rtol=0, atol=1e-3 * np.abs(X_shadow).max())
    rho = attack.score(X_target)
    assert rho == pytest.approx(1.0, abs=0.15)  # the prior-mean error, relative to the prior
    assert attack.leakage_bits_ < 1e-8


def test_attack_improves_with_leakage(digits_split):
    _, _, X_shadow, X_target = digits_split
    rhos = [PriorAwareLikelihoodAttack(s, random_state=0).fit(X_shadow).score(X_target)
            for s in (3.0, 0.5, 0.1)]
    assert rhos[0] > rhos[1] > rhos[2]


@pytest.mark.parametrize("q, steps", [(1.0, 1), (0.02, 100)])
def test_attack_stays_above_the_provable_floor(digits_split, q, steps):
    """Table 6 of the paper: at matched leakage the mean rho never falls below rho*."""
    X_perp, X_est, X_shadow, X_target = digits_split
    ent = BlockEntropyLowerBound(block_sizes=[8], nu2=(1.6,), device="cpu", random_state=0)
    bound = ReconstructionBound(ent.fit(X_est, X_perp=X_perp))
    acct = DPSGDLeakageAccountant()
    for gamma in (0.1, 0.72):
        rho_star = bound.rho_star(gamma)[0]
        assert rho_star > 0.3  # a floor that can be violated
        sigma = acct.calibrate_sigma(gamma, q=q, steps=steps)
        attack = PriorAwareLikelihoodAttack(
            sigma, sample_rate=q, steps=steps, random_state=0
        ).fit(X_shadow)
        assert attack.leakage_bits_ == pytest.approx(gamma, rel=1e-8)
        rho = attack.score(X_target, trace=ent.trace_)
        assert bound_slack_score(rho, rho_star) >= 0
        # per-target errors may fall below the population floor; their mean may not
        err = np.sum((attack.release_and_attack(X_target) - X_target) ** 2, axis=1) / ent.trace_
        assert math.sqrt(err.mean()) == pytest.approx(rho, rel=1e-12)


@pytest.mark.parametrize(
    "params, match",
    [
        ({"noise_multiplier": 0.0}, "'noise_multiplier' parameter"),
        ({"noise_multiplier": -1.0}, "'noise_multiplier' parameter"),
        ({"max_grad_norm": 0.0}, "'max_grad_norm' parameter"),
        ({"sample_rate": 0.0}, "'sample_rate' parameter"),
        ({"sample_rate": 1.5}, "'sample_rate' parameter"),
        ({"steps": 0}, "'steps' parameter"),
    ],
)
def test_bad_parameters_refused(params, match):
    X = np.random.RandomState(0).standard_normal((10, 3))
    with pytest.raises(ValueError, match=match):
        PriorAwareLikelihoodAttack(**params).fit(X)


def test_bad_inputs_refused():
    rng = np.random.RandomState(0)
    attack = PriorAwareLikelihoodAttack(1.0, steps=2, random_state=0)
    with pytest.raises(ValueError, match="at least 2 rows"):
        attack.fit(rng.standard_normal((1, 3)))
    attack.fit(rng.standard_normal((10, 3)))
    with pytest.raises(ValueError, match="X has 4 features"):
        attack.release_and_attack(rng.standard_normal((2, 4)))
    with pytest.raises(ValueError, match=r"shape \(n_targets, steps, n_features\)"):
        attack.attack(rng.standard_normal((2, 2, 4)))
    with pytest.raises(ValueError, match=r"= \(n, 2, 3\)"):
        attack.log_posterior(rng.standard_normal((2, 1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        attack.attack(np.full((2, 3), np.nan))
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        PriorAwareLikelihoodAttack().release(rng.standard_normal((2, 3)))
