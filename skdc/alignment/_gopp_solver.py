"""Generalized orthogonal Procrustes (GOPP) solver: spectral start plus generalized power method.

Solves the max-trace problem (28) of [1]_, ``max_{R_i in O(d)} tr(R^T G R)`` with the block
Gram matrix ``G_ij = Bbar_i^T Bbar_j`` (27), by the spectrally initialised generalized power
method ``R <- Pi_p(G R)`` (32). ``G`` is never formed: ``(G R)_i = Bbar_i^T (sum_j Bbar_j R_j)``
costs two matrix products of the stacked uploads, so time and memory are linear in
the number of participants.

Three levers make it faster than the textbook loop of ``p`` SVDs per iteration while keeping
the same fixed point:

* the blockwise polar factors are computed for all blocks of a group of participants at
  once: exactly from a batched symmetric eigendecomposition of ``M_i^T M_i``
  (``Pi(M) = M V diag(s^-1) V^T``, the SVD for ill-conditioned blocks), or, once the iterates
  settle, warm-started from the previous factors by batched matrix products
  (``_PolarFactors``); the returned iterate is always polished by SVD;
* on a large problem the participants are split into two fixed groups, each with its share
  of the two products and its own polar factors, run on two threads where the caller's BLAS
  thread limit allows (each thread calls BLAS on one thread, and a waiting thread blocks, so
  other processes that compete for the cores slow the solver by their share only). The
  groups do the same arithmetic on one thread, so the result does not depend on the thread
  count;
* Anderson acceleration of the fixed-point map ``F(R) = Pi_p(G R)`` with a monotone safeguard:
  an extrapolated point is kept only when the objective at its image under ``F`` does not fall
  below the current one, so ``objective_history`` stays non-decreasing, as the plain method's
  does (Section 4.3 of [1]_). The stopping rule is the paper's step ``||F(x) - x||_F <= tol``,
  and ``F(x)`` is returned, so both variants stop at the same fixed point up to the
  tolerance.

References
----------
.. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
   Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from numbers import Integral, Real

import numpy as np
from threadpoolctl import ThreadpoolController

from ..utils._linalg import haar_orthogonal, polar_batched
from ..utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["GOPPResult", "solve_gopp"]

# blocks whose M^T M has a condition number above this use the SVD route
_EIGH_COND_LIMIT = 1e8
_CONTROLLER = None  # threadpoolctl controller, built on first use
# The participants' blocks are processed in this many fixed groups, each on a thread of its own
# where the caller's BLAS thread limit allows (the arithmetic does not depend on the threads).
# The two sizes are multiply-adds of one product, r p d^2; measured on 2 cores, below 5e6 two
# groups cost more than they save, and below 2e7 their threads cost as much as they save.
_N_GROUPS = 2
_MIN_GROUP_WORK = 5 * 10**6  # below it, one group
_MIN_THREAD_WORK = 2 * 10**7  # below it, the groups run in turn on the calling thread


@dataclass
class GOPPResult:
    """Output of :func:`solve_gopp` (rotations and the solver's diagnostics)."""

    rotations: np.ndarray
    n_iter: int
    converged: bool
    objective_history: list = field(default_factory=list)
    step_history: list = field(default_factory=list)
    eigengap: float = np.nan
    relative_eigengap: float = np.nan
    fixed_point_residual: float = np.nan
    gopp_residual: float = np.nan
    relative_gopp_residual: float = np.nan
    template: np.ndarray | None = None
    objective: float = np.nan
    restart_objectives: list = field(default_factory=list)
    multistart_objective_gap: float = np.nan
    template_condition_number: float = np.nan


def _swap(M):
    """The blockwise transpose of a stack of square matrices."""
    return np.swapaxes(M, 1, 2)


def _controller():
    """The shared threadpoolctl controller, built on first use."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def _one_blas_thread():
    """A context holding the BLAS libraries to one thread (a shared, lazily built controller).

    The ``d x d`` blocks are small: LAPACK gains little from threads at these sizes, and
    OpenBLAS threads that spin waiting on each other lose much (measured: several times the
    CPU time) when other processes compete for the cores. The solver's own threads (at most
    one per group of participants, see ``_Groups``) each call BLAS on one thread.
    """
    return _controller().limit(limits=1, user_api="blas")


def _usable_cores():
    """The cores this process may run on."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return cores or 1


