"""The noisy-anchor paper's figures from a sweep table: noise curves and privacy-utility frontiers.

Layout of [1]_ (Figs 2, 4-8): one point per draw, the cubic regression spline of
:func:`~skdc.experiments.fit_spline_band` as a line, its 95% pointwise bootstrap band shaded,
reference levels (chance, a noiseless control, the unaligned baseline) as dashed lines. Noiseless
controls are drawn as points but left out of the fits, as in the figures of [1]_ (its Section 5.1).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._spline import _auto_knots, fit_spline_band

__all__ = ["column_label", "plot_frontier", "plot_noise_curves"]


# Human names of the sweep table's columns and of the swept parameters, used as the default
# axis labels and legend entries (pass ``xlabel=``/``ylabel=`` to override them).
_ATTACK_LABELS = {
    "known_secret": "known-secret",
    "known_anchor": "known-anchor (exact)",
    "mp": "known-anchor (Moore-Penrose)",
    "procrustes": "known-anchor (Procrustes)",
    "alignment_map": "alignment-map",
    "known_input": "known-input",
    "known_sample": "known-sample",
    "ica": "ICA",
    "anchor_regression": "anchor-regression",
}
_LABELS = {
    "balanced_accuracy": "balanced accuracy",
    "accuracy": "accuracy",
    "f1_macro": "macro F1",
    "roc_auc": "ROC AUC",
    "r2": "R²",
    "strongest_attack": "strongest attack's relative error (higher = more private)",
    "value": "noise level",
    "n_iter": "solver iterations",
    "seconds": "seconds per draw",
    **{k: f"{v} attack error" for k, v in _ATTACK_LABELS.items()},
}
# parameters by their last ``__`` part: ``align__v``, ``gdp__noise``, ``mech__noise``, ...
_PARAM_LABELS = {"v": "anchor noise v", "noise": "private-data noise σ"}

# The range each known quantity lives in: accuracies and rates in [0, 1]; the attacks'
# scores are relative reconstruction errors ||Xhat - X||_F / ||X||_F >= 0.
_RANGES = {
    "balanced_accuracy": (0.0, 1.0),
    "accuracy": (0.0, 1.0),
    "f1_macro": (0.0, 1.0),
    "roc_auc": (0.0, 1.0),
    "strongest_attack": (0.0, np.inf),
    **{k: (0.0, np.inf) for k in _ATTACK_LABELS},
}


# How a known quantity moves as the noise grows: utilities fall, attack errors and privacy
# scores rise (``monotone="auto"`` fits them monotone). Privacy scores are oriented so that
# higher is more private, so utility against privacy falls too (the frontier).
_UTILITIES = ("balanced_accuracy", "accuracy", "f1_macro", "roc_auc", "r2")
_PRIVACY = ("strongest_attack", "strongest", "strongest_linkage", *_ATTACK_LABELS,
            *(f"{k}_linkage" for k in _ATTACK_LABELS))


def _direction(col):
    """``"decreasing"`` for a utility, ``"increasing"`` for a privacy score, else None."""
    if col in _UTILITIES:
        return "decreasing"
    return "increasing" if col in _PRIVACY else None


@validate_params({"name": [str], "results": [HasMethods(["groupby"]), None]},
                 prefer_skip_nested_validation=True)
def column_label(name, results=None):
    """The human label of a sweep-table column or a swept parameter.

    Known names get words (``"balanced_accuracy"`` -> ``"balanced accuracy"``, ``"align__v"``
    -> ``"anchor noise v"``, ``"gdp__noise"`` -> ``"private-data noise σ"``, ``"procrustes"``
    -> ``"known-anchor (Procrustes) attack error"``); other names are returned as they are.
    The column ``"value"`` of a sweep names the parameter of its ``param`` column when
    ``results`` holds one parameter only.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    name : str
        A column of :func:`privacy_utility_sweep`'s table or a parameter such as
        ``"align__v"``.
    results : pandas.DataFrame, default=None
        The table, read only for ``name="value"``.

    Returns
    -------
    label : str
        The label for an axis or a legend.

    Examples
    --------
    >>> from skdc.experiments import column_label
    >>> column_label("align__v"), column_label("balanced_accuracy"), column_label("leak")
    ('anchor noise v', 'balanced accuracy', 'leak')
    """
    name = str(name)
    if name == "value" and results is not None and "param" in getattr(results, "columns", ()):
        params = results["param"].dropna().unique()
        if len(params) == 1:
            return column_label(params[0])
    if name in _LABELS:
        return _LABELS[name]
    step, sep, param = name.rpartition("__")
    if sep and param in _PARAM_LABELS:
        return _PARAM_LABELS[param]
    return name


def _column_range(col, values, y_range):
    """The range the fit and band of column ``col`` are clipped to (None: no clipping).

    ``y_range`` is a tuple (every column), a dict ``{column: range}``, ``"auto"`` (the known
    range of a known column; otherwise [0, 1] when every observation lies there, [0, inf)
    when none is negative) or None (only the known range of a known column).
    """
    if isinstance(y_range, dict):
        if col in y_range:
            return y_range[col]
        y_range = "auto"
    if isinstance(y_range, tuple):
        return y_range
    if col in _RANGES:
        return _RANGES[col]
    if y_range is None:
        return None
    finite = values[np.isfinite(values)]
    if finite.size and finite.min() >= 0:
        return (0.0, 1.0) if finite.max() <= 1 else (0.0, np.inf)
    return None


def _check_y_range(y_range):
    ok = y_range is None or y_range == "auto" or isinstance(y_range, dict) or (
        isinstance(y_range, tuple) and len(y_range) == 2)
    if not ok:
        raise ValueError(
            "y_range must be 'auto', None, a (low, high) tuple or a dict {column: (low, "
            f"high)}}; got {y_range!r}."
        )


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


def _series_knots(n_knots, levels):
    """The series' interior knots: ``n_knots``, or for ``"auto"`` from its distinct noise
    levels (at most half as many spline coefficients as levels)."""
    return _auto_knots(levels) if n_knots == "auto" else n_knots


def _strata(levels):
    """The noise levels as bootstrap strata when the sweep repeats them (several draws per
    level), else None (draws of their own noise values: resampled together, as in [1])."""
    return levels if np.unique(levels).size < levels.size else None


def _fit_min_rows(n_knots):
    return n_knots + 4


def _references(ax, references, horizontal=True):
    for k, (name, level) in enumerate((references or {}).items()):
        line = ax.axhline if horizontal else ax.axvline
        line(level, color="0.35", linestyle=("--", ":", "-.")[k % 3], linewidth=1, label=name)


def _x_references(ax, x_references, avoid):
    """Vertical lines ``{label: x}``, each labelled where no horizontal level or curve runs.

    The label goes at the height (in axes fraction) farthest from the horizontal reference
    levels ``avoid`` and from every drawn line's value at that ``x``, so it never sits on the
    chance line.
    """
    if not x_references:
        return
    low, high = ax.get_ylim()
    span = (high - low) or 1.0
    candidates = np.linspace(0.06, 0.94, 23)
    for name, x0 in x_references.items():
        ax.axvline(x0, color="0.5", linestyle=":", linewidth=1)
        obstacles = [(level - low) / span for level in avoid]
        for line in ax.lines:
            xd = np.asarray(line.get_xdata(), dtype=np.float64)
            yd = np.asarray(line.get_ydata(), dtype=np.float64)
            if xd.size > 1 and np.ptp(xd) > 0 and xd.min() <= x0 <= xd.max():
                order = np.argsort(xd)
                obstacles.append((np.interp(x0, xd[order], yd[order]) - low) / span)
        if obstacles:
            gap = np.min(np.abs(candidates[:, None] - np.asarray(obstacles)[None, :]), axis=1)
            y0 = candidates[np.flatnonzero(gap >= gap.max() - 1e-9)[-1]]
        else:
            y0 = candidates[-1]
        ax.text(x0, y0, f" {name}", transform=ax.get_xaxis_transform(), fontsize="small",
                ha="left", va="center", color="0.3",
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1})
    ax.set_ylim(low, high)


def _y_label(columns):
    if len(columns) == 1:
        return column_label(columns[0])
    if all(c in _ATTACK_LABELS or c == "strongest_attack" for c in columns):
        return "attack relative error (higher = more private)"
    return "score"


def _finish(ax, xlabel, ylabel, title):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title, wrap=True)


def _legend(ax, level, banded):
    """The axes' legend, with an entry saying what the shaded bands are."""
    handles, labels = ax.get_legend_handles_labels()
    if banded:
        from matplotlib.patches import Patch

        handles.append(Patch(facecolor="0.55", alpha=0.35, linewidth=0))
        labels.append(f"shaded: {level:.0%} bootstrap band (resampled draws)")
    if any(label and not label.startswith("_") for label in labels):
        ax.legend(handles, labels, fontsize="small", frameon=False, loc="best")


