"""Generalized orthogonal Procrustes (GOPP) solver: Algorithm 4 of [1]_ and its diagnostics.

Solves the max-trace problem (28) of [1]_, ``max_{R_i in O(d)} tr(R^T G R)`` with the block
Gram matrix ``G_ij = Bbar_i^T Bbar_j`` (27), by the spectrally initialised generalized power
method ``R <- Pi_p(G R)`` (32). ``G`` is never formed: ``(G R)_i = Bbar_i^T S`` with
``S = sum_j Bbar_j R_j``, two products of the stacked uploads, so time and memory are linear
in the number of participants.

``acceleration=None`` runs :func:`_power_method`, Algorithm 4 line by line.
``acceleration='anderson'`` runs the same map with Anderson acceleration, warm-started polar
factors and the participants in groups on threads (``_gopp_engine.py``, whose docstring maps
the paper's steps to its parts); it stops by the same rule at the same fixed points.

References
----------
.. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
   Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from dataclasses import dataclass, field
from functools import partial
from numbers import Integral, Real

import numpy as np

from ..utils._linalg import haar_orthogonal, polar_batched
from ..utils._sklearn_compat import (
    Interval,
    StrOptions,
    validate_params,
)
from ._gopp_engine import anderson_power_method, blas_on_one_thread, polar_factors

__all__ = ["GOPPResult", "solve_gopp"]


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
    relative_multistart_objective_gap: float = np.nan


# The restart seed is a RandomState seed
_restart_seed_constraint = [Interval(Integral, 0, 2**32 - 1, closed="both")]
#: Most restarts of the multistart diagnostic: each is a whole solve, so a thousand already
#: takes a thousand times the fit (``n_restarts=10**9`` would never end).
MAX_RESTARTS = 1000
_restarts_constraint = [Interval(Integral, 0, MAX_RESTARTS, closed="both")]


@validate_params(
    {
        "centered_uploads": ["array-like"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "acceleration": [StrOptions({"anderson"}), None],
        "anderson_depth": [Interval(Integral, 1, None, closed="left")],
        "init": ["array-like", None],
        "n_restarts": _restarts_constraint,
        "restart_seed": _restart_seed_constraint,
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
    restart_seed=0,
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
        Runs of the same method from random Haar-distributed rotations, as a check of the
        spectral start. The returned rotations are always those of the spectral start (the
        paper's method). At most ``MAX_RESTARTS`` (1000).
    restart_seed : int, default=0
        Seed of the ``RandomState`` that draws the restarts' rotations (participant by
        participant, restart by restart), so a solve is reproducible and its restarts can be
        varied.

    Returns
    -------
    result : GOPPResult
        Rotations ``Rhat_i`` of shape (n_participants, n_features, n_features) and the
        diagnostics of the solver: ``objective`` (``f_0 = tr(Rhat^T G Rhat)``),
        ``restart_objectives`` (the ``f_k`` of the restarts), ``multistart_objective_gap``
        ``max(0, max_k f_k - f_0)`` (the authors' code's gap: positive when a restart found
        a better stationary point, so the spectral start's was not the global maximum),
        ``relative_multistart_objective_gap`` ``(max_k f_k - f_0) / f_0`` (signed; both NaN
        without restarts), and ``template_condition_number``, the condition number
        ``s_max / s_min`` of the template ``C = (1/p) sum_i Bbar_i Rhat_i``: the analyst's
        estimate of the centered anchor's condition number (the ``kappa`` of Ling's theorem,
        Theorem 4.6 of [1]_; 1 for the orthonormal anchor of eq. (22), raised by the anchor
        noise).

    Notes
    -----
    ``acceleration='anderson'`` and the plain iteration (``None``) have the same fixed points
    and stop by the same rule, so when both converge they return the same rotations to the
    tolerance (with far fewer iterations for Anderson near the phase transition). When both
    stop at ``max_iter`` they return different iterates, and their ``n_iter`` and
    ``converged`` differ.

    Which defaults reproduce which numbers: the defaults ``tol=1e-7`` and ``max_iter=500``
    are the stopping rule of the paper's experiments (the "10^-7 stopping criterion" and the
    "500-iteration limit" of Section 5 of [1]_); with ``acceleration=None`` they reproduce
    its convergence counts (which draws meet the rule, Figs. 4b, 9 and 11 of [1]_). The
    authors' code runs its protocol functions with ``tol=1e-10`` and ``max_iter=200`` by
    default; its restart diagnostics (the absolute gap above) come from such runs, so pass
    ``tol=1e-10, max_iter=200, acceleration=None`` and its restart seed to compare with
    them.

    With ``acceleration='anderson'`` the polar factors ``Pi_p(G R)`` are computed from the
    previous ones by a few batched matrix products, and exactly, by a batched symmetric
    eigendecomposition, only when that correction does not contract fast enough. A warm
    factor's error is below ``1e-3`` times its correction, a small fraction of the
    iteration's step, so the iteration keeps its fixed points and its stopping rule; the
    returned rotations are exact polar factors (orthogonal to rounding).

    On a large problem (``n_anchors * n_participants * n_features**2`` of ten million or
    more) the accelerated method processes the participants in two fixed groups, on two
    threads when two cores are usable and the BLAS libraries may use two threads or more
    (``threadpoolctl.threadpool_limits(1)`` keeps the solver on the calling thread, as each
    draw of a sweep and Dask's workers do). BLAS runs on one thread during a solve. The
    result is the same, to the last bit, on one thread as on two.

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
    Bbar = _check_centered_uploads(centered_uploads)
    p, r, d = Bbar.shape
    Bcat = np.ascontiguousarray(Bbar.transpose(1, 0, 2).reshape(r, p * d))  # [Bbar_1 ... Bbar_p]
    with blas_on_one_thread() as n_threads:
        if acceleration is None:
            solve = partial(_power_method, Bcat, tol=tol, max_iter=max_iter)
        else:
            solve = partial(anderson_power_method, Bcat, tol=tol, max_iter=max_iter,
                            depth=anderson_depth, n_threads=n_threads)
        U, gap, rel_gap = _spectral_start(Bcat, p, d)
        R = polar_batched(U.reshape(p, d, d)) if init is None else (
            np.array(init, dtype=np.float64).reshape(p, d, d))
        res = _diagnostics(Bbar, Bcat, *solve(R), gap, rel_gap)
        if n_restarts:
            _restart(res, solve, Bcat, n_restarts, restart_seed)
    return res


def _check_centered_uploads(centered_uploads):
    Bbar = np.asarray(centered_uploads, dtype=np.float64)
    if Bbar.ndim != 3 or not np.all(np.isfinite(Bbar)):
        raise ValueError(
            "solve_gopp expects the centered anchor uploads as one finite array of shape "
            f"(n_participants, n_anchors, n_features); got shape {Bbar.shape}"
            + ("" if Bbar.ndim != 3 else " with non-finite entries")
            + ". Stack the participants' uploads (np.stack) and check them for NaN or inf.")
    return Bbar


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


def _power_method(Bcat, R, *, tol, max_iter):
    """The generalized power method of Algorithm 4 of [1]_ from ``R``, as the paper writes it.

    ``R^(t+1) = Pi_p(G R^(t))`` (32) until ``||R^(t+1) - R^(t)||_F <= tol`` or ``max_iter``
    steps. Returns the last iterate and ``(n_iter, converged, objectives, steps)``.
    """
    p, d, _ = R.shape
    S = Bcat @ R.reshape(p * d, d)  # S = sum_j Bbar_j R_j, so (G R)_i = Bbar_i^T S  (27)
    objective, steps = [float(np.vdot(S, S))], []  # tr(R^T G R) = |S|_F^2  (28)
    for n_iter in range(1, max_iter + 1):
        M = (Bcat.T @ S).reshape(p, d, d)  # M^(t) = G R^(t)
        R_next = polar_factors(M)  # R^(t+1) = Pi_p(M^(t))  (31)-(32)
        steps.append(float(np.linalg.norm(R_next - R)))
        R = R_next
        S = Bcat @ R.reshape(p * d, d)
        objective.append(float(np.vdot(S, S)))
        if steps[-1] <= tol:
            return R, (n_iter, True, objective, steps)
    return R, (max_iter, False, objective, steps)


def _objective(Bcat, R):
    """``tr(R^T G R) = |sum_i Bbar_i R_i|_F^2`` (28)."""
    S = Bcat @ R.reshape(-1, R.shape[2])
    return float(np.vdot(S, S))


def _restart(res, solve, Bcat, n_restarts, restart_seed):
    """Solve again from ``n_restarts`` random Haar starts; record their objectives and gaps."""
    p, d, _ = res.rotations.shape
    rng = np.random.RandomState(restart_seed)
    for _ in range(n_restarts):
        start = np.stack([haar_orthogonal(d, rng) for _ in range(p)])
        R_k, _ = solve(start)
        # polished like the spectral start's rotations, so the gap compares like with like
        res.restart_objectives.append(_objective(Bcat, polar_batched(R_k)))
    best, f_0 = max(res.restart_objectives), res.objective
    res.multistart_objective_gap = max(0.0, best - f_0)  # the authors' code's gap
    res.relative_multistart_objective_gap = (best - f_0) / f_0 if f_0 > 0 else np.nan


def _diagnostics(Bbar, Bcat, R, history, gap, rel_gap):
    """The polished rotations (exact polar factors of the last iterate) and their diagnostics."""
    p, r, d = Bbar.shape
    n_iter, converged, objective, steps = history
    R = polar_batched(R)  # exact orthogonality of the nearly orthogonal iterate
    S = Bcat @ R.reshape(p * d, d)
    image = polar_factors((Bcat.T @ S).reshape(p, d, d))  # Pi_p(G Rhat)
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
        fixed_point_residual=float(np.linalg.norm(image - R) / max(1.0, np.sqrt(p * d))),
        gopp_residual=resid,
        relative_gopp_residual=resid / total if total > 0 else 0.0,
        template=template,
        objective=float(np.vdot(S, S)),
        template_condition_number=float(sv[0] / sv[-1]) if sv[-1] > 0 else np.inf,
    )
