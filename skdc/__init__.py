"""skdc: scikit-learn-compatible privacy-preserving data collaboration.

Participants obfuscate their rows locally and upload them once, with the same obfuscation of a
shared synthetic anchor; the analyst aligns the uploads through the anchor and trains any model;
attacks and bounds measure what a colluding analyst could reconstruct.

Subpackages
-----------
mechanisms
    Participant side: GDP, C-GDP, I-GDP (and nonlinear reductions).
anchors
    Anchor makers.
alignment
    Analyst side: reference Procrustes, noisy-anchor GOPP (and integration aligners).
datasets
    Offline data and the papers' partitions.
utils
    Linear-algebra primitives.
"""

from ._uploads import Uploads
from .alignment import GOPPAligner, ReferenceAligner
from .mechanisms import CGDP, GDP, IGDP

__version__ = "0.1.0"

__all__ = ["CGDP", "GDP", "GOPPAligner", "IGDP", "ReferenceAligner", "Uploads", "__version__"]
