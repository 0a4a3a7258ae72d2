"""Analyst-side aligners: bring every participant's uploads into one coordinate system."""

from ._base import BaseAligner
from ._dc import GEPAligner, MPPAligner, ODCAligner
from ._gopp import GOPPAligner, ling_error_bound, ling_sufficient_v, v_phase_transition
from ._gopp_solver import GOPPResult, solve_gopp
from ._kti import KTIAligner, anchor_graph
from ._lti import LTIAligner
from ._reference import ReferenceAligner

__all__ = [
    "BaseAligner",
    "GEPAligner",
    "GOPPAligner",
    "GOPPResult",
    "KTIAligner",
    "LTIAligner",
    "MPPAligner",
    "ODCAligner",
    "ReferenceAligner",
    "anchor_graph",
    "ling_error_bound",
    "ling_sufficient_v",
    "solve_gopp",
    "v_phase_transition",
]
