"""Tests of the GDP attacks against the GDP paper's equations and propositions (Prop 2.5,
Alg 3 and Prop 3.1, Prop 3.2 and Cor 3.3, Section 4.4 eq. (52)-(70))."""

import dataclasses

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.stats import kstest
from sklearn.pipeline import Pipeline

from skdc.alignment import GOPPAligner, ReferenceAligner
from skdc.attacks import (
    AlignmentMapAttack,
    KnownAnchorAttack,
    KnownSecretAttack,
    collusion_view,
)
from skdc.mechanisms import CGDP, IGDP
from skdc.metrics import relative_error


def _X(seed=0, n=150, d=6):
    return np.random.RandomState(seed).randn(n, d) + 2.0


def _pipe(mech, aligner=None):
    steps = [("gdp", mech)] + ([("align", aligner)] if aligner is not None else [])
    return Pipeline(steps)


def test_known_secret_exact_on_cgdp():
    """Prop 2.5, eq. (74): (Y - Psi) O^T = X_i exactly."""
    X = _X()
    view = collusion_view(CGDP(3, random_state=0).fit(X), X, colluder=0, target=2)
    rec = KnownSecretAttack().reconstruct(view)
    assert relative_error(view.truth.X, rec.X) < 1e-12


def test_known_secret_needs_common_secret():
    X = _X()
    view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    with pytest.raises(ValueError, match="draws an independent secret per participant"):
        KnownSecretAttack().reconstruct(view)
    with pytest.raises(ValueError, match="colluder_rotations"):
        KnownSecretAttack().reconstruct(dataclasses.replace(view, colluder_rotations=None))


@pytest.mark.parametrize("anchor", ["orthonormal", "uniform"])
@pytest.mark.parametrize("aligner", [None, ReferenceAligner(), GOPPAligner(v=0.0)],
                         ids=["none", "reference", "gopp"])
def test_known_anchor_exact_noiseless(anchor, aligner):
    """Prop 3.1, eq. (75)-(76): Algorithm 3 returns O_i, Psi_i and X_i (general and centered A)."""
    X = _X()
    view = collusion_view(_pipe(IGDP(3, anchor=anchor, random_state=1), aligner).fit(X), X,
                          target=2)
    rec = KnownAnchorAttack("exact").reconstruct(view)
    assert relative_error(view.truth.X, rec.X) < 1e-10
    assert_allclose(rec.rotation, view.truth.rotation, rtol=0, atol=1e-10)
    assert_allclose(rec.translation, view.truth.translation, rtol=0, atol=1e-10)


@pytest.mark.parametrize("aligner", [GOPPAligner(v=0.0), ReferenceAligner(reference=2)],
                         ids=["gopp", "reference"])
@pytest.mark.parametrize("attack", [KnownAnchorAttack("mp"), KnownAnchorAttack("procrustes"),
                                    AlignmentMapAttack()], ids=["mp", "op", "am"])
def test_noisy_anchor_attacks_exact_at_v0(attack, aligner):
    """Section 4.4: MP, OP and AM recover X_j to < 1e-8 when v = 0 (they reduce to Alg 3)."""
    X = _X()
    view = collusion_view(_pipe(IGDP(4, random_state=2), aligner).fit(X), X,
                          colluder=1, target=3)
    assert relative_error(view.truth.X, attack.reconstruct(view).X) < 1e-8


def test_private_noise_equivalence_coupled():
    """Prop 3.2 / Cor 3.3: coupled C-GDP and AA-I-GDP give the same analyst matrices
    and the same reconstructions; Wtil entries are N(0, 1) (Cor 3.3, in distribution)."""
    sigma = 0.3
    X = _X(n=400)
    ids = np.arange(len(X)) % 3
    aa = _pipe(IGDP(3, noise=sigma, random_state=0), ReferenceAligner())
    aa.fit(X, gdp__participant=ids)
    cg = CGDP(3, noise=sigma, random_state=0).fit(X, participant=ids)
    mech = aa["gdp"]
    O, Psi = mech.rotations_, mech.translations_
    assert_allclose(cg.rotations_[0], O[0], rtol=0)  # matched comparison (O, Psi) = (O_s, Psi_s)
    U = mech.transform(X, participant=ids)
    Z_aa = aa["align"].transform(U)
    # the AA private noise W_i, and the coupled C-GDP noise W_i^C = W_i O_i^T O_s
    Y_c = np.empty_like(Z_aa)
    W_til = []
    for i in range(3):
        rows = ids == i
        W = (np.asarray(U)[rows] - X[rows] @ O[i] - Psi[i]) / sigma
        W_til.append(W @ O[i].T @ O[0])
        Y_c[rows] = X[rows] @ O[0] + Psi[0] + sigma * W_til[-1]
    assert relative_error(Y_c, Z_aa) < 1e-12
    assert kstest(np.concatenate(W_til).ravel(), "norm").pvalue > 1e-3
    # coupled attacks coincide: C-GDP known-secret vs AA known-anchor, X_i + sigma W_i O_i^T
    view_aa = collusion_view(aa, X, participant=ids, target=2)
    view_c = collusion_view(cg, X, participant=ids, target=2)
    view_c = dataclasses.replace(view_c, Y=Y_c[ids == 2])
    rec_aa = KnownAnchorAttack().reconstruct(view_aa).X
    rec_c = KnownSecretAttack().reconstruct(view_c).X
    assert relative_error(rec_c, rec_aa) < 1e-12
    assert relative_error(view_aa.truth.X, rec_aa) > 0.01  # the noise is the only protection


