"""The analyst's objects hold nothing that regenerates a participant's anchor noise.

The anchor noise ``W_i`` is drawn on the participant side, by the mechanism, from the
participant's own noise stream; the analyst's aligner receives ``B_i + v W_i`` and holds no seed
(developer guide, "Randomness"). These tests attack that claim the way a colluding analyst would.
"""

import pickle
import warnings
from numbers import Integral

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from skdc import IGDP, GOPPAligner, Uploads
from skdc.mechanisms._base import _unit_anchor_noise
from skdc.metrics import make_attack_scorer, relative_error
from skdc.utils._linalg import polar

P, D, V = 3, 6, 0.05
# unusual seeds, so that no small integer of the aligner's state coincides with them by chance
SECRET_SEED, NOISE_SEED = 72_431, 918_273


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.RandomState(0)
    X = rng.randn(240, D)
    y = (X[:, 0] > 0).astype(int)
    pipe = Pipeline([
        ("gdp", IGDP(P, random_state=SECRET_SEED, noise_random_state=NOISE_SEED)),
        ("align", GOPPAligner(v=V)),
        ("clf", LogisticRegression()),
    ]).fit(X, y)
    return X, y, pipe


def _seed_like_integers(obj):
    """Every integer in an object's parameters and fitted state (scalars and int arrays)."""
    found = set()

    def walk(value):
        if isinstance(value, (bool, np.bool_)):
            return
        if isinstance(value, Integral):
            found.add(int(value))
        elif isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
            found.add(int(value))
        elif isinstance(value, np.ndarray) and value.dtype.kind in "iu" and value.size < 10_000:
            found.update(int(v) for v in value.ravel())
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                walk(v)

    walk(obj.get_params(deep=True))
    walk(vars(obj))
    return sorted(k for k in found if k >= 0)


def _noise_guesses(seed, shape, participant):
    """What a seed could regenerate: every recipe skdc uses or ever used for W_i."""
    # the mechanism's own stream, seeded directly, through noise_random_state or random_state
    yield _unit_anchor_noise(seed % 2**32, participant, shape)
    X = np.zeros((P, shape[1]))
    for params in ({"noise_random_state": seed}, {"random_state": seed}):
        if seed >= 2**32:
            continue
        mech = IGDP(P, **params).fit(X, participant=np.arange(P))
        yield mech.transform(X[:1], participant=[participant]).unit_anchor_noise[participant]
    # the first design: the aligner's random_state seeded default_rng([seed', i])
    derived = int(np.random.RandomState(seed % 2**32).randint(np.iinfo(np.int32).max))
    for s in (seed, derived):
        yield np.random.default_rng([s, participant]).standard_normal(shape)


def _known_anchor_inversion(A, B):
    """Known-anchor recovery of (O, Psi) from B = A O + 1 Psi^T (+ noise), A centered.

    The orthogonal Procrustes estimate ``O = Pi(A^T (B - 1 psi^T))``: exact on a clean upload
    (Algorithm 3 of the GDP paper), the OP attack of Section 4.4 on a noisy one.
    """
    psi = B.mean(axis=0)
    return polar((A - A.mean(axis=0)).T @ (B - psi)), psi


def test_seed_guessing_analyst_does_no_better_than_procrustes(fitted):
    X, y, pipe = fitted
    aligner = pickle.loads(pickle.dumps(pipe["align"]))  # what the analyst holds
    mech = pipe["gdp"]
    A = mech.anchor_  # disclosed by colluder 0, with its own secret
    uploads = mech.transform(X)
    rows = uploads.participant == 1
    Y1, X1 = np.asarray(uploads)[rows], X[rows]
    B1 = aligner.anchor_uploads_[1]
    v = aligner.get_params()["v"]

    def attack(W):
        O, psi = _known_anchor_inversion(A, B1 - v * W)
        return relative_error(X1, (Y1 - psi) @ O.T)

    # the attack machinery works: with the true noise it recovers the target exactly
    assert attack(uploads.unit_anchor_noise[1]) < 1e-10
    procrustes = make_attack_scorer("procrustes", colluder=0, target=1)(pipe, X, y)
    assert procrustes > 0.05
    candidates = _seed_like_integers(aligner)
    assert 500 in candidates  # max_iter: the search does read the aligner's parameters
    best = min(attack(W) for seed in candidates for W in _noise_guesses(seed, B1.shape, 1))
    print(f"seed-guessing attack {best:.3f} vs procrustes scorer {procrustes:.3f} "
          f"({len(candidates)} integers tried)")
    # a wrong guess only swaps the noise for independent noise: the least error over the ~20
    # guesses scatters around the Procrustes attack's (within about 15 % here), while one right
    # guess would recover the target to 1e-10, as above
    assert best >= 0.8 * procrustes, (best, procrustes)