_HUE_DOC = """\
hue : str, default="method"
        Column splitting the rows into series (ignored when absent).
"""
_BAND_DOC = """\
n_knots : int or "auto", default="auto"
        Interior knots of the spline; ``"auto"``: at most half as many spline coefficients
        as the series has distinct noise levels, at most 5 (the paper's), so that a few
        levels get a plain cubic (:func:`fit_spline_band`).
    monotone : {"auto", "increasing", "decreasing"} or None, default=None
        Fit a spline that moves one way only; ``"auto"``: the known direction of a known
        quantity (accuracies fall with the noise, attack errors rise, utility falls as
        privacy rises), free for the others. ``None``: the paper's unconstrained spline.
    palette : dict of {str: color}, default=None
        Colour of each series by its ``hue`` value (the same method in the same colour
        across panels); ``None``: matplotlib's colour cycle.
    n_boot : int, default=2000
        Bootstrap resamples of the band (the paper: 10,000); 0 draws no band.
    level : float, default=0.95
        Coverage of the band.
    random_state : int, default=0
        Seeds the bootstrap.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.
"""
_TITLE_RETURNS_DOC = """\
title : str, default=None
        Title of the axes; ``None`` leaves it as it is.

    Returns
    -------
    ax : matplotlib Axes
        The axes drawn on.
"""
# the references and the first lines of both examples: a sweep-like table of 40 draws of
# v ~ U[0, 0.5]
_REFERENCES_EXAMPLE_DOC = gdp_paper_references + """
    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.RandomState(0)
    >>> v = rng.uniform(0, 0.5, 40)
"""
# what both functions validate alike (the spline's settings, the series, the labels)
_PLOT_CONSTRAINTS = {
    "results": [HasMethods(["groupby"])],
    "hue": [str, None],
    "x": [str],
    "x_range": [tuple, None],
    "y_range": "no_validation",  # checked by _check_y_range, with its own message
    "references": [dict, None],
    "exclude_controls": ["boolean"],
    "n_knots": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
    "monotone": [StrOptions({"auto", "increasing", "decreasing"}), None],
    "palette": [dict, None],
    "n_boot": [Interval(Integral, 0, None, closed="left")],
    "level": [Interval(Real, 0, 1, closed="neither")],
    "random_state": ["random_state"],
    "ax": "no_validation",
    "xlabel": [str, None],
    "ylabel": [str, None],
    "title": [str, None],
}


