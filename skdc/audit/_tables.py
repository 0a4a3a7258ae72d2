"""The audit's tables (each attack at the verdict's noise and at the bracket's failing end,
the decisions, the utility) and its reconstruction picture of the attacked party's rows."""

# Licence: BSD 3 clause

import math

import numpy as np

from ._calibrate import (
    _attacked_rows,
)
from ._criteria import _UNLINKED, _mean_interval
from ._targets import (
    _attack_of,
)

# ----------------------------------------------------------------------------- tables


def _where(cal):
    """``(decided_at, failing_end)``: the noise where the verdict is read (the recommended
    value, or the largest noise when nothing passes) and the bracket's failing end (``None``
    when the lower end of the range already passes)."""
    if np.isfinite(cal.value):
        return cal.value, (cal.bracket[0] if cal.bracket[0] != cal.value else None)
    return cal.bracket[0], None


def _attack_table(cal, names):
    """Each attack at the noise where the verdict is read and at the bracket's failing end."""
    import pandas as pd

    at, fail_end = _where(cal)
    label = "recommended noise" if np.isfinite(cal.value) else "largest noise tried"
    rows = []
    for where, v in ((label, at), ("bracket low end (fails)", fail_end)):
        if v is None:
            continue
        s = cal.summary[cal.summary["value"] == v].set_index("attack")
        for a in names:
            rows.append({
                "attack": a, "measure": _measure_words(a), "where": where, "noise": v,
                "draws": int(s.loc[a, "n_draws"]),
                "below_target": int(s.loc[a, "failures"]), "target": s.loc[a, "target"],
                "min_error": s.loc[a, "min"], "median_error": s.loc[a, "median"],
                "max_error": s.loc[a, "max"], "lower_bound": s.loc[a, "lower"],
                "binding": a == cal.binding_attack})
    return pd.DataFrame(rows)


def _measure_words(column):
    """What a judged column holds, in words (higher = more private in every one)."""
    if column.endswith(_UNLINKED):
        return "1 - linkage accuracy"
    if column.endswith(" sensitive"):
        return "sensitive column: error ratio to the attacker's own guess"
    return "relative error"


def strongest_linkage(cal, value):
    """``(attack, median linkage, largest linkage, draws)`` of the attack whose median
    exact-source linkage accuracy over the calibration's draws at ``value`` is highest;
    ``None`` when linkage was not measured there."""
    rows = cal.table[cal.table["value"] == value]
    cols = [c for c in cal.table.columns if c.endswith(_UNLINKED)]
    if not cols or not len(rows):
        return None
    medians = {c: 1.0 - float(rows[c].median()) for c in cols}
    top = max(medians, key=medians.get)
    return (top[:-len(_UNLINKED)], medians[top], 1.0 - float(rows[top].min()), len(rows))


def _utility_at(draws, value):
    """Mean balanced accuracy over every draw (calibration and grid) at ``value``."""
    rows = draws[np.isclose(draws["value"], value, rtol=0, atol=1e-12)]
    return float(rows["balanced_accuracy"].mean()) if len(rows) else float("nan"), len(rows)


