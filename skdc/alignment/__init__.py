"""Analyst-side aligners: bring every participant's uploads into one coordinate system."""

from ._base import BaseAligner
from ._gopp import GOPPAligner, ling_error_bound, ling_sufficient_v, v_phase_transition
from ._gopp_solver import GOPPResult, solve_gopp
from ._reference import ReferenceAligner

__all__ = [
    "BaseAligner",
    "GOPPAligner",
    "GOPPResult",
    "ReferenceAligner",
    "ling_error_bound",
    "ling_sufficient_v",
    "solve_gopp",
    "v_phase_transition",
]
