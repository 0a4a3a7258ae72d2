# Public names of skdc.experiments, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
# The audit's names live in skdc.audit; they stay importable from here, where they began.
from ..audit import AuditReport as AuditReport
from ..audit import Central as Central
from ..audit import ComparedOption as ComparedOption
from ..audit import Comparison as Comparison
from ..audit import Local as Local
from ..audit import NoiseCalibration as NoiseCalibration
from ..audit import audit as audit
from ..audit import calibrate_noise as calibrate_noise
from ..audit import compare_options as compare_options
from ._cli import register_commands as register_commands
from ._plot import column_label as column_label
from ._plot import plot_frontier as plot_frontier
from ._plot import plot_noise_curves as plot_noise_curves
from ._reproduce import Reproduction as Reproduction
from ._reproduce import reproduce_mnist_equivalence as reproduce_mnist_equivalence
from ._reproduce import reproduce_mnist_sweep as reproduce_mnist_sweep
from ._reproduce import sweep_private_and_anchor_noise as sweep_private_and_anchor_noise
from ._reproduce_bound import reproduce_bound_attack as reproduce_bound_attack
from ._reproduce_gaussmix import reproduce_gaussmix_noise as reproduce_gaussmix_noise
from ._reproduce_gaussmix import reproduce_gaussmix_regression as reproduce_gaussmix_regression
from ._reproduce_gdp import reproduce_gopp_convergence as reproduce_gopp_convergence
from ._reproduce_kti import reproduce_kti as reproduce_kti
from ._reproduce_kti import reproduce_kti_tables as reproduce_kti_tables
from ._spline import SplineBand as SplineBand
from ._spline import fit_spline_band as fit_spline_band
from ._sweep import privacy_utility_sweep as privacy_utility_sweep
from ._sweep_config import SweepConfig as SweepConfig
from ._sweep_config import load_sweep_config as load_sweep_config
from ._sweep_config import run_sweep_config as run_sweep_config
