"""The DP-SGD leakage accountant of Bourne and Allison (arXiv:2610.13768): Theorem 4.1 against
the leakages of Table 5 and the single steps of App. G.5, its inverse (Algorithm 1, step 7), the
composition of runs, and ``(epsilon, delta)`` by Opacus' RDP and PRV accountants with the
calibration of the noise to a target epsilon (Sec. 2.5, App. G.4)."""

import math

import pytest

from skdc.privacy import DPSGDLeakageAccountant, calibrate_sigma


def _gamma(q, sigma, steps):
    return DPSGDLeakageAccountant().add_run(q=q, sigma=sigma, steps=steps).leakage_bits_


@pytest.mark.parametrize(
    "sigma, expected", [(1, 0.721348), (0.5, 2.885390), (0.3, 8.014972), (0.1, 72.134752)]
)
def test_full_batch_single_step_is_the_gaussian_channel(sigma, expected):
    assert _gamma(1.0, sigma, 1) == pytest.approx(expected, rel=1e-6)
    # the closed form 1 / (2 ln 2 sigma^2)
    assert _gamma(1.0, sigma, 1) == pytest.approx(1 / (2 * math.log(2) * sigma**2), rel=1e-12)


def test_cifar_weak_privacy_run_of_the_authors_code():
    assert _gamma(1 / 44, 0.503697, 4400) == pytest.approx(33.22208, rel=1e-6)


@pytest.mark.parametrize(
    "sigma, expected",
    [(5.837518, 0.0488), (3.167411, 0.1714), (1.814579, 0.5767), (1.147369, 1.8056),
     (0.815769, 5.1077), (0.628747, 13.3165)],
)
def test_table5_cifar_leakage(sigma, expected):
    assert round(_gamma(1 / 44, sigma, 4400), 4) == expected


@pytest.mark.parametrize(
    "sigma, expected",
    [(10.968652, 0.0602), (5.940671, 0.2068), (3.313437, 0.6816), (1.948359, 2.1106),
     (1.241676, 6.0100), (0.862983, 15.6816), (0.638604, 38.3450)],
)
def test_table5_imagenette_leakage(sigma, expected):
    assert round(_gamma(0.1, sigma, 1000), 4) == pytest.approx(expected, abs=1e-12)


def test_table5_printed_sigma_drifts():
    assert round(_gamma(0.1, 0.639, 1000), 2) == 38.27


def test_leakage_is_monotone_in_sigma_q_and_steps():
    sigmas = [0.3, 0.5, 1.0, 2.0, 5.0]
    g = [_gamma(0.05, s, 100) for s in sigmas]
    assert all(a > b for a, b in zip(g, g[1:]))
    qs = [0.001, 0.01, 0.1, 0.5, 1.0]
    g = [_gamma(q, 1.0, 100) for q in qs]
    assert all(a < b for a, b in zip(g, g[1:]))
    g = [_gamma(0.05, 1.0, t) for t in (1, 10, 100)]
    assert all(a < b for a, b in zip(g, g[1:]))
    assert _gamma(0.05, 1.0, 0) == 0.0
    assert DPSGDLeakageAccountant().leakage_bits_ == 0.0


@pytest.mark.parametrize(
    "target, expected", [(0.72, 0.48488), (2.89, 0.35164), (8.01, 0.27180), (72.13, 0.12932)]
)
def test_calibrate_sigma_inverts_theorem_4_1(target, expected):
    acct = DPSGDLeakageAccountant()
    sigma = acct.calibrate_sigma(target, q=0.02, steps=100)
    assert sigma == pytest.approx(expected, abs=5e-6)
    assert acct.leakage_bits(0.02, sigma, 100) == pytest.approx(target, rel=1e-8)


def test_composition_over_runs():
    acct = DPSGDLeakageAccountant()
    acct.add_run(0.01, 1.0, 500).add_run(0.01, 1.0, 500).add_run(0.1, 2.0, 10)
    single = DPSGDLeakageAccountant().add_run(0.01, 1.0, 1000).leakage_bits_
    assert acct.leakage_bits_ == pytest.approx(
        single + DPSGDLeakageAccountant().add_run(0.1, 2.0, 10).leakage_bits_, rel=1e-12
    )


