"""Tests of the classical GDP attacks: known input, known sample, ICA (non-paper extensions:
the GDP paper cites them in Sections 2 and 5.1 but does not evaluate them)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skdc.attacks import ICAAttack, KnownInputAttack, KnownSampleAttack, collusion_view
from skdc.mechanisms import CGDP, IGDP
from skdc.metrics import relative_error


def _skewed(seed, n=3000):
    rng = np.random.RandomState(seed)
    # independent sources with distinct variances and distinct, skewed marginals
    return np.column_stack([s * rng.gamma(k, size=n) for s, k in [(3, 1.0), (2, 3.0),
                                                                    (1, 9.0), (0.5, 2.0)]])


@pytest.mark.parametrize("estimator", ["procrustes", "exact", "mp"])
def test_known_input_exact_with_enough_pairs(estimator):
    """Noiselessly exact once the centered leaked records span the space (n_known >= d + 1)."""
    X = np.random.RandomState(0).rand(120, 5)
    view = collusion_view(IGDP(3, random_state=0).fit(X), X, target=2)
    rec = KnownInputAttack(n_known=6, estimator=estimator, random_state=0).reconstruct(view)
    assert relative_error(view.truth.X, rec.X) < 1e-10
    assert_allclose(rec.rotation, view.truth.rotation, rtol=0, atol=1e-10)


def test_known_input_degrades_with_noise_and_few_pairs():
    X = np.random.RandomState(0).rand(300, 5)
    view = collusion_view(CGDP(2, noise=0.05, random_state=0).fit(X), X)
    errs = [relative_error(view.truth.X, KnownInputAttack(n_known=k, random_state=0)
                           .reconstruct(view).X) for k in (3, 100)]
    assert errs[0] > errs[1] > 0


def test_known_input_preconditions():
    X = np.random.RandomState(0).rand(40, 3)
    view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    with pytest.raises(ValueError, match="cannot leak n_pairs=500 pairs"):
        KnownInputAttack(n_known=500).reconstruct(view)
    with pytest.raises(ValueError, match="n_known"):
        KnownInputAttack(n_known=1).reconstruct(view)


def test_known_sample_recovers_skewed_data():
    X = _skewed(0)
    view = collusion_view(IGDP(2, random_state=3).fit(X), X)
    rec = KnownSampleAttack().reconstruct(view)
    assert relative_error(view.truth.X, rec.X) < 0.1
    assert_allclose(rec.rotation.T @ rec.rotation, np.eye(4), rtol=0, atol=1e-10)
    # without the sign step a Haar rotation would be matched only up to signs: check they
    # were resolved (each column close to the truth, not its negative)
    assert np.all(np.sum(rec.rotation * view.truth.rotation, axis=0) > 0.8)


def test_ica_recovers_independent_sources():
    X = _skewed(1)
    view = collusion_view(IGDP(2, random_state=4).fit(X), X)
    for orthogonal in (True, False):
        rec = ICAAttack(orthogonal=orthogonal, random_state=0).reconstruct(view)
        assert relative_error(view.truth.X, rec.X) < 0.15


@pytest.mark.parametrize("attack", [KnownSampleAttack(), ICAAttack(random_state=0)],
                         ids=["known_sample", "ica"])
def test_sample_attacks_need_colluder_rows(attack):
    X = _skewed(2, n=60)
    ids = np.ones(len(X), dtype=int)
    ids[:2] = 0
    mech = IGDP(2, random_state=0).fit(X, participant=ids)
    view = collusion_view(mech, X[1:], participant=ids[1:])
    with pytest.raises(ValueError, match="needs at least .* colluder rows"):
        attack.reconstruct(view)


def test_known_sample_pools_the_colluders_rows():
    """Several colluders give a larger same-population sample: on average over seeds and
    targets the known-sample attack gets better as the colluder set grows."""
    sets = [[0], [0, 2], [0, 2, 3, 4]]
    err = np.zeros(len(sets))
    for seed in range(6):
        X = _skewed(seed, n=600)
        mech = IGDP(6, random_state=seed).fit(X)
        part = mech.transform(X).participant
        for target in (1, 5):
            for j, K in enumerate(sets):
                view = collusion_view(mech, X, colluder=K, target=target)
                np.testing.assert_array_equal(view.colluder_rows, np.flatnonzero(np.isin(part, K)))
                err[j] += relative_error(view.truth.X, KnownSampleAttack().reconstruct(view).X)
    assert err[0] > err[1] > err[2], err / 12


def test_known_input_ignores_colluders():
    X = np.random.RandomState(0).rand(200, 4)
    mech = IGDP(4, random_state=0).fit(X)
    recs = [KnownInputAttack(n_known=3, random_state=0).reconstruct(
        collusion_view(mech, X, colluder=K, target=1)).X for K in ([0], [0, 2, 3])]
    np.testing.assert_array_equal(*recs)


def _reference_code_signs(Px, Py):
    """The sign rule of the GDP paper's reference code, written from its definition: divide
    each projection by max(RMS, sqrt(eps)), use the third moments, the fifth where
    |m3_x| + |m3_y| < 1e-3, and +1 where the product is >= 0."""
    floor = np.sqrt(np.finfo(float).eps)
    out = []
    for px, py in zip(Px.T, Py.T):
        zx = px / max(np.sqrt(np.mean(px**2)), floor)
        zy = py / max(np.sqrt(np.mean(py**2)), floor)
        mx, my = np.mean(zx**3), np.mean(zy**3)
        if abs(mx) + abs(my) < 1e-3:
            mx, my = np.mean(zx**5), np.mean(zy**5)
        out.append(1.0 if mx * my >= 0 else -1.0)
    return np.array(out)


def _eigvecs_decreasing(Xc):
    _, U = np.linalg.eigh(Xc.T @ Xc / len(Xc))
    return U[:, ::-1]


@pytest.mark.parametrize("seed", [0, 9])
def test_known_sample_signs_of_constant_pixels_follow_the_reference_code(seed):
    """Issue 27: digits has three constant pixels; the sign of each direction, constant ones
    included, is the reference code's (RMS floored at sqrt(eps)), read off Ohat = Ux S Uy^T.
    (With a standard deviation floored at 1e-300, direction 61 of seed 9 took +1 here.)"""
    from sklearn.datasets import load_digits

    X = load_digits().data / 16.0
    assert np.sum(X.std(axis=0) == 0) == 3
    view = collusion_view(IGDP(2, random_state=seed).fit(X), X)
    Xc = view.colluder_X - view.colluder_X.mean(axis=0)
    Yc = view.Y - view.Y.mean(axis=0)
    Ux, Uy = _eigvecs_decreasing(Xc), _eigvecs_decreasing(Yc)
    rec = KnownSampleAttack().reconstruct(view)
    chosen = np.diag(Ux.T @ rec.rotation @ Uy)
    assert_allclose(np.abs(chosen), 1.0, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(np.sign(chosen), _reference_code_signs(Xc @ Ux, Yc @ Uy))


def test_known_sample_sign_rule_on_rounding_noise():
    """A direction whose projections are rounding noise (RMS 1e-13 < sqrt(eps)) gets the sign
    of the fifth moments: here the third moments would give +1 and the fifth give -1."""
    from skdc.attacks._classical import _signed_moment_signs

    v = np.array([1.0, 1.0, 1.0, 1.0, 1.0, -1.5])  # third moment 1.625 > 0, fifth -2.59 < 0
    u = np.ones(6)  # both moments > 0
    assert np.mean(v**3) * np.mean(u**3) > 0 > np.mean(v**5) * np.mean(u**5)
    Px, Py = 1e-13 * v[:, None], 1e-13 * u[:, None]
    np.testing.assert_array_equal(_reference_code_signs(Px, Py), [-1.0])
    np.testing.assert_array_equal(_signed_moment_signs(Px, Py), [-1.0])
    # above the floor the third moments decide
    np.testing.assert_array_equal(_signed_moment_signs(Px * 1e12, Py * 1e12), [1.0])
