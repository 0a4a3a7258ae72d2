import numpy as np
import pytest
import sklearn
from scipy import stats
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from skdc import CGDP, GDP, IGDP, ReferenceAligner
from skdc.utils import haar_orthogonal, polar


def _data(seed=0, n=60, d=5):
    return np.random.RandomState(seed).randn(n, d)


# -- primitives ------------------------------------------------------------------------------
def test_haar_orthogonal_law():
    # Haar sampling of the secret O (Def 2.3 of the GDP paper): orthogonal, det takes both
    # signs about equally, E[O_11^2] = 1/d
    rng = np.random.RandomState(0)
    d = 4
    draws = np.stack([haar_orthogonal(d, rng) for _ in range(4000)])
    assert np.abs(np.einsum("kji,kjl->kil", draws, draws) - np.eye(d)).max() < 1e-12
    dets = np.linalg.det(draws)
    assert abs(np.mean(dets > 0) - 0.5) < 0.03
    assert abs(np.mean(draws[:, 0, 0] ** 2) - 1 / d) < 0.02


def test_polar_factor_maximises_inner_product():
    # polar projection, eq. (30)-(31) of the GDP paper: Pi(S) is orthogonal and beats 1,000
    # random Haar matrices on <S, R>
    rng = np.random.RandomState(1)
    S = rng.randn(4, 4)
    P = polar(S)
    np.testing.assert_allclose(P.T @ P, np.eye(4), rtol=0, atol=1e-12)
    best = np.sum(S * P)
    assert all(np.sum(S * haar_orthogonal(4, rng)) <= best + 1e-12 for _ in range(1000))


# -- GDP -------------------------------------------------------------------------------------
def test_gdp_round_trip_and_noise_law():
    X = _data(n=3000, d=3)
    gdp = GDP(random_state=0).fit(X)
    np.testing.assert_allclose(gdp.inverse_transform(gdp.transform(X)), X, rtol=0, atol=1e-12)
    noisy = GDP(noise=0.5, random_state=0).fit(X)
    W = (noisy.transform(X) - (X @ noisy.rotation_ + noisy.translation_)) / 0.5
    assert stats.kstest(W.ravel(), "norm").pvalue > 1e-3


def test_gdp_same_row_same_noise():
    X = _data()
    gdp = GDP(noise=1.0, random_state=0).fit(X)
    twice = gdp.transform(np.vstack([X[:3], X[:3]]))
    np.testing.assert_array_equal(twice[:3], twice[3:])


# -- C-GDP and I-GDP -------------------------------------------------------------------------
def test_cgdp_uses_igdp_participant_zero_secret():
    X = _data()
    c = CGDP(4, random_state=3).fit(X)
    i = IGDP(4, random_state=3).fit(X)
    for k in range(4):
        np.testing.assert_array_equal(c.rotations_[k], i.rotations_[0])
        np.testing.assert_array_equal(c.translations_[k], i.translations_[0])
    assert not np.allclose(i.rotations_[0], i.rotations_[1])


def test_each_participant_secret_has_its_own_stream():
    # participant i's secret depends on the seed and i only: the stream documented in
    # BaseMechanism._participant_rng, recomputed here from the seed
    secret_seed = np.random.RandomState(7).randint(np.iinfo(np.int32).max, size=4)[0]
    for p in (3, 8):
        mech = IGDP(p, translation_scale=2.0, random_state=7).fit(_data(n=40, d=4),
                                                                  participant=np.arange(40) % p)
        for i in (0, 2):
            rng = np.random.RandomState(
                np.random.SeedSequence([secret_seed, i]).generate_state(8))
            O = haar_orthogonal(4, rng)
            np.testing.assert_array_equal(mech.rotations_[i], O)
            np.testing.assert_array_equal(mech.translations_[i], 2.0 * rng.standard_normal(4))


@pytest.mark.parametrize("cls", [IGDP, CGDP])
def test_fit_one_draws_one_participant_exactly_as_the_full_fit(cls):
    X = _data(n=30, d=4)
    ids = np.arange(30) % 3
    kw = dict(noise=0.1, anchor="orthonormal", random_state=4, noise_random_state=9)
    full = cls(3, **kw).fit(X, participant=ids)
    Y_full = full.transform(X, participant=ids)
    for i in range(3):
        one = cls(3, **kw).fit_one(i, 4)
        assert one.rotations_.shape == (1, 4, 4)
        np.testing.assert_array_equal(one.rotations_[0], full.rotations_[i])
        np.testing.assert_array_equal(one.translations_[0], full.translations_[i])
        Y = one.transform(X[ids == i], participant=np.full((ids == i).sum(), i))
        np.testing.assert_array_equal(Y, Y_full[ids == i])  # private-data noise included
        np.testing.assert_array_equal(Y.participant, 0)
        np.testing.assert_array_equal(Y.anchors[0], Y_full.anchors[i])
        np.testing.assert_array_equal(Y.unit_anchor_noise[0], Y_full.unit_anchor_noise[i])
        np.testing.assert_array_equal(one.inverse_transform(Y), full.inverse_transform(
            Y_full)[ids == i])
    with pytest.raises(ValueError, match="fitted for participant 1 only"):
        cls(3, **kw).fit_one(1, 4).transform(X[:2], participant=[1, 2])
    with pytest.raises(ValueError, match=r"participant must be an int in 0 \.\. 2"):
        cls(3, **kw).fit_one(3, 4)
    with pytest.raises(ValueError, match="n_features must be a positive int"):
        cls(3, **kw).fit_one(0, True)


