"""The comparison's figure and page: every option side by side, the verdict first.

Everything here renders; nothing computes a verdict. :mod:`skdc.audit._compare` computes
the options, the table, the verdict and the deployment and hands them over; this module draws
one figure (utility against the strongest attack's error, and utility against epsilon) and
writes the self-contained page (figures as PNG, no scripts, no links).
"""

# Licence: BSD 3 clause

import html

import numpy as np

from ._figures import _FAILS, _MEETS, _png
from ._report import (
    _RULES,
    _img,
    _model_words,
    _page,
    _table,
    _versions,
)
from ._words import attack_label, say

__all__ = ["plot_comparison", "render_comparison"]

_REF, _FORMAL = "0.35", "#1f5fa8"
SECTIONS = ("options", "costs", "regulator", "deployment", "judged", "limits", "reproduce")
_TITLES = {"options": "The options side by side", "costs": "What each option costs",
           "regulator": "The regulator's words", "deployment": "Deploying the chosen option",
           "judged": "How each option was judged",
           "limits": "What the comparison does not cover", "reproduce": "How to reproduce it"}


def _attack_words(name):
    if name is None:
        return "none applies"
    if name in ("pinv", "lr", "mlp"):
        return f"anchor regression ({name.upper()})"
    return attack_label(name)


# ----------------------------------------------------------------------------- the figure


_MARKERS = {"central": "o", "igdp": "D", "cgdp": "s", "kti": "^"}


def _error_panel(ax, results, setting):
    """Utility (with its interval) against the strongest attack's error bound: one marker per
    option, green when it meets the target, red when not, grey for Central."""
    t = setting["target_error"]
    attacked = [o for o in results.values() if o.attack is not None and np.isfinite(
        o.attack_error)]
    errors = [e for o in attacked for e in (o.attack_error, o.attack_error_median)
              if np.isfinite(e)]
    drawn_t = t
    if t is None:  # the error is reported, not judged: the axis fits the errors
        t = max(errors or [0.5])
    high = max([1.3 * t, 0.5, *[min(e, 3.0 * max(t, 0.1)) * 1.1 for e in errors]])
    local = results.get("local")
    if local is not None:
        ax.axhspan(*local.utility_interval, color=_REF, alpha=0.12, linewidth=0)
        ax.axhline(local.utility, color=_REF, linestyle="--", linewidth=1.2,
                   label=f"Local, nothing shared: {local.utility:.3f} (band: its interval)")
    if drawn_t is not None:
        ax.axvline(t, color="k", linestyle=":", linewidth=1.2, label=f"target error {t:.3g}")
    for o in attacked:
        color = _REF if o.name == "central" else _MEETS if o.meets else _FAILS
        x = min(o.attack_error, high)
        lo, hi = o.utility_interval
        label = ("Central: the analyst holds the raw rows (error 0)" if o.name == "central"
                 else f"{o.label}: {o.setting}")
        ax.errorbar([x], [o.utility], yerr=[[o.utility - lo], [hi - o.utility]],
                    fmt=_MARKERS.get(o.name, "o"), color=color, markersize=8, capsize=3,
                    zorder=4, label=label)
        if np.isfinite(o.attack_error_median) and o.attack_error_median > o.attack_error:
            med = min(o.attack_error_median, high)
            ax.plot([x, med], [o.utility, o.utility], "-", color=color, linewidth=1, alpha=0.6)
            ax.plot([med], [o.utility], ">" if o.attack_error_median > high else "|",
                    color=color, markersize=7)
    ax.set_xlim(-0.02 * high, high * 1.05)
    ax.set_xlabel(f"strongest attack's error a fresh deployment exceeds at "
                  f"{setting['confidence']:.0%}\n(the thin line runs to the median error)")
    ax.set_ylabel("balanced accuracy (held-out rows)")
    ax.set_title("options judged by attacks: green meets the targets, red does not",
                 fontsize="small")
    ax.legend(fontsize="x-small", frameon=False, loc="upper center",
              bbox_to_anchor=(0.5, -0.2), ncol=1)


