# Public names of skdc.attacks, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._base import BaseAttack as BaseAttack
from ._classical import ICAAttack as ICAAttack
from ._classical import KnownInputAttack as KnownInputAttack
from ._classical import KnownSampleAttack as KnownSampleAttack
from ._dc import AnchorRegressionAttack as AnchorRegressionAttack
from ._gdp import AlignmentMapAttack as AlignmentMapAttack
from ._gdp import KnownAnchorAttack as KnownAnchorAttack
from ._gdp import KnownSecretAttack as KnownSecretAttack
from ._joint_likelihood import JointLikelihoodAttack as JointLikelihoodAttack
from ._likelihood import PriorAwareLikelihoodAttack as PriorAwareLikelihoodAttack
from ._registry import get_attack_names as get_attack_names
from ._registry import make_attack as make_attack
from ._sample_axes import SampleAxesAttack as SampleAxesAttack
from ._view import CollusionView as CollusionView
from ._view import GroundTruth as GroundTruth
from ._view import Reconstruction as Reconstruction
from ._view import check_colluders as check_colluders
from ._view import collusion_view as collusion_view
