"""The audit's words: the noise and the attacks by name, the targets in a sentence, the
commands to reproduce a run, and the warning when a model learns nothing."""

# Licence: BSD 3 clause

import numpy as np

__all__ = ["attack_label", "learns_nothing", "noise_label", "say", "targets_words"]

# a model without noise within this much balanced accuracy of chance learns (almost) nothing
_LEARNS_NOTHING = 0.05


def noise_label(param):
    """The noise parameter in words, for axes and sentences.

    Examples
    --------
    >>> from skdc.audit._words import noise_label
    >>> noise_label("align__v"), noise_label("gdp__noise")
    ('anchor noise v', 'private-data noise sigma')
    """
    if param == "v" or param.endswith("__v"):
        return "anchor noise v"
    if param == "noise" or param.endswith("__noise"):
        return "private-data noise sigma"
    return param.replace("__", " ").replace("_", " ")


def attack_label(name):
    """An attack's name in words (``mp`` is the Moore-Penrose known-anchor attack); a judged
    column's name says what it measures.

    Examples
    --------
    >>> from skdc.audit._words import attack_label
    >>> attack_label("mp"), attack_label("procrustes unlinked")
    ('Moore-Penrose (mp)', 'Procrustes (linkage)')
    """
    for suffix, word in ((" unlinked", "linkage"), (" sensitive", "sensitive column")):
        if name.endswith(suffix):
            return f"{attack_label(name[:-len(suffix)])} ({word})"
    return {"mp": "Moore-Penrose (mp)", "procrustes": "Procrustes",
            "alignment_map": "alignment map", "known_secret": "known secret",
            "known_anchor": "known anchor", "sample_axes": "sample axes",
            "joint_likelihood": "joint likelihood"}.get(name, name)


def targets_words(s):
    """The targets of an audit or a comparison in words (plain text): what a deployment
    must keep under every attack.

    Examples
    --------
    >>> from skdc.audit._words import targets_words
    >>> targets_words({"max_linkage": 0.15, "target_error": None})
    'exact-source linkage at most 0.15 (chance 0.1)'
    >>> targets_words({"max_linkage": None, "target_error": 0.5, "sensitive": 3,
    ...                "max_sensitive_gain": 0.2})
    'relative error at least 0.5 and a gain of at most 0.2 on column 3'
    """
    parts = []
    if s.get("max_linkage") is not None:
        parts.append(f"exact-source linkage at most {s['max_linkage']:.3g} (chance 0.1)")
    if s.get("target_error") is not None:
        parts.append(f"relative error at least {s['target_error']:.3g}")
    if s.get("sensitive") is not None and s.get("max_sensitive_gain") is not None:
        parts.append(f"a gain of at most {s['max_sensitive_gain']:.3g} on column "
                     f"{s['sensitive']}")
    return " and ".join(parts)


def say(s, python, flags):
    """Advice in the caller's words: ``flags`` (the command line's) when the command line ran
    the audit or the comparison (``s["cli"]``), else ``python`` (the function's parameters).

    Examples
    --------
    >>> from skdc.audit._words import say
    >>> say({"cli": True}, "n_anchors=", "--n-anchors"), say({}, "n_anchors=", "--n-anchors")
    ('--n-anchors', 'n_anchors=')
    """
    return flags if s.get("cli") else python


def _model_advice(s):
    """What gives the utility model a chance to learn, as flags or parameters (plain text)."""
    other = "ridge" if s.get("model") == "logistic" else "logistic"
    parts = []
    if s.get("imbalanced") and s.get("model_params", {}).get("class_weight") != "balanced":
        parts.append(say(s, "model_params={'class_weight': 'balanced'}",
                         "--model-param class_weight=balanced"))
    if s.get("model") == "logistic":
        parts.append(say(s, "model_params={'C': 10.0}", "--model-param C=10") + " (less "
                     "regularization)")
    parts.append(say(s, f"model={other!r} or an estimator of your own",
                     f"--model {other}"))
    parts.append(say(s, "more informative columns in X", "more informative columns in "
                     "--data"))
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def learns_nothing(s, utility, where="without noise"):
    """The warning that the utility model learns (almost) nothing, in plain text, or ``None``.

    The model learns nothing when its balanced accuracy ``utility`` (``where``: without noise,
    or the ceiling of a comparison) lies within 0.05 of chance, ``1 / n_classes``: always
    predicting the commonest label scores exactly chance, so no noise can cost utility and
    the verdict decides nothing.

    Examples
    --------
    >>> from skdc.audit._words import learns_nothing
    >>> s = {"n_classes": 2, "majority_share": 0.73, "imbalanced": False, "model": "ridge",
    ...      "cli": True}
    >>> learns_nothing(s, 0.62) is None
    True
    >>> print(learns_nothing(s, 0.53))  # doctest: +NORMALIZE_WHITESPACE
    The model learns almost nothing: without noise its balanced accuracy is 0.530, within
    0.05 of chance (0.500; always predicting the commonest label, 73% of the rows, scores
    0.500 too). An audit of a model that learns nothing decides nothing: no noise can cost
    utility the model never had. Give the model a chance first: --model logistic or more
    informative columns in --data.
    """
    if utility is None or not np.isfinite(utility) or not s.get("n_classes"):
        return None
    chance = 1.0 / s["n_classes"]
    if utility >= chance + _LEARNS_NOTHING:
        return None
    return (f"The model learns almost nothing: {where} its balanced accuracy is "
            f"{utility:.3f}, within {_LEARNS_NOTHING:g} of chance ({chance:.3f}; always "
            f"predicting the commonest label, {s['majority_share']:.0%} of the rows, scores "
            f"{chance:.3f} too). An audit of a model that learns nothing decides nothing: no "
            "noise can cost utility the model never had. Give the model a chance first: "
            f"{_model_advice(s)}.")
