# Public names of skdc, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from . import alignment as alignment
from . import anchors as anchors
from . import attacks as attacks
from . import audit as audit
from . import datasets as datasets
from . import experiments as experiments
from . import linear_model as linear_model
from . import mechanisms as mechanisms
from . import metrics as metrics
from . import nn as nn
from . import privacy as privacy
from . import protocol as protocol
from . import utils as utils
from ._routing import participant_fit_params as participant_fit_params
from ._uploads import Uploads as Uploads
from .alignment import GOPPAligner as GOPPAligner
from .alignment import ReferenceAligner as ReferenceAligner
from .mechanisms import CGDP as CGDP
from .mechanisms import GDP as GDP
from .mechanisms import IGDP as IGDP

__version__: str
