"""The one place where skdc imports private scikit-learn names.

scikit-learn moves its private helpers between releases (``_validate_data`` became
``validate_data`` in 1.6, ``_more_tags`` became ``__sklearn_tags__``). Importing them here only
means an upgrade touches one file.
"""

# Licence: BSD 3 clause

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    Options,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import validate_data

__all__ = [
    "HasMethods",
    "Interval",
    "InvalidParameterError",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_fit_context",
    "_get_output_config",
    "validate_data",
    "validate_params",
]
