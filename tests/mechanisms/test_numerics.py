"""Mechanisms and aligners at awkward scales: tiny, huge, constant and duplicated data."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.spatial.distance import pdist
from sklearn.pipeline import make_pipeline

from skdc import GDP, IGDP, GOPPAligner
from skdc.mechanisms import KernelPCAMechanism, PCAMechanism


def _rows(scale, n=60, d=4, seed=0):
    return scale * np.random.RandomState(seed).randn(n, d)


def _aligned(X, **mech):
    pipe = make_pipeline(IGDP(3, random_state=0, **mech), GOPPAligner(v=0.0))
    return pipe.fit_transform(X)


@pytest.mark.parametrize("make", [lambda: IGDP(3, random_state=0), lambda: GDP(random_state=0)])
def test_rows_erased_by_the_translation_are_refused(make):
    # at 1e-150 every upload row would equal the translation (all aligned distances 0)
    with pytest.raises(ValueError, match=r"too small for the translation.*StandardScaler"):
        make().fit(_rows(1e-150)).transform(_rows(1e-150))


def test_rows_losing_digits_warn_with_the_count():
    X = _rows(1e-8)
    mech = IGDP(3, random_state=0)
    with pytest.warns(UserWarning, match=r"loses about [78] of the rows' 16 significant digit"):
        U = mech.fit_transform(X)
    # what the warning counts: the round trip keeps only about 8 digits
    err = np.abs(mech.inverse_transform(U) - X).max() / np.abs(X).max()
    assert 1e-10 < err < 1e-6


def test_rows_at_a_sane_scale_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        IGDP(3, random_state=0).fit_transform(_rows(1e-3))


def test_translation_at_the_rows_scale_keeps_every_digit():
    # the documented remedy: a translation in the rows' units keeps the rows exact
    X = _rows(1e-8)
    mech = IGDP(3, translation_scale=1e-8, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        U = mech.fit_transform(X)
    assert_allclose(mech.inverse_transform(U), X, rtol=0, atol=1e-13 * np.abs(X).max())


def test_huge_rows_keep_their_geometry_and_overflow_is_refused():
    X = _rows(1e200)
    assert_allclose(pdist(_aligned(X)), pdist(X), rtol=1e-9, atol=0)
    with pytest.raises(ValueError, match="overflow float64"):
        IGDP(3, random_state=0).fit_transform(1e308 * np.sign(_rows(1.0)))


def test_constant_columns_pass_through_every_mechanism():
    X = _rows(1.0)
    X[:, 1] = 3.0
    assert_allclose(pdist(_aligned(X)), pdist(X), rtol=1e-10, atol=0)
    for mech in (PCAMechanism(3, n_components=2, anchor="uniform", n_anchors=12,
                              random_state=0),
                 KernelPCAMechanism(3, n_components=2, anchor="uniform", n_anchors=12,
                                    random_state=0)):
        U = mech.fit_transform(X)
        assert np.all(np.isfinite(U)) and all(np.all(np.isfinite(b)) for b in U.anchors)


def test_near_duplicate_participants_align():
    # three participants holding the same rows (up to 1e-12): alignment stays exact
    base = _rows(1.0, n=20)
    X = np.vstack([base, base + 1e-12, base - 1e-12])
    ids = np.repeat(np.arange(3), 20)
    mech = IGDP(3, random_state=0)
    U = mech.fit_transform(X, participant=ids)
    align = GOPPAligner(v=0.0).fit(U)
    Z = align.transform(U)
    assert_allclose(Z[:20], Z[20:40], rtol=0, atol=1e-10)
    R = align.rotations_
    assert_allclose(np.swapaxes(R, 1, 2) @ R, np.broadcast_to(np.eye(4), R.shape), rtol=0,
                    atol=1e-12)
