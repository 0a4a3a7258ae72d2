"""Attacks under analyst-participant collusion: what a colluding analyst can reconstruct.

:func:`collusion_view` reads the attacker's knowledge (the analyst plus one or several colluding
participants) from a fitted pipeline; each attack's
``reconstruct(view)`` returns a :class:`Reconstruction` of the target participant's rows.
Scorers over them live in :mod:`skdc.metrics` (higher = more private).
"""

from ._base import BaseAttack
from ._classical import ICAAttack, KnownInputAttack, KnownSampleAttack
from ._dc import AnchorRegressionAttack
from ._gdp import AlignmentMapAttack, KnownAnchorAttack, KnownSecretAttack
from ._view import CollusionView, GroundTruth, Reconstruction, check_colluders, collusion_view

__all__ = [
    "AlignmentMapAttack",
    "AnchorRegressionAttack",
    "BaseAttack",
    "CollusionView",
    "GroundTruth",
    "ICAAttack",
    "KnownAnchorAttack",
    "KnownInputAttack",
    "KnownSampleAttack",
    "KnownSecretAttack",
    "Reconstruction",
    "check_colluders",
    "collusion_view",
]