def _draw_band(ax, band, color, label, n_boot):
    """The fit of the first response as a line and, with resamples, its band shaded."""
    ax.plot(band.grid, band.fit[:, 0], color=color, linewidth=1.8, label=label)
    if n_boot:
        ax.fill_between(band.grid, band.lower[:, 0], band.upper[:, 0], color=color,
                        alpha=0.2, linewidth=0)


def _scatter(ax, x, y, ok, color=None):
    """The draws ``ok`` as points; returns the points and their colour."""
    pts = ax.scatter(x[ok], y[ok], s=9, alpha=0.45, linewidths=0, color=color)
    return pts, pts.get_facecolor()[0][:3]


def _fit_rows(ok, xs, exclude_controls):
    """The draws the spline is fitted to: the finite ones, less the noiseless controls."""
    return ok & (xs != 0) if exclude_controls else ok


@validate_params(
    {**_PLOT_CONSTRAINTS, "y": [str, list, tuple], "x_references": [dict, None]},
    prefer_skip_nested_validation=True,
)
@Substitution(hue=_HUE_DOC, band=_BAND_DOC, title_returns=_TITLE_RETURNS_DOC,
              references_example=_REFERENCES_EXAMPLE_DOC)
def plot_noise_curves(results, y, *, x="value", hue="method", x_range=None, y_range="auto",
                      references=None, exclude_controls=True, n_knots="auto", monotone=None,
                      palette=None, n_boot=2000, level=0.95, random_state=0, ax=None,
                      x_references=None, xlabel=None, ylabel=None, title=None):
    """Plot scores against the noise level, with spline fits and bootstrap bands.

    The layout of the paper's Figs 2, 4, 6 and 7 [1]_: points per draw, the cubic regression
    spline fit and its pointwise percentile-bootstrap band per series, dashed reference levels.
    Fits and bands stay inside the range of the quantity they describe (``y_range``), and the
    axes get human labels for the known columns and parameters (:func:`column_label`).

    Read more in the :ref:`User Guide <experiments>`, and see the gallery example
    :ref:`sphx_glr_auto_examples_plot_quickstart.py`.

    Parameters
    ----------
    results : pandas.DataFrame
        A sweep table (:func:`privacy_utility_sweep`), possibly several concatenated.
    y : str or list of str
        Column(s) to plot (for instance one per attack).
    x : str, default="value"
        The noise column.
    {hue}
    x_range : tuple of (float, float), default=None
        Range normalised to ``[0, 1]`` for the spline (the paper: ``(0, 0.5)`` for v,
        ``(0, 50)`` for sigma); ``None`` uses each series' range.
    y_range : "auto", tuple of (float, float), dict or None, default="auto"
        Valid range of each column; its fit and band are clipped to it. ``"auto"``: the range
        of a known quantity (accuracies in ``[0, 1]``, attacks' relative errors ``>= 0``);
        for another column ``[0, 1]`` when all its values lie there, ``[0, inf)`` when none is
        negative, else no clipping. A tuple applies to every column, a dict
        ``{column: (low, high)}`` to its columns (``"auto"`` for the others). ``None``: only
        the known quantities are clipped, to their own range.
    references : dict of {str: float}, default=None
        Horizontal reference levels, ``{label: level}`` (chance, noiseless control, ...).
    exclude_controls : bool, default=True
        Leave draws with ``x == 0`` (the noiseless controls) out of the fit, as the paper does.
    {band}
    x_references : dict of {str: float}, default=None
        Vertical reference lines ``{label: x}`` (for instance ``{"v_PT": v_pt}``), each
        labelled at a height clear of the horizontal references and the fitted curves.
    xlabel, ylabel : str, default=None
        Axis labels; ``None``: the human name of ``x`` (of the swept parameter when ``x`` is
        ``"value"``) and of the column (for several columns, ``"attack relative error"``
        when all are attacks, else ``"score"``).
    {title_returns}

    See Also
    --------
    column_label : The human names used for the axes and the legend.

    {references_example}
    >>> from skdc.experiments import plot_noise_curves
    >>> df = pd.DataFrame({"param": "align__v", "value": v,
    ...                    "balanced_accuracy": 0.9 - v + 0.02 * rng.randn(40)})
    >>> ax = plot_noise_curves(df, "balanced_accuracy", n_boot=100, title="digits")
    >>> len(ax.lines), ax.get_xlabel(), ax.get_ylabel()
    (1, 'anchor noise v', 'balanced accuracy')
    """
    _check_y_range(y_range)
    ys = [y] if isinstance(y, str) else list(y)
    _check_columns(results, [x, *ys])
    ax = _axes(ax)
    many = len(ys) > 1
    band_params = dict(n_boot=n_boot, level=level, random_state=random_state)
    banded = False
    for name, frame in _groups(results, hue):
        for col in ys:
            label = " ".join(s for s in (name, column_label(col) if many or name is None
                                         else None) if s)
            xs = frame[x].to_numpy(dtype=np.float64)
            vs = frame[col].to_numpy(dtype=np.float64)
            ok = np.isfinite(xs) & np.isfinite(vs)
            fit_rows = _fit_rows(ok, xs, exclude_controls)
            pts, color = _scatter(ax, xs, vs, ok, (palette or {}).get(name))
            knots = _series_knots(n_knots, xs[fit_rows])
            if fit_rows.sum() >= _fit_min_rows(knots) and np.ptp(xs[fit_rows]) > 0:
                col_range = _column_range(col, results[col].to_numpy(dtype=np.float64), y_range)
                band = fit_spline_band(
                    xs[fit_rows], vs[fit_rows], x_range=x_range, y_range=col_range,
                    n_knots=knots, monotone=_direction(col) if monotone == "auto" else monotone,
                    strata=_strata(xs[fit_rows]), **band_params)
                _draw_band(ax, band, color, label, n_boot)
                banded = banded or bool(n_boot)
            elif label:
                pts.set_label(label)
    _references(ax, references)
    _x_references(ax, x_references, (references or {}).values())
    _finish(ax, column_label(x, results) if xlabel is None else xlabel,
            _y_label(ys) if ylabel is None else ylabel,
            title)
    _legend(ax, level, banded)
    return ax


