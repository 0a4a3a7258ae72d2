"""Leakage metrics and privacy scorers.

Reconstruction errors (:func:`relative_error`, :func:`record_mse`, :func:`psnr`), semantic
leakage (:func:`linkage_accuracy`, :func:`identity_linkage_accuracy`,
:func:`reconstruction_label_accuracy`) and
:func:`make_attack_scorer`, whose scores are turned so that higher always means more private.
The provable-floor scorers of :mod:`skdc.privacy` are re-exported here so that attack and bound
scorers sit side by side in one ``scoring`` dict.
"""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._linkage": [
        "LinkageScore", "identity_linkage_accuracy", "linkage_accuracy",
        "reconstruction_label_accuracy",
    ],
    "..privacy": [
        "bound_slack_score", "make_bound_scorer", "make_slack_scorer",
        "reconstruction_ratio_score",
    ],
    "._scorer": ["make_attack", "make_attack_scorer"],
    "._reconstruction": ["psnr", "record_mse", "relative_error"],
})
