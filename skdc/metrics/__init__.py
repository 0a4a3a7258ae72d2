"""Leakage metrics and privacy scorers.

Reconstruction errors (:func:`relative_error`, :func:`record_mse`, :func:`psnr`), semantic
leakage (:func:`linkage_accuracy`, :func:`reconstruction_label_accuracy`) and
:func:`make_attack_scorer`, whose scores are turned so that higher always means more private.
"""

from ._linkage import LinkageScore, linkage_accuracy, reconstruction_label_accuracy
from ._reconstruction import psnr, record_mse, relative_error
from ._scorer import make_attack_scorer

__all__ = [
    "LinkageScore",
    "linkage_accuracy",
    "make_attack_scorer",
    "psnr",
    "reconstruction_label_accuracy",
    "record_mse",
    "relative_error",
]
