"""Leakage metrics and privacy scorers.

Reconstruction errors (:func:`relative_error`, :func:`record_mse`, :func:`psnr`), semantic
leakage (:func:`linkage_accuracy`, :func:`identity_linkage_accuracy`,
:func:`reconstruction_label_accuracy`) and
:func:`make_attack_scorer`, whose scores are turned so that higher always means more private.
The provable-floor scorers of :mod:`skdc.privacy` are re-exported here so that attack and bound
scorers sit side by side in one ``scoring`` dict.
"""

from ..privacy import (
    bound_slack_score,
    make_bound_scorer,
    make_slack_scorer,
    reconstruction_ratio_score,
)
from ._linkage import (
    LinkageScore,
    identity_linkage_accuracy,
    linkage_accuracy,
    reconstruction_label_accuracy,
)
from ._reconstruction import psnr, record_mse, relative_error
from ._scorer import make_attack_scorer

__all__ = [
    "LinkageScore",
    "bound_slack_score",
    "identity_linkage_accuracy",
    "linkage_accuracy",
    "make_attack_scorer",
    "make_bound_scorer",
    "make_slack_scorer",
    "psnr",
    "reconstruction_label_accuracy",
    "reconstruction_ratio_score",
    "record_mse",
    "relative_error",
]
