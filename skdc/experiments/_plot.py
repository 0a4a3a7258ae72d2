"""The noisy-anchor paper's figures from a sweep table: noise curves and privacy-utility frontiers.

Layout of [1]_ (Figs 2, 4-8): one point per draw, the cubic regression spline of
:func:`~skdc.experiments.fit_spline_band` as a line, its 95% pointwise bootstrap band shaded,
reference levels (chance, a noiseless control, the unaligned baseline) as dashed lines. Noiseless
controls are drawn as points but left out of the fits (spec section 7.1).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import numpy as np

from ._spline import fit_spline_band

__all__ = ["plot_frontier", "plot_noise_curves"]


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=(5.0, 3.6), layout="constrained")
    return ax


def _groups(results, hue):
    if hue is not None and hue in results.columns:
        for name, frame in results.groupby(hue, sort=False):
            yield str(name), frame
    else:
        yield None, results


def _check_columns(results, columns):
    missing = [c for c in columns if c not in results.columns]
    if missing:
        raise ValueError(
            f"The results have no column(s) {missing}; they have {list(results.columns)}. "
            "Pass the names of columns of the sweep table."
        )


def _references(ax, references, horizontal=True):
    for k, (name, level) in enumerate((references or {}).items()):
        line = ax.axhline if horizontal else ax.axvline
        line(level, color="0.35", linestyle=("--", ":", "-.")[k % 3], linewidth=1, label=name)


def _fit_min_rows(n_knots):
    return n_knots + 4


def plot_noise_curves(results, y, *, x="value", hue="method", x_range=None, y_range=(0.0, 1.0),
                      references=None, exclude_controls=True, n_knots=5, n_boot=2000,
                      level=0.95, random_state=0, ax=None):
    """Plot scores against the noise level, with spline fits and bootstrap bands.

    The layout of the paper's Figs 2, 4, 6 and 7 [1]_: points per draw, the cubic regression
    spline fit and its pointwise percentile-bootstrap band per series, dashed reference levels.

    Parameters
    ----------
    results : pandas.DataFrame
        A sweep table (:func:`privacy_utility_sweep`), possibly several concatenated.
    y : str or list of str
        Column(s) to plot (for instance one per attack).
    x : str, default="value"
        The noise column.
    hue : str, default="method"
        Column splitting the rows into series (ignored when absent).
    x_range : tuple of (float, float), default=None
        Range normalised to ``[0, 1]`` for the spline (the paper: ``(0, 0.5)`` for v,
        ``(0, 50)`` for sigma); ``None`` uses each series' range.
    y_range : tuple of (float, float) or None, default=(0.0, 1.0)
        Valid range; fits and bands are clipped to it.
    references : dict of {str: float}, default=None
        Horizontal reference levels, ``{label: level}`` (chance, noiseless control, ...).
    exclude_controls : bool, default=True
        Leave draws with ``x == 0`` (the noiseless controls) out of the fit, as the paper does.
    n_knots : int, default=5
        Interior knots of the spline.
    n_boot : int, default=2000
        Bootstrap resamples of the band (the paper: 10,000); 0 draws no band.
    level : float, default=0.95
        Coverage of the band.
    random_state : int, default=0
        Seeds the bootstrap.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.

    References
    ----------
    .. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
       Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> from skdc.experiments import plot_noise_curves
    >>> rng = np.random.RandomState(0)
    >>> v = rng.uniform(0, 0.5, 40)
    >>> df = pd.DataFrame({"value": v, "acc": 0.9 - v + 0.02 * rng.randn(40)})
    >>> ax = plot_noise_curves(df, "acc", n_boot=100)
    >>> len(ax.lines)
    1
    """
    ys = [y] if isinstance(y, str) else list(y)
    _check_columns(results, [x, *ys])
    ax = _axes(ax)
    many = len(ys) > 1
    for name, frame in _groups(results, hue):
        for col in ys:
            label = " ".join(s for s in (name, col if many or name is None else None) if s)
            xs = frame[x].to_numpy(dtype=np.float64)
            vs = frame[col].to_numpy(dtype=np.float64)
            ok = np.isfinite(xs) & np.isfinite(vs)
            fit_rows = ok & (xs != 0) if exclude_controls else ok
            pts = ax.scatter(xs[ok], vs[ok], s=9, alpha=0.45, linewidths=0)
            color = pts.get_facecolor()[0]
            if fit_rows.sum() >= _fit_min_rows(n_knots) and np.ptp(xs[fit_rows]) > 0:
                band = fit_spline_band(xs[fit_rows], vs[fit_rows], x_range=x_range,
                                       y_range=y_range, n_knots=n_knots, n_boot=n_boot,
                                       level=level, random_state=random_state)
                ax.plot(band.grid, band.fit[:, 0], color=color, linewidth=1.8, label=label)
                if n_boot:
                    ax.fill_between(band.grid, band.lower[:, 0], band.upper[:, 0],
                                    color=color, alpha=0.2, linewidth=0)
            elif label:
                pts.set_label(label)
    _references(ax, references)
    ax.set_xlabel(x)
    ax.set_ylabel(ys[0] if len(ys) == 1 else "score")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", frameon=False)
    return ax


def plot_frontier(results, privacy, utility, *, hue="method", fit="direct", x="value",
                  x_range=None, y_range=(0.0, 1.0), references=None, exclude_controls=True,
                  n_knots=5, n_boot=2000, level=0.95, random_state=0, ax=None):
    """Plot the privacy-utility frontier: utility against leakage, one point per draw.

    ``fit="direct"`` fits utility as a spline of the observed privacy score, min-max
    normalised (the paper's MNIST Fig 5 [1]_); ``fit="parametric"`` fits both scores as
    splines of the noise ``x`` with paired resamples and draws the curve
    ``(privacy_fit(v), utility_fit(v))`` with the envelope of the paired bands (Figs 8, 11).

    Parameters
    ----------
    results : pandas.DataFrame
        A sweep table, possibly several concatenated (one series per ``hue`` value).
    privacy : str
        The privacy column (an attack's score) for the horizontal axis.
    utility : str
        The utility column for the vertical axis.
    hue : str, default="method"
        Column splitting the rows into series (ignored when absent).
    fit : {"direct", "parametric"} or None, default="direct"
        How the curve is fitted; ``None`` draws points only.
    x : str, default="value"
        The noise column (for ``fit="parametric"`` and ``exclude_controls``).
    x_range : tuple of (float, float), default=None
        Normalisation of the noise for ``fit="parametric"``.
    y_range : tuple of (float, float) or None, default=(0.0, 1.0)
        Valid range of the utility; its fit and band are clipped to it.
    references : dict of {str: float}, default=None
        Horizontal utility levels ``{label: level}`` (the unaligned baseline, chance).
    exclude_controls : bool, default=True
        Leave draws with ``x == 0`` out of the fit.
    n_knots : int, default=5
        Interior knots.
    n_boot : int, default=2000
        Bootstrap resamples; 0 draws no band.
    level : float, default=0.95
        Coverage of the band.
    random_state : int, default=0
        Seeds the bootstrap.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.

    References
    ----------
    .. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
       Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> from skdc.experiments import plot_frontier
    >>> rng = np.random.RandomState(0)
    >>> v = rng.uniform(0, 0.5, 40)
    >>> df = pd.DataFrame({"value": v, "leak": 0.4 - 0.5 * v, "acc": 0.9 - v})
    >>> ax = plot_frontier(df, "leak", "acc", n_boot=100)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('leak', 'acc')
    """
    if fit not in ("direct", "parametric", None):
        raise ValueError(f"fit must be 'direct', 'parametric' or None; got {fit!r}.")
    _check_columns(results, [privacy, utility] + ([x] if x in results.columns or fit ==
                                                  "parametric" else []))
    ax = _axes(ax)
    for name, frame in _groups(results, hue):
        p = frame[privacy].to_numpy(dtype=np.float64)
        u = frame[utility].to_numpy(dtype=np.float64)
        xs = frame[x].to_numpy(dtype=np.float64) if x in frame.columns else np.ones_like(p)
        ok = np.isfinite(p) & np.isfinite(u) & np.isfinite(xs)
        fit_rows = ok & (xs != 0) if exclude_controls else ok
        pts = ax.scatter(p[ok], u[ok], s=9, alpha=0.45, linewidths=0)
        color = pts.get_facecolor()[0]
        enough = fit_rows.sum() >= _fit_min_rows(n_knots)
        if fit == "direct" and enough and np.ptp(p[fit_rows]) > 0:
            band = fit_spline_band(p[fit_rows], u[fit_rows], y_range=y_range, n_knots=n_knots,
                                   n_boot=n_boot, level=level, random_state=random_state)
            ax.plot(band.grid, band.fit[:, 0], color=color, linewidth=1.8, label=name)
            if n_boot:
                ax.fill_between(band.grid, band.lower[:, 0], band.upper[:, 0], color=color,
                                alpha=0.2, linewidth=0)
        elif fit == "parametric" and enough and np.ptp(xs[fit_rows]) > 0:
            band = fit_spline_band(xs[fit_rows], np.column_stack([p, u])[fit_rows],
                                   x_range=x_range, n_knots=n_knots, n_boot=n_boot,
                                   level=level, random_state=random_state)
            if y_range is not None:
                for arr in (band.fit, band.lower, band.upper):
                    arr[:, 1] = np.clip(arr[:, 1], *y_range)
            ax.plot(band.fit[:, 0], band.fit[:, 1], color=color, linewidth=1.8, label=name)
            if n_boot:
                # envelope of the paired bands: most private & least useful corner to the
                # least private & most useful corner, along the noise grid
                poly_x = np.concatenate([band.lower[:, 0], band.upper[::-1, 0]])
                poly_y = np.concatenate([band.upper[:, 1], band.lower[::-1, 1]])
                ax.fill(poly_x, poly_y, color=color, alpha=0.15, linewidth=0)
        elif name is not None:
            pts.set_label(name)
    _references(ax, references)
    ax.set_xlabel(privacy)
    ax.set_ylabel(utility)
    if any(lbl and not lbl.startswith("_") for lbl in ax.get_legend_handles_labels()[1]):
        ax.legend(fontsize="small", frameon=False)
    return ax