def _threads_allowed():
    """Threads the caller lets the solver use: the BLAS libraries' thread count as it stands
    (one in a sweep's draws and in Dask's workers; joblib's workers get their share of the
    cores), at most the usable cores."""
    counts = [info["num_threads"] for info in _controller().select(user_api="blas").info()]
    return max(1, min(min(counts, default=1), _usable_cores()))


class _Buffers:
    """Work arrays by name, allocated on first use and reused by every later iteration.

    An iteration of the power method needs a dozen temporaries the size of the uploads' stack.
    Allocated afresh, each one costs a page fault per page wherever the allocator returns
    freed memory to the system at once, as in a Dask worker, whose nanny sets
    ``MALLOC_TRIM_THRESHOLD_=65536``. Measured under that setting on one solve of the demo's
    sweep (digits, p=10, d=64, r=256, at v_PT: 303 iterations): 378,000 page faults and 1.34 s
    of system time in 3.56 s with fresh temporaries, 20,000 and 0.05 s in 1.92 s with these.
    """

    def __init__(self):
        self._arrays = {}

    def __call__(self, name, shape):
        array = self._arrays.get(name)
        if array is None or array.shape != shape:
            array = self._arrays[name] = np.empty(shape)
        return array

    def other(self, names, *used, shape):
        """The first of the arrays ``names`` that is none of ``used`` (a ring of buffers)."""
        return next(a for a in (self(n, shape) for n in names) if all(a is not u for u in used))


