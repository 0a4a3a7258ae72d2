import pickle
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import Pipeline

from skdc import CGDP, IGDP, GOPPAligner
from skdc.alignment import (
    ling_error_bound,
    ling_sufficient_v,
    solve_gopp,
    v_phase_transition,
)
from skdc.anchors import orthonormal_anchor
from skdc.utils import haar_orthogonal, polar


def _problem(p=5, d=8, r=40, v=0.0, seed=0):
    rng = np.random.RandomState(seed)
    A = orthonormal_anchor(r, d, random_state=rng)
    O = np.stack([haar_orthogonal(d, rng) for _ in range(p)])
    psi = rng.randn(p, d)
    W = rng.randn(p, r, d)
    B = A @ O + psi[:, None, :] + v * W
    return A, O, psi, W, B


def _center(B):
    return B - B.mean(axis=1, keepdims=True)


def _phi(C, R, tau, B):
    return sum(np.linalg.norm(C - (B[i] - tau[i]) @ R[i]) ** 2 for i in range(B.shape[0]))


# -- GOPP structure (Props 4.2, 4.4, Lemma 4.3 of Nosaka et al., arXiv:2608.18749) ----------------
def test_reduction_identity():
    # Prop 4.4 and Lemmas S.4-S.5
    _, _, _, _, B = _problem(v=0.3)
    Bbar = _center(B)
    p = B.shape[0]
    rng = np.random.RandomState(1)
    R = np.stack([haar_orthogonal(B.shape[2], rng) for _ in range(p)])
    b = B.mean(axis=1)
    C = sum(Bbar[i] @ R[i] for i in range(p)) / p
    D = np.concatenate([x.T for x in Bbar])
    G = D @ D.T
    Rs = R.reshape(-1, B.shape[2])
    tr = np.trace(Rs.T @ G @ Rs)
    lhs = _phi(C, R, b, B)
    rhs = np.sum(Bbar**2) - tr / p
    assert abs(lhs - rhs) / abs(rhs) < 1e-12
    assert abs(tr - np.linalg.norm(sum(Bbar[i] @ R[i] for i in range(p))) ** 2) / tr < 1e-12
    # perturbing the optimal translation or template increases Phi
    assert _phi(C, R, b + 0.01, B) > lhs
    E = rng.randn(*C.shape) * 0.01
    assert _phi(C + E - E.mean(0), R, b, B) > lhs


def test_gauge_invariance_of_objective():
    # Prop 4.2, and the centering of Lemma 4.3
    _, _, _, _, B = _problem(v=0.2)
    rng = np.random.RandomState(2)
    p, r, d = B.shape
    R = np.stack([haar_orthogonal(d, rng) for _ in range(p)])
    C, tau = rng.randn(r, d), rng.randn(p, d)
    s, Q = rng.randn(d), haar_orthogonal(d, rng)
    base = _phi(C, R, tau, B)
    moved = _phi((C + s) @ Q, R @ Q, tau - np.einsum("kij,j->ki", R, s), B)
    assert abs(moved - base) / base < 1e-12
    c = C.mean(axis=0)
    centered = _phi(C - c, R, tau + np.einsum("kij,j->ki", R, c), B)
    assert abs(centered - base) / base < 1e-12


# -- the aligner's solve ------------------------------------------------------------------------
@pytest.mark.parametrize("acceleration", [None, "anderson"])
def test_exact_at_zero_noise(acceleration):
    # v = 0 is exact (eq. 36-37)
    X = np.random.RandomState(0).randn(90, 8)
    pipe = Pipeline([("gdp", IGDP(5, random_state=0)),
                     ("align", GOPPAligner(0.0, acceleration=acceleration))])
    Z = pipe.fit_transform(X)
    mech, align = pipe.named_steps["gdp"], pipe.named_steps["align"]
    assert align.converged_ and align.n_iter_ <= 10
    prod = mech.rotations_ @ align.rotations_
    assert max(np.linalg.norm(prod[i] - prod[0]) for i in range(5)) < 1e-8
    assert align.relative_gopp_residual_ < 1e-10
    assert align.fixed_point_residual_ < 1e-10
    Q = prod[0]
    np.testing.assert_allclose(Z, X @ Q, rtol=0, atol=1e-10)  # no translation: b_i = Psi_i
    # registration of Z onto the C-GDP output by one rotation and one shift
    Zc = CGDP(5, random_state=0).fit_transform(X)
    Rq = polar((Z - Z.mean(0)).T @ (Zc - Zc.mean(0)))
    reg = (Z - Z.mean(0)) @ Rq + Zc.mean(0)
    assert np.linalg.norm(reg - Zc) / np.linalg.norm(Zc) < 1e-8


