# Public names of skdc.experiments, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._audit import AuditReport as AuditReport
from ._audit import audit as audit
from ._baselines import Central as Central
from ._baselines import Local as Local
from ._calibrate import NoiseCalibration as NoiseCalibration
from ._calibrate import calibrate_noise as calibrate_noise
from ._compare import ComparedOption as ComparedOption
from ._compare import Comparison as Comparison
from ._compare import compare_options as compare_options
from ._plot import column_label as column_label
from ._plot import plot_frontier as plot_frontier
from ._plot import plot_noise_curves as plot_noise_curves
from ._reproduce import Reproduction as Reproduction
from ._reproduce import reproduce_kti as reproduce_kti
from ._reproduce import reproduce_mnist_equivalence as reproduce_mnist_equivalence
from ._reproduce import reproduce_mnist_sweep as reproduce_mnist_sweep
from ._reproduce import sweep_private_and_anchor_noise as sweep_private_and_anchor_noise
from ._spline import SplineBand as SplineBand
from ._spline import fit_spline_band as fit_spline_band
from ._sweep import privacy_utility_sweep as privacy_utility_sweep
from ._sweep_config import SweepConfig as SweepConfig
from ._sweep_config import load_sweep_config as load_sweep_config
from ._sweep_config import run_sweep_config as run_sweep_config
