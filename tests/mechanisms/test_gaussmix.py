"""The GaussMix mechanism of Lev et al. (arXiv:2505.24603, 2025) and its adaptive Algorithm 1,
units corrected: the printed algorithm against the corrected one, the reading of the paper's
review, and the release's second moment ``(1/k) M^T M ~ X^T X + sigma^2 I``."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from skdc import Uploads
from skdc.mechanisms import GaussMix, calibrate_gaussmix, check_row_bound
from skdc.mechanisms._gaussmix import adaptive_noise_scale, gaussmix_release
from skdc.privacy import gaussmix_epsilon


def _printed_eta_tilde2(lam_min, z, *, C, gamma, eta, tau):
    """Algorithm 1 as printed: unnormalised eigenvalue release with eta C^2 noise."""
    lam_tilde = np.maximum(lam_min + eta * C**2 * z - eta * C**2 * tau, 0.0)
    return np.maximum(gamma - lam_tilde, 0.0)


def test_printed_algorithm_fails_and_corrected_one_holds():
    """Regression test for the units error of the printed Algorithm 1 of Lev et al. (2025)."""
    C, gamma, eta, tau = 10.0, 3.0, 1.0, 2.0
    z = np.random.RandomState(0).standard_normal(400_000)
    eff = _printed_eta_tilde2(200.0, z, C=C, gamma=gamma, eta=eta, tau=tau) + 200.0 / C**2
    p_fail = np.mean(eff < gamma)
    assert p_fail == pytest.approx(0.492, abs=0.005)
    assert p_fail == pytest.approx(norm.sf(0.02), abs=0.005)
    for lam_min in (1.0, 200.0, 250.0):
        lam_bar = lam_min / C**2
        eta_t2, _ = adaptive_noise_scale(lam_bar, z, gamma=gamma, eta=eta, tau=tau)
        fail = np.mean(eta_t2 + lam_bar < gamma - 1e-12)
        assert fail <= norm.sf(tau) + 0.001
        # failure happens exactly when z > tau
        np.testing.assert_array_equal(eta_t2 + lam_bar < gamma - 1e-12, z > tau)


def test_review_reading_example():
    # the review's reading feeds the unnormalised lambda_min into the release in place of
    # lambda_min / C^2: lambda_tilde = lambda_min + eta (z - tau)
    C, lam_min, gamma, eta, tau = 10.0, 1.0, 3.0, 1.0, 2.0
    for z, eff, check in [(1.5, 2.51, 3.5), (2.0, 2.01, 3.0)]:
        eta_t2, lam_tilde = adaptive_noise_scale(lam_min, z, gamma=gamma, eta=eta, tau=tau)
        assert lam_tilde == pytest.approx(lam_min + eta * (z - tau), rel=1e-12)
        assert eta_t2 + lam_min / C**2 == pytest.approx(eff, rel=1e-12)
        assert eta_t2 + lam_min == pytest.approx(check, rel=1e-12)  # the proof's check passes
    # under that reading the effective scale misses gamma exactly when z > 1.01
    z = np.random.RandomState(0).standard_normal(400_000)
    eta_t2, _ = adaptive_noise_scale(lam_min, z, gamma=gamma, eta=eta, tau=tau)
    fail = eta_t2 + lam_min / C**2 < gamma - 1e-12
    np.testing.assert_array_equal(fail, z > 1.01)
    assert fail.mean() == pytest.approx(0.1562, abs=0.003)  # 5 standard errors
    assert fail.mean() > math.exp(-(tau**2) / 2)  # above the exp(-2) = 0.1353 it should meet
    assert norm.sf(1.01) == pytest.approx(0.1562, abs=1e-4)
    assert math.exp(-(tau**2) / 2) == pytest.approx(0.1353, abs=1e-4)


def test_non_adaptive_branch_uses_sqrt_gamma_noise():
    Z = np.random.RandomState(0).uniform(-0.3, 0.3, size=(50, 3))
    _, info = gaussmix_release(Z, k=5, row_bound=2.0, gamma=9.0, random_state=0)
    assert info["sigma"] == pytest.approx(3.0 * 2.0)  # sqrt(gamma) C, not gamma C


def test_second_moment(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    X = rng.uniform(-1, 1, size=(60, 4)) / 2
    target = X.T @ X + 0.5**2 * np.eye(4)
    errs = []
    for k in (400, 6400):
        M, _ = gaussmix_release(X, k=k, row_bound=1.0, gamma=0.25, random_state=rng)
        errs.append(np.linalg.norm(M.T @ M / k - target) / np.linalg.norm(target))
    assert errs[0] < 6 / math.sqrt(400) and errs[1] < 6 / math.sqrt(6400)
    assert errs[1] < errs[0]


def test_mechanism_uploads_and_privacy():
    X = np.random.RandomState(0).uniform(-0.4, 0.4, size=(300, 3))
    mech = GaussMix(n_participants=3, k=8, epsilon=1.0, delta=1e-6, random_state=0)
    M = mech.fit_transform(X)
    assert isinstance(M, Uploads) and M.shape == (24, 3)
    assert np.bincount(M.participant).tolist() == [8, 8, 8]
    np.testing.assert_array_equal(M, mech.transform(X))  # same rows, same release
    eps, _ = gaussmix_epsilon(8, mech.scale_, 1e-6)
    assert eps == pytest.approx(1.0, abs=1e-6)
    assert mech.privacy_spent_["eps"] == 1.0
    assert mech.privacy_spent_["rdp"](2.0) > 0
    # other rows give an independent sketch
    M2 = mech.transform(X[:150])
    assert not np.allclose(M2, M)
    other = GaussMix(n_participants=3, k=8, random_state=1).fit_transform(X)
    assert not np.allclose(other, M)


def test_routed_participants_and_fixed_noise():
    X = np.random.RandomState(0).uniform(-0.4, 0.4, size=(40, 2))
    ids = np.repeat([0, 1], 20)
    mech = GaussMix(n_participants=2, k=4, noise=3.0, random_state=0)
    M = mech.fit_transform(X, participant=ids)
    assert M.shape == (8, 2) and mech.noise_ == 3.0
    assert mech.privacy_spent_["eps"] == pytest.approx(gaussmix_epsilon(4, 9.0, 1e-6)[0])
    assert mech.leakage_bits() > 0


def test_adaptive_mechanism_adds_less_noise_on_well_conditioned_data():
    X = np.random.RandomState(0).uniform(-0.5, 0.5, size=(20000, 3))
    _, info = gaussmix_release(X, k=8, row_bound=1.0, gamma=20.0, adaptive=True, delta=1e-6,
                               random_state=0)
    assert info["sigma"] == 0.0 and info["lam_tilde"] > 20
    mech = GaussMix(k=8, adaptive=True, random_state=0).fit(X)
    assert mech.transform(X).shape == (8, 3)


def test_rows_over_the_bound_refused_unless_clipped():
    X = np.array([[3.0, 4.0], [0.1, 0.1], [0.2, 0.0]])
    with pytest.raises(ValueError, match=r"exceed the declared bound 1 .*clip=True"):
        GaussMix(k=2, random_state=0).fit(X)
    M = GaussMix(k=2, clip=True, random_state=0).fit_transform(X)
    assert M.shape == (2, 2)


def test_noise_and_adaptive_exclude_each_other():
    with pytest.raises(ValueError, match="exclude each other"):
        GaussMix(noise=1.0, adaptive=True).fit(np.zeros((3, 2)))


@pytest.mark.parametrize("param, value, match", [("delta", 1.5, "delta"),
                                                 ("epsilon", 0.0, "epsilon")])
def test_bad_parameters(param, value, match):
    with pytest.raises(ValueError, match=match):
        GaussMix(**{param: value}).fit(np.zeros((3, 2)))


def test_participant_id_out_of_range_says_what_to_set():
    X = np.random.RandomState(0).uniform(-0.4, 0.4, size=(10, 2))
    mech = GaussMix(n_participants=2, k=2, random_state=0).fit(X)
    match = r"0 \.\. n_participants - 1 = 1; got id 5.*n_participants=6"
    with pytest.raises(ValueError, match=match):
        mech.transform(X, participant=np.full(10, 5))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: check_row_bound(np.ones((2, 2)), -1.0, clip=False), "bound"),
        (lambda: gaussmix_release(np.ones((3, 2)), k=0, row_bound=1.0, gamma=4.0), "k"),
        (lambda: gaussmix_release(np.ones((3, 2)), k=2, row_bound=0.0, gamma=4.0), "row_bound"),
        (lambda: adaptive_noise_scale(1.0, 0.0, gamma=-1.0, eta=1.0, tau=2.0), "gamma"),
        (lambda: calibrate_gaussmix(10, 1.0, 1e-6, False, conversion="exact"), "conversion"),
    ],
)
def test_public_functions_validate_their_parameters(call, match):
    with pytest.raises(ValueError, match=match):
        call()
