"""The audit's page: the self-contained HTML report (no scripts, no links), the verdict first.

Everything here renders; nothing computes a verdict. :mod:`skdc.audit._audit` computes
the calibration and the tables and hands them over; :mod:`skdc.audit._figures` draws the
figures and :mod:`skdc.audit._words` says the noise, the attacks and the targets.
"""

# Licence: BSD 3 clause

import html
import math
import platform
import sys
from numbers import Integral, Real

import numpy as np

from ._figures import _png, figures
from ._words import attack_label, say, targets_words

__all__ = ["SECTIONS", "render", "verdict_sentence"]



# ----------------------------------------------------------------------------- the page

SECTIONS = ("answer", "setting", "frontier", "attacks", "calibration", "diagnostics",
            "bounds", "limits", "reproduce")
_TITLES = {"answer": "How the verdict was reached", "setting": "The setting",
           "frontier": "Privacy-utility frontier",
           "attacks": "Attacks where the verdict is decided",
           "calibration": "How the calibration got there",
           "diagnostics": "Alignment diagnostics and utility",
           "bounds": "Provable bounds", "limits": "What this report does not cover",
           "reproduce": "How to reproduce it"}
_NAMES = {"igdp": "I-GDP", "cgdp": "C-GDP", "gopp": "noisy-anchor GOPP alignment",
          "none": "no alignment"}
_RULES = {
    "order": "the order-statistic rule: with n simulated deployments of which m fail, a fresh "
             "deployment fails with probability at most (m + 1)/(n + 1), whatever the "
             "distribution of the attack errors",
    "clopper-pearson": "the exact Clopper-Pearson rule: the {c:.0%} lower confidence bound on "
                       "the share of deployments that meet must itself reach {c:.0%}",
    "normal": "a Gaussian prediction bound on each attack's error (it assumes Gaussian "
              "errors)",
}
_CSS = """
body{font-family:Helvetica,Arial,sans-serif;max-width:68em;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:1.8em}
.scroll{overflow-x:auto}table{border-collapse:collapse;margin:.6em 0;font-size:.88em}
td,th{border:1px solid #bbb;padding:.25em .5em;text-align:right}th{background:#f0f0f0}
td:first-child,th:first-child,td.text{text-align:left}td.long{min-width:13em}
.verdict{font-size:1.1em;padding:.8em 1em;border-left:6px solid #2a7;background:#eef8f1}
.warn{border-left-color:#c60;background:#fbf3e8}.no{border-left-color:#b22;background:#fbeeee}
img{max-width:100%}code{background:#f4f4f4;padding:0 .2em}
"""


def _fmt(value):
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (Integral, np.integer)):
        return str(int(value))
    if isinstance(value, (Real, np.floating)):
        v = float(value)
        return "n/a" if math.isnan(v) else f"{v:.4g}"  # -inf (a failing draw) keeps its sign
    return html.escape(str(value))


def _cell(value):
    if isinstance(value, str):
        return f"<td class='text{' long' if len(value) > 40 else ''}'>{_fmt(value)}</td>"
    return f"<td>{_fmt(value)}</td>"


def _table(df, table_id):
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return (f'<div class="scroll"><table id="{table_id}" data-csv="{table_id}.csv"><thead><tr>'
            f"{head}</tr></thead><tbody>{body}</tbody></table></div>")


def _img(png, alt):
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png}">'


def _binding_row(cal, value):
    return cal.summary[(cal.summary["value"] == value)
                       & (cal.summary["attack"] == cal.binding_attack)].iloc[0]


def verdict_sentence(s, cal, tables):
    """The answer in one sentence or two, as the page opens with it (HTML): its first words
    are the decision, "Collaborate" or "Do not collaborate"."""
    e = html.escape
    noise, c = s["noise"], s["confidence"]
    base = tables["baseline"]
    without = ("without noise" if s["bounds"][0] == 0 else
               f"at the lowest noise tried, {s['bounds'][0]:.4g}")
    if not np.isfinite(cal.value):
        return ("<p class='verdict no' id='verdict-sentence'><b>Do not collaborate</b>: "
                f"{_no_noise_words(s, cal, tables, without)}</p>")
    d = cal.decisions[cal.decisions["value"] == cal.value].iloc[0]
    where = (f"at {noise} = {cal.value:.4g}, already the lower end of the range"
             if cal.bracket[0] == cal.value else f"at {noise} = {cal.value:.4g}")
    cost = (f"Balanced accuracy there is {tables['utility']:.3f}, against {base:.3f} "
            f"{without}." if np.isfinite(base) else
            f"Balanced accuracy there is {tables['utility']:.3f}.")
    link = tables.get("linkage")
    kept = ("" if link is None else
            f" The strongest attack there, {e(attack_label(link[0]))}, links a median "
            f"{link[1]:.0%} of your rows to their own row (chance 10%).")
    return (f"<p class='verdict' id='verdict-sentence'><b>Collaborate</b>: {e(where)}, a "
            f"fresh deployment keeps <b>{e(targets_words(s))}</b> under every attack tried, "
            f"with probability at least {c:.0%} ({d.n_draws - d.n_failed} of {d.n_draws} "
            f"simulated deployments met it).{kept} {cost} This holds for the attacks run "
            "here, not for every attack: the noise is no differential privacy.</p>")