def _epsilon_panel(ax, results, setting):
    """GaussMix's utility against epsilon; the other options have no epsilon and are drawn
    as labelled lines."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    formal = [o for o in results.values() if o.protection == "formal"]
    for o in results.values():
        if o.protection == "formal":
            continue
        style = {"local": ("--", _REF), "central": ("-", _REF)}.get(
            o.name, (":", _MEETS if o.meets else _FAILS))
        ax.axhline(o.utility, linestyle=style[0], color=style[1], linewidth=1.1)
        ax.annotate(f"{o.label} (no epsilon)" if o.protection == "empirical" else o.label,
                    (0.01, o.utility), xycoords=("axes fraction", "data"), fontsize="x-small",
                    color=style[1], va="bottom")
    if not formal:
        ax.text(0.5, 0.5, "GaussMix not compared", ha="center", va="center",
                transform=ax.transAxes, color=_REF)
        ax.set_xticks([])
    else:
        eps = np.array([o.epsilon for o in formal])
        util = np.array([o.utility for o in formal])
        err = np.array([[o.utility - o.utility_interval[0] for o in formal],
                        [o.utility_interval[1] - o.utility for o in formal]])
        ax.errorbar(eps, util, yerr=err, fmt="s-", color=_FORMAL, markersize=7, capsize=3,
                    label=f"GaussMix, (epsilon, delta = {setting['delta']:g})-DP")
        for e, u in zip(eps, util):
            ax.annotate(f"epsilon = {e:.3g}", (e, u), textcoords="offset points",
                        xytext=(6, -12), fontsize="x-small", color=_FORMAL)
        ax.set_xscale("log")
        ax.set_xlim(eps.min() / 2.0, eps.max() * 2.0)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(eps)
        ax.legend(fontsize="x-small", frameon=False, loc="upper center",
                  bbox_to_anchor=(0.5, -0.2))
    ax.set_xlabel("epsilon (formal guarantee; smaller is more private)")
    ax.set_ylabel("balanced accuracy (held-out rows)")
    ax.set_title("GaussMix: the one option with a formal guarantee", fontsize="small")


def plot_comparison(comparison, axes=None):
    """The comparison in one figure: utility against the strongest attack's error (left) and
    against epsilon (right).

    Parameters
    ----------
    comparison : Comparison
        The result of :func:`~skdc.audit.compare_options`.
    axes : pair of matplotlib Axes, default=None
        Where to draw; a new figure when ``None``.

    Returns
    -------
    axes : pair of matplotlib Axes
    """
    return _panels(comparison.options, comparison.setting, axes)


def _panels(results, setting, axes=None):
    if axes is None:
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2, figsize=(12, 6.2), layout="constrained", sharey=True)
    _error_panel(axes[0], results, setting)
    _epsilon_panel(axes[1], results, setting)
    return axes


def _figure(results, setting):
    """The report's figure, drawn without a display."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    return _panels(results, setting)[0].figure


# ----------------------------------------------------------------------------- the page


def _num(v, digits=3):
    return "n/a" if v is None or not np.isfinite(v) else f"{v:.{digits}f}"


def _display_table(results, table, s_col=None):
    """The table as the page shows it: numbers with their intervals, in words."""
    import pandas as pd

    rows = []
    for o, r in zip(results.values(), table.itertuples()):
        rows.append({
            "option": o.label, "protection": o.protection, "setting": o.setting or "-",
            "balanced accuracy": f"{o.utility:.3f} [{o.utility_interval[0]:.3f}, "
                                 f"{o.utility_interval[1]:.3f}]",
            "interval over": o.interval_over,
            "vs Local": _signed(r.vs_local), "vs Central": _signed(r.vs_central),
            "strongest attack": _attack_words(o.attack),
            "attack error (bound / median)": "not measured" if o.attack is None else
            f"{_num(o.attack_error)} / {_num(o.attack_error_median)}",
            "exact-source linkage (chance)": "-" if not np.isfinite(o.linkage) else
            f"{o.linkage:.2f} ({o.linkage_chance:.2f})",
            "label inference (majority-label baseline; no risk: labels are shared)":
            "-" if not np.isfinite(o.inference) else
            f"{o.inference:.2f} (baseline {o.inference_chance:.2f}"
            + (", below it" if o.inference < o.inference_chance else "") + ")",
            **({} if s_col is None else {
                f"gain on column {s_col}": "-" if not np.isfinite(o.sensitive_gain) else
                f"{o.sensitive_gain:.2f}"}),
            "epsilon": "-" if not np.isfinite(o.epsilon) else f"{o.epsilon:.3g}",
            "meets the targets": r.meets_target})
    return pd.DataFrame(rows)


