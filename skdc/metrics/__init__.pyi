# Public names of skdc.metrics, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._bound_scorer import bound_slack_score as bound_slack_score
from ._bound_scorer import make_bound_scorer as make_bound_scorer
from ._bound_scorer import make_slack_scorer as make_slack_scorer
from ._bound_scorer import reconstruction_ratio_score as reconstruction_ratio_score

# deprecated: skdc.attacks.make_attack (removed in skdc 0.3)
from ._deprecated import make_attack as make_attack
from ._identity_linkage import identity_linkage_accuracy as identity_linkage_accuracy
from ._label_accuracy import reconstruction_label_accuracy as reconstruction_label_accuracy
from ._linkage import LinkageScore as LinkageScore
from ._linkage import linkage_accuracy as linkage_accuracy
from ._reconstruction import psnr as psnr
from ._reconstruction import record_mse as record_mse
from ._reconstruction import relative_error as relative_error
from ._scorer import make_attack_scorer as make_attack_scorer