def test_noise_seed_changes_w_and_aligner_changes_nothing(fitted):
    X, y, pipe = fitted
    mech = pipe["gdp"]
    U = mech.transform(X)
    clean = [mech.anchor_ @ mech.rotations_[i] + mech.translations_[i] for i in range(P)]
    assert_allclose(np.stack(U.anchors), np.stack(clean), rtol=0, atol=1e-13)
    W = np.stack(U.unit_anchor_noise)
    assert W.shape == (P, mech.anchor_.shape[0], D)
    assert abs(W.mean()) < 0.1 and abs(W.std() - 1) < 0.1

    other = clone(mech).set_params(noise_random_state=NOISE_SEED + 1).fit(X)
    assert_array_equal(other.rotations_, mech.rotations_)  # the deployment stays fixed
    assert not np.allclose(np.stack(other.transform(X).unit_anchor_noise), W)

    # whatever the aligner's settings, it scales the same W_i: common random numbers over v
    for params in ({"v": V}, {"v": 0.2}, {"v": 0.01, "tol": 1e-3}, {"v": 0.1, "max_iter": 7},
                   {"v": 0.3, "acceleration": None}):
        aligner = GOPPAligner(**params)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the capped runs
            aligner.fit(U)
        got = (aligner.anchor_uploads_ - np.stack(U.anchors)) / params["v"]
        assert_allclose(got, W, rtol=0, atol=1e-12)
    assert "random_state" not in GOPPAligner().get_params()


def test_pickled_aligner_carries_neither_noise_nor_clean_anchor_uploads(fitted):
    X, y, pipe = fitted
    blob = pickle.dumps(pipe["align"])
    U = pipe["gdp"].transform(X[:1])
    for arr in [*U.unit_anchor_noise, *U.anchors, pipe["gdp"].anchor_]:
        for value in np.asarray(arr, dtype=np.float64).ravel():
            assert value.tobytes() not in blob


def test_anchor_noise_without_unit_noise_is_refused(fitted):
    X, y, pipe = fitted
    U = pipe["gdp"].transform(X)
    noisy = Uploads(np.asarray(U), U.participant, anchors=U.noisy_anchors(V))
    with pytest.raises(ValueError, match=r"GOPPAligner\(v=0.05\).*already noisy.*v=0"):
        GOPPAligner(v=V).fit(noisy)
    # on received (already noisy) uploads v=0 is the analyst's solve, and gives the same fit
    a = GOPPAligner(v=0).fit(noisy)
    assert_array_equal(a.anchor_uploads_, pipe["align"].anchor_uploads_)
    assert_array_equal(a.rotations_, pipe["align"].rotations_)


def test_uploads_keep_unit_anchor_noise_through_slicing_and_pickling(fitted):
    X, y, pipe = fitted
    U = pipe["gdp"].transform(X)
    for view in (U[:10], U[U.participant == 2], pickle.loads(pickle.dumps(U)),
                 Uploads.concatenate([U[:5], U[5:]])):
        assert view.unit_anchor_noise is not None
        assert_array_equal(np.stack(view.unit_anchor_noise), np.stack(U.unit_anchor_noise))
    with pytest.raises(ValueError, match="shape of that participant's anchor upload"):
        Uploads(np.asarray(U), U.participant, anchors=U.anchors,
                unit_anchor_noise=[w[:, :2] for w in U.unit_anchor_noise])
    with pytest.raises(ValueError, match="without anchor uploads"):
        Uploads(np.asarray(U), U.participant, unit_anchor_noise=U.unit_anchor_noise)


def test_sweep_redraws_the_participants_noise_and_keeps_the_deployment(fitted):
    from skdc.experiments import privacy_utility_sweep

    X, y, pipe = fitted
    seen = []

    def rotation_probe(est, X_test, y_test):
        seen.append((est["gdp"].get_params()["noise_random_state"],
                     est["gdp"].rotations_.copy(), est["align"].anchor_uploads_.copy()))
        return 0.0

    df = privacy_utility_sweep(clone(pipe), X, y, param="align__v", values=[V, V], n_draws=2,
                               attacks={"probe": rotation_probe}, random_state=0)
    seeds = [s for s, _, _ in seen]
    assert sorted(seeds) == sorted(df["seed"].tolist()) and len(set(seeds)) == len(seeds)
    for _, rotations, _ in seen:  # the secrets (the deployment) stay fixed
        assert_array_equal(rotations, pipe["gdp"].rotations_)
    assert not np.allclose(seen[0][2], seen[1][2])  # the anchor noise is redrawn


def test_an_upload_file_carries_only_the_noisy_anchor_upload(fitted, tmp_path):
    from skdc.protocol import load_uploads, save_simulated_uploads

    X, y, pipe = fitted
    U = pipe["gdp"].transform(X)
    paths = save_simulated_uploads(tmp_path, U, mechanism=pipe["gdp"], v=V)
    blob = open(paths[1], "rb").read()
    for arr in (U.unit_anchor_noise[1], U.anchors[1]):
        assert not any(value.tobytes() in blob for value in arr.ravel())
    loaded = load_uploads(paths).uploads
    assert loaded.unit_anchor_noise is None
    assert_allclose(loaded.anchors[1], U.anchors[1] + V * U.unit_anchor_noise[1], rtol=0, atol=0)
