# Public names of skdc.nn, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._base import resolve_device as resolve_device
from ._batched import fit_batched as fit_batched
from ._callbacks import BestValidCheckpoint as BestValidCheckpoint

# DP-SGD needs Opacus besides torch and skorch: loaded only when asked for
from ._dpsgd import DPSGDMixin as DPSGDMixin
from ._dpsgd import PoissonBatchLoader as PoissonBatchLoader
from ._dpsgd import make_dpsgd_net as make_dpsgd_net
from ._modules import AuditorModule as AuditorModule
from ._modules import RepresentationModule as RepresentationModule
from ._modules import representation_layout as representation_layout
from ._net import LinkageAuditor as LinkageAuditor
from ._net import RepresentationCNN as RepresentationCNN