def _below_baseline(results):
    """What a label inference below its majority-label baseline means, when one is (HTML)."""
    below = [o for o in results.values()
             if np.isfinite(o.inference) and o.inference < o.inference_chance]
    if not below:
        return ""
    listed = ", ".join(f"{html.escape(o.label)} {o.inference:.2f} against "
                       f"{o.inference_chance:.2f}" for o in below)
    return (
        f"<p id='inference-below-baseline'>Label inference below its baseline ({listed}): "
        "always guessing the target's commonest label would be right more often than reading "
        "the label off the reconstructions, so the reconstructions carry little of what "
        "tells the labels apart (they may even mislead the reader). It is no sign of "
        "privacy either way: the analyst holds the labels anyway, and linkage and the "
        "reconstruction error are the risk measures.</p>")


def _signed(v):
    return "-" if not np.isfinite(v) else f"{v:+.3f}"


def _verdict_html(verdict):
    cls = "verdict" if verdict["decision"] == "collaborate" else "verdict no"
    text = html.escape(verdict["sentence"])
    for word in ("Collaborate:", "Do not collaborate:"):
        if text.startswith(word):
            text = f"<b>{word[:-1]}</b>:{text[len(word):]}"
    warns = "".join(f"<p class='verdict warn'>{html.escape(w)}</p>"
                    for w in verdict["warnings"])
    return f"<p class='{cls}' id='verdict-sentence'>{text}</p>{warns}"


def _options_section(s, results, table, fig):
    rule = _RULES[s["criterion"]].format(c=s["confidence"])
    return (
        f"<p>{_model_words(s)} GaussMix fits its own private logistic regression.</p>"
        f"<p>{len(results)} options on the same {s['n_train']} training rows, "
        f"{s['n_participants']} participants and {s['n_test']} held-out rows. Calibrated "
        f"options are judged by {html.escape(rule)}, over fresh simulated deployments "
        f"(secrets, anchor and noise redrawn, your rows and partition kept). The attack "
        f"error is the relative reconstruction error of participant {s['target']}'s rows by "
        f"the analyst colluding with participant {s['colluder']}; <i>bound</i> is the error a "
        f"fresh deployment exceeds at {s['confidence']:.0%} (the criterion's order "
        "statistic), <i>median</i> the middle draw. Exact-source linkage is the share of "
        "reconstructions closest to their own row among 10 same-label rows, by the attacker's "
        "best matcher; label inference the share whose label a classifier trained on clean "
        "rows reads off correctly (the labels reach the analyst in every option, so it is no "
        "risk measure of its own)"
        + ("" if s.get("sensitive") is None else
           f"; the gain on column {s['sensitive']} how much better the strongest attack "
           "predicts it from the reconstructions than from what it already holds (0: no "
           "better; 1: exactly)") + ".</p>"
        + _table(_display_table(results, table, s.get("sensitive")), "comparison")
        + _below_baseline(results)
        + _img(fig, "utility against the strongest attack's error and against epsilon")
        + "<p>Left: each empirical option at its setting, its balanced accuracy with the "
        "interval, placed at the attack error a fresh deployment exceeds; the line runs to "
        "the median error (an arrow: beyond the axis). Central sits at error 0: the analyst "
        "holds the rows. Right: GaussMix at each stated epsilon; the other options have no "
        "epsilon and are drawn as lines.</p>")


