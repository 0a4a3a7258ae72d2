"""The fast engine of the GOPP power method: Anderson acceleration, warm polar factors, groups.

:func:`~skdc.alignment.solve_gopp` runs the generalized power method of Algorithm 4 of [1]_
here when ``acceleration='anderson'``; ``acceleration=None`` runs the plain loop
(``_power_method`` in ``_gopp_solver.py``), which reads like the paper. Both evaluate the same
map ``F(R) = Pi_p(G R)`` (32), stop by the same rule and have the same fixed points.

Algorithm 4 of [1]_, step by step, and where this module does it:

* ``R^(0) = Pi_p(U)``, the spectral start: in ``solve_gopp``, shared with the plain loop.
* ``M = G R^(t)``, i.e. ``(G R)_i = Bbar_i^T S`` with ``S = sum_j Bbar_j R_j`` (27):
  ``_Group.image`` forms ``Bbar_i^T S`` for the blocks of its group of participants and its
  part of the next ``S``; ``_iterate`` adds the groups' parts.
* ``R^(t+1) = Pi_p(M)`` (31): ``_Group.image`` through ``_PolarFactors``, warm-started from the
  group's last factors by a few batched matrix products, exact (``polar_factors``, one batched
  ``eigh``) when the warm correction does not contract fast enough.
* stop when ``||R^(t+1) - R^(t)||_F <= eps`` or after ``T_max`` steps: ``_iterate``, the
  loop (``anderson_power_method`` sets up the groups and their threads around it).
* not in the paper: the next point is the Anderson extrapolation ``F(x) - sum_k gamma_k dF_k``
  (``_Anderson``; each group keeps its rows of the differences, ``_Group.push`` and
  ``_Group.extrapolate``), kept only when the objective at its image does not fall, so the
  objective history stays non-decreasing as the plain method's does.

The groups are fixed by the problem's size only (two from ``_MIN_GROUP_WORK`` on), so the
arithmetic, and the result to the last bit, is the same whether they run in turn on the calling
thread or at once on two threads. They run on two threads where the caller's BLAS thread limit
allows; each thread calls BLAS on one thread (``blas_on_one_thread``). Most of an iteration is
the two products with the uploads and the polar factors, both split by the groups. Measured
with ``benchmarks/bench_gopp.py`` on two cores (p=50, d=100, r=400 at 0.8 / 0.9 v_PT), the
solver ran at 13 / 23 times the reference loop's speed with the groups on two threads, and at
8.6 / 11.8 times without groups (9.7 / 14.0 with two BLAS threads instead); at the paper's
MNIST size (p=10, d=100, r=400, 0.9 v_PT) it took 1.37 s with them and 2.03 s without.

References
----------
.. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
   Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from functools import cache, partial

import numpy as np
from threadpoolctl import ThreadpoolController

from ..utils._linalg import polar_batched

__all__ = ["anderson_power_method", "blas_on_one_thread", "polar_factors"]

# blocks whose M^T M has a condition number above this get their polar factor from the SVD
_EIGH_COND_LIMIT = 1e8
# Multiply-adds of one product with the uploads, r p d^2, from which the participants are split
# into two groups: below it, the groups' overhead (twice the numpy calls, a thread hand-off per
# step) costs about what their threads save on two cores (at 1e7, p=10, d=64, r=256 at v_PT:
# 0.79 s with two groups on two threads, 0.93 s in one group).
_MIN_GROUP_WORK = 10**7
_N_GROUPS = 2


def polar_factors(M):
    """The exact blockwise polar factors ``Pi_p(M)`` (31) of a stack of square blocks.

    ``Pi(M_i) = M_i (M_i^T M_i)^{-1/2} = W_i V_i^T`` from one batched ``eigh`` (faster than
    the SVD of eq. (30), the same factor); see ``_polar_eigh``.
    """
    W, V, _ = _polar_eigh(M)
    return np.matmul(W, _swap(V))


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


def _swap(M):
    """The blockwise transpose of a stack of square matrices."""
    return np.swapaxes(M, 1, 2)


# -- threads ---------------------------------------------------------------------------------
@cache
def _blas_controller():
    """The threadpoolctl controller of the loaded BLAS libraries (built once: it scans them)."""
    return ThreadpoolController()


@contextmanager
def blas_on_one_thread():
    """Hold the BLAS libraries to one thread; yield the threads the caller allows the solver.

    Those are the BLAS libraries' thread count as it stood (one under
    ``threadpool_limits(1)``, as in a sweep's draws and Dask's workers; joblib's workers get
    their share of the cores), at most the usable cores. The ``d x d`` blocks gain little
    from BLAS threads, and OpenBLAS threads that spin waiting on each other lose much when
    other processes compete for the cores: measured with ``bench_gopp.py`` on two cores, two
    BLAS threads were 2.1 / 2.8 times slower against two busy processes (0.8 / 0.9 v_PT),
    the groups' two threads 1.8 times.
    """
    controller = _blas_controller()
    counts = [info["num_threads"] for info in controller.select(user_api="blas").info()]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with controller.limit(limits=1, user_api="blas"):
        yield max(1, min(min(counts, default=1), cores or 1))


def _n_groups(p, r, d):
    """The number of groups of participants for a problem of this size (see the module doc)."""
    return min(_N_GROUPS, p) if r * p * d * d >= _MIN_GROUP_WORK else 1


def _run(pool, groups, fn):
    """``[fn(group) for group in groups]``: the first on the calling thread, the others on the
    threads of ``pool`` (in turn when it is None)."""
    if pool is None:
        return [fn(group) for group in groups]
    futures = [pool.submit(fn, group) for group in groups[1:]]
    return [fn(groups[0])] + [future.result() for future in futures]


# -- work arrays ------------------------------------------------------------------------------
class _Buffers:
    """Work arrays by name, allocated on first use and reused by every later iteration.

    An iteration needs a dozen temporaries the size of the uploads' stack. Allocated afresh,
    each one costs a page fault per page wherever the allocator returns freed memory to the
    system at once, as in a Dask worker (``MALLOC_TRIM_THRESHOLD_=65536``). Measured there on
    one solve of the demo's sweep (digits, p=10, d=64, r=256, at v_PT: 303 iterations):
    378,000 page faults and 1.34 s of system time in 3.56 s with fresh temporaries, 20,000
    and 0.05 s in 1.92 s with these.
    """

    def __init__(self):
        self._arrays = {}

    def __call__(self, name, shape):
        array = self._arrays.get(name)
        if array is None or array.shape != shape:
            array = self._arrays[name] = np.empty(shape)
        return array

    def free(self, names, *in_use, shape):
        """The first of the arrays ``names`` that is none of ``in_use`` (a ring of buffers)."""
        return next(a for a in (self(n, shape) for n in names) if all(a is not u for u in in_use))


# -- polar factors ----------------------------------------------------------------------------
class _PolarFactors:
    """Blockwise polar factors ``Pi_p(M)`` (31) of a sequence of slowly changing stacks ``M``.

    ``exact`` computes them from one batched ``eigh`` (``_polar_eigh``). A call starts from
    the last factor ``Q0`` instead: near convergence the blocks change little, so
    ``Pi(M) = Q0 exp(Omega)`` with a small skew ``Omega``. From ``Y = Q0^T M = exp(Omega) H``
    (``H`` the symmetric polar factor), ``Y - Y^T = Omega H + H Omega + O(|Omega|^2 |H|)``,
    a Lyapunov equation that the eigenbasis ``V, mu`` of the last exact factorization solves
    entrywise, ``(V^T Omega V)_jk = (V^T (Y - Y^T) V)_jk / (mu_j + mu_k)``; the factor is
    updated by ``exp(Omega) ~ I + Omega + Omega^2 / 2`` (a Newton-Schulz step removes the
    drift when it adds up) and the step repeated. A factor is accepted when the error left,
    extrapolated from the contraction seen, is below ``rel`` times the first correction (an
    inexact fixed-point iteration with the same fixed points), or when the correction is below
    ``floor``; otherwise the exact factorization is computed and becomes the new eigenbasis.
    All work is batched ``d x d`` products into reused work arrays, in the frame ``W = Q V``.
    """

    def __init__(self, *, floor, rel=1e-3, max_corrections=3, max_first=0.3, stale_after=3):
        self.floor, self.rel = floor, rel
        self.max_corrections, self.max_first = max_corrections, max_first
        self.stale_after = stale_after  # corrections after which the eigenbasis is refreshed
        self.W = None
        self.drift = 0.0  # bound on the orthogonality error of W since it was exact
        self.n_exact = self.n_calls = 0
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
        MV = np.matmul(M, self.V, out=self.buffers("MV", M.shape))
        W, sizes = self.W, []
        for _ in range(self.max_corrections):
            omega = self._skew_correction(W, MV)
            sizes.append(float(np.linalg.norm(omega)))
            if not np.isfinite(sizes[-1]) or sizes[0] > self.max_first:
                break
            W = self._rotate(W, omega, sizes[-1])
            # the error left after this correction, at the contraction seen so far
            left = sizes[-1] ** 2 / sizes[-2] if len(sizes) > 1 else np.inf
            if left <= self.rel * sizes[0] or sizes[-1] <= self.floor:
                return self._accept(W, len(sizes), out)
        return self.exact(M, out)

    def _accept(self, W, n_corrections, out):
        if self.drift > 0.1 * self.floor:
            W, self.drift = self._reorthogonalize(W), 0.0
        self.W = W if n_corrections < self.stale_after else None  # None: refresh next call
        self.n_calls += 1
        return np.matmul(W, _swap(self.V), out=out)

    def _skew_correction(self, W, MV):
        """``V^T Omega V`` of the Lyapunov step, from ``Y = W^T M V`` (symmetric at the factor)."""
        Y = np.matmul(_swap(W), MV, out=self.buffers("Y", MV.shape))
        omega = np.subtract(Y, _swap(Y), out=self.buffers("omega", Y.shape))
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.divide(omega, self.denominator, out=omega)

    def _rotate(self, W, omega, size):
        """``W exp(omega)``, to first order when its orthogonality error ``|omega|^2`` is
        negligible, else to second order (error ``|omega|^4 / 4``); ``drift`` adds it up."""
        out = self.buffers.free(("W0", "W1"), W, shape=W.shape)
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
        out = self.buffers.free(("W0", "W1"), W, shape=W.shape)
        np.matmul(W, E, out=out)
        out *= -0.5
        return np.add(out, W, out=out)


def _exp_skew(omega, out=None):
    """``I + omega + omega^2 / 2``: the rotation ``exp(omega)`` of a small skew ``omega`` to
    second order, orthogonal to fourth order."""
    X = np.matmul(omega, omega, out=out)
    X *= 0.5
    X += omega
    X[:, np.arange(X.shape[1]), np.arange(X.shape[1])] += 1.0
    return X


# -- a group of participants ------------------------------------------------------------------
class _Group:
    """One group of participants: its columns of the stacked uploads, its polar factors, its
    rows of the Anderson memory and its work arrays. Everything per participant happens here."""

    def __init__(self, Bcat, blocks, d, depth, floor):
        self.blocks = blocks  # a slice of participants
        self.B = Bcat[:, blocks.start * d:blocks.stop * d]  # their Bbar_i side by side
        self.polar = _PolarFactors(floor=floor)
        self.depth = depth
        self.buffers = _Buffers()

    def image(self, S, out):
        """``out_i <- F(x)_i = Pi(Bbar_i^T S)`` for the group's blocks (27), (31), for the point
        ``x`` with ``Bcat x = S``; returns the group's part ``sum_i Bbar_i F(x)_i`` of the next
        ``S``."""
        out = out[self.blocks]
        n, d, _ = out.shape
        GR = np.matmul(self.B.T, S, out=self.buffers("GR", (n * d, d)))
        self.polar(GR.reshape(n, d, d), out=out)
        return np.matmul(self.B, out.reshape(n * d, d), out=self.buffers("S", S.shape))

    def push(self, g, f, slot, m):
        """Store the group's rows of the residual ``g`` and the image ``f`` (their differences
        from the last ones go to ``slot``); return its parts of ``dG[:m] dG[slot]`` and
        ``dG[:m] g``."""
        buf, g, f = self.buffers, g[self.blocks].reshape(-1), f[self.blocks].reshape(-1)
        last_g, last_f, dG = buf("g", g.shape), buf("f", f.shape), buf("dG", (self.depth, g.size))
        row = None
        if slot is not None:
            np.subtract(g, last_g, out=dG[slot])
            np.subtract(f, last_f, out=buf("dF", (self.depth, f.size))[slot])
            row = dG[:m] @ dG[slot]
        np.copyto(last_g, g)
        np.copyto(last_f, f)
        return row, dG[:m] @ g

    def extrapolate(self, f, gamma, out):
        """``out <- f - sum_k gamma_k dF_k`` for the group's rows."""
        f, out = f[self.blocks].reshape(-1), out[self.blocks].reshape(-1)
        np.matmul(gamma, self.buffers("dF", (self.depth, f.size))[:gamma.size], out=out)
        np.subtract(f, out, out=out)