def _helps(s):
    """What would help when no noise in the range meets the targets, in words."""
    gauss = ("GaussMix at a stated epsilon such as 1, whose formal guarantee holds against "
             "every attack (<code>"
             + say(s, "compare_options(X, y, options=['gaussmix'], epsilons=[1])",
                   "skdc audit --compare gaussmix --epsilon 1")
             + "</code> measures its utility)")
    if s["mechanism"] == "igdp":
        first = ("private-data noise on the rows themselves (audit C-GDP: <code>"
                 + say(s, "mechanism='cgdp', aligner='none'", "--mechanism cgdp --aligner none")
                 + "</code>)")
    else:
        first = ("more private-data noise than the range tried (<code>"
                 + say(s, "bounds=", "--range") + "</code>)")
    fewer = say(s, "X", "--data")
    return (f"What would help: {first}, fewer shared features (<code>{fewer}</code> with "
            f"fewer columns), {gauss}, or not collaborating.")


def _no_noise_words(s, cal, tables, without):
    """Why no noise in the range meets the targets, with what would help (HTML)."""
    e = html.escape
    noise, high = s["noise"], cal.bracket[0]
    link = tables.get("linkage")
    util = (f" Balanced accuracy there is {tables['utility']:.3f}"
            + (f" ({tables['baseline']:.3f} {without})." if np.isfinite(tables["baseline"])
               else "."))
    if link is not None and s.get("max_linkage") is not None and link[1] > s["max_linkage"]:
        what = ("anchor noise cannot hide what the uploaded rows themselves carry"
                if s["mechanism"] == "igdp" else "the noise in this range is too small")
        return (f"no {e(noise)} in [{s['bounds'][0]:.4g}, {high:.4g}] brings linkage under "
                f"{s['max_linkage']:.3g}. At the largest, {high:.4g}, the strongest attack, "
                f"{e(attack_label(link[0]))}, still links a median <b>{link[1]:.0%}</b> of "
                f"your rows to their own row (up to {link[2]:.0%}; chance 10%) over the "
                f"{link[3]} simulated deployment{'s' if link[3] != 1 else ''} run there: "
                f"{what}.{util} {_helps(s)}")
    b = _binding_row(cal, high)
    from ._criteria import _shortfall

    return (f"even at the largest {e(noise)} tried, {high:.4g}, "
            f"{e(_shortfall(cal.binding_attack, b))}, {_allowance(cal)}.{util} "
            f"{_helps(s)}")


def _allowance(cal):
    """What the rule allows at one value, in words."""
    if cal.criterion == "normal":
        return "and its Gaussian bound falls below the target"
    m = int(cal.decisions["allowed_failures"].iloc[0])
    return (f"while at most {m} of {cal.n_draws_max} may fail" if m else
            f"while none of {cal.n_draws_max} may fail")


def _phase_warning(s, cal):
    if np.isfinite(cal.value) and np.isfinite(cal.v_phase_transition) \
            and cal.value > cal.v_phase_transition:
        more = say(s, "n_anchors=", "--n-anchors")
        return (
            f"<p class='verdict warn'>The recommended noise is above the phase transition "
            f"v_PT = {cal.v_phase_transition:.4g} ({cal.value / cal.v_phase_transition:.2f} x):"
            " the alignment degrades sharply there, so utility is fragile. More anchor rows "
            f"raise v_PT: audit again with more of them (<code>{more}</code>, now "
            f"{_anchor_rows(s)}).</p>")
    return ""


def _anchor_rows(s):
    n = s.get("n_anchors")
    return f"{4 * s['n_features']}, 4 per feature" if n is None else str(n)