def test_epsilon_matches_opacus_rdp():
    analysis = pytest.importorskip("opacus.accountants.analysis.rdp")
    from skdc.privacy._subsampled_gaussian import DEFAULT_ORDERS

    acct = DPSGDLeakageAccountant().add_run(1 / 49, 1.11, 4900).add_run(0.1, 2.5, 30)
    rdp = sum(
        analysis.compute_rdp(q=q, noise_multiplier=s, steps=t, orders=list(DEFAULT_ORDERS))
        for q, s, t in [(1 / 49, 1.11, 4900), (0.1, 2.5, 30)]
    )
    eps_ref, alpha_ref = analysis.get_privacy_spent(orders=list(DEFAULT_ORDERS), rdp=rdp,
                                                    delta=1e-5)
    eps, alpha = acct.epsilon(1e-5)
    assert eps == pytest.approx(eps_ref, rel=1e-8)
    assert alpha == alpha_ref


@pytest.mark.parametrize("sigma", [0.0, -1.0])
def test_non_positive_sigma_refused(sigma):
    with pytest.raises(ValueError, match="sigma must be > 0"):
        DPSGDLeakageAccountant().add_run(0.1, sigma, 10)


@pytest.mark.parametrize("q", [0.0, -0.1, 1.5])
def test_sampling_rate_outside_unit_interval_refused(q):
    with pytest.raises(ValueError, match=r"sampling rate q must lie in \(0, 1\]"):
        DPSGDLeakageAccountant().add_run(q, 1.0, 10)


@pytest.mark.parametrize("delta", [0.0, 1.0, -1e-5])
def test_delta_outside_unit_interval_refused(delta):
    acct = DPSGDLeakageAccountant().add_run(0.1, 1.0, 10)
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        acct.epsilon(delta)


# -- (epsilon, delta) with Opacus' PRV accountant, and calibration to a target epsilon -------
# App. G.4 of Bourne and Allison: CIFAR-10 / CelebA run T = 4400 steps at q = 1/44 with an
# expected batch of 1024, so n_train = 1024 * 44 = 45,056 and delta = n_train^-1.1.
_Q, _T = 1 / 44, 4400
_DELTA = 45_056**-1.1


@pytest.mark.parametrize("eps, sigma", [(1, 5.837518), (2, 3.167411)])
def test_prv_epsilon_at_the_papers_unrounded_multipliers(eps, sigma):
    pytest.importorskip("opacus")
    acct = DPSGDLeakageAccountant().add_run(_Q, sigma, _T)
    got, order = acct.epsilon(_DELTA, accountant="prv")
    assert got == pytest.approx(eps, rel=1e-4)
    assert math.isnan(order)
    assert acct.epsilon(_DELTA, accountant="rdp")[0] > got  # PRV is the tighter accountant


def test_calibrate_sigma_prv_recovers_the_papers_multiplier():
    pytest.importorskip("opacus")
    sigma = calibrate_sigma(2.0, delta=_DELTA, q=_Q, steps=_T)
    assert sigma == pytest.approx(3.167411, rel=2e-5)
    # what it returns spends at most the target
    assert DPSGDLeakageAccountant().add_run(_Q, sigma, _T).epsilon(
        _DELTA, accountant="prv")[0] <= 2.0


def test_rdp_epsilon_is_what_the_authors_code_logged():
    # the authors' logs record "eps_8e-06" = 69.17 for the epsilon = 64 run (sigma 0.503697):
    # Opacus' RDP accountant at delta = 45,056^-1.1 = 7.6e-6
    acct = DPSGDLeakageAccountant().add_run(_Q, 0.503697, _T)
    assert round(acct.epsilon(_DELTA, accountant="rdp")[0], 2) == 69.17
    assert round(_DELTA, 6) == 8e-6


def test_calibrate_sigma_rdp_matches_opacus_bisection():
    utils = pytest.importorskip("opacus.accountants.utils")
    ref = utils.get_noise_multiplier(target_epsilon=4.0, target_delta=_DELTA, sample_rate=_Q,
                                     steps=_T, accountant="rdp", epsilon_tolerance=1e-5)
    sigma = calibrate_sigma(4.0, delta=_DELTA, q=_Q, steps=_T, accountant="rdp", rtol=1e-7)
    assert sigma == pytest.approx(ref, rel=1e-5)