def _noisy_view(view, v, rng):
    return dataclasses.replace(view, B=view.B + v * rng.standard_normal(view.B.shape))


def test_mp_unbiased_with_spec_variance_orthonormal_anchor():
    """MP error law (Ohat - O_i = v Abar^+ W_i from eq. (56)-(59)): entries of A^T Bbar_i - O_i
    have mean 0 and variance v^2 (orthonormal anchor)."""
    rng = np.random.RandomState(0)
    X = _X(d=5)
    view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    O, v = view.truth.rotation, 0.2
    errs = np.array([KnownAnchorAttack("mp").reconstruct(_noisy_view(view, v, rng)).rotation - O
                     for _ in range(400)])
    assert abs(errs.mean()) < 4 * v / np.sqrt(errs.size)
    assert_allclose(errs.var(), v**2, rtol=0.05)


def test_mp_error_law_general_anchor():
    """[DERIVED] E||Ohat - O||_F^2 = v^2 d sum_k sigma_k(Abar)^-2 for a general anchor."""
    rng = np.random.RandomState(1)
    d = 4
    X = _X(d=d)
    view = collusion_view(IGDP(2, anchor="uniform", n_anchors=12, random_state=0).fit(X), X)
    Abar = view.anchor - view.anchor.mean(0)
    s = np.linalg.svd(Abar, compute_uv=False)
    v = 0.05
    sq = [np.sum((KnownAnchorAttack("mp").reconstruct(_noisy_view(view, v, rng)).rotation
                  - view.truth.rotation) ** 2) for _ in range(2000)]
    assert_allclose(np.mean(sq), v**2 * d * np.sum(s**-2.0), rtol=0.05)


def test_am_error_vanishes_with_v():
    """AM attack error -> 0 as v -> 0 (eq. (66)-(70)); exact at v = 0, where
    Pi(O_c Rhat_c) = O_c Rhat_c (eq. (67))."""
    X = _X()
    errors = []
    for v in [1e-1, 1e-2, 1e-3, 1e-4, 0.0]:
        pipe = _pipe(IGDP(3, random_state=0), GOPPAligner(v=v)).fit(X)
        view = collusion_view(pipe, X, target=2)
        rec = AlignmentMapAttack().reconstruct(view)
        errors.append(relative_error(view.truth.X, rec.X))
        OcRc = view.colluder_rotation @ view.aligner_rotations[0]
        assert_allclose(OcRc.T @ OcRc, np.eye(X.shape[1]), rtol=0, atol=1e-12)
    assert all(a > b for a, b in zip(errors, errors[1:]))
    assert errors[-1] < 1e-8
    assert errors[3] < 2e-2 * errors[1]  # roughly linear in v (100x smaller v: ~1e-2)


def test_known_anchor_needs_an_anchor():
    X = _X()
    view = collusion_view(CGDP(2, random_state=0).fit(X), X)
    for attack in (KnownAnchorAttack(), KnownAnchorAttack("procrustes")):
        with pytest.raises(ValueError, match="needs the raw anchor A .* lacks anchor, B"):
            attack.reconstruct(view)


def test_alignment_map_needs_an_aligner():
    X = _X()
    view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    with pytest.raises(ValueError, match="analyst's alignment rotations .* lacks aligner_rot"):
        AlignmentMapAttack().reconstruct(view)


def test_attack_parameters_and_view_type_are_checked():
    with pytest.raises(ValueError, match="estimator"):
        KnownAnchorAttack("svd").reconstruct(None)
    with pytest.raises(TypeError, match="expects a CollusionView"):
        KnownAnchorAttack().reconstruct(np.zeros((3, 3)))


def test_noisy_anchor_estimators_follow_their_equations():
    """At v > 0: OP is Pi(Abar^T Bbar_i) and beats any other rotation on the anchor fit
    (eq. (61)-(65)); MP is Abar^+ Bbar_i inverted by its pseudo-inverse (eq. (57)-(60));
    AM is O_c Rhat_c Rhat_i^T (eq. (66)-(70)); every Psihat is b_i - Ohat^T a."""
    from skdc.utils import haar_orthogonal, polar

    X = _X()
    pipe = _pipe(IGDP(3, random_state=0), GOPPAligner(v=0.1)).fit(X)
    view = collusion_view(pipe, X, colluder=0, target=2)
    A, B = view.anchor, view.B
    Abar, Bbar, a, b = A - A.mean(0), B - B.mean(0), A.mean(0), B.mean(0)
    op = KnownAnchorAttack("procrustes").reconstruct(view)
    assert_allclose(op.rotation, polar(Abar.T @ Bbar), rtol=0, atol=1e-12)
    fit = np.linalg.norm(Bbar - Abar @ op.rotation)
    rng = np.random.RandomState(0)
    assert all(fit <= np.linalg.norm(Bbar - Abar @ haar_orthogonal(6, rng)) for _ in range(200))
    mp = KnownAnchorAttack("mp").reconstruct(view)
    assert_allclose(mp.rotation, np.linalg.pinv(Abar) @ Bbar, rtol=0, atol=1e-12)
    assert_allclose(mp.X, (view.Y - mp.translation) @ np.linalg.pinv(mp.rotation),
                    rtol=0, atol=1e-10)
    am = AlignmentMapAttack().reconstruct(view)
    R = pipe["align"].rotations_
    assert_allclose(am.rotation, view.colluder_rotation @ R[0] @ R[2].T, rtol=0, atol=1e-12)
    for rec in (op, mp, am):
        assert_allclose(rec.translation, b - rec.rotation.T @ a, rtol=0, atol=1e-12)


