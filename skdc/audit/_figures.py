"""The audit's figures, drawn from its tables as PNG (base64) for the page: the calibration,
the error curves and the frontier. Attack errors may span decades (the Moore-Penrose attack's
error explodes on some draws), so they are drawn on a logarithmic axis with the values beyond
its ends capped and marked, never as bands."""

# Licence: BSD 3 clause

import base64
import io
import math

import numpy as np

from ._words import attack_label, noise_label

__all__ = ["figures", "plot_calibration"]

_FLOOR, _CEIL = 1e-3, 1e3  # ratios to the target drawn within these, beyond them capped
_MEETS, _FAILS = "#1a7f37", "#c0392b"


def _capped(ax, x, y, floor, ceil, **kw):
    """Scatter ``(x, y)`` with the points beyond ``[floor, ceil]`` drawn at the limit as
    triangles pointing out of the panel (and NaN as failing, at the floor)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    y = np.where(np.isnan(y), -np.inf, y)
    inside = (y >= floor) & (y <= ceil)
    ax.scatter(x[inside], y[inside], **kw)
    kw = {k: v for k, v in kw.items() if k not in ("label", "marker")}
    ax.scatter(x[y < floor], np.full((y < floor).sum(), floor), marker="v", **kw)
    ax.scatter(x[y > ceil], np.full((y > ceil).sum(), ceil), marker="^", **kw)
    return int((~inside).sum())


def _mark_answer(ax, cal, span=True):
    """The bracket shaded, the recommended value as a line, v_PT dashed."""
    if np.isfinite(cal.value):
        if span and cal.bracket[1] > cal.bracket[0]:
            ax.axvspan(*cal.bracket, color="0.6", alpha=0.25, linewidth=0)
        ax.axvline(cal.value, color="k", linewidth=1.2,
                   label=f"recommended {noise_label(cal.param).split()[-1]} = {cal.value:.4g}")
    if np.isfinite(cal.v_phase_transition):
        lo, hi = ax.get_xlim()
        if cal.v_phase_transition <= hi + 0.5 * (hi - lo):
            ax.axvline(cal.v_phase_transition, color="0.35", linestyle="--", linewidth=1,
                       label=f"v_PT = {cal.v_phase_transition:.4g}")


def plot_calibration(cal, ax):
    """How a calibration got its answer: every draw's worst attack error relative to its
    target against the noise, each evaluated value labelled ``failing / run`` draws.

    Parameters
    ----------
    cal : NoiseCalibration
        The calibration.
    ax : matplotlib Axes
        Where to draw.

    Returns
    -------
    ax : matplotlib Axes
    """
    from ._criteria import _draw_margin

    t = cal.table
    margin = np.array([_draw_margin(r, cal.min_error) for r in t.to_dict("records")])
    meets = t["meets"].to_numpy(dtype=bool)
    seen = margin[np.isfinite(margin) & (margin > 0) & (t["value"].to_numpy() > 0)]
    floor = max(_FLOOR, 10 ** math.floor(math.log10(min(seen.min(), 0.5)))) if seen.size \
        else _FLOOR
    ceil = min(_CEIL, 10 ** math.ceil(math.log10(max(seen.max(), 2.0)))) if seen.size \
        else _CEIL
    n_cap = 0
    for ok, color, name in ((True, _MEETS, "draw meets"), (False, _FAILS, "draw fails")):
        sel = meets == ok
        if sel.any():
            n_cap += _capped(ax, t["value"][sel], margin[sel], floor, ceil, s=14,
                             color=color, alpha=0.6, linewidths=0, label=name)
    ax.set_yscale("log")
    ax.set_ylim(floor / 1.5, ceil * 1.5)
    ax.axhline(1.0, color="k", linestyle=":", linewidth=1, label="at the target")
    import matplotlib.transforms as mtransforms

    top = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
    for k, d in enumerate(cal.decisions.sort_values("value").itertuples()):
        ax.text(d.value, 1.01 + 0.045 * (k % 2), f"{d.n_failed}/{d.n_draws}", ha="center",
                va="bottom", fontsize="x-small", transform=top,
                color=_MEETS if d.passes else _FAILS)
    _mark_answer(ax, cal)
    ax.set_xlabel(noise_label(cal.param))
    ax.set_ylabel("worst judged column / its target (>= 1 meets)")
    title = "above each value: failing / run draws"
    if n_cap:
        title += f"; {n_cap} beyond the axis drawn at its end (triangles)"
    ax.set_title(title, fontsize="small", pad=22)
    ax.legend(fontsize="x-small", frameon=False, loc="lower right")
    return ax


# ----------------------------------------------------------------------------- figures


def _png(fig):
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _error_axis(errors):
    """``(log, low, high)``: a log axis when the errors at non-zero noise span decades (the
    largest more than 30 times the 5th percentile), with its ends; else a linear axis from
    0. Values beyond the ends are capped and marked (:func:`_capped`)."""
    x = np.asarray(errors, dtype=float)
    n_inf = int(np.isposinf(x).sum())
    x = x[np.isfinite(x) & (x > 0)]
    if x.size == 0:
        return False, 0.0, 1.0
    q05 = float(np.percentile(x, 5))
    if x.max() > 30 * q05 or n_inf:
        low = 10 ** math.floor(math.log10(max(q05 / 3, 1e-6)))
        high = 10 ** math.ceil(math.log10(max(x.max(), 10 * low)))
        return True, low, min(high, low * 1e6)
    return False, 0.0, 1.08 * float(x.max())


def _curves_figure(cal, draws, names, s):
    """Attack errors (left) and utility (right) against the noise: every draw a point, the
    median (mean for utility) per noise value a line, the target, the recommended noise, its
    bracket and v_PT."""
    import matplotlib.pyplot as plt

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    if s.get("max_linkage") is not None and all(a + " unlinked" in draws for a in names):
        _linkage_panel(ax0, draws, names, s)
    else:
        _error_panel(ax0, draws, names, s)
    ax1.scatter(draws["value"], draws["balanced_accuracy"], s=12, color="C7", alpha=0.5,
                linewidths=0)
    mean = draws.groupby("value")["balanced_accuracy"].mean()
    ax1.plot(mean.index, mean.to_numpy(), "-", color="C7", linewidth=1.4, label="mean")
    ax1.set_ylabel("balanced accuracy (held-out rows)")
    for ax in (ax0, ax1):
        ax.set_xlabel(s["noise"])
        _mark_answer(ax, cal)
        ax.legend(fontsize="small", frameon=False)
    return fig


def _linkage_panel(ax0, draws, names, s):
    """Each attack's exact-source linkage accuracy against the noise: every draw a point,
    the median a line, the target and chance."""
    for k, a in enumerate(names):
        link = 1.0 - draws[a + " unlinked"].to_numpy(dtype=float)
        ax0.scatter(draws["value"], link, s=12, color=f"C{k}", alpha=0.45, linewidths=0)
        med = (1.0 - draws[a + " unlinked"]).groupby(draws["value"]).median()
        ax0.plot(med.index, med.to_numpy(), "-", color=f"C{k}", linewidth=1.4,
                 label=f"{attack_label(a)} (median)")
    ax0.axhline(s["max_linkage"], color="k", linestyle=":", linewidth=1.2,
                label=f"target: at most {s['max_linkage']:.3g}")
    ax0.axhline(0.1, color="0.5", linestyle="--", linewidth=1, label="chance 0.1")
    ax0.set_ylim(0, 1.02)
    ax0.set_ylabel("exact-source linkage accuracy (lower = more private)")


def _error_panel(ax0, draws, names, s):
    """Each attack's relative error against the noise (log axis when they span decades)."""
    noisy = draws[draws["value"] > 0]
    log, low, high = _error_axis(noisy[names].to_numpy().ravel())
    t = s["target_error"]
    if t is not None:
        high = max(high, 1.3 * t)
    n_cap = 0
    for k, a in enumerate(names):
        color = f"C{k}"
        n_cap += _capped(ax0, draws["value"], draws[a], low if log else -np.inf, high, s=12,
                         color=color, alpha=0.45, linewidths=0)
        med = draws.groupby("value")[a].median()
        ax0.plot(med.index, np.clip(med.to_numpy(), low if log else 0, high), "-",
                 color=color, linewidth=1.4, label=f"{attack_label(a)} (median)")
    if t is not None:
        ax0.axhline(t, color="k", linestyle=":", linewidth=1.2, label=f"target error {t:.3g}")
    if log:
        ax0.set_yscale("log")
        ax0.set_ylim(low / 1.5, high * 1.5)
    else:
        ax0.set_ylim(0, high * 1.05)
    ax0.set_ylabel("attack error ||X\u0302 - X|| / ||X|| (higher = more private)")
    if n_cap:
        ax0.set_title(f"{n_cap} draws beyond the axis drawn at its end (triangles)",
                      fontsize="small")


