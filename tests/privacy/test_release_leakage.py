"""Leakage of one-shot releases (Bourne and Allison, arXiv:2610.13768): the Gaussian release
through Lemma 3.4 (the Gaussian-channel bounds), the GaussMix sketch at the alpha -> 1 limit of
Lemma 1 of Lev et al. (arXiv:2505.24603), and the binary symmetric channel of App. G.6."""

import math

import numpy as np
import pytest

from skdc.privacy import GaussianReleaseLeakage, GaussMixLeakage, binary_symmetric_leakage


def test_gaussian_release_isotropic():
    # x ~ N(0, I_4), noise sigma^2 = 1: (m/2) log2 2 = 2 bits
    assert GaussianReleaseLeakage(1.0, cov=np.eye(4)).leakage_bits() == pytest.approx(2.0)
    # the radius bound and the minimum of both
    g = GaussianReleaseLeakage(2.0, cov=np.eye(4), radius=0.5).leakage_bits()
    assert g == pytest.approx(0.25 / (8 * math.log(2)))
    # T releases equal one release of variance sigma^2 / T
    g_t = GaussianReleaseLeakage(1.0, cov=np.eye(4), n_releases=4).leakage_bits()
    assert g_t == pytest.approx(GaussianReleaseLeakage(0.5, cov=np.eye(4)).leakage_bits())


def test_gaussian_release_anisotropic():
    g = GaussianReleaseLeakage(1.0, cov=np.diag([4.0, 1.0])).leakage_bits()
    assert g == pytest.approx(0.5 * math.log2(10), rel=1e-12)


def test_gaussmix_leakage_is_the_kl_limit():
    g = GaussMixLeakage(k=100, sigma=math.sqrt(10.0), row_bound=1.0).leakage_bits()
    assert g == pytest.approx(0.414818, rel=1e-6)
    g2 = GaussMixLeakage(k=100, sigma=3.0, row_bound=1.0, lambda_low=1.0).leakage_bits()
    assert g2 == pytest.approx(g, rel=1e-12)


def test_binary_symmetric_channel_sub_bit_leakage():
    assert binary_symmetric_leakage(0.5, 0.9) == pytest.approx(0.531004, rel=1e-6)
    assert binary_symmetric_leakage(0.5, 0.5) == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("sigma", [0.0, -1.0])
def test_non_positive_sigma_refused(sigma):
    with pytest.raises(ValueError, match="sigma must be > 0"):
        GaussianReleaseLeakage(sigma, radius=1.0).leakage_bits()


def test_gaussian_release_needs_a_bound():
    with pytest.raises(ValueError, match="radius"):
        GaussianReleaseLeakage(1.0).leakage_bits()


def test_gaussmix_leakage_needs_zeta_above_one():
    with pytest.raises(ValueError, match="must exceed 1"):
        GaussMixLeakage(k=10, sigma=0.5, row_bound=1.0).leakage_bits()