# -- several colluders ---------------------------------------------------------------------
def _rot2(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def test_am_several_colluders_closed_form_in_2d():
    """Qhat = Pi(sum_k O_k Rhat_k): for plane rotations the polar factor of a sum of rotations
    by angles t_k is the rotation by their circular mean (an independent closed form)."""
    X = _X(d=2)
    pipe = _pipe(IGDP(3, random_state=0), GOPPAligner(v=0.05)).fit(X)
    view = collusion_view(pipe, X, colluder=[0, 2], target=1)
    a0, a2, b0, b1, b2 = 0.3, -1.1, 0.7, 2.0, 0.4
    view = dataclasses.replace(
        view, colluder_rotations=(_rot2(a0), _rot2(a2)),
        aligner_rotations=np.stack([_rot2(b0), _rot2(b1), _rot2(b2)]))
    rec = AlignmentMapAttack().reconstruct(view)
    q = ((a0 + b0) + (a2 + b2)) / 2  # |t_0 - t_2| < pi: the circular mean is the plain mean
    assert_allclose(rec.rotation, _rot2(q - b1), rtol=0, atol=1e-13)


def test_am_several_colluders_matches_independent_svd():
    """Exact check of the multi-colluder AM attack against Q = U V^T from numpy's SVD of
    sum_{k in K} O_k Rhat_k, with the true colluder secrets and the analyst's fitted maps."""
    X = _X(d=4, n=200)
    pipe = _pipe(IGDP(5, random_state=3), GOPPAligner(v=0.1)).fit(X)
    K, i = [0, 2, 4], 1
    view = collusion_view(pipe, X, colluder=K, target=i)
    O, R = pipe["gdp"].rotations_, pipe["align"].rotations_
    U, _, Vt = np.linalg.svd(sum(O[k] @ R[k] for k in K))
    O_hat = U @ Vt @ R[i].T
    psi = pipe["align"].anchor_uploads_[i].mean(0) - O_hat.T @ pipe["gdp"].anchor_.mean(0)
    rows = view.target_rows
    expected = (np.asarray(pipe["gdp"].transform(X))[rows] - psi) @ O_hat.T
    rec = AlignmentMapAttack().reconstruct(view)
    assert_allclose(rec.rotation, O_hat, rtol=0, atol=1e-12)
    assert_allclose(rec.X, expected, rtol=1e-12, atol=1e-12)
    # exact at v = 0 with several colluders too
    pipe0 = _pipe(IGDP(5, random_state=3), GOPPAligner(v=0.0)).fit(X)
    view0 = collusion_view(pipe0, X, colluder=K, target=i)
    assert relative_error(view0.truth.X, AlignmentMapAttack().reconstruct(view0).X) < 1e-8


def test_more_colluders_never_hurt_on_average():
    """Averaged over seeds and targets, AM errors shrink as the colluder set grows (nested
    sets: Qhat averages the colluders' alignment errors); the known-anchor attacks read only A
    and the target's upload, so they are equal."""
    sets = [[0], [0, 2], [0, 2, 3, 4, 5, 6, 7, 8]]
    am = np.zeros(len(sets))
    for seed in range(10):
        X = _X(seed, n=500, d=8)
        pipe = _pipe(IGDP(10, random_state=seed), GOPPAligner(v=0.1)).fit(X)
        for target in (1, 9):
            op = None
            for j, K in enumerate(sets):
                view = collusion_view(pipe, X, colluder=K, target=target)
                am[j] += relative_error(view.truth.X, AlignmentMapAttack().reconstruct(view).X)
                X_op = KnownAnchorAttack("procrustes").reconstruct(view).X
                if op is not None:
                    np.testing.assert_array_equal(X_op, op)
                op = X_op
    assert am[0] > am[1] > am[2], am / 20


def test_known_secret_several_colluders_share_the_secret():
    X = _X()
    mech = CGDP(4, random_state=0).fit(X)
    one = KnownSecretAttack().reconstruct(collusion_view(mech, X, colluder=0, target=2))
    two = KnownSecretAttack().reconstruct(collusion_view(mech, X, colluder=[3, 0], target=2))
    np.testing.assert_array_equal(one.X, two.X)
