"""Leakage metrics and privacy scorers.

Reconstruction errors (:func:`relative_error`, :func:`record_mse`, :func:`psnr`), semantic
leakage (:func:`linkage_accuracy`, :func:`identity_linkage_accuracy`,
:func:`reconstruction_label_accuracy`) and
:func:`make_attack_scorer`, whose scores are turned so that higher always means more private.
The provable-floor scorers (:func:`make_bound_scorer`, :func:`make_slack_scorer`,
:func:`bound_slack_score`, :func:`reconstruction_ratio_score`) put the floors of
:mod:`skdc.privacy` beside the attack scorers, in one ``scoring`` dict.
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
