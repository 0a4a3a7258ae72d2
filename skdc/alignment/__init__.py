"""Analyst-side aligners: bring every participant's uploads into one coordinate system."""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._base": ["BaseAligner"],
    "._dc": ["GEPAligner", "MPPAligner", "ODCAligner"],
    "._eigh_cache": ["KernelEighCache", "kernel_eigh_cache"],
    "._gopp": ["GOPPAligner", "ling_error_bound", "ling_sufficient_v", "v_phase_transition"],
    "._gopp_solver": ["GOPPResult", "solve_gopp"],
    "._kti": ["KTIAligner", "anchor_graph"],
    "._lti": ["LTIAligner"],
    "._reference": ["ReferenceAligner"],
})