@pytest.mark.parametrize("param", ["random_state", "noise_random_state", "n_participants"])
@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_booleans_are_not_seeds_or_counts(param, value):
    # True passed the int constraints (bool is an Integral); numpy's bool_ and n_participants
    # False are refused by scikit-learn's own check
    refused = f"The '{param}' parameter of IGDP .*(boolean|Got {value} instead)"
    with pytest.raises(ValueError, match=refused):
        IGDP(**{param: value}).fit(_data())
    with pytest.raises(ValueError, match=refused):
        IGDP(**{param: value}).fit_one(0, 3)
    if param == "random_state":
        with pytest.raises(ValueError, match=f"The 'random_state' parameter of GDP .*"
                                             f"(boolean|Got {value} instead)"):
            GDP(random_state=value).fit(_data())


def test_igdp_uploads_are_the_participant_maps():
    X = _data()
    mech = IGDP(3, random_state=0)
    Y = mech.fit_transform(X)
    for k in range(3):
        rows = Y.participant == k
        np.testing.assert_allclose(
            Y[rows], X[rows] @ mech.rotations_[k] + mech.translations_[k], rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(
            Y.anchors[k], mech.anchor_ @ mech.rotations_[k] + mech.translations_[k],
            rtol=0, atol=1e-12
        )
    assert mech.anchor_.shape == (4 * X.shape[1], X.shape[1])
    np.testing.assert_allclose(mech.inverse_transform(Y), X, rtol=0, atol=1e-12)


def test_known_secret_inversion_c_gdp():
    # Prop 2.5 of the GDP paper: the common secret inverts every participant; with private noise the
    # inversion returns X + sigma W O^T exactly
    X = _data(n=80)
    mech = CGDP(4, random_state=0)
    Y = mech.fit_transform(X)
    O, psi = mech.rotations_[0], mech.translations_[0]
    rel = np.linalg.norm((Y - psi) @ O.T - X) / np.linalg.norm(X)
    assert rel < 1e-12
    sigma = 0.3
    noisy = CGDP(4, noise=sigma, random_state=0)
    Yn = noisy.fit_transform(X)
    W = (Yn - X @ O - psi) / sigma
    np.testing.assert_allclose((Yn - psi) @ O.T, X + sigma * W @ O.T, rtol=0, atol=1e-12)


def test_private_noise_equivalence_coupled():
    # Prop 3.2 and Cor 3.3 of the GDP paper: with W^C_i = W_i O_i^T O_s, AA-I-GDP (private
    # noise) and C-GDP (private noise) give the same analyst matrix to ~1e-13
    X = _data(n=90, d=6)
    sigma = 0.7
    mech = IGDP(3, noise=sigma, random_state=1)
    Y = mech.fit_transform(X)
    Z_aa = ReferenceAligner(reference=0).fit_transform(Y)
    O, psi, s = mech.rotations_, mech.translations_, 0
    Z_c = np.empty_like(Z_aa)
    W_til = []
    for k in range(3):
        rows = Y.participant == k
        W = (Y[rows] - X[rows] @ O[k] - psi[k]) / sigma
        W_c = W @ O[k].T @ O[s]
        W_til.append(W_c)
        Z_c[rows] = X[rows] @ O[s] + psi[s] + sigma * W_c
    assert np.linalg.norm(Z_aa - Z_c) / np.linalg.norm(Z_c) < 1e-12


def test_rotated_noise_is_standard_normal():
    # Cor 3.3 of the GDP paper: entries of W O_i^T O_s are i.i.d. N(0, 1) for fixed secrets
    X = _data(n=40000, d=5)
    mech = IGDP(2, noise=1.0, random_state=5)
    Y = mech.fit_transform(X)
    rows = Y.participant == 1
    W = Y[rows] - X[rows] @ mech.rotations_[1] - mech.translations_[1]
    W_til = np.asarray(W @ mech.rotations_[1].T @ mech.rotations_[0]).ravel()
    assert W_til.size >= 10**4
    assert stats.kstest(W_til, "norm").pvalue > 1e-3
    assert abs(W_til.var() - 1) < 0.02


def test_fit_transform_equals_fit_then_transform_with_noise():
    X = _data()
    a = IGDP(3, noise=0.5, random_state=0).fit_transform(X)
    b = IGDP(3, noise=0.5, random_state=0).fit(X).transform(X)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a.participant, b.participant)


