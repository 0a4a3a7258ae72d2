# Public names of skdc.audit, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._audit import AuditReport as AuditReport
from ._audit import audit as audit
from ._baselines import Central as Central
from ._baselines import Local as Local
from ._calibrate import NoiseCalibration as NoiseCalibration
from ._calibrate import calibrate_noise as calibrate_noise
from ._cli import register_commands as register_commands
from ._compare import compare_options as compare_options
from ._results import ComparedOption as ComparedOption
from ._results import Comparison as Comparison