def _frontier_direct(ax, p, u, u_range, color, name, band_params):
    """Utility as a spline of the observed privacy score (min-max normalised), Fig 5 of [1]."""
    band = fit_spline_band(p, u, y_range=u_range, **band_params)
    _draw_band(ax, band, color, name, band_params["n_boot"])
    return band


def _frontier_parametric(ax, xs, pu, x_range, ranges, color, name, band_params):
    """Both scores as splines of the noise with paired resamples, Figs 8 and 11 of [1].

    The curve is ``(privacy_fit(v), utility_fit(v))`` on the noise grid, each score clipped
    to its range; the shaded envelope joins the paired bands' corners.
    """
    band = fit_spline_band(xs, pu, x_range=x_range, **band_params)
    for k, rng in enumerate(ranges):
        if rng is not None:
            for arr in (band.fit, band.lower, band.upper):
                arr[:, k] = np.clip(arr[:, k], *rng)
    ax.plot(band.fit[:, 0], band.fit[:, 1], color=color, linewidth=1.8, label=name)
    if band_params["n_boot"]:
        # envelope of the paired bands: most private & least useful corner to the
        # least private & most useful corner, along the noise grid
        poly_x = np.concatenate([band.lower[:, 0], band.upper[::-1, 0]])
        poly_y = np.concatenate([band.upper[:, 1], band.lower[::-1, 1]])
        ax.fill(poly_x, poly_y, color=color, alpha=0.15, linewidth=0)