def test_transform_is_position_free():
    X = _data()
    mech = IGDP(3, noise=0.5, random_state=0).fit(X)
    full = mech.transform(X)
    perm = np.random.RandomState(0).permutation(X.shape[0])
    np.testing.assert_array_equal(mech.transform(X[perm]), full[perm])
    np.testing.assert_array_equal(mech.transform(X[perm]).participant, full.participant[perm])


def test_seeds_reproducible_and_distinct():
    X = _data()
    a = IGDP(3, random_state=0).fit(X)
    b = IGDP(3, random_state=0).fit(X)
    c = IGDP(3, random_state=1).fit(X)
    np.testing.assert_array_equal(a.rotations_, b.rotations_)
    assert not np.allclose(a.rotations_, c.rotations_)


def test_hash_assignment_is_close_to_balanced():
    X = _data(n=3000)
    Y = IGDP(5, random_state=0).fit_transform(X)
    counts = np.bincount(Y.participant)
    assert counts.min() > 500


def test_routed_participants_reach_the_mechanism():
    X = _data(n=60)
    rng = np.random.RandomState(0)
    y = rng.randint(0, 2, 60)
    ids = np.arange(60) % 3
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("gdp", IGDP(3, random_state=0)), ("align", ReferenceAligner()),
                         ("clf", LogisticRegression())])
        pipe.fit(X, y, participant=ids)
        Y = pipe.named_steps["gdp"].transform(X, participant=ids)
        np.testing.assert_array_equal(Y.participant, ids)
        pred = pipe.predict(X, participant=ids)
    assert pred.shape == (60,)


def test_callable_and_array_anchors():
    X = _data(d=3)
    A = np.random.RandomState(0).randn(10, 3) + 5.0  # general, non-centered
    m = IGDP(2, anchor=A, random_state=0).fit(X)
    np.testing.assert_array_equal(m.anchor_, A)
    m2 = IGDP(2, anchor=lambda r, d, random_state: np.ones((r, d)) + np.eye(r, d),
              n_anchors=8, random_state=0).fit(X)
    assert m2.anchor_.shape == (8, 3)
    m3 = IGDP(2, anchor="uniform", random_state=0).fit(X)
    assert m3.anchor_.min() >= 0


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[1.0, np.nan], [1.0, 2.0], [3, 4]]), "NaN"),
        (np.array([[1.0, np.inf], [1.0, 2.0], [3, 4]]), "infinity"),
        (np.ones(5), "2D array"),
    ],
)
def test_bad_x(X, match):
    with pytest.raises(ValueError, match=match):
        IGDP(2).fit(X)


def test_fewer_rows_than_participants():
    with pytest.raises(ValueError, match="fewer than n_participants=4"):
        IGDP(4).fit(np.ones((3, 2)))


def test_participant_without_rows():
    X = _data(n=10)
    with pytest.raises(ValueError, match=r"participant\(s\) \[2\] have no rows"):
        IGDP(3).fit(X, participant=np.arange(10) % 2)


def test_participant_id_out_of_range():
    with pytest.raises(ValueError, match="Set n_participants=6"):
        IGDP(3).fit(_data(n=10), participant=np.full(10, 5))


def test_unseen_participant_at_transform():
    X = _data(n=10)
    mech = IGDP(2, random_state=0).fit(X, participant=np.arange(10) % 2)
    # an id outside the fitted range is refused, naming the fitted ones
    with pytest.raises(ValueError, match=r"id\(s\) \[3\] were not seen when IGDP was fitted"):
        mech.transform(X, participant=np.full(10, 3))


@pytest.mark.parametrize("n_anchors", [2, 5])
def test_anchor_with_too_few_rows(n_anchors):
    with pytest.raises(ValueError, match="n_anchors >= n_features \\+ 1"):
        IGDP(2, n_anchors=n_anchors, random_state=0).fit(_data(d=5))


def test_rank_deficient_centered_anchor():
    A = np.tile(np.arange(10.0)[:, None], (1, 3))  # centered rank 1
    with pytest.raises(ValueError, match="rank-deficient"):
        IGDP(2, anchor=A).fit(_data(d=3))


def test_anchor_of_wrong_width():
    with pytest.raises(ValueError, match=r"shape \(n_anchors, n_features\)"):
        IGDP(2, anchor=np.ones((10, 4))).fit(_data(d=3))


def test_inverse_transform_needs_participants():
    X = _data()
    mech = IGDP(3, random_state=0).fit(X)
    with pytest.raises(ValueError, match="needs to know each row's participant"):
        mech.inverse_transform(np.asarray(mech.transform(X)))