def _costs_section(s, results):
    local, central = results.get("local"), results.get("central")
    items = []
    for o in results.values():
        if o.name in ("local", "central"):
            continue
        refs = []
        for ref, word in ((local, "Local"), (central, "Central")):
            if ref is not None:
                d = o.utility - ref.utility
                refs.append(f"{'gains' if d >= 0 else 'costs'} {abs(d):.3f} against "
                            f"{word} ({ref.utility:.3f})")
        status = {"formal": "a formal guarantee (epsilon = "
                            f"{o.epsilon:.3g}); its attack error is not measured",
                  "empirical": "meets the targets" if o.meets else "does not meet the targets"
                  }[o.protection]
        items.append(f"<li><b>{html.escape(o.label)}</b> at {html.escape(o.setting)}: "
                     f"balanced accuracy {o.utility:.3f}; {'; '.join(refs)}; "
                     f"{status}.</li>")
    refs = ("<p>Local is what each participant gets alone (nothing leaves home); Central is "
            "what pooling the raw rows would give (no privacy at all). A collaboration is "
            "worth its privacy when it beats Local.</p>")
    return refs + ("<ul>" + "".join(items) + "</ul>" if items else
                   "<p>Only the references were compared.</p>")


def _regulator_section(s, regulator):
    return (
        "<p>The Article 29 Working Party's Opinion 05/2014 on anonymisation techniques "
        "(WP216), the European data protection guidance on anonymisation, judges a "
        "technique by three risks. For each: what this comparison measures, and what it "
        "does not.</p>"
        + _table(regulator.drop(columns=["column"]), "regulator")
        + "<p><b>Anchor noise is not differential privacy.</b> The anchor noise of I-GDP + "
        "GOPP, the private-data noise of C-GDP and the reduced dimension of the KTI route "
        "are empirical, attack-relative protections: they make the attacks above err, on "
        "your rows, at the stated confidence, and say nothing about attacks not run here. "
        "Only GaussMix carries a formal guarantee: (epsilon, delta)-differential privacy of "
        "each participant's release, which bounds what <i>any</i> attack learns about one "
        "record. A low reconstruction error with high linkage means the rows can be singled "
        "out; a high error with linkage well above chance means the reconstructions still "
        "single rows out: read the linkage column, not only the error.</p>")


def _deployment_section(s, results, verdict, deployment):
    if deployment is None:
        best = verdict["best"]
        why = ("No option meets the targets, so nothing is recommended for deployment."
               if best is None else
               "The decision is not to collaborate (see the verdict), so nothing is "
               "recommended for deployment." if verdict["decision"] != "collaborate" else
               f"The best option meeting the target, {html.escape(results[best].label)}, is "
               "not one `skdc participant upload` runs (it runs I-GDP and C-GDP); deploy it "
               "from Python with the settings in the table.")
        return f"<p>{why}</p>"
    o = results[deployment["option"]]
    anyway = ("" if verdict["decision"] == "collaborate" else
              "<p class='verdict no'>The verdict is not to collaborate: each participant "
              "alone does better. Should the participants collaborate anyway, for a reason "
              "this comparison does not weigh, this is the audited deployment of the best "
              "option that meets the targets.</p>")
    settings = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(repr(v))}</td></tr>"
                       for k, v in deployment["settings"].items())
    return (
        f"{anyway}<p>The best option meeting the targets that skdc's deployment commands run: "
        f"<b>{html.escape(o.label)}</b> at {html.escape(o.setting)}. Each participant runs "
        "the flags below (written to <code>deployment.txt</code>); the analyst's <code>skdc "
        "analyst fit --audit-fingerprint deployment.json</code> refuses any upload whose "
        "declared settings differ, so what was audited is what is deployed. The seeds are "
        "not settings: each participant draws its own.</p>"
        f"<p>Fingerprint of the audited settings: <code id='fingerprint'>"
        f"{deployment['fingerprint']}</code></p>"
        f"<div class='scroll'><table id='settings'>{settings}</table></div>"
        f"<pre id='commands'>{html.escape(deployment['text'])}</pre>")