@validate_params(
    {**_PLOT_CONSTRAINTS, "privacy": [str], "utility": [str],
     "fit": [str, None]},  # its options are checked with the message the tests know
    prefer_skip_nested_validation=True,
)
@Substitution(hue=_HUE_DOC, band=_BAND_DOC, title_returns=_TITLE_RETURNS_DOC,
              references_example=_REFERENCES_EXAMPLE_DOC)
def plot_frontier(results, privacy, utility, *, hue="method", fit="direct", x="value",
                  x_range=None, y_range="auto", references=None, exclude_controls=True,
                  n_knots="auto", monotone=None, palette=None, n_boot=2000, level=0.95,
                  random_state=0, ax=None, xlabel=None, ylabel=None, title=None):
    """Plot the privacy-utility frontier: utility against leakage, one point per draw.

    ``fit="direct"`` fits utility as a spline of the observed privacy score, min-max
    normalised (the paper's MNIST Fig 5 [1]_); ``fit="parametric"`` fits both scores as
    splines of the noise ``x`` with paired resamples and draws the curve
    ``(privacy_fit(v), utility_fit(v))`` with the envelope of the paired bands (Figs 8, 11).
    Fits and bands stay inside the range of each score (``y_range``).

    Read more in the :ref:`User Guide <experiments>`, and see the gallery example
    :ref:`sphx_glr_auto_examples_plot_calibrated_frontier.py`.

    Parameters
    ----------
    results : pandas.DataFrame
        A sweep table, possibly several concatenated (one series per ``hue`` value).
    privacy : str
        The privacy column (an attack's score) for the horizontal axis.
    utility : str
        The utility column for the vertical axis.
    {hue}
    fit : {"direct", "parametric"} or None, default="direct"
        How the curve is fitted; ``None`` draws points only.
    x : str, default="value"
        The noise column (for ``fit="parametric"`` and ``exclude_controls``).
    x_range : tuple of (float, float), default=None
        Normalisation of the noise for ``fit="parametric"``.
    y_range : "auto", tuple of (float, float), dict or None, default="auto"
        Valid range of the scores, as in :func:`plot_noise_curves`: ``"auto"`` keeps
        accuracies in ``[0, 1]`` and attack errors ``>= 0``; a tuple is the utility's range
        (the privacy score keeps its ``"auto"`` range); a dict ``{column: (low, high)}``
        names the columns; ``None`` clips only the known quantities.
    references : dict of {str: float}, default=None
        Horizontal utility levels ``{label: level}`` (the unaligned baseline, chance).
    exclude_controls : bool, default=True
        Leave draws with ``x == 0`` out of the fit.
    {band}
    xlabel, ylabel : str, default=None
        Axis labels; ``None``: the human names of ``privacy`` and ``utility``.
    {title_returns}

    See Also
    --------
    column_label : The human names used for the axes.

    {references_example}
    >>> from skdc.experiments import plot_frontier
    >>> df = pd.DataFrame({"value": v, "leak": 0.4 - 0.5 * v, "acc": 0.9 - v})
    >>> ax = plot_frontier(df, "leak", "acc", n_boot=100)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('leak', 'acc')
    """
    if fit not in ("direct", "parametric", None):
        raise ValueError(f"fit must be 'direct', 'parametric' or None; got {fit!r}.")
    _check_y_range(y_range)
    _check_columns(results, [privacy, utility] + ([x] if x in results.columns or fit ==
                                                  "parametric" else []))
    u_range = _column_range(utility, results[utility].to_numpy(dtype=np.float64), y_range)
    p_range = _column_range(privacy, results[privacy].to_numpy(dtype=np.float64),
                            "auto" if isinstance(y_range, tuple) else y_range)
    band_params = dict(n_boot=n_boot, level=level, random_state=random_state)
    if monotone == "auto":  # utility falls as privacy rises; each falls or rises with noise
        directions = {"direct": "decreasing" if _direction(utility) else None,
                      "parametric": [_direction(privacy), _direction(utility)]}
    else:
        directions = {"direct": monotone, "parametric": monotone}
    ax = _axes(ax)
    banded = False
    for name, frame in _groups(results, hue):
        p = frame[privacy].to_numpy(dtype=np.float64)
        u = frame[utility].to_numpy(dtype=np.float64)
        has_x = x in frame.columns
        xs = frame[x].to_numpy(dtype=np.float64) if has_x else np.ones_like(p)
        ok = np.isfinite(p) & np.isfinite(u) & np.isfinite(xs)
        fit_rows = _fit_rows(ok, xs, exclude_controls)
        pts, color = _scatter(ax, p, u, ok, (palette or {}).get(name))
        # the freedom of the fit follows the noise levels swept, not the scores observed
        knots = _series_knots(n_knots, (xs if has_x else p)[fit_rows])
        params = dict(band_params, n_knots=knots, monotone=directions[fit],
                      strata=_strata(xs[fit_rows]) if has_x else None) if fit else {}
        enough = fit_rows.sum() >= _fit_min_rows(knots)
        if fit == "direct" and enough and np.ptp(p[fit_rows]) > 0:
            _frontier_direct(ax, p[fit_rows], u[fit_rows], u_range, color, name, params)
        elif fit == "parametric" and enough and np.ptp(xs[fit_rows]) > 0:
            _frontier_parametric(ax, xs[fit_rows], np.column_stack([p, u])[fit_rows], x_range,
                                 (p_range, u_range), color, name, params)
        elif name is not None:
            pts.set_label(name)
            continue
        else:
            continue
        banded = banded or bool(n_boot)
    _references(ax, references)
    _finish(ax, column_label(privacy) if xlabel is None else xlabel,
            column_label(utility) if ylabel is None else ylabel, title)
    _legend(ax, level, banded)
    return ax