def test_iteration_cap_warns_and_returns_orthogonal_rotations():
    # the stopping rule (tol, max_iter) of the power method
    X = np.random.RandomState(0).randn(60, 6)
    Y = IGDP(4, random_state=0).fit_transform(X)
    align = GOPPAligner(v=2.0, max_iter=3, acceleration=None)
    with pytest.warns(ConvergenceWarning, match="v_phase_transition"):
        align.fit(Y)
    assert not align.converged_ and align.n_iter_ == 3
    R = align.rotations_
    np.testing.assert_allclose(np.swapaxes(R, 1, 2) @ R, np.broadcast_to(np.eye(6), R.shape),
                               rtol=0, atol=1e-10)
    assert align.transform(Y).shape == (60, 6)


# -- anchor noise (eqs. 38-48) -----------------------------------------------------------------
def test_mean_decomposition():
    # eq. (39): b_i = Psi_i + eta_i with eta_i = (v / r) W_i^T 1 for a centered anchor
    X = np.random.RandomState(0).randn(50, 5)
    v = 0.1
    mech = IGDP(3, random_state=0, noise_random_state=11)
    Y = mech.fit_transform(X)
    align = GOPPAligner(v=v).fit(Y)
    r = mech.anchor_.shape[0]
    for i in range(3):
        W = Y.unit_anchor_noise[i]
        assert W.shape == (r, 5)
        eta = v / r * W.sum(axis=0)
        np.testing.assert_allclose(align.anchor_means_[i], mech.translations_[i] + eta,
                                   rtol=0, atol=1e-12)


def test_residual_translation_law():
    # Prop 4.5 (Monte Carlo): R_i^T eta_i - R_j^T eta_j ~ N(0, 2 v^2 / r I_d)
    p, d, r, v = 3, 3, 12, 0.2
    rng = np.random.RandomState(0)
    A = orthonormal_anchor(r, d, random_state=rng)
    zeta = 0.05
    bound = np.sqrt(2) * v / np.sqrt(r) * (np.sqrt(d) + np.sqrt(2 * np.log(1 / zeta)))
    sq, exceed = [], []
    for _ in range(2000):
        O = np.stack([haar_orthogonal(d, rng) for _ in range(p)])
        W = rng.randn(p, r, d)
        B = A @ O + v * W
        R = solve_gopp(_center(B), acceleration=None, tol=1e-9).rotations
        eta = v / r * W.sum(axis=1)
        diff = R[0].T @ eta[0] - R[1].T @ eta[1]
        sq.append(diff @ diff)
        exceed.append(np.sqrt(diff @ diff) > bound)
    sq = np.asarray(sq)
    expected = 2 * d * v**2 / r
    assert abs(sq.mean() - expected) < 0.05 * expected
    rate = np.mean(exceed)
    assert rate <= zeta + 3 * np.sqrt(zeta * (1 - zeta) / len(exceed))


def test_unit_anchor_noise_is_participant_streamed():
    X = np.random.RandomState(0).randn(50, 4)
    Y = IGDP(3, random_state=0, noise_random_state=3).fit_transform(X)
    a = GOPPAligner(v=0.1).fit(Y).anchor_uploads_
    b = GOPPAligner(v=0.1).fit(Y).anchor_uploads_
    Y4 = IGDP(3, random_state=0, noise_random_state=4).fit_transform(X)
    c = GOPPAligner(v=0.1).fit(Y4).anchor_uploads_
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_pickled_aligner_holds_no_participant_secret():
    X = np.random.RandomState(0).randn(40, 4)
    mech = IGDP(3, random_state=0)
    Y = mech.fit_transform(X)
    blob = pickle.dumps(GOPPAligner(v=0.05).fit(Y))
    secrets = [mech.rotations_, mech.translations_, mech.anchor_, X, *Y.anchors,
               *Y.unit_anchor_noise]
    for arr in secrets:
        for value in np.asarray(arr, dtype=np.float64).ravel():
            assert value.tobytes() not in blob


# -- theory numbers (Theorem 4.6, eq. 51) ---------------------------------------------------------
def test_phase_transition_values():
    # eq. (51)
    assert round(v_phase_transition(10, 100, 400), 4) == 0.0977
    expected = [0.03785, 0.04676, 0.05297, 0.05833, 0.06383]
    got = [round(v_phase_transition(p, 400, 1600), 5) for p in (2, 5, 10, 20, 50)]
    assert got == expected


def test_ling_bounds():
    # eqs. (49)-(50)
    assert ling_sufficient_v(10, 100, 400, gamma=2 + 1e-12) == pytest.approx(3.60e-7, rel=5e-3)
    assert ling_sufficient_v(10, 100, 400, gamma=3) == pytest.approx(3.48e-7, rel=5e-3)
    for p, d, r, g in [(10, 100, 400, 3.0), (50, 400, 1600, 2.5)]:
        v = ling_sufficient_v(p, d, r, gamma=g)
        assert ling_error_bound(v, p, d, r, gamma=g) == pytest.approx(
            6 / ((1 - 1 / 1024) * 14336), rel=1e-12)