def _judged_section(s, results):
    parts = []
    for o in results.values():
        if o.calibration is not None:
            cal = o.calibration
            first = ("n_components",) if "n_components" in cal.decisions else ("value",)
            cols = [c for c in (*first, "n_draws", "n_failed",
                                "allowed_failures", "fresh_fail_bound", "utility", "passes",
                                "why") if c in cal.decisions]
            parts.append(f"<h3>{html.escape(o.label)}</h3><p>Calibrated: "
                         f"{html.escape(o.setting)}; binding attack "
                         f"{html.escape(_attack_words(cal.binding_attack))}; "
                         f"{cal.n_draws_run} simulated deployments.</p>"
                         + _table(cal.decisions[cols], f"decisions-{o.name}"))
        elif o.protection == "formal":
            e = o.extra
            parts.append(
                f"<h3>{html.escape(o.label)}</h3><p>Each participant releases one Gaussian "
                f"sketch of its rows [x / C, 1, onehot(y)] with k = {e['k']} rows and "
                f"noise sigma = {e['noise']:.4g} (the dimensionless scale gamma = "
                f"{e['scale']:.4g}, row bound C = {e['row_bound']:.4g}, public and "
                f"data-independent; {e['clipped']:.0%} of the training rows were clipped to "
                f"it). The Renyi-DP accountant (Lemma 1 and Proposition 1 of the Gaussian "
                f"mixing paper) gives epsilon = {o.epsilon:.4g} at delta = {o.delta:g} for "
                "the noise actually added; a record belongs to one participant, so the "
                f"collaboration is ({o.epsilon:.3g}, {o.delta:g})-DP per record. Utility over "
                f"{o.n_draws} fresh sketches.</p>")
    return "".join(parts) or "<p>No option was calibrated.</p>"


def _limits_section(s):
    return (
        "<ul><li>One threat model for the empirical options: the analyst colluding with one "
        "participant, who discloses its secret, its rows and the raw anchor. Other "
        "collusions, an analyst deviating from the protocol, side information and "
        "membership inference are not measured.</li>"
        "<li>Attacks not yet known: the empirical options' numbers hold for the attacks run "
        "here only. GaussMix's epsilon holds for every attack.</li>"
        "<li>Your rows only: the other participants' data may differ, and the result holds "
        "for this partition and these sizes.</li>"
        "<li>The intervals of Local and Central are over the held-out rows (a bootstrap); "
        "the others' are over simulated deployments: the held-out rows' own sampling error "
        "comes on top.</li></ul>")


def _reproduce_section(s):
    return (
        _versions(s, [("draws run (all)", s["n_draws_all"]),
                      ("draws read back from a checkpoint", s["n_resumed"])])
        + "<p>The table is <code>comparison.csv</code>, every draw "
        "<code>draws.csv</code>, every calibrated setting's decisions <code>decisions.csv"
        "</code>, the regulator's table <code>regulator.csv</code>.</p>")


def render_comparison(setting, results, table, verdict, regulator, deployment):
    """The self-contained HTML page: the verdict first, then the sections of ``SECTIONS``."""
    s = setting
    fig = _png(_figure(results, s))
    sections = {
        "options": _options_section(s, results, table, fig),
        "costs": _costs_section(s, results),
        "regulator": _regulator_section(s, regulator),
        "deployment": _deployment_section(s, results, verdict, deployment),
        "judged": _judged_section(s, results),
        "limits": _limits_section(s),
        "reproduce": _reproduce_section(s),
    }
    resumed = (f"<p id='resumed'>Resumed from the checkpoint: {s['n_resumed']} of "
               f"{s['n_draws_all']} draws read back, not rerun.</p>" if s["n_resumed"] else "")
    scale = ("" if s["scale"]["standardized"] else
             "<p class='verdict warn'>Your rows are not standardized: attack errors are "
             "relative to the rows' scale, so a few large columns dominate them. Compare the "
             "options on rows scaled as the collaboration will scale them: give "
             f"<code>{say(s, 'X', '--data')}</code> the rows so scaled.</p>")
    from ._words import targets_words

    opening = (f"{_verdict_html(verdict)}{scale}<p>{len(results)} options, "
               f"{s['n_participants']} participants, targets: "
               f"{html.escape(targets_words(s))} at {s['confidence']:.0%}.</p>{resumed}")
    return _page("skdc audit: which way to collaborate?",
                 "Is our collaboration safe, and which way?", opening, sections, SECTIONS,
                 _TITLES, css="pre{background:#f4f4f4;padding:.6em;white-space:pre-wrap;"
                 "overflow-wrap:anywhere;font-size:.85em}th{text-align:left;"
                 "vertical-align:bottom}")
