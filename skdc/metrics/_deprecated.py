"""Deprecated spellings of skdc.metrics' names, each removed in skdc 0.3 (``REMOVED_IN``).

* ``skdc.metrics.make_attack``: the attack registry lives with the attacks, as
  :func:`skdc.attacks.make_attack`; the old spelling warns (``FutureWarning``) and calls it.
"""

# Licence: BSD 3 clause

from .. import attacks
from ..utils._deprecation import renamed_function

__all__ = ["make_attack"]

make_attack = renamed_function(attacks.make_attack, "skdc.metrics.make_attack")