def _learns_nothing_warning(s):
    text = s.get("learns_nothing")
    return "" if not text else (f"<p class='verdict warn' id='learns-nothing'>"
                                f"{html.escape(text)}</p>")


def _scale_warning(s):
    if s["scale"]["standardized"]:
        return ""
    return ("<p class='verdict warn'>Your rows are not standardized, and attack errors are "
            "relative to the rows' scale: read the verdict for the scale you audited (see "
            "<i>The setting</i>).</p>")


def _answer_section(s, cal):
    """How the verdict was reached: the rule, the draws each decision needed."""
    rule = _RULES[cal.criterion].format(c=s["confidence"])
    n = int(cal.decisions["n_draws"].sum())
    early = int((cal.decisions["n_draws"] < cal.n_draws_max).sum())
    text = (
        f"<p>Each simulated deployment draws everything a real one draws: every "
        f"participant's secret, the anchor, the anchor noise and the private noise; only "
        f"your rows and their partition stay fixed. A deployment <i>meets</i> the targets when "
        f"every attack keeps {html.escape(targets_words(s))}. A noise value passes "
        f"by {html.escape(rule)}: at {s['confidence']:.0%} with at most "
        f"{cal.n_draws_max} deployments per value, "
        + (f"at most {cal.decisions['allowed_failures'].iloc[0]} may fail.</p>"
           if cal.decisions["allowed_failures"].iloc[0] else "none may fail.</p>")
        if cal.criterion != "normal" else
        f"<p>Each simulated deployment draws everything a real one draws; a noise value "
        f"passes by {html.escape(rule)} over {cal.n_draws_max} deployments.</p>")
    text += (
        f"<p>The search evaluated {len(cal.decisions)} noise values with {n} simulated "
        f"deployments in all; {early} of the {len(cal.decisions)} values were decided "
        "early, once their remaining draws could not change their verdict (see <a>How the "
        "calibration got there</a>). The "
        f"binding attack, <b>{html.escape(attack_label(cal.binding_attack))}</b>, is the one "
        "that decides the bracket: it fails most often at the bracket's failing end.</p>"
    ).replace("<a>", "<i>").replace("</a>", "</i>")
    if s.get("n_resumed"):
        text += (f"<p id='resumed'>This audit resumed from its checkpoint: "
                 f"{s['n_resumed']} of its {s['n_draws_all']} draws were read back, not "
                 "rerun.</p>")
    return text


def _scale_paragraph(s):
    sc = s["scale"]
    if sc["standardized"]:
        return ("<p>Your rows look standardized (every column has mean 0 and standard "
                "deviation 1). Attack errors are relative to the rows' scale, "
                "||X&#770; - X||<sub>F</sub> / ||X||<sub>F</sub>, so every feature weighs "
                "alike in them.</p>")
    return (
        f"<p class='verdict warn'>Your rows are not standardized: the columns' scales differ "
        f"by a factor of {sc['scale_spread']:.3g} (column {sc['largest_column']} has RMS "
        f"{sc['largest_rms']:.3g}). Attack errors are relative to the rows' scale, "
        "||X&#770; - X||<sub>F</sub> / ||X||<sub>F</sub>: here the largest columns dominate "
        "both norms, so an error that looks safe may leave the small-scale features "
        "recovered (or the reverse), and an attacker who gets the columns' means right scores "
        "a low error without learning any row. Audit the rows as the collaboration will scale "
        f"them: give <code>{say(s, 'X', '--data')}</code> the rows so scaled (for instance "
        "standardized, each column to mean 0 and standard deviation 1).</p>")


