"""Deployment: participants and the analyst as separate processes, exchanging safe files.

Each participant runs :class:`Participant` at home and writes one upload file
(:func:`save_upload`); the analyst reads them all (:func:`load_uploads`, which validates
everything and never unpickles), fits the aligner and the model with :class:`Analyst` and
returns each participant its :class:`AlignmentMap` and the model file. ``python -m skdc
participant|analyst|anchor ...`` runs the same steps from the command line. A simulation in
one process writes every participant's file at once (:func:`save_simulated_uploads`).
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
