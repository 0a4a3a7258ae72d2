"""The Poisson-subsampled Gaussian step of Bourne and Allison (arXiv:2610.13768): its KL by
Gauss-Hermite quadrature against adaptive quadrature and the small-q approximation (Theorem 4.1),
its Renyi DP (Mironov, Talwar and Zhang, arXiv:1908.10530) at full batch, the RDP to DP
conversion, and the refusals where the noise vanishes."""

import math

import numpy as np
import pytest
from scipy import integrate

from skdc.privacy import rdp_to_dp, subsampled_gaussian_kl, subsampled_gaussian_rdp


@pytest.mark.parametrize(
    "q, sigma, expected",
    [(0.02, 0.1, 0.901961113), (0.5, 0.2, 5.574057423), (0.001, 0.5, 2.13251945e-5),
     (1 / 49, 5.574, 6.80709885e-6)],
)
def test_gauss_hermite_matches_adaptive_quadrature(q, sigma, expected):
    kl = subsampled_gaussian_kl(q, sigma)
    assert kl == pytest.approx(expected, rel=1e-8)

    def integrand(y):
        p = (1 - q) * math.exp(-(y**2) / (2 * sigma**2)) + q * math.exp(
            -((y - 1) ** 2) / (2 * sigma**2)
        )
        p /= math.sqrt(2 * math.pi) * sigma
        llr = np.logaddexp(math.log1p(-q), math.log(q) + (2 * y - 1) / (2 * sigma**2))
        return p * llr

    ref = integrate.quad(integrand, -40 * sigma - 1, 40 * sigma + 2, limit=500,
                         epsabs=0, epsrel=1e-13, points=[0.0, 0.5, 1.0])[0]
    assert kl == pytest.approx(ref, rel=1e-9)


def test_small_q_sanity():
    # small-q approximation (half the chi^2 divergence) and the closed-form upper bound
    # ln(1 + q^2 (exp(1/sigma^2) - 1))
    q, s = 0.001, 1.0
    kl = subsampled_gaussian_kl(q, s)
    assert kl == pytest.approx(0.5 * q**2 * (math.exp(1 / s**2) - 1), rel=1e-2)
    assert kl <= math.log1p(q**2 * (math.exp(1 / s**2) - 1))


def test_rdp_closed_form_at_full_batch():
    out = subsampled_gaussian_rdp(1.0, 2.0, 3, orders=[2.0, 5.5])
    np.testing.assert_allclose(out, 3 * np.array([2.0, 5.5]) / 8.0, rtol=1e-14)
    eps, _ = rdp_to_dp([0.5, 1.0], [2.0, 4.0], 1e-5, conversion="classic")
    assert eps == pytest.approx(1.0 + math.log(1e5) / 3)


def test_non_finite_quadrature_is_an_error():
    with pytest.raises(FloatingPointError, match="not finite"):
        subsampled_gaussian_kl(0.5, 1e-160)


@pytest.mark.parametrize("q", [0.01, 1.0])
def test_rdp_of_a_vanishing_noise_is_a_clear_error(q):
    # sigma**2 underflows to 0: the RDP is infinite, said in words (was ZeroDivisionError)
    with pytest.raises(FloatingPointError, match="noise is not vanishingly small"):
        subsampled_gaussian_rdp(q, 1e-200, 1, orders=[1.5, 2.0])