class _Anderson:
    """Anderson acceleration (type II, memory ``depth``) of the fixed-point map ``F``.

    With the residuals ``g = F(x) - x``, the next point is ``F(x) - sum_k gamma_k dF_k`` with
    ``gamma = argmin |g - sum_k gamma_k dG_k|`` over the last ``depth`` differences ``dG_k``
    of residuals and ``dF_k`` of images. The groups keep their rows of ``dG`` and ``dF``;
    here live the normal equations' matrix ``H = dG dG^T`` (the sum of the groups' parts) and
    the differences ``dS_k`` of the products ``Bcat F(x)``, so that the new point's own product
    costs no product with the uploads.
    """

    def __init__(self, depth, run):
        self.depth, self.run = depth, run  # run(fn) gives [fn(group) for each group]
        self.buffers = _Buffers()
        self.reset()

    def reset(self):
        self.has_prev = False
        self.n = 0  # differences stored, at most depth
        self.H = np.zeros((self.depth, self.depth))

    def __call__(self, g, f, S_f):
        """Store ``g``, ``f`` and ``S_f = Bcat f``; return the extrapolated point and its
        product, or None before two residuals are known."""
        slot = self.n % self.depth if self.has_prev else None  # the oldest, once the ring is full
        m = min(self.n + (slot is not None), self.depth)
        parts = self.run(partial(_Group.push, g=g, f=f, slot=slot, m=m))
        last_S, dS = self.buffers("S", S_f.shape), self.buffers("dS", (self.depth, S_f.size))
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
        x = self.buffers("x", f.shape)
        self.run(partial(_Group.extrapolate, f=f, gamma=gamma, out=x))
        x_S = self.buffers("x_S", S_f.shape)
        np.matmul(gamma, dS[:m], out=x_S.reshape(-1))
        return x, np.subtract(S_f, x_S, out=x_S)