def _analytic_gaussian_epsilon(mu, delta):
    """Exact epsilon of the Gaussian mechanism with sensitivity / std = mu (Balle and Wang,
    2018, Theorem 8): delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    from scipy import optimize, stats

    def gap(eps):
        return (stats.norm.cdf(-eps / mu + mu / 2)
                - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2) - delta)

    return optimize.brentq(gap, 0.0, 100.0, xtol=1e-12)


def test_prv_full_batch_is_the_exact_gaussian_mechanism():
    pytest.importorskip("opacus")
    # q = 1: four steps at sigma = 2 compose to one Gaussian mechanism with mu = sqrt(4) / 2
    exact = _analytic_gaussian_epsilon(1.0, 1e-5)
    got, _ = DPSGDLeakageAccountant().add_run(1.0, 2.0, 4).epsilon(1e-5, accountant="prv")
    assert exact <= got <= exact + 0.02  # Opacus' upper bound at eps_error = 0.01


def test_prv_composes_separate_runs():
    pytest.importorskip("opacus")
    split = DPSGDLeakageAccountant().add_run(0.05, 1.5, 60).add_run(0.05, 1.5, 40)
    whole = DPSGDLeakageAccountant().add_run(0.05, 1.5, 100)
    a = split.epsilon(1e-5, accountant="prv")[0]
    b = whole.epsilon(1e-5, accountant="prv")[0]
    assert a == pytest.approx(b, rel=0, abs=0.02)
    assert DPSGDLeakageAccountant().epsilon(1e-5, accountant="prv")[0] == 0.0


def test_calibration_errors_are_clear():
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="target_epsilon"):
        calibrate_sigma(0.0, delta=1e-5, q=0.1, steps=10)
    with pytest.raises(InvalidParameterError, match="accountant"):
        calibrate_sigma(1.0, delta=1e-5, q=0.1, steps=10, accountant="moments")
    with pytest.raises(InvalidParameterError, match="steps"):
        calibrate_sigma(1.0, delta=1e-5, q=0.1, steps=0)
    with pytest.raises(ValueError, match="budget is too small"):
        calibrate_sigma(1e-7, delta=1e-5, q=1.0, steps=10, accountant="rdp")
    with pytest.raises(ValueError, match="accountant must be 'prv'"):
        DPSGDLeakageAccountant().add_run(0.1, 1.0, 5).epsilon(1e-5, accountant="moments")


@pytest.mark.parametrize("accountant", ["rdp", "prv"])
def test_calibrate_sigma_below_the_range_is_a_clear_error(accountant):
    """Issue 24: ``calibrate_sigma(1e6, delta=0.5, q=0.01, steps=1)`` raised ZeroDivisionError.

    The search stepped to sigma = e**-700, whose square underflows. The right answer: at
    delta = 0.5 the run spends at most this epsilon even at the smallest multiplier the search
    considers (0.01), so the noise the budget allows lies below the accountants' range.
    """
    if accountant == "prv":
        pytest.importorskip("opacus")
    with pytest.raises(ValueError, match=r"needs a noise multiplier below 0\.01.*0\.01 "
                                         r"already spends at most"):
        calibrate_sigma(1e6, delta=0.5, q=0.01, steps=1, accountant=accountant)
    # the accountant agrees: sigma = 0.01 spends less than the target
    acct = DPSGDLeakageAccountant().add_run(q=0.01, sigma=0.01, steps=1)
    assert acct.epsilon(0.5, accountant="rdp")[0] <= 1e6


def test_calibrate_sigma_near_the_bottom_of_the_range():
    # a large budget whose multiplier lies just above 0.01: a first step far below the range
    target = 5000.0
    sigma = calibrate_sigma(target, delta=1e-5, q=0.01, steps=1, accountant="rdp", rtol=1e-8)
    assert 0.01 < sigma < 0.02

    def eps(s):
        return DPSGDLeakageAccountant().add_run(0.01, s, 1).epsilon(1e-5, accountant="rdp")[0]

    assert eps(sigma) <= target < eps(sigma * (1 - 1e-6))
