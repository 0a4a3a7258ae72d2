"""Cubic regression splines with percentile-bootstrap bands, as in the noisy-anchor paper [1]_.

The paper summarises each noise sweep by a "fixed cubic regression spline with five equally
spaced interior knots" and 95% pointwise percentile-bootstrap bands from 10,000 multinomial
resamples of the observations (figure captions of [1]_; the details below follow the authors'
reference code, see :ref:`spline_bands`): the truncated-power basis
``[1, x, x^2, x^3, (x - k_j)_+^3]`` with knots ``k_j = j / 6`` on the axis normalised to
``[0, 1]``, least squares with a tiny ridge ``1e-8 max(tr(D^T D) / ncol, 1)`` on the
non-intercept coefficients, evaluated on a 201-point grid and clipped to the valid range.
Several responses observed at the same ``x`` (a privacy and a utility score of the same draws)
share the resamples, so their bands are paired.

Two safeguards for small sweeps (ours, not the paper's, whose sweeps have 200 distinct noise
values): ``n_knots="auto"`` gives the spline at most half as many coefficients as ``x`` has
distinct values (8 noise levels: a plain cubic; 200 draws: the paper's five knots), and
``monotone="increasing"``/``"decreasing"`` fits a cubic B-spline with monotone coefficients
(non-negative least squares), for quantities known to move one way with the noise (accuracy
falls, attack error rises), so that neither the fit nor a resample can wiggle between levels;
a monotone curve stays within the range of the draws it fits, and a resample that misses
the end draws leaves the band there to the resamples that have them.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["SplineBand", "fit_spline_band"]


@dataclass(frozen=True)
class SplineBand:
    """A fitted regression spline with its pointwise bootstrap band.

    Read more in the :ref:`User Guide <spline_bands>`.

    Returned by :func:`fit_spline_band`. Arrays of responses have one column per response
    (a 1-D ``y`` gives one column).

    Attributes
    ----------
    grid : ndarray of shape (n_grid,)
        Evaluation points in the units of ``x``.
    fit : ndarray of shape (n_grid, n_responses)
        The spline fitted to all observations.
    lower, upper : ndarray of shape (n_grid, n_responses)
        Pointwise percentile-bootstrap band (all NaN when ``n_boot=0``).
    coef : ndarray of shape (n_basis, n_responses)
        Coefficients of the truncated-power basis on the normalised axis.
    x_range : tuple of float
        The ``(low, high)`` mapped to ``[0, 1]``.
    level : float
        Coverage of the band.
    n_obs : int
        Number of observations fitted.
    basis : {"truncated-power", "b-spline"}
        The basis of ``coef``: the paper's truncated powers, or cubic B-splines (monotone
        fits).
    """

    grid: np.ndarray
    fit: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    coef: np.ndarray
    x_range: tuple
    level: float
    n_obs: int
    basis: str = "truncated-power"

    def predict(self, x, response=0):
        """Evaluate the fitted spline of one response at ``x`` (clipped to ``x_range``).

        Parameters
        ----------
        x : array-like
            Points in the units of the fitted ``x``.
        response : int, default=0
            Column of the response.

        Returns
        -------
        y : ndarray
            The spline's values (not clipped to a ``y_range``).
        """
        t = _normalize(np.asarray(x, dtype=np.float64), self.x_range)
        basis = _bspline_basis if self.basis == "b-spline" else _basis
        return basis(t.ravel(), self.coef.shape[0] - 4) @ self.coef[:, response]

    def crossing(self, value, response=0):
        """Points of the grid where the fitted curve crosses ``value`` (linear interpolation).

        The paper reads operating points this way ("the fit crosses 10% at sigma = 2.98").

        Parameters
        ----------
        value : float
            The level to cross.
        response : int, default=0
            Column of the response.

        Returns
        -------
        x : ndarray
            Every crossing, in increasing order; empty when the curve never crosses.
        """
        f = self.fit[:, response] - value
        out = []
        for k in range(len(f) - 1):
            a, b = f[k], f[k + 1]
            if a == 0:
                out.append(self.grid[k])
            elif a * b < 0:
                out.append(self.grid[k] + (self.grid[k + 1] - self.grid[k]) * a / (a - b))
        if f[-1] == 0:
            out.append(self.grid[-1])
        return np.asarray(out, dtype=np.float64)


def _normalize(x, x_range):
    low, high = x_range
    return np.clip((x - low) / (high - low), 0.0, 1.0)


def _basis(t, n_knots):
    """Truncated-power cubic basis at normalised points ``t`` (the authors' reference code)."""
    knots = np.arange(1, n_knots + 1) / (n_knots + 1)
    cols = [np.ones_like(t), t, t**2, t**3]
    cols += [np.clip(t - k, 0.0, None) ** 3 for k in knots]
    return np.stack(cols, axis=1)


def _bspline_basis(t, n_knots):
    """Cubic B-splines with ``n_knots`` equally spaced interior knots on ``[0, 1]``."""
    from scipy.interpolate import BSpline

    inner = np.arange(1, n_knots + 1) / (n_knots + 1)
    knots = np.r_[np.zeros(4), inner, np.ones(4)]
    return BSpline.design_matrix(np.clip(t, 0.0, 1.0), knots, 3).toarray()


def _auto_knots(x):
    """Interior knots for the distinct values of ``x``: the spline's ``n_knots + 4``
    coefficients at most half of them, and at most the paper's five."""
    return int(np.clip(np.unique(x).size // 2 - 4, 0, 5))


def _monotone_solve(B, Y, weights, directions):
    """B-spline coefficients of ``Y``'s columns, each monotone in its direction (or free).

    With coefficients ``c_j = c_0 + d_1 + ... + d_j`` and ``d >= 0`` the spline
    ``sum_j c_j B_j = c_0 + sum_i d_i S_i`` (``S_i = sum_{j >= i} B_j``) never decreases,
    since B-splines sum to one; the weighted least squares over ``d >= 0`` is a non-negative
    least squares once ``c_0`` is profiled out by centering.
    """
    from scipy.optimize import nnls

    S = np.cumsum(B[:, ::-1], axis=1)[:, ::-1][:, 1:]
    root = np.sqrt(weights)
    S_bar = np.average(S, axis=0, weights=weights)
    coef = np.empty((B.shape[1], Y.shape[1]))
    for k, direction in enumerate(directions):
        if direction is None:
            coef[:, k] = np.linalg.lstsq(B * root[:, None], Y[:, k] * root, rcond=None)[0]
            continue
        sign = 1.0 if direction == "increasing" else -1.0
        y = sign * Y[:, k]
        y_bar = np.average(y, weights=weights)
        d = nnls((S - S_bar) * root[:, None], (y - y_bar) * root)[0]
        coef[:, k] = sign * (y_bar - S_bar @ d + np.r_[0.0, np.cumsum(d)])
    return coef


def _monotone_curves(grid, t, Y, weights, directions, n_knots):
    """The curves fitted to the draws weighted by ``weights``, on the normalised ``grid``.

    A monotone curve is kept within the range of the responses it fits, as a monotone
    regression's fitted values are (no B-spline coefficient overshoots at an end), and is
    NaN beyond the draws it fits: a resample that misses the end draws says nothing there.
    """
    seen = weights > 0
    coef = _monotone_solve(_bspline_basis(t, n_knots), Y, weights, directions)
    curves = _bspline_basis(grid, n_knots) @ coef
    beyond = (grid < t[seen].min() - 1e-12) | (grid > t[seen].max() + 1e-12)
    for k, direction in enumerate(directions):
        if direction is not None:
            curves[:, k] = np.clip(curves[:, k], Y[seen, k].min(), Y[seen, k].max())
            curves[beyond, k] = np.nan
    return curves


def _resample_counts(n, strata, n_boot, rng):
    """Multinomial resample counts: resample ``b`` weights observation ``k`` by
    ``counts[b, k]``; with ``strata``, each stratum is resampled to its own size."""
    if strata is None:
        return rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)
    strata = np.asarray(strata)
    if strata.shape != (n,):
        raise ValueError(f"strata must hold one label per observation ({n}); got shape "
                         f"{strata.shape}.")
    counts = np.zeros((n_boot, n))
    for label in np.unique(strata):
        rows = np.flatnonzero(strata == label)
        counts[:, rows] = rng.multinomial(rows.size, np.full(rows.size, 1.0 / rows.size),
                                          size=n_boot)
    return counts


def _directions(monotone, n_responses):
    """One direction (or None) per response from ``monotone``."""
    if monotone is None or isinstance(monotone, str):
        directions = [monotone] * n_responses
    else:
        directions = list(monotone)
    if len(directions) != n_responses or any(
            d not in (None, "increasing", "decreasing") for d in directions):
        raise ValueError(
            "monotone must be None, 'increasing', 'decreasing' or one of these per response "
            f"({n_responses}); got {monotone!r}."
        )
    return directions


def _ridge_solve(gram, rhs):
    """Solve ``(G + lam P) c = rhs`` for a stack of Gram matrices, ``P`` = I without intercept.

    ``lam = 1e-8 max(tr(G) / ncol, 1)`` (the authors' reference code).
    """
    ncol = gram.shape[-1]
    lam = 1e-8 * np.maximum(np.trace(gram, axis1=-2, axis2=-1) / ncol, 1.0)
    penalty = np.eye(ncol)
    penalty[0, 0] = 0.0
    lhs = gram + lam[..., None, None] * penalty
    return np.linalg.solve(lhs, rhs)


@validate_params(
    {
        "x": ["array-like"],
        "y": ["array-like"],
        "x_range": [tuple, None],
        "y_range": [tuple, None],
        "n_knots": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "monotone": [StrOptions({"increasing", "decreasing"}), list, tuple, None],
        "strata": ["array-like", None],
        "n_grid": [Interval(Integral, 2, None, closed="left")],
        "n_boot": [Interval(Integral, 0, None, closed="left")],
        "level": [Interval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references)
def fit_spline_band(x, y, *, x_range=None, y_range=None, n_knots="auto", monotone=None,
                    strata=None, n_grid=201, n_boot=10000, level=0.95, random_state=None):
    """Fit the paper's cubic regression spline and its percentile-bootstrap band.

    ``x`` is mapped to ``[0, 1]`` by ``x_range`` (and clipped), the truncated-power cubic basis
    with ``n_knots`` equally spaced interior knots ``j / (n_knots + 1)`` is fitted by least
    squares with a tiny ridge, and the fit is evaluated on ``n_grid`` equally spaced points;
    ``n_boot`` multinomial resamples of the observations give the pointwise percentile band
    (captions of Figs 2, 4, 6, 7 of [1]_).

    Read more in the :ref:`User Guide <spline_bands>`.

    Parameters
    ----------
    x : array-like of shape (n_obs,)
        The covariate (a noise scale, or an observed leakage for a utility-on-leakage fit).
    y : array-like of shape (n_obs,) or (n_obs, n_responses)
        Responses. Columns are resampled together, so their bands are paired.
    x_range : tuple of (float, float), default=None
        The values mapped to 0 and 1 (the paper uses ``(0, 50)`` for sigma and ``(0, 0.5)``
        for v on MNIST). ``None`` uses ``(min(x), max(x))``: the min-max normalisation of the
        utility-on-linkage fits.
    y_range : tuple of (float, float), default=None
        Valid range of the responses; fits and bands are clipped to it (``(0, 1)`` for
        accuracies and linkage rates). ``None`` clips nothing.
    n_knots : int or "auto", default="auto"
        Interior knots. ``"auto"``: at most half as many spline coefficients as ``x`` has
        distinct values, and at most 5 (the paper's): 8 noise levels give a plain cubic, 200
        uniform draws the paper's five knots.
    monotone : {"increasing", "decreasing"}, list of them, or None, default=None
        Fit a cubic B-spline that moves one way only (one direction for every response, or one
        per response, ``None`` for a free one): for a quantity known to be monotone in ``x``,
        so that neither the fit nor a bootstrap resample wiggles. ``None``: the paper's
        unconstrained spline.
    strata : array-like of shape (n_obs,), default=None
        Resample the observations within each stratum (each noise level of a sweep with
        several draws per level), so that every resample keeps every level and the band shows
        the variation over the draws, not over which levels a resample happened to keep.
        ``None``: resample all observations together (the paper's).
    n_grid : int, default=201
        Evaluation points.
    n_boot : int, default=10000
        Bootstrap resamples; 0 skips the band.
    level : float, default=0.95
        Coverage of the pointwise band.
    random_state : int, RandomState instance or None, default=None
        Seeds the resamples.

    Returns
    -------
    band : SplineBand
        The grid, the fit, the band and the coefficients.

    Notes
    -----
    The spline describes the sweep conditional on its one fixed deployment, as in the paper:
    the band reflects the variation over noise draws, not over deployments. Deterministic
    controls (``sigma = 0``, ``v = 0``) are excluded from the paper's fits; leave them out of
    ``x`` and ``y``.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.experiments import fit_spline_band
    >>> rng = np.random.RandomState(0)
    >>> v = rng.uniform(0, 0.5, size=200)
    >>> acc = 0.9 - 0.6 * v + 0.01 * rng.randn(200)
    >>> band = fit_spline_band(v, acc, x_range=(0, 0.5), n_boot=200, random_state=0)
    >>> band.fit.shape, round(float(band.predict(0.25)[0]), 2)
    ((201, 1), 0.75)
    >>> bool(np.all(band.lower <= band.upper))
    True
    """
    x, Y, x_range, n_knots, directions = _checked_data(x, y, x_range, n_knots, monotone)
    t, t_grid = _normalize(x, x_range), np.linspace(0.0, 1.0, n_grid)
    coef, fit = _fit_curves(t, t_grid, Y, directions, n_knots)
    lower = np.full_like(fit, np.nan)
    upper = np.full_like(fit, np.nan)
    if n_boot > 0:
        counts = _resample_counts(x.shape[0], strata, n_boot, check_random_state(random_state))
        boot = _resample_curves(counts, t, t_grid, Y, directions, n_knots)
        lower, upper = _percentile_band(boot, y_range, level)
    if y_range is not None:
        fit = np.clip(fit, *y_range)
    grid = x_range[0] + np.linspace(0.0, 1.0, n_grid) * (x_range[1] - x_range[0])
    shaped = any(d is not None for d in directions)
    return SplineBand(grid=grid, fit=fit, lower=lower, upper=upper, coef=coef,
                      x_range=x_range, level=float(level), n_obs=int(x.shape[0]),
                      basis="b-spline" if shaped else "truncated-power")


def _checked_data(x, y, x_range, n_knots, monotone):
    """``x``, ``y`` as one column per response, ``x_range``, the knots and the directions,
    checked: one finite row per observation, at least as many as the spline's coefficients."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"x must be 1-D (one value per observation); got shape {x.shape}.")
    Y = y[:, None] if y.ndim == 1 else y
    if Y.ndim != 2 or Y.shape[0] != x.shape[0]:
        raise ValueError(
            f"y must have one row per value of x ({x.shape[0]}); got shape {y.shape}. Pass "
            "y of shape (n_obs,) or (n_obs, n_responses)."
        )
    if n_knots == "auto":
        n_knots = _auto_knots(x)
    directions = _directions(monotone, Y.shape[1])
    n_basis = n_knots + 4
    if x.shape[0] < n_basis:
        raise ValueError(
            f"A cubic spline with {n_knots} interior knots has {n_basis} coefficients and needs "
            f"at least that many observations; got {x.shape[0]}. Add draws or lower n_knots."
        )
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(Y))):
        raise ValueError("x and y must be finite; drop the failed draws (NaN rows) first.")
    if x_range is None:
        x_range = (float(x.min()), float(x.max()))
    x_range = (float(x_range[0]), float(x_range[1]))
    if not x_range[1] > x_range[0]:
        raise ValueError(
            f"x_range must be (low, high) with low < high; got {x_range}. All x equal? "
            "Pass x_range explicitly."
        )
    return x, Y, x_range, n_knots, directions


def _fit_curves(t, t_grid, Y, directions, n_knots):
    """The coefficients fitted to every observation and the curves they give on ``t_grid``:
    the paper's truncated-power spline with a tiny ridge, or monotone B-splines where asked."""
    if any(d is not None for d in directions):
        weights = np.ones(t.shape[0])
        coef = _monotone_solve(_bspline_basis(t, n_knots), Y, weights, directions)
        return coef, _monotone_curves(t_grid, t, Y, weights, directions, n_knots)
    D = _basis(t, n_knots)
    coef = _ridge_solve(D.T @ D, D.T @ Y)
    return coef, _basis(t_grid, n_knots) @ coef


def _resample_curves(counts, t, t_grid, Y, directions, n_knots):
    """The curves of every resample (row of ``counts``) on ``t_grid``, of shape ``(n_boot,
    n_grid, n_responses)``: weighted refits, all at once for the paper's linear spline."""
    if any(d is not None for d in directions):
        return np.stack([_monotone_curves(t_grid, t, Y, w, directions, n_knots)
                         for w in counts])
    D = _basis(t, n_knots)
    grams = np.einsum("bn,ni,nj->bij", counts, D, D, optimize=True)
    rhs = np.einsum("bn,ni,nk->bik", counts, D, Y, optimize=True)
    return _basis(t_grid, n_knots) @ _ridge_solve(grams, rhs)


def _percentile_band(boot, y_range, level):
    """The pointwise percentile band of the resampled curves ``boot``, clipped to ``y_range``.

    A point's band comes from the resamples whose draws reach it (all of them, unless a
    monotone fit's resample missed the end draws).
    """
    if y_range is not None:
        boot = np.clip(boot, *y_range)
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a point no resample reaches
        lower, upper = np.nanquantile(boot, [alpha, 1.0 - alpha], axis=0)
    return lower, upper
