"""Deployment: participants and the analyst as separate processes, exchanging safe files.

Each participant runs :class:`Participant` at home and writes one upload file
(:func:`save_upload`); the analyst reads them all (:func:`load_uploads`, which validates
everything and never unpickles), fits the aligner and the model with :class:`Analyst` and
returns each participant its :class:`AlignmentMap` and the model file. ``python -m skdc
participant|analyst|anchor ...`` runs the same steps from the command line.
"""

from ._files import AlignmentMap, load_anchor, load_model, make_anchor, save_model
from ._format import FORMAT_VERSION, UploadError, UploadSet, load_uploads, save_upload
from ._roles import Analyst, Participant

__all__ = [
    "FORMAT_VERSION",
    "AlignmentMap",
    "Analyst",
    "Participant",
    "UploadError",
    "UploadSet",
    "load_anchor",
    "load_model",
    "load_uploads",
    "make_anchor",
    "save_model",
    "save_upload",
]