def _setting_section(s, cal, figs, picture):
    """The deployment and the threat model in words, with the meaning of an error."""
    e = html.escape
    mech = {"igdp": "its own secret rotation and shift (I-GDP)",
            "cgdp": "a rotation and shift common to all participants (C-GDP)"}[s["mechanism"]]
    align = ("The analyst aligns the uploads by noisy-anchor GOPP alignment: each participant "
             "uploads its obfuscated copy of a shared anchor plus Gaussian noise of scale v, "
             "drawn on the participant side." if s["aligner"] == "gopp" else
             "The analyst trains on the uploads as received (no alignment step); each "
             "participant adds Gaussian noise of scale sigma to its rows before obfuscating.")
    split = ("as in the participants' partition file" if s["partition"] else
             f"of your {s['n_rows']} rows, assigned once by a keyed hash of each row")
    text = (
        f"<p>{s['n_participants']} participants each hold a share of the rows "
        f"({split}; {s['n_features']} features, {s['n_train']} rows train the model, "
        f"{s['n_test']} held-out rows measure utility; the attacks read every row of the "
        f"attacked participant, whose uploads the analyst holds). Each participant "
        f"obfuscates its rows with {mech}. {align} {_model_words(s)}</p>"
        f"<p>Threat model: the analyst colludes with participant {s['colluder']}, who "
        f"discloses its secret, its rows and the raw anchor. They attack participant "
        f"{s['target']} (you, the auditing party; {s['target_rows']} rows) with "
        f"{', '.join(e(attack_label(a)) for a in s['attacks'])}.</p>"
        + _linkage_paragraph(s) +
        "<p>An attack error <i>e</i> is the relative reconstruction error "
        "||X&#770; - X||<sub>F</sub> / ||X||<sub>F</sub> of the attacked participant's rows: "
        "<i>e</i> = 0 is an exact copy, <i>e</i> = 1 is as far off as guessing all zeros"
        + ("" if s["target_error"] is None else
           f", <i>e</i> = {s['target_error']:.3g} means the attacker's rows are off by "
           f"{s['target_error']:.0%} of the rows' own size")
        + ". A reconstruction half its size off can still be closest to its own row, so the "
        "error alone does not say whether rows can be singled out.</p>"
        + _sensitive_paragraph(s) + _scale_paragraph(s))
    if picture is None:
        return text
    if not picture.get("side"):
        return text + _rows_table(s, picture)
    return text + (
        f"<p>Below: your rows (top) and the {e(attack_label(picture['attack']))} attack's "
        f"reconstructions (bottom) at {e(s['noise'])} = {picture['value']:.4g}, one simulated "
        f"deployment, relative error {picture['error']:.3f}.</p>"
        + _img(figs["picture"], "reconstruction"))


_ROWS_SHOWN, _COLUMNS_SHOWN = 4, 12


def _rows_table(s, picture):
    """A few of the attacked rows beside their reconstructions, as a table headed by the
    columns' names (the rows of a table are no pictures)."""
    e = html.escape
    truth, rec = picture["truth"], picture["reconstruction"]
    k, d = min(_ROWS_SHOWN, truth.shape[0]), truth.shape[1]
    shown = min(d, _COLUMNS_SHOWN)
    names = s.get("columns") or [f"column {j}" for j in range(d)]
    head = "".join(f"<th>{e(str(n))}</th>" for n in names[:shown])
    body = ""
    for i in range(k):
        err = float(np.linalg.norm(rec[i] - truth[i])
                    / max(np.linalg.norm(truth[i]), 1e-300))
        for who, row, extra in (("yours", truth[i], f"<td rowspan='2'>{err:.3f}</td>"),
                                ("attack", rec[i], "")):
            lead = f"<td rowspan='2'>{i + 1}</td>" if who == "yours" else ""
            body += (f"<tr>{lead}<td class='text'>{who}</td>"
                     + "".join(f"<td>{v:.3g}</td>" for v in row[:shown]) + f"{extra}</tr>")
    more = ("" if shown == d else f" (the first {shown} of its {d} columns)")
    return (
        f"<p>Below: {k} of your rows{more}, each above the "
        f"{e(attack_label(picture['attack']))} attack's reconstruction of it at "
        f"{e(s['noise'])} = {picture['value']:.4g}, one simulated deployment (relative error "
        f"{picture['error']:.3f} over all the attacked rows; each row's own on the right).</p>"
        f"<div class='scroll'><table id='reconstructed-rows'><thead><tr><th>row</th>"
        f"<th></th>{head}<th>row error</th></tr></thead><tbody>{body}</tbody></table></div>")


def _model_words(s):
    """The utility model in words: its parameters, and why its classes are weighted."""
    e = html.escape
    params = {k: v for k, v in (s.get("model_params") or {}).items()
              if not (k == "class_weight" and s.get("balanced"))}
    text = f"The analyst trains a {e(str(s['model']))} classifier"
    if params:
        text += " with " + ", ".join(f"{e(k)} = {e(repr(v))}" for k, v in params.items())
    if s.get("balanced"):
        off = say(s, "model_params={'class_weight': None}", "--model-param class_weight=null")
        text += (
            f"{' and' if params else ' with'} balanced class weights: your labels are "
            f"imbalanced (the smallest class holds {s['smallest_share']:.0%} of the rows, "
            f"below 80% of an even share of {1 / s['n_classes']:.0%}), and an unweighted "
            "model would mostly predict the commonest label. <code>" + e(off)
            + "</code> trains it unweighted")
    return text + "."


