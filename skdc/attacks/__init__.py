"""Attacks under analyst-participant collusion: what a colluding analyst can reconstruct.

:func:`collusion_view` reads the attacker's knowledge (the analyst plus one or several colluding
participants) from a fitted pipeline; each attack's
``reconstruct(view)`` returns a :class:`Reconstruction` of the target participant's rows.
:func:`make_attack` makes an attack from its name (:func:`get_attack_names`), as scorers,
the audit and configs name them; scorers over them live in :mod:`skdc.metrics` (higher = more
private).
:class:`PriorAwareLikelihoodAttack` attacks a DP-SGD release instead of a collusion view: its
``attack(Y)`` reconstructs records from their release, ``release_and_attack(X)`` simulates the
release of target records and attacks it.
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
