"""The fast engine of the GOPP power method: its polar factors are the polar factors, and its
groups of participants give the same bits on one thread as on two."""

import os
import threading

import numpy as np
import pytest
from numpy.testing import assert_allclose
from threadpoolctl import threadpool_limits

from skdc.alignment import solve_gopp, v_phase_transition
from skdc.alignment._gopp_engine import _MIN_GROUP_WORK, _PolarFactors, polar_factors
from skdc.anchors import orthonormal_anchor
from skdc.utils import haar_orthogonal, polar_batched


def _well_conditioned_stack(k, d, seed):
    rng = np.random.RandomState(seed)
    Q = np.stack([haar_orthogonal(d, rng) for _ in range(k)])
    H = rng.randn(k, d, d)
    H = np.swapaxes(H, 1, 2) @ H / d + np.eye(d)  # symmetric, eigenvalues in [1, ~5]
    return Q @ H


def test_exact_polar_factors_are_the_svds():
    # eq. (30): Pi(M) = U V^T; also for blocks too ill-conditioned for the eigh route
    M = _well_conditioned_stack(5, 7, seed=3)
    M[1] = M[1] @ np.diag([1.0] * 6 + [1e-12])
    M[3] = 0.0
    M[3, 0, 0] = 1.0  # rank one
    P = polar_factors(M)
    assert_allclose(np.swapaxes(P, 1, 2) @ P, np.broadcast_to(np.eye(7), P.shape),
                    rtol=0, atol=1e-12)
    keep = [0, 1, 2, 4]  # the rank-one block's factor is not unique
    assert_allclose(P[keep], polar_batched(M[keep]), rtol=0, atol=1e-10)


def test_warm_polar_factors_are_the_polar_factors():
    # a slightly moved stack: the warm factors equal the SVD's to far below the move
    M0 = _well_conditioned_stack(6, 9, seed=0)
    move = 1e-3 * np.random.RandomState(1).randn(*M0.shape)
    factors = _PolarFactors(floor=1e-14)
    factors.exact(M0)
    warm = factors(M0 + move)
    exact = polar_batched(M0 + move)
    assert factors.n_exact == 1 and factors.n_calls == 2  # the warm route served
    moved_by = np.linalg.norm(exact - polar_batched(M0))
    assert np.linalg.norm(warm - exact) <= 1e-3 * moved_by
    assert_allclose(np.swapaxes(warm, 1, 2) @ warm, np.broadcast_to(np.eye(9), warm.shape),
                    rtol=0, atol=1e-12)


def test_warm_polar_factors_fall_back_to_the_exact_ones():
    # an unrelated stack: the correction does not contract, so the exact factors are computed
    factors = _PolarFactors(floor=1e-14)
    factors.exact(_well_conditioned_stack(6, 9, seed=0))
    M1 = _well_conditioned_stack(6, 9, seed=2)
    assert_allclose(factors(M1), polar_batched(M1), rtol=0, atol=1e-12)
    assert factors.n_exact == 2


@pytest.fixture(scope="module")
def grouped_problem():
    """A problem just large enough for two groups of participants (``r p d^2`` of 1e7)."""
    p, d, r = 10, 32, 1000
    assert r * p * d * d >= _MIN_GROUP_WORK  # else the engine runs one group: nothing to test
    rng = np.random.RandomState(3)
    A = orthonormal_anchor(r, d, random_state=rng)
    O = np.stack([haar_orthogonal(d, rng) for _ in range(p)])
    B = A @ O + 0.8 * v_phase_transition(p, d, r) * rng.randn(p, r, d)
    return B - B.mean(axis=1, keepdims=True)


@pytest.fixture
def threads_started(monkeypatch):
    """The threads started (by anyone) while a test runs."""
    started, start = [], threading.Thread.start

    def recording_start(thread):
        started.append(thread)
        return start(thread)

    monkeypatch.setattr(threading.Thread, "start", recording_start)
    return started


def _usable_cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


@pytest.mark.parametrize("acceleration", [None, "anderson"])
def test_same_bits_on_one_thread_as_on_two(grouped_problem, threads_started, acceleration):
    # the groups run in turn under a BLAS limit of one thread, at once on two threads under a
    # limit of two; the arithmetic is the same, so rotations and histories agree to the bit
    # (the plain method has no groups: capped early, it checks that BLAS keeps one thread)
    kw = dict(tol=1e-9, max_iter=60 if acceleration else 20, n_restarts=1)
    results, n_started = [], []
    for limit in (1, 2):
        with threadpool_limits(limit, user_api="blas"):
            results.append(solve_gopp(grouped_problem, acceleration=acceleration, **kw))
        n_started.append(len(threads_started))
    one, two = results
    if acceleration == "anderson":
        assert n_started[0] == 0  # one thread: all groups on the calling thread
        # two: one group elsewhere, in the solve and in the restart
        assert n_started[1] == (2 if _usable_cores() >= 2 else 0)
    assert one.converged == bool(acceleration)
    assert np.array_equal(one.rotations, two.rotations)
    assert one.objective_history == two.objective_history
    assert one.step_history == two.step_history
    assert one.restart_objectives == two.restart_objectives


def test_small_problems_start_no_thread(threads_started):
    rng = np.random.RandomState(4)
    B = rng.randn(6, 30, 5)
    with threadpool_limits(2, user_api="blas"):
        assert solve_gopp(B - B.mean(axis=1, keepdims=True)).converged
    assert threads_started == []
