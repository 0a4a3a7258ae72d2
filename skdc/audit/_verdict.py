"""The comparison's verdict: which options meet the targets, what each costs against the
others, and the regulator's table (singling out, linkability, inference)."""

# Licence: BSD 3 clause

import numpy as np

from ._commands import _deployment, _setting
from ._results import Comparison

# ----------------------------------------------------------------------------- the verdict


def _assemble(ctx, X, y, participant, results, epsilons, command_line, random_state):
    from ._compare_report import render_comparison

    table = _table(results)
    verdict = _verdict(ctx, results)
    deployment = None if verdict["deploy"] is None else _deployment(ctx,
                                                                   results[verdict["deploy"]])
    setting = _setting(ctx, X, y, participant, results, epsilons, command_line, random_state)
    regulator = _regulator(results)
    html = render_comparison(setting, results, table, verdict, regulator, deployment)
    return Comparison(table=table, options=results, verdict=verdict, regulator=regulator,
                      deployment=deployment, held_out=ctx.held, setting=setting, html=html)


def _meets_words(o):
    if o.protection == "nothing shared":
        return "nothing shared"
    if o.meets is None:
        return "not measured"
    return "yes" if o.meets else "no"


def _table(results):
    """One row per option, every number read off the options' results."""
    import pandas as pd

    local = results.get("local")
    central = results.get("central")
    rows = []
    for o in results.values():
        rows.append({
            "option": o.name, "label": o.label, "protection": o.protection,
            "setting": o.setting, "utility": o.utility, "utility_low": o.utility_interval[0],
            "utility_high": o.utility_interval[1], "interval_over": o.interval_over,
            "vs_local": o.utility - local.utility if local else float("nan"),
            "vs_central": o.utility - central.utility if central else float("nan"),
            "strongest_attack": o.attack or "none applies",
            "attack_error_bound": o.attack_error, "attack_error_median": o.attack_error_median,
            "linkage": o.linkage, "linkage_chance": o.linkage_chance,
            "inference": o.inference, "inference_chance": o.inference_chance,
            "sensitive_gain": o.sensitive_gain,
            "epsilon": o.epsilon, "delta": o.delta, "meets_target": _meets_words(o),
            "draws": o.n_draws})
    return pd.DataFrame(rows)


def _cost(o, results):
    """What an option costs (or gains) against Local and Central, in words."""
    parts = []
    for ref, word in (("local", "Local"), ("central", "Central")):
        r = results.get(ref)
        if r is not None:
            parts.append(f"{o.utility - r.utility:+.3f} against {word} ({r.utility:.3f})")
    return ", ".join(parts)


def _verdict(ctx, results):
    """The decision ("collaborate" or "do not collaborate") and the answer in words that opens
    with it; the options meeting the targets, the formal ones, the best and the deployable
    one, and the warnings it needs."""
    empirical = [o for o in results.values() if o.protection == "empirical"]
    meeting = sorted((o.name for o in empirical if o.meets), key=lambda n: -results[n].utility)
    formal = [o.name for o in results.values() if o.protection == "formal"]
    best = meeting[0] if meeting else None
    local = results.get("local")
    collaborate = best is not None and (local is None or results[best].utility
                                        > local.utility)
    deployable = [n for n in meeting if n in ("igdp", "cgdp")]
    deploy = deployable[0] if deployable else None
    sentence = _decision_words(ctx, results, empirical, formal, best, collaborate)
    if collaborate and deploy is not None and deploy != best:
        sentence += (f" The best that skdc participant upload deploys is "
                     f"{results[deploy].label}.")
    elif collaborate and deploy is None:
        sentence += (" skdc participant upload runs I-GDP and C-GDP only, and neither "
                     "meets the targets.")
    sentence += (" The verdict holds for the attacks run here, not for every attack; anchor "
                 "noise and private-data noise are no differential privacy.")
    return {"decision": "collaborate" if collaborate else "do not collaborate",
            "meeting": meeting, "formal": formal, "best": best, "deploy": deploy,
            "sentence": sentence, "warnings": _verdict_warnings(ctx, results, meeting)}