def _frontier_figure(cal, draws, s, tables):
    """Utility against the binding attack's error, one point per draw coloured by the noise;
    the star at the recommended noise: its guaranteed error and its mean utility."""
    import matplotlib.pyplot as plt

    a = cal.binding_attack
    target = cal.min_error[a]
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    flip = a.endswith((" unlinked", " sensitive"))  # drawn as the risk: lower is private
    if flip:
        log, low, high = False, 0.0, 1.0
        x = np.clip(1.0 - draws[a].to_numpy(dtype=float), 0.0, 1.0)
        x = np.where(np.isnan(x), 1.0, x)
        line, star = 1.0 - target, 1.0 - cal.attack_error_interval[0]
        what = "linkage accuracy" if a.endswith(" unlinked") else "gain on the sensitive column"
        line_label, bound = f"target: at most {line:.3g}", "upper bound"
    else:
        noisy = draws[draws["value"] > 0]
        log, low, high = _error_axis(noisy[a].to_numpy())
        high = max(high, 1.3 * target)
        err = np.where(np.isnan(draws[a]), -np.inf, draws[a].to_numpy(dtype=float))
        x = np.clip(err, low if log else 0.0, high)
        line, star = target, cal.attack_error_interval[0]
        what, line_label, bound = "attack error", f"target error {target:.3g}", "error bound"
    points = ax.scatter(x, draws["balanced_accuracy"], c=draws["value"], cmap="viridis", s=16,
                        alpha=0.7, linewidths=0)
    fig.colorbar(points, ax=ax, label=s["noise"])
    ax.axvline(line, color="k", linestyle=":", linewidth=1.2, label=line_label)
    if np.isfinite(cal.value):
        lo_ci, hi_ci = tables["utility_ci"]
        star_x = float(np.clip(star, low if log else 0.0, high))
        ax.errorbar([star_x], [tables["utility"]],
                    yerr=[[tables["utility"] - lo_ci], [hi_ci - tables["utility"]]], fmt="*",
                    color="C3", markersize=16, markeredgecolor="k", zorder=5,
                    label=f"recommended {s['param'].split('__')[-1]} = {cal.value:.4g}: "
                          f"{bound} {star:.3g}")
        title = f"star: the recommended noise (its {bound}, mean accuracy)"
    else:
        title = "no noise in the range meets the targets: no recommended point"
    if log:
        ax.set_xscale("log")
        ax.set_xlim(low / 1.5, high * 1.5)
    else:
        ax.set_xlim(-0.02 if flip else 0, high * 1.05)
    ax.set_title(title, fontsize="small")
    ax.set_xlabel(f"{attack_label(_attack_name(a))} {what} (the binding attack)")
    ax.set_ylabel("balanced accuracy (held-out rows)")
    ax.legend(fontsize="small", frameon=False, loc="lower left")
    return fig


