"""Deployment: participants and the analyst as separate processes, exchanging safe files.

Each participant runs :class:`Participant` at home and writes one upload file
(:func:`save_upload`); the analyst reads them all (:func:`load_uploads`, which validates
everything and never unpickles), fits the aligner and the model with :class:`Analyst` and
returns each participant its :class:`AlignmentMap` and the model file. ``python -m skdc
participant|analyst|anchor ...`` runs the same steps from the command line.
"""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._container": ["FORMAT_VERSION", "UploadError"],
    "._format": ["UploadSet", "load_uploads", "save_upload"],
    "._files": ["AlignmentMap", "load_anchor", "load_model", "make_anchor", "save_model"],
    "._roles": ["Analyst", "Participant"],
})
