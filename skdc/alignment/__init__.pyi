# Public names of skdc.alignment, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._base import BaseAligner as BaseAligner
from ._dc import GEPAligner as GEPAligner
from ._dc import MPPAligner as MPPAligner
from ._dc import ODCAligner as ODCAligner
from ._eigh_cache import KernelEighCache as KernelEighCache
from ._eigh_cache import kernel_eigh_cache as kernel_eigh_cache
from ._gopp import GOPPAligner as GOPPAligner
from ._gopp import ling_error_bound as ling_error_bound
from ._gopp import ling_sufficient_v as ling_sufficient_v
from ._gopp import v_phase_transition as v_phase_transition
from ._gopp_solver import GOPPResult as GOPPResult
from ._gopp_solver import solve_gopp as solve_gopp
from ._kti import KTIAligner as KTIAligner
from ._kti import anchor_graph as anchor_graph
from ._lti import LTIAligner as LTIAligner
from ._reference import ReferenceAligner as ReferenceAligner