class _PolarFactors:
    """Blockwise polar factors ``Pi_p(M)`` (31) of a sequence of slowly changing stacks ``M``.

    ``exact`` computes them from one batched ``eigh`` of ``M_i^T M_i = V diag(mu^2) V^T``:
    ``Pi(M_i) = M_i V diag(mu^-1) V^T``, with the SVD for blocks too ill-conditioned for it.

    ``warm`` (``__call__``) starts from the last factor ``Q0`` instead: near convergence of the
    power method the blocks change little, so ``Pi(M) = Q0 exp(Omega)`` with a small skew
    ``Omega``. From ``Y = Q0^T M = exp(Omega) H`` (``H`` the symmetric polar factor),
    ``Y - Y^T = Omega H + H Omega + O(|Omega|^2 |H|)``, a Lyapunov equation that the eigenbasis
    ``V, mu`` of the last exact factorization solves entrywise,
    ``(V^T Omega V)_jk = (V^T (Y - Y^T) V)_jk / (mu_j + mu_k)``; the factor is updated by
    ``exp(Omega) ~ I + Omega + Omega^2 / 2`` (orthogonal to fourth order; a Newton-Schulz step
    removes the drift when it adds up) and the step repeated. Each repetition shrinks
    the correction by about ``|H - V diag(mu) V^T| / (2 mu_min)``. A factor is accepted when
    the error left after the last correction, extrapolated from the contraction seen, is
    below ``rel`` times the first correction (so the error is a small fraction of the
    iteration's own step: an inexact fixed-point iteration with the same fixed points), or
    when the correction is below ``floor``; otherwise, or when the first correction is large, the
    exact factorization is computed and becomes the new eigenbasis. All work is batched
    ``d x d`` matrix products (no Python loop over blocks) into reused work arrays, kept in the
    rotated frame ``W = Q V``.
    """

    def __init__(self, *, floor, rel=1e-3, max_corrections=3, max_first=0.3, stale_after=3):
        self.floor = floor
        self.rel = rel
        self.max_corrections = max_corrections
        self.max_first = max_first
        self.stale_after = stale_after  # corrections after which the eigenbasis is refreshed
        self.W = None
        self.drift = 0.0  # bound on the orthogonality error of W since it was exact
        self.n_exact = 0
        self.n_calls = 0
        self.buffers = _Buffers()

    def exact(self, M, out=None):
        W, V, mu = _polar_eigh(M, self.buffers)
        self.V, self.W, self.drift = V, W, 0.0
        self.denominator = mu[:, :, None] + mu[:, None, :]
        self.n_exact += 1
        self.n_calls += 1
        return np.matmul(W, _swap(V), out=out)

    def __call__(self, M, out=None):
        return self._warm(M, out) if self.W is not None else self.exact(M, out)

    def _warm(self, M, out):
        buf = self.buffers
        MV = np.matmul(M, self.V, out=buf("MV", M.shape))
        W, sizes = self.W, []
        for _ in range(self.max_corrections):
            omega = self._skew_correction(W, MV)
            sizes.append(float(np.linalg.norm(omega)))
            if not np.isfinite(sizes[-1]) or sizes[0] > self.max_first:
                break
            # the error left after this correction, at the contraction seen so far
            left = sizes[-1] ** 2 / sizes[-2] if len(sizes) > 1 else np.inf
            if left <= self.rel * sizes[0] or sizes[-1] <= self.floor:
                W = self._rotate(W, omega, sizes[-1])
                if self.drift > 0.1 * self.floor:
                    W, self.drift = self._reorthogonalize(W), 0.0
                self.W = W
                self.n_calls += 1
                if len(sizes) >= self.stale_after:
                    self.W = None  # the next call refreshes the eigenbasis
                return np.matmul(W, _swap(self.V), out=out)
            W = self._rotate(W, omega, sizes[-1])
        return self.exact(M, out)

    def _skew_correction(self, W, MV):
        """``V^T Omega V`` of the Lyapunov step, from ``Y = W^T M V`` (symmetric at the factor)."""
        Y = np.matmul(_swap(W), MV, out=self.buffers("Y", MV.shape))
        omega = np.subtract(Y, _swap(Y), out=self.buffers("omega", Y.shape))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(omega, self.denominator, out=omega)

    def _rotate(self, W, omega, size):
        """``W exp(omega)``, to first order when its orthogonality error ``|omega|^2`` is
        negligible, else to second order (error ``|omega|^4 / 4``); ``drift`` adds it up."""
        out = self.buffers.other(("W0", "W1"), W, shape=W.shape)
        if size**2 <= 0.01 * self.floor:
            self.drift += size**2
            return np.add(W, np.matmul(W, omega, out=out), out=out)
        self.drift += size**4 / 4
        return np.matmul(W, _exp_skew(omega, out=self.buffers("exp", W.shape)), out=out)

    def _reorthogonalize(self, W):
        """One Newton-Schulz step ``W (3 I - W^T W) / 2``: removes the symmetric part of the
        error of a nearly orthogonal ``W`` (to second order) and keeps its polar factor."""
        E = np.matmul(_swap(W), W, out=self.buffers("exp", W.shape))
        E[:, np.arange(W.shape[1]), np.arange(W.shape[1])] -= 1.0
        out = self.buffers.other(("W0", "W1"), W, shape=W.shape)
        np.matmul(W, E, out=out)
        out *= -0.5
        return np.add(out, W, out=out)


def _polar_eigh(M, buffers=None):
    """Blockwise polar factors ``Pi(M_i) = W_i V_i^T`` from one batched ``eigh`` of
    ``M_i^T M_i = V_i diag(mu_i^2) V_i^T``: ``W_i = M_i V_i diag(mu_i^-1)``, or, for blocks too
    ill-conditioned for it, ``W_i = Pi(M_i) V_i`` from the SVD. Returns ``W, V, mu``; ``W``
    and the Gram matrices are written into ``buffers`` when given."""
    buffers = _Buffers() if buffers is None else buffers
    w, V = np.linalg.eigh(np.matmul(_swap(M), M, out=buffers("gram", M.shape)))
    ok = w[:, 0] > w[:, -1] / _EIGH_COND_LIMIT
    mu = np.sqrt(np.maximum(w, 0.0))
    MV = np.matmul(M, V, out=buffers("exact W", M.shape))
    if np.all(ok):
        MV /= mu[:, None, :]
        return MV, V, mu
    W = np.empty_like(M)
    W[ok] = MV[ok] / mu[ok][:, None, :]
    W[~ok] = polar_batched(M[~ok]) @ V[~ok]
    return W, V, mu