def _tables(cal, draws, setting, leakage=None):
    """``{"attacks", "diagnostics", "summary"}``: the tables the page shows and the CSVs
    hold; every count in them is read off the same draws."""
    import pandas as pd

    at, _ = _where(cal)
    rows = draws[(draws["stage"] == "calibration") & (draws["value"] == at)]
    util, util_ci = _mean_interval(rows["balanced_accuracy"], cal.confidence)
    base, n_base = _utility_at(draws, setting["bounds"][0])
    diag = [(f"{setting['noise']} where the verdict is read", at),
            ("draws at this noise", len(rows))]
    if "converged" in rows and rows["converged"].notna().any():
        diag += [("share of draws converged", float(rows["converged"].astype(float).mean())),
                 ("median solver iterations", float(rows["n_iter"].median())),
                 ("median fixed-point residual", float(rows["fixed_point_residual"].median()))]
    if np.isfinite(cal.v_phase_transition):
        diag += [("v_PT (phase transition)", cal.v_phase_transition),
                 ("v / v_PT", at / cal.v_phase_transition)]
    diag += [("balanced accuracy (mean)", util), ("balanced accuracy CI low", util_ci[0]),
             ("balanced accuracy CI high", util_ci[1])]
    if n_base:
        diag += [(f"balanced accuracy at {setting['noise']} = {setting['bounds'][0]:.4g}",
                  base)]
    if leakage is not None:
        diag += [("leakage bound (bits per record)", leakage)]
    diagnostics = pd.DataFrame(diag, columns=["quantity", "value"])
    b = cal.summary[(cal.summary["value"] == at) & (cal.summary["attack"] == cal.binding_attack)]
    passed = bool(np.isfinite(cal.value))
    link = strongest_linkage(cal, at)
    t_err, t_link = setting["target_error"], setting["max_linkage"]
    head = [("decision", "collaborate" if passed else "do not collaborate"),
            ("verdict", "meets the targets" if passed else "no noise in range meets them"),
            ("recommended noise", cal.value if passed else "none"),
            ("bracket low (fails)", cal.bracket[0] if not passed or cal.bracket[0] != cal.value
             else "none"),
            ("bracket high (passes)", cal.bracket[1] if passed else "none"),
            ("max linkage", "not judged" if t_link is None else t_link),
            ("target error", "not judged" if t_err is None else t_err),
            ("confidence", cal.confidence),
            ("criterion", cal.criterion), ("binding attack", cal.binding_attack),
            (f"binding column (mean) at {at:.4g}", float(b["mean"].iloc[0])),
            (f"binding column short of its target at {at:.4g}",
             f"{int(b['failures'].iloc[0])} of {int(b['n_draws'].iloc[0])} draws")]
    if link is not None:
        head += [(f"strongest linkage (median) at {at:.4g}", link[1]),
                 ("strongest linkage attack", link[0])]
    head += [(f"balanced accuracy (mean) at {at:.4g}", util)]
    if n_base:
        head += [(f"balanced accuracy (mean) at {setting['bounds'][0]:.4g}", base)]
    n_cal = int((draws["stage"] == "calibration").sum())
    head += [("calibration draws", n_cal), ("grid draws", len(draws) - n_cal),
             ("draws run (all)", len(draws)), ("draws read back from a checkpoint",
                                               setting["n_resumed"])]
    summary = pd.DataFrame(head, columns=["quantity", "value"])
    return {"attacks": _attack_table(cal, list(cal.min_error)), "diagnostics": diagnostics,
            "summary": summary, "baseline": base, "utility": util, "utility_ci": util_ci,
            "at": at, "linkage": link}


# ----------------------------------------------------------------------------- the picture


def _column_names(X):
    """A DataFrame's column names, else ``None``."""
    columns = getattr(X, "columns", None)
    return None if columns is None else [str(c) for c in columns]


def _reconstruction_picture(cal, pipe, split, param, colluder, target, images=False):
    """Originals and the binding attack's reconstructions where the verdict is read; the
    deployment of that noise's first draw. ``side`` is the images' side when ``images``
    (the report draws them), else ``None`` (it shows the rows as a table)."""
    side = int(round(math.sqrt(split.X_test.shape[1]))) if images else None
    from sklearn import config_context
    from threadpoolctl import threadpool_limits

    from ..attacks import collusion_view, make_attack
    from ..metrics import relative_error
    from ..utils._draw_jobs import _Maker

    at, _ = _where(cal)
    row = cal.table[cal.table["value"] == at].sort_values("draw").iloc[0]
    est = _Maker(pipe, param, "deployment")(at, int(row["draw_seed"]))
    # one BLAS thread, as in the draws: the same numbers as the draw it repeats
    with config_context(enable_metadata_routing=True), threadpool_limits(1):
        est.fit(split.X_train, split.y_train, participant=split.participant_train)
    # every row of the target, as the draws attack them (_attacked_rows)
    X, _, participant = _attacked_rows(split.X_train, split.y_train, split.X_test, split.y_test,
                                       split.participant_train, split.participant_test)
    view = collusion_view(est, X, colluder=colluder, target=target, participant=participant)
    attack = _attack_of(cal.binding_attack)
    rec = make_attack(attack).reconstruct(view)
    truth = view.truth.X
    return {"truth": truth, "reconstruction": rec.X, "side": side, "value": at,
            "error": float(relative_error(truth, rec.X)), "draw": int(row["draw"]),
            "attack": attack}
