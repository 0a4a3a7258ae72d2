"""Participant-side mechanisms: what each participant runs on its own rows before uploading.

Beside them, :class:`CodebookRelease` releases each record's nearest-codeword index, the release
that spends every leaked bit on reconstruction, against which the reconstruction bound of
:mod:`skdc.privacy` is measured.
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