# -- the iteration ----------------------------------------------------------------------------
def anderson_power_method(Bcat, R, *, tol, max_iter, depth, n_threads):
    """The power method ``R <- Pi_p(G R)`` (32) from ``R``, Anderson-accelerated.

    ``Bcat`` is the stacked centered uploads ``[Bbar_1, ..., Bbar_p]`` (r x pd). Returns the
    last accepted image ``F(x)`` and ``(n_iter, converged, objectives, steps)``. Up to
    ``n_threads`` threads run the groups of participants.
    """
    p, d, _ = R.shape
    floor = 1e-3 * tol + 1e-13 * np.sqrt(p) * d  # warm polar factors' acceptance floor
    bounds = np.linspace(0, p, _n_groups(p, Bcat.shape[0], d) + 1).round().astype(int)
    groups = [_Group(Bcat, slice(a, b), d, depth, floor) for a, b in zip(bounds[:-1], bounds[1:])]
    n_threads = min(n_threads, len(groups))
    with ThreadPoolExecutor(n_threads - 1) if n_threads > 1 else nullcontext() as pool:
        run = partial(_run, pool, groups)
        return _iterate(Bcat, R, run, _Anderson(depth, run), tol=tol, max_iter=max_iter)


def _iterate(Bcat, R, run, anderson, *, tol, max_iter):
    """The loop of Algorithm 4 with Anderson's extrapolated points and the monotone safeguard.

    The iterates live in rings of three work arrays, so that a new image never overwrites the
    last accepted one ``R`` or the point ``x`` it is the image of.
    """
    p, d, _ = R.shape
    buf = _Buffers()
    S = Bcat @ R.reshape(p * d, d)  # S = sum_j Bbar_j R_j, so (G R)_i = Bbar_i^T S  (27)
    objective, steps = [float(np.vdot(S, S))], []  # tr(R^T G R) = |S|_F^2  (28)
    x, S_x, extrapolated = R, S, False
    for n_iter in range(1, max_iter + 1):
        f = buf.free(("f0", "f1", "f2"), R, x, shape=R.shape)
        S_f = buf.free(("S0", "S1", "S2"), S, S_x, shape=S.shape)
        parts = run(partial(_Group.image, S=S_x, out=f))  # F(x) = Pi_p(G x), by groups
        np.copyto(S_f, parts[0])
        for part in parts[1:]:
            S_f += part
        f_objective = float(np.vdot(S_f, S_f))
        if extrapolated and f_objective < objective[-1] * (1 - 1e-13):
            # safeguard: the extrapolated point lost ground; take the plain step from R
            anderson.reset()
            x, S_x, extrapolated = R, S, False
            continue
        g = np.subtract(f, x, out=buf("g", f.shape))
        steps.append(float(np.linalg.norm(g)))
        objective.append(f_objective)
        R, S = f, S_f
        if steps[-1] <= tol:  # the stopping rule of Algorithm 4
            return R, (n_iter, True, objective, steps)
        candidate = anderson(g, f, S_f)
        x, S_x = candidate if candidate is not None else (f, S_f)
        extrapolated = candidate is not None
    return R, (max_iter, False, objective, steps)