def test_error_below_ling_bound_at_tiny_noise():
    p, d, r = 4, 3, 12
    v = ling_sufficient_v(p, d, r)
    A, O, _, W, _ = _problem(p, d, r, seed=8)
    B = A @ O + v * W
    R = solve_gopp(_center(B)).rotations
    prod = O @ R
    Qbar = polar(prod.sum(axis=0))
    e_ub = max(np.linalg.norm(prod[i] - Qbar) for i in range(p))
    assert e_ub <= ling_error_bound(v, p, d, r)


def test_phase_transition_needs_two_participants():
    with pytest.raises(ValueError, match="n_participants"):
        v_phase_transition(1, 10, 40)


def test_no_warning_below_phase_transition():
    X = np.random.RandomState(0).randn(60, 6)
    Y = IGDP(4, random_state=0).fit_transform(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        GOPPAligner(v=0.02).fit(Y)


# -- solver diagnostics and restarts ----------------------------------------------------------
def test_aligner_reports_restarts_and_anchor_condition_number():
    X = np.random.RandomState(0).randn(80, 5)
    mech = IGDP(4, random_state=0)
    Y = mech.fit_transform(X)
    align = GOPPAligner(v=0.0, n_restarts=2).fit(Y)
    assert align.multistart_objective_gap_ <= 1e-10
    assert abs(align.relative_multistart_objective_gap_) <= 1e-12
    # noiseless: the template is the centered anchor up to a rotation, so its condition
    # number is the anchor's own
    A = mech.anchor_ - mech.anchor_.mean(axis=0)
    s = np.linalg.svd(A, compute_uv=False)
    assert align.anchor_condition_number_ == pytest.approx(s[0] / s[-1], rel=1e-10)
    plain = GOPPAligner(v=0.0).fit(Y)
    assert np.isnan(plain.multistart_objective_gap_)
    assert np.isnan(plain.relative_multistart_objective_gap_)
    with pytest.raises(ValueError, match="n_restarts"):
        GOPPAligner(n_restarts=-1).fit(Y)


def test_restarts_are_bounded_before_any_work():
    # each restart is a whole solve: 10**9 of them would never end, so they are refused at once
    from skdc.alignment._gopp_solver import MAX_RESTARTS

    Y = np.zeros((2, 8, 3))
    for fit in (lambda n: GOPPAligner(n_restarts=n).fit(Y),
                lambda n: solve_gopp(Y, n_restarts=n)):
        with pytest.raises(ValueError, match=rf"n_restarts.*range \[0, {MAX_RESTARTS}\]"):
            fit(10**9)


def test_aligner_restarts_are_the_solvers_with_its_seed():
    # above the phase transition the restarts end at other stationary points, so the seed shows
    X = np.random.RandomState(0).randn(60, 6)
    Y = IGDP(5, random_state=0).fit_transform(X)
    params = dict(v=0.5, n_restarts=3, tol=1e-10, max_iter=200, acceleration=None)
    gaps = {}
    for seed in (0, 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            align = GOPPAligner(restart_seed=seed, **params).fit(Y)
            B = align.anchor_uploads_
            res = solve_gopp(B - B.mean(axis=1, keepdims=True), restart_seed=seed,
                             **{k: v for k, v in params.items() if k != "v"})
        gaps[seed] = (align.multistart_objective_gap_, align.relative_multistart_objective_gap_)
        assert gaps[seed] == (res.multistart_objective_gap, res.relative_multistart_objective_gap)
    assert gaps[0] != gaps[1]
    assert GOPPAligner().restart_seed == 0  # the restarts drawn before the seed was a parameter


@pytest.mark.parametrize("name", ["max_iter", "n_restarts", "restart_seed"])
@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_not_integers(name, value):
    # issue 24: Interval(Integral) lets bools through; GOPPAligner(n_restarts=True) ran a restart
    if name == "max_iter" and not value:
        pytest.skip("max_iter=False is refused as 0 < 1 already")
    Y = IGDP(3, random_state=0).fit_transform(np.random.RandomState(0).rand(30, 3))
    with pytest.raises(ValueError, match=f"'{name}' parameter of GOPPAligner must be an int .*"
                                         f"Got {value} instead"):
        GOPPAligner(**{name: value}).fit(Y)


@pytest.mark.parametrize("seed", [-1, 2**32, 0.5])
def test_restart_seed_is_validated(seed):
    Y = IGDP(3, random_state=0).fit_transform(np.random.RandomState(0).rand(30, 3))
    with pytest.raises(ValueError, match="restart_seed"):
        GOPPAligner(restart_seed=seed).fit(Y)