def _linkage_paragraph(s):
    if s.get("max_linkage") is None:
        return ("<p>Linkage is not judged in this audit (no linkage target): the error "
                "target alone decides.</p>")
    return (
        "<p>Exact-source linkage asks whether a reconstruction singles out its own row: "
        "each reconstructed row is matched, by the attacker's best matcher, against ten of "
        "your rows of the same label, its own among them; it is <i>linked</i> when its own "
        "row is strictly the closest. A random guess links 10%; the target, "
        f"{s['max_linkage']:.3g}, allows {s['max_linkage'] - 0.1:.2g} above chance.</p>")


def _sensitive_paragraph(s):
    if s.get("sensitive") is None:
        return ""
    target = ("" if s.get("max_sensitive_gain") is None else
              f" The target allows a gain of at most {s['max_sensitive_gain']:.3g}.")
    return (
        f"<p>Column {s['sensitive']} is sensitive: its gain is how much better the attacker "
        "predicts it from the reconstructions than from what it already holds, 1 - MSE(read "
        "off the reconstruction) / MSE(its own guess), its own guess being the colluder's "
        "mean of the column among its rows of the target row's label (0: no better; 1: "
        f"exact).{target} The labels themselves reach the analyst in every deployment, so "
        "reading them off the reconstructions is no risk measure.</p>")


def _frontier_section(s, cal, figs):
    return (
        "<p>Every simulated deployment is a point (calibration and grid draws); lines join the "
        "median attack error (left) and the mean balanced accuracy (right) at each noise "
        "value. Attack errors that span decades are drawn on a logarithmic axis; points "
        "beyond the axis are drawn at its end as triangles. The black line marks the "
        "recommended noise, the grey band its bracket, the dashed line v_PT.</p>"
        + _img(figs["curves"], "attack errors and utility against the noise")
        + "<p>The frontier: utility against the binding attack's error, one point per "
        "deployment coloured by its noise; the star marks the recommended noise at its "
        "lower error bound (what a fresh deployment exceeds at the stated confidence) and "
        "its mean accuracy with its confidence interval.</p>"
        + _img(figs["frontier"], "frontier"))


def _attacks_section(s, cal, tables):
    passed = np.isfinite(cal.value)
    where = ("at the recommended noise and at the bracket's low end, which fails" if passed
             else "at the largest noise tried")
    return (
        f"<p>Each attack {where}: simulated deployments, how many of them left the attack "
        f"below its target, the range of its errors and the criterion's lower bound on a "
        f"fresh deployment's error. The binding attack, "
        f"<b>{html.escape(attack_label(cal.binding_attack))}</b>, decides the bracket.</p>"
        + _table(tables["attacks"], "attacks"))


def _calibration_section(s, cal, figs):
    return (
        "<p>Every noise value the search evaluated, in order, with the simulated deployments "
        "it needed and why it passed or failed. A value is stopped as soon as its remaining "
        "draws cannot change its verdict.</p>"
        + _table(cal.decisions, "decisions")
        + _img(figs["calibration"], "the calibration's draws"))


def _bounds_section(s, cal, leakage):
    tail = ("The attack errors in this report show what the strongest known attacks achieve, "
            "not what every attack could.")
    if leakage is not None:
        return (
            f"<p>The private-data noise is a Gaussian release: at sigma = {cal.value:.4g} each "
            f"record leaks at most <b>{leakage:.4g} bits</b> (Gaussian maximum-entropy bound "
            "of the entropy-floor paper, E1 and E3; the rotation earns no credit). The rows' "
            "covariance in it is this sample's estimate, not an upper confidence bound. "
            "<code>python -m skdc bound --data X.npy --perp CALIBRATION.npy --gamma "
            f"{leakage:.4g}</code> turns the leakage into a certified floor on any attack's "
            f"reconstruction error. {tail}</p>")
    return (
        "<p>No provable bound applies to this deployment. The anchor noise of GOPP alignment "
        "is not differential privacy and has no leakage bound. The entropy floor "
        "(<code>skdc bound</code>) certifies Gaussian releases (C-GDP or I-GDP with "
        "private-data noise) and DP-SGD-trained models, and the GaussMix epsilon certifies "
        "Gaussian sketches (<code>skdc audit --compare ... gaussmix</code> puts them side by "
        f"side with this deployment). {tail}</p>")