def _decision_words(ctx, results, empirical, formal, best, collaborate):
    """The verdict's opening: the decision and why (the best option that meets the targets
    against Local, or what no option meets), then GaussMix's formal guarantee."""
    from ._words import targets_words

    local = results.get("local")
    what = targets_words({"max_linkage": ctx.max_linkage, "target_error": ctx.target_error,
                          "sensitive": ctx.sensitive,
                          "max_sensitive_gain": ctx.max_sensitive_gain})
    c = ctx.confidence
    if collaborate:
        b = results[best]
        sentence = (f"Collaborate: {b.label} at {b.setting}: a fresh deployment keeps {what} "
                    f"under every attack tried, with probability at least {c:.0%}; balanced "
                    f"accuracy {b.utility:.3f} ({_cost(b, results)}).")
    elif best is not None:
        b = results[best]
        sentence = (f"Do not collaborate: each participant alone gets {local.utility:.3f}, "
                    f"more than any option that meets the targets (the best, {b.label} at "
                    f"{b.setting}, gets {b.utility:.3f}).")
    elif empirical:
        sentence = _nothing_meets_words(ctx, results, empirical, formal, what)
    else:
        sentence = ("Do not collaborate: no collaboration judged by attacks was compared"
                    + _formal_clauses(results, formal) + ".")
    if formal and (collaborate or best is not None):
        listed = ", ".join(f"{results[n].utility:.3f} at epsilon = {results[n].epsilon:.3g}"
                           for n in formal)
        sentence += (f" GaussMix carries a formal (epsilon, delta = {ctx.delta:g})-DP "
                     f"guarantee, its attacks not measured: balanced accuracy {listed}.")
    return sentence


def _nothing_meets_words(ctx, results, empirical, formal, what):
    """Why not to collaborate when no option meets the targets: the formal options, the
    linkage the strongest attack keeps at the largest setting tried, and what would help."""
    sentence = (f"Do not collaborate: no option meets {what} in the ranges tried"
                + _formal_clauses(results, formal) + ".")
    kept = [o for o in empirical if np.isfinite(o.linkage)]
    if kept:
        sentence += " At the largest setting tried the strongest attack still links " + \
            ", ".join(f"{o.linkage:.0%} of the rows under {o.label} ({o.setting})"
                      for o in kept) + " (chance 10%)."
    return sentence + " What would help: " + _helps(ctx.words)


def _formal_clauses(results, formal):
    """A clause for each formal option: its epsilon and its utility."""
    return "".join(f"; GaussMix at epsilon = {results[n].epsilon:.3g} carries a formal "
                   f"guarantee at {results[n].utility:.3f}" for n in formal)


def _verdict_warnings(ctx, results, meeting):
    """The verdict's warnings: options meeting an error target alone whose reconstructions
    still link to their own rows, and a model that learns nothing even without noise."""
    from ._words import learns_nothing, say

    linked = [results[n] for n in meeting if _linked(results[n])]
    warns = [] if not linked or ctx.max_linkage is not None else [
        "Meeting the error target is not enough against singling out: "
        + ", ".join(f"{o.label} links {o.linkage:.0%}" for o in linked)
        + f" of its reconstructions to their own row (chance {linked[0].linkage_chance:.0%})."
        f" Give a linkage target ({say(ctx.words, 'max_linkage=', '--max-linkage')})."]
    ceiling = results.get("central") or results.get("local")
    if ceiling is not None:
        where = ("without noise (Central, the raw rows pooled)" if ceiling.name == "central"
                 else "with nothing shared (Local)")
        nothing = learns_nothing(ctx.words, ceiling.utility, where)
        if nothing:
            warns.append(nothing)
    return warns


