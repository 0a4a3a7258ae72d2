"""Deep models of the papers as scikit-learn classifiers (skorch), and batched training.

``RepresentationCNN`` is the utility CNN of the GDP paper's Table 2 for representations of any
width; ``LinkageAuditor`` is its Table 3 auditor, whose embeddings score linkage;
``fit_batched`` trains one utility CNN per noise draw of a sweep, all together. Importing this
subpackage imports torch and skorch (``pip install skdc[nn]``); ``import skdc`` does not.
"""

from ._batched import fit_batched
from ._modules import AuditorModule, RepresentationModule, representation_layout
from ._net import BestValidCheckpoint, LinkageAuditor, RepresentationCNN, resolve_device

__all__ = [
    "AuditorModule",
    "BestValidCheckpoint",
    "LinkageAuditor",
    "RepresentationCNN",
    "RepresentationModule",
    "fit_batched",
    "representation_layout",
    "resolve_device",
]