def _attack_name(column):
    for suffix in (" unlinked", " sensitive"):
        if column.endswith(suffix):
            return column[:-len(suffix)]
    return column


def _calibration_figure(cal):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
    plot_calibration(cal, ax)
    return fig


def _picture_figure(picture):
    """Originals (top) and the binding attack's reconstructions (bottom), image rows."""
    import matplotlib.pyplot as plt

    truth, rec, side = picture["truth"], picture["reconstruction"], picture["side"]
    k = min(6, truth.shape[0])
    fig, axes = plt.subplots(2, k, figsize=(1.3 * k, 2.9), layout="constrained")
    axes = np.atleast_2d(axes).reshape(2, k)
    lo, hi = float(truth.min()), float(truth.max())
    for j in range(k):
        for r, img in enumerate((truth[j], rec[j])):
            axes[r, j].imshow(img.reshape(side, side), cmap="gray_r", vmin=lo, vmax=hi)
            axes[r, j].set_xticks([])
            axes[r, j].set_yticks([])
    axes[0, 0].set_ylabel("original")
    axes[1, 0].set_ylabel("attack")
    fig.suptitle(f"{attack_label(picture['attack'])} reconstruction, relative error "
                 f"{picture['error']:.3f}", fontsize="small")
    return fig


def figures(cal, draws, tables, setting, picture):
    """The report's figures (matplotlib figures): ``curves``, ``frontier``, ``calibration``
    and, for image rows (the user said so), ``picture``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    names = list(setting["attacks"])
    out = {"curves": _curves_figure(cal, draws, names, setting),
           "frontier": _frontier_figure(cal, draws, setting, tables),
           "calibration": _calibration_figure(cal)}
    if picture is not None and picture.get("side"):
        out["picture"] = _picture_figure(picture)
    return out