def _helps(words):
    """What would help when no option meets the targets, in the caller's words (plain
    text): each piece names the flag (or the parameter) that tries it."""
    from ._words import say

    cgdp = say(words, "audit(X, y, mechanism='cgdp', aligner='none', bounds=(LOW, HIGH))",
               "skdc audit --mechanism cgdp --aligner none --range LOW HIGH, without "
               "--compare")
    gauss = say(words, "options=['gaussmix'], epsilons=[1]", "--compare gaussmix --epsilon 1")
    return (f"private-data noise on the rows beyond the range compared (audit C-GDP alone: "
            f"{cgdp}), fewer shared features ({say(words, 'X', '--data')} with fewer "
            f"columns), GaussMix at a stated epsilon ({gauss}), or not collaborating.")


def _linked(o):
    """Whether an option's reconstructions link to their own rows well above chance."""
    return bool(np.isfinite(o.linkage) and o.linkage > max(2 * o.linkage_chance,
                                                           o.linkage_chance + 0.1))


_REGULATOR = (
    ("singling out", "can an individual's record be isolated in the released data?",
     "exact-source linkage", "linkage",
     "which of 10 same-label candidate rows a reconstruction is closest to: a linked "
     "reconstruction singles its row out among them",
     "records singled out by rare combinations of values in the uploads themselves; "
     "singling out through the trained model's predictions"),
    ("linkability", "can two records of the same individual be linked, within or across "
     "data sets?", "exact-source linkage", "linkage",
     "linking a reconstruction to the same individual's row held elsewhere (the gallery "
     "stands in for the attacker's other data set)",
     "linking across two releases or collaborations of the same rows; linking to external "
     "data sets with other columns"),
    ("inference", "can an attribute be deduced with significant probability?",
     "reconstruction error; attribute inference from reconstructions", "attack_error_bound, "
     "sensitive_gain, inference",
     "how far the best reconstruction is from the rows (relative error), how much better the "
     "attacker predicts a column the user names as sensitive from the reconstructions than "
     "from what it already holds, and how often a classifier trained on clean rows reads the "
     "label off a reconstruction; the labels reach the analyst in every option, so label "
     "inference is no risk measure of its own",
     "membership inference; inference from the trained model; attributes that are not "
     "columns of the rows"),
)


def _regulator(results):
    """The Article 29 Working Party's three risks (Opinion 05/2014 on anonymisation
    techniques, WP216, section 2.2.3) against what the comparison measures, with each
    option's numbers."""
    import pandas as pd

    table = pd.DataFrame(_REGULATOR, columns=["risk", "the guidance asks", "measured by",
                                              "column", "what the measurement is",
                                              "not measured"])
    table["what the options show"] = [_shown(results, col) for col in table["column"]]
    return table


def _shown(results, column):
    """Each option's value of the measurement(s) in ``column``, in words."""
    measured = [o for o in results.values() if o.attack is not None]
    parts = []
    for col in (c.strip() for c in column.split(",")):
        key, ref = {"linkage": ("linkage", "chance"),
                    "inference": ("inference", "majority label"),
                    "attack_error_bound": ("attack_error", None),
                    "sensitive_gain": ("sensitive_gain", None)}[col]
        vals = ", ".join(f"{o.label} {getattr(o, key):.2f}" for o in measured
                         if np.isfinite(getattr(o, key)))
        if not vals:
            continue
        what = {"linkage": "linkage accuracy", "inference": "label inference accuracy",
                "attack_error": "reconstruction error bound",
                "sensitive_gain": "gain on the sensitive column"}[key]
        chance = [getattr(o, f"{key}_chance") for o in measured if ref
                  and np.isfinite(getattr(o, f"{key}_chance", np.nan))]
        parts.append(f"{what}: {vals}" + (f" ({ref} {max(chance):.2f})" if chance else ""))
    others = [o.label for o in results.values() if o.attack is None]
    if others:
        parts.append(f"not measured for {', '.join(others)} (nothing shared, or bounded by "
                     "epsilon)")
    return "; ".join(parts)