def _exp_skew(omega, out=None):
    """``I + omega + omega^2 / 2``: the rotation ``exp(omega)`` of a small skew ``omega`` to
    second order, orthogonal to fourth order."""
    X = np.matmul(omega, omega, out=out)
    X *= 0.5
    X += omega
    X[:, np.arange(X.shape[1]), np.arange(X.shape[1])] += 1.0
    return X


def _spectral_start(Bcat, p, d):
    """Top-d eigenvectors of ``G = D D^T`` (``D = Bcat^T``) and its eigengap, matrix-free.

    The nonzero spectrum of ``G`` (pd x pd) is that of ``D^T D = Bcat Bcat^T`` (r x r); its
    eigenvectors are ``D v / sqrt(lambda)``. The smaller of the two Gram matrices is used.
    """
    r, pd = Bcat.shape
    if r <= pd:
        w, V = np.linalg.eigh(Bcat @ Bcat.T)
        w, V = w[::-1], V[:, ::-1]
        lam = w[:d]
        U = Bcat.T @ (V[:, :d] / np.sqrt(np.maximum(lam, np.finfo(float).tiny)))
    else:
        G = Bcat.T @ Bcat
        w, V = np.linalg.eigh(0.5 * (G + G.T))
        w, V = w[::-1], V[:, ::-1]
        U = V[:, :d]
    lam_d = w[d - 1] if w.shape[0] >= d else 0.0
    lam_d1 = w[d] if w.shape[0] > d else 0.0
    gap = float(lam_d - lam_d1)
    return U, gap, gap / abs(lam_d) if lam_d != 0 else np.nan