def _limits(s):
    conf = ("The confidence holds for any distribution of attack errors (heavy tails "
            "included), over fresh deployments of these rows and this partition."
            if s["criterion"] != "normal" else
            "The confidence assumes Gaussian attack errors (criterion normal); heavy-tailed "
            "errors break it.")
    return (
        "<ul><li>Attacks not run here: the verdict holds for the attacks this report names, "
        "each the best skdc can build for its channel; a stronger one may exist.</li>"
        "<li>Other threat models: collusion of several participants, an analyst who "
        "deviates from the protocol, attacks that use side information (known rows, "
        "public data sets), membership or attribute inference.</li>"
        "<li>The anchor noise is not differential privacy: it makes the known attacks "
        "err, it gives no epsilon.</li>"
        "<li>The simulation runs on your rows only: the other participants' data may "
        "differ, and the result holds for this partition and these sizes.</li>"
        f"<li>{conf}</li></ul>")


def _versions(s, rows):
    """The command and the table of versions, seed and input digest that reproduce a report
    (the audit's and the comparison's), ``rows`` (``(name, value)`` pairs) at its end."""
    import sklearn

    import skdc

    e = html.escape
    return (
        f"<p>Command: <code>{e(s['command_line'])}</code></p><table id='versions'>"
        + "".join(f"<tr><td>{k}</td><td>{e(str(v))}</td></tr>" for k, v in [
            ("skdc", getattr(skdc, "__version__", "dev")),
            ("python", platform.python_version()), ("numpy", np.__version__),
            ("scikit-learn", sklearn.__version__), ("platform", sys.platform),
            ("seed", s["random_state"]), ("SHA-256 of the inputs", s["input_sha256"]),
            *rows])
        + "</table>")


def _reproduce_section(s, cal, draws):
    """The command, the versions and the seed that reproduce the report."""
    return (
        _versions(s, [("draws run (all)", len(draws)), ("noise range", s["bounds"])])
        + "<p>Every draw is in <code>draws.csv</code>; the calibration's decisions in "
        "<code>decisions.csv</code> and its per-attack statistics in "
        "<code>calibration.csv</code>.</p>")


def _page(title, heading, opening, sections, order, titles, css=""):
    """A self-contained page (the audit's and the comparison's): ``opening`` (the verdict)
    under the heading, then ``sections[k]`` titled ``titles[k]`` for each ``k`` of ``order``;
    ``css`` is added to the shared style sheet."""
    body = "".join(f'<section id="{k}"><h2>{titles[k]}</h2>{sections[k]}</section>'
                   for k in order)
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{title}</title><style>{_CSS}{css}</style></head><body><h1>{heading}</h1>"
            f"{opening}{body}</body></html>\n")


def render(setting, cal, draws, tables, picture, leakage=None):
    """The self-contained HTML page: the verdict first, then the sections of ``SECTIONS``."""
    s = setting
    figs = {k: _png(fig) for k, fig in figures(cal, draws, tables, s, picture).items()}
    sections = {
        "answer": _answer_section(s, cal),
        "setting": _setting_section(s, cal, figs, picture),
        "frontier": _frontier_section(s, cal, figs),
        "attacks": _attacks_section(s, cal, tables),
        "calibration": _calibration_section(s, cal, figs),
        "diagnostics": (
            "<p>The alignment solver's state and the utility model's score where the verdict "
            "is read (balanced accuracy on the held-out rows, Student-t interval over "
            "draws).</p>" + _table(tables["diagnostics"], "diagnostics")
            + "<p>The headline numbers:</p>" + _table(tables["summary"], "summary")),
        "bounds": _bounds_section(s, cal, leakage),
        "limits": _limits(s),
        "reproduce": _reproduce_section(s, cal, draws),
    }
    opening = (f"{verdict_sentence(s, cal, tables)}{_learns_nothing_warning(s)}"
               f"{_phase_warning(s, cal)}{_scale_warning(s)}"
               f"<p>An audit of {_NAMES[s['mechanism']]} with {_NAMES[s['aligner']]}, "
               f"{s['n_participants']} participants, targets: "
               f"{html.escape(targets_words(s))} at {s['confidence']:.0%}.</p>")
    return _page("skdc audit: is our collaboration safe?", "Is our collaboration safe?",
                 opening, sections, SECTIONS, _TITLES)