@validate_params(
    {
        "centered_uploads": ["array-like"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "acceleration": [StrOptions({"anderson"}), None],
        "anderson_depth": [Interval(Integral, 1, None, closed="left")],
        "init": ["array-like", None],
        "n_restarts": [Interval(Integral, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def solve_gopp(
    centered_uploads,
    *,
    tol=1e-7,
    max_iter=500,
    acceleration="anderson",
    anderson_depth=8,
    init=None,
    n_restarts=0,
):
    """Solve the centered GOPP (28) of [1]_ by spectral start and generalized power method.

    Parameters
    ----------
    centered_uploads : array-like of shape (n_participants, n_anchors, n_features)
        The centered anchor uploads ``Bbar_i``.
    tol : float, default=1e-7
        Stop when ``||Pi_p(G R) - R||_F <= tol`` (the paper's stopping rule, Section 4.3
        of [1]_).
    max_iter : int, default=500
        Largest number of evaluations of ``Pi_p(G R)``.
    acceleration : {'anderson', None}, default='anderson'
        ``None`` runs the plain power method, iterate by iterate as in the paper, with exact
        polar factors. ``'anderson'`` accelerates it and warm-starts each polar factor from
        the last one (see Notes).
    anderson_depth : int, default=8
        Memory of the Anderson acceleration (8 took 24 and 50 iterations where 5 took 28
        and 59, at p=50, d=100, r=400 and 0.8 and 0.9 v_PT).
    init : ndarray of shape (n_participants, n_features, n_features), default=None
        Start instead of the spectral one (used to test the gauge equivariance of the
        iteration: a start ``R Q`` gives the iterates ``R_k Q``).
    n_restarts : int, default=0
        Runs of the same method from random Haar-distributed rotations (drawn from
        ``RandomState(0)``, so a solve is reproducible), as a check of the spectral start: the
        result's ``multistart_objective_gap`` is ``(max_k f_k - f_0) / f_0`` with ``f_0`` the
        objective ``tr(R^T G R)`` reached from the spectral start and ``f_k`` those of the
        restarts. A gap above the tolerance means a restart found a better stationary point,
        so the spectral start's was not the global maximum. The returned rotations are always
        those of the spectral start (the paper's method).

    Returns
    -------
    result : GOPPResult
        Rotations ``Rhat_i`` of shape (n_participants, n_features, n_features) and the
        diagnostics of the solver: ``objective`` (``tr(Rhat^T G Rhat)``),
        ``restart_objectives``, ``multistart_objective_gap`` (NaN without restarts) and
        ``template_condition_number``, the condition number ``s_max / s_min`` of the template
        ``C = (1/p) sum_i Bbar_i Rhat_i``: the analyst's estimate of the centered anchor's
        condition number (the ``kappa`` of Ling's theorem, Theorem 4.6 of [1]_; 1 for the
        orthonormal anchor of eq. (22), raised by the anchor noise).

    Notes
    -----
    ``acceleration='anderson'`` and the plain iteration (``None``) have the same fixed points
    and stop by the same rule, so when both converge they return the same rotations to the
    tolerance (with far fewer iterations for Anderson near the phase transition). When both
    stop at ``max_iter`` they return different iterates, and their ``n_iter`` and
    ``converged`` differ: to reproduce the paper's convergence counts (which runs meet the
    stopping rule within 500 iterations), use ``acceleration=None``.

    With ``acceleration='anderson'`` the polar factors ``Pi_p(G R)`` are computed from the
    previous ones by a few batched matrix products (a Newton-type correction solved in the
    eigenbasis of the last exact factorization), and exactly, by a batched symmetric
    eigendecomposition, only when the correction does not contract fast enough. A warm
    factor's error is below ``1e-3`` times its correction, a small fraction of the
    iteration's step, so the iteration keeps its fixed points and its stopping rule; the
    returned rotations are exact polar factors (orthogonal to rounding).

    On a large problem (``n_anchors * n_participants * n_features**2`` of five million or
    more) the participants are processed in two fixed groups, and from twenty million on two
    threads when two cores are usable and the BLAS libraries may use two threads or more
    (``threadpoolctl.threadpool_limits(1)`` keeps the solver on the calling thread, as each
    draw of a sweep and Dask's workers do). The result is the same, to the last bit, on one
    thread as on two.

    Read more in the :ref:`User Guide <protocols>`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.alignment import solve_gopp
    >>> from skdc.anchors import orthonormal_anchor
    >>> from skdc.utils import haar_orthogonal
    >>> A = orthonormal_anchor(20, 4, random_state=0)
    >>> O = np.stack([haar_orthogonal(4, random_state=i) for i in range(3)])
    >>> res = solve_gopp(A @ O)
    >>> Q = O[0] @ res.rotations[0]
    >>> bool(np.allclose(O @ res.rotations, Q, atol=1e-10)), res.converged
    (True, True)
    """
    Bbar = np.asarray(centered_uploads, dtype=np.float64)
    if Bbar.ndim != 3 or not np.all(np.isfinite(Bbar)):
        raise ValueError(
            "solve_gopp expects the centered anchor uploads as one finite array of shape "
            f"(n_participants, n_anchors, n_features); got shape {Bbar.shape}"
            + ("" if Bbar.ndim != 3 else " with non-finite entries")
            + ". Stack the participants' uploads (np.stack) and check them for NaN or inf.")
    p, r, d = Bbar.shape
    Bcat = np.ascontiguousarray(Bbar.transpose(1, 0, 2).reshape(r, p * d))  # = D^T
    method = dict(tol=tol, max_iter=max_iter, acceleration=acceleration,
                  anderson_depth=anderson_depth)
    # one BLAS thread per solver thread (see _one_blas_thread): robust when other processes
    # compete for the cores. Measured with bench_gopp.py on 2 cores (0.8 / 0.9 v_PT): two BLAS
    # threads for the two large products took 2.2 / 3.7 s alone (one thread: 2.0 / 4.4 s) but
    # were 2.1 / 2.8 times slower against two busy processes, at twice the CPU time. The
    # groups' two threads split all the work and block when they wait: 1.4 / 2.7 s alone
    # (one thread: 2.5 / 4.3 s), 1.8 / 1.8 times slower against two busy processes.
    work = r * p * d * d
    n_groups = min(_N_GROUPS, p) if work >= _MIN_GROUP_WORK else 1
    n_threads = min(_threads_allowed(), n_groups) if work >= _MIN_THREAD_WORK else 1
    with _one_blas_thread(), _group_threads(n_threads) as pool:
        groups = _Groups(p, n_groups, pool)
        U, gap, rel_gap = _spectral_start(Bcat, p, d)
        R = groups.blockwise(polar_batched, U.reshape(p, d, d)) if init is None else (
            np.array(init, dtype=np.float64).reshape(p, d, d))
        R, history = _power_method(Bbar, Bcat, R, groups, **method)
        res = _diagnostics(Bbar, Bcat, R, groups, history, gap, rel_gap)
        rng = np.random.RandomState(0)
        for _ in range(n_restarts):
            start = np.stack([haar_orthogonal(d, rng) for _ in range(p)])
            R_k, _ = _power_method(Bbar, Bcat, start, groups, **method)
            # polished like the spectral start's rotations, so the gap compares like with like
            res.restart_objectives.append(_objective(Bcat, groups.blockwise(polar_batched, R_k)))
    if n_restarts:
        best = max(res.restart_objectives)
        res.multistart_objective_gap = (best - res.objective) / res.objective
    return res


def _objective(Bcat, R):
    """``tr(R^T G R) = |sum_i Bbar_i R_i|_F^2`` (28)."""
    S = Bcat @ R.reshape(-1, R.shape[2])
    return float(np.vdot(S, S))


class _Anderson:
    """Anderson acceleration (type II, memory ``depth``) of the fixed-point map ``F``.

    It keeps the differences of the residuals ``g = F(x) - x``, of the images ``F(x)`` and of
    their products ``S = Bcat F(x)`` in ring buffers, so that an extrapolated point and its
    own ``S`` are one matrix-vector product each (no extra product with the uploads). The rings
    of ``g`` and ``F(x)`` are kept group by group (``_Groups``), so the passes over them run on
    the groups' threads; the Gram matrix of the residuals' differences and the right-hand side
    are sums of the groups' parts. The last point is copied into work arrays of its own, and
    the extrapolated point is written into two more (the caller's arrays are reused by the
    next iteration).
    """

    def __init__(self, depth, groups):
        self.depth, self.groups = depth, groups
        self.buffers = _Buffers()
        self.lanes = [_Buffers() for _ in groups.slices]  # the groups' rows of the rings
        self.reset()

    def reset(self):
        self.has_prev = False
        self.n = 0  # differences stored, at most depth
        self.H = np.zeros((self.depth, self.depth))  # Gram matrix of the stored dG

    def __call__(self, g, f, S_f):
        """Store the residual ``g`` and the image ``f``; return the extrapolated point and its
        product, or None before two residuals are known."""
        slot = self.n % self.depth if self.has_prev else None  # the oldest, once the ring is full
        m = min(self.n + (slot is not None), self.depth)
        parts = self.groups.run(partial(self._push, g=g, f=f, slot=slot, m=m))
        buf = self.buffers
        last_S, dS = buf("S", S_f.shape), buf("dS", (self.depth, S_f.size))
        if slot is not None:
            np.subtract(S_f.ravel(), last_S.ravel(), out=dS[slot])
            self.n += 1
            self.H[slot, :m] = self.H[:m, slot] = sum(row for row, _ in parts)
        np.copyto(last_S, S_f)
        self.has_prev = True
        if m == 0:
            return None
        H, rhs = self.H[:m, :m], sum(part for _, part in parts)
        gamma = np.linalg.solve(H + 1e-12 * np.trace(H) * np.eye(m), rhs)
        x = buf("x", f.shape)
        self.groups.run(partial(self._extrapolate, f=f, gamma=gamma, out=x))
        x_S = buf("x_S", S_f.shape)
        np.matmul(gamma, dS[:m], out=x_S.reshape(-1))
        return x, np.subtract(S_f, x_S, out=x_S)

    def _push(self, k, group, g, f, slot, m):
        """A group's rows of the new differences; its parts of ``dG[:m] dG[slot]`` and
        ``dG[:m] g``."""
        buf, g, f = self.lanes[k], g[group].reshape(-1), f[group].reshape(-1)
        last_g, last_f, dG = buf("g", g.shape), buf("f", f.shape), buf("dG", (self.depth, g.size))
        row = None
        if slot is not None:
            np.subtract(g, last_g, out=dG[slot])
            np.subtract(f, last_f, out=buf("dF", (self.depth, f.size))[slot])
            row = dG[:m] @ dG[slot]
        np.copyto(last_g, g)
        np.copyto(last_f, f)
        return row, dG[:m] @ g

    def _extrapolate(self, k, group, f, gamma, out):
        """A group's rows of the extrapolated point ``f - gamma dF``."""
        f, out = f[group].reshape(-1), out[group].reshape(-1)
        np.matmul(gamma, self.lanes[k]("dF", (self.depth, f.size))[:gamma.size], out=out)
        np.subtract(f, out, out=out)


def _group_threads(n_threads):
    """The threads that run all groups but the first (which runs on the calling thread)."""
    return ThreadPoolExecutor(n_threads - 1) if n_threads > 1 else nullcontext()


class _Groups:
    """The participants' blocks in ``n_groups`` fixed contiguous groups, run concurrently on
    the threads of ``pool`` (in turn when it is None).

    Work done group by group gives the same bits whichever threads run it, so a solve gives the
    same result on one thread as on two.
    """

    def __init__(self, p, n_groups, pool):
        bounds = np.linspace(0, p, n_groups + 1).round().astype(int)
        self.slices = [slice(a, b) for a, b in zip(bounds[:-1], bounds[1:])]
        self.pool = pool

    def run(self, fn):
        """``[fn(k, group) for each group k]``; the first group runs on the calling thread."""
        jobs = [partial(fn, k, group) for k, group in enumerate(self.slices)]
        if self.pool is None:
            return [job() for job in jobs]
        futures = [self.pool.submit(job) for job in jobs[1:]]
        return [jobs[0]()] + [future.result() for future in futures]

    def blockwise(self, fn, stack):
        """A blockwise function (such as the polar factors) of a stack, group by group."""
        return np.concatenate(self.run(lambda k, group: fn(stack[group])))


class _Images:
    """The map ``F(x) = Pi_p(G x)`` and the product ``Bcat F(x)``, by groups of participants.

    Each group (``_Groups``) has its own polar factors (``_PolarFactors``, so a warm factor is
    accepted group by group) and its share of the two products: ``(G x)_i = Bbar_i^T S`` for its
    blocks and its part of ``Bcat F(x) = sum_i Bbar_i F(x)_i``, the parts summed in group
    order.
    """

    def __init__(self, Bcat, d, groups, *, exact, floor):
        self.groups = groups
        self.columns = [Bcat[:, g.start * d:g.stop * d] for g in groups.slices]
        # each group accepts its factors against the whole problem's floor (so the factors'
        # error is at most sqrt(n_groups) times the floor in all: negligible against tol)
        polar = [_PolarFactors(floor=floor) for _ in groups.slices]
        self.project = [factors.exact if exact else factors for factors in polar]
        self.buffers = [_Buffers() for _ in groups.slices]

    def __call__(self, S, out, out_S=None):
        """``out <- F(x)`` and ``out_S <- Bcat F(x)`` (when given) for the point ``x`` with
        ``Bcat x = S``."""
        parts = self.groups.run(partial(self._group, S=S, out=out, product=out_S is not None))
        if out_S is None:
            return out
        np.copyto(out_S, parts[0])
        for part in parts[1:]:
            out_S += part
        return out, out_S

    def _group(self, k, group, S, out, product):
        B, buf, (n, d, _) = self.columns[k], self.buffers[k], out[group].shape
        GR = np.matmul(B.T, S, out=buf("GR", (n * d, d)))
        f = self.project[k](GR.reshape(n, d, d), out=out[group])
        return np.matmul(B, f.reshape(n * d, d), out=buf("S", S.shape)) if product else None


def _power_method(Bbar, Bcat, R, groups, *, tol, max_iter, acceleration, anderson_depth):
    """The generalized power method ``R <- Pi_p(G R)`` (32) from ``R``.

    Optionally Anderson-accelerated with a monotone safeguard: an extrapolated point is kept
    only when the objective at its image does not fall below the current one, so the
    objective history stays non-decreasing. Returns the last image ``F(x)`` and the history
    ``(n_iter, converged, objectives, steps)``. The iterates live in rings of three work arrays
    (the image being computed, the last accepted one ``R`` and the point ``x``); the images
    are computed by the groups of participants (``_Images``).
    """
    p, r, d = Bbar.shape
    buf = _Buffers()
    images = _Images(Bcat, d, groups, exact=acceleration is None,
                     floor=1e-3 * tol + 1e-13 * np.sqrt(p) * d)
    anderson = _Anderson(anderson_depth, groups)
    S = Bcat @ R.reshape(p * d, d)  # S = sum_j Bbar_j R_j, so (G R)_i = Bbar_i^T S
    objective, steps = [float(np.vdot(S, S))], []
    x, x_is_candidate, R_S = R, False, S
    n_iter, converged = 0, False
    while n_iter < max_iter:
        f, S_f = images(S, out=buf.other(("f0", "f1", "f2"), R, x, shape=R.shape),
                        out_S=buf.other(("S0", "S1", "S2"), R_S, S, shape=S.shape))
        n_iter += 1
        obj_f = float(np.vdot(S_f, S_f))
        if x_is_candidate and obj_f < objective[-1] * (1 - 1e-13):
            # safeguard: the extrapolated point lost ground; restart from the plain step
            anderson.reset()
            x, x_is_candidate, S = R, False, R_S
            continue
        g = np.subtract(f, x, out=buf("g", f.shape))
        steps.append(float(np.linalg.norm(g)))
        objective.append(obj_f)
        R, R_S = f, S_f
        if steps[-1] <= tol:
            converged = True
            break
        candidate = anderson(g, f, S_f) if acceleration is not None else None
        x, S = candidate if candidate is not None else (f, S_f)
        x_is_candidate = candidate is not None
    return R, (n_iter, converged, objective, steps)


def _diagnostics(Bbar, Bcat, R, groups, history, gap, rel_gap):
    """The polished rotations (exact polar factors of the last iterate) and their diagnostics."""
    p, r, d = Bbar.shape
    n_iter, converged, objective, steps = history
    R = groups.blockwise(polar_batched, R)  # exact orthogonality of the nearly orthogonal iterate
    S = Bcat @ R.reshape(p * d, d)
    image = _Images(Bcat, d, groups, exact=True, floor=0.0)(S, out=np.empty_like(R))
    fp = np.linalg.norm(image - R) / max(1.0, np.sqrt(p * d))
    template = S / p  # C* = (1/p) sum_i Bbar_i R_i  (26)
    resid = float(np.sum((template[None] - Bbar @ R) ** 2))
    total = float(np.vdot(Bbar, Bbar))
    sv = np.linalg.svd(template, compute_uv=False)
    return GOPPResult(
        rotations=R,
        n_iter=n_iter,
        converged=converged,
        objective_history=objective,
        step_history=steps,
        eigengap=gap,
        relative_eigengap=rel_gap,
        fixed_point_residual=float(fp),
        gopp_residual=resid,
        relative_gopp_residual=resid / total if total > 0 else 0.0,
        template=template,
        objective=float(np.vdot(S, S)),
        template_condition_number=float(sv[0] / sv[-1]) if sv[-1] > 0 else np.inf,
    )
