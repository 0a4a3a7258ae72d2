"""The one place where skdc imports private scikit-learn names.

scikit-learn moves its private helpers between releases (``_validate_data`` became
``validate_data`` in 1.6, ``_more_tags`` became ``__sklearn_tags__``). Importing them here only
means an upgrade touches one file.

It is also where skdc's parameter validation departs from scikit-learn's on one point:
**a boolean is not a number**. scikit-learn's ``Interval(Integral, ...)``, its
``"random_state"`` constraint and the bare types ``Integral``/``int`` accept ``True`` and
``False`` (``bool`` subclasses ``int``), so ``n_restarts=True`` would run once and
``random_state=True`` would seed with 1, silently. Here :class:`Interval` refuses booleans, and
:func:`validate_params` and :func:`_fit_context` check every constraint through
:func:`without_bools` (which turns ``"random_state"``, ``Integral`` and ``int`` into their
bool-refusing forms), so every estimator and function of skdc refuses them without a line of
its own. An estimator that validates outside ``fit`` calls :func:`validate_estimator_params`.
"""

# Licence: BSD 3 clause

import functools
from numbers import Integral

import numpy as np
from sklearn import get_config
from sklearn.base import _fit_context as _sklearn_fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Hidden,
    InvalidParameterError,
    Options,
    RealNotInt,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils._param_validation import Interval as _SklearnInterval
from sklearn.utils._param_validation import validate_params as _sklearn_validate_params
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import validate_data

__all__ = [
    "HasMethods",
    "Hidden",
    "Interval",
    "InvalidParameterError",
    "Options",
    "RealNotInt",
    "StrOptions",
    "_fit_context",
    "_get_output_config",
    "validate_data",
    "validate_estimator_params",
    "validate_params",
    "without_bools",
]


class Interval(_SklearnInterval):
    """scikit-learn's ``Interval`` constraint, refusing booleans.

    ``True`` and ``False`` are ``int`` instances in Python, so scikit-learn's
    ``Interval(Integral, 1, None, closed="left")`` accepts ``True`` as 1; this one does not (nor
    as a real number: ``Interval(Real, ...)`` refuses them too).

    Examples
    --------
    >>> from numbers import Integral
    >>> from skdc.utils._sklearn_compat import Interval
    >>> at_least_one = Interval(Integral, 1, None, closed="left")
    >>> at_least_one.is_satisfied_by(3), at_least_one.is_satisfied_by(True)
    (True, False)
    """

    def is_satisfied_by(self, val):
        return not isinstance(val, (bool, np.bool_)) and super().is_satisfied_by(val)


def _bool_free(constraint):
    """The bool-refusing constraints that stand for ``constraint`` (a list)."""
    if isinstance(constraint, str) and constraint == "random_state":
        # scikit-learn's "random_state": an int seed, a RandomState or None
        return [Interval(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState, None]
    if constraint is Integral or constraint is int:
        return [Interval(Integral, None, None, closed="neither")]
    if type(constraint) is _SklearnInterval:  # one built from scikit-learn's own class
        return [Interval(constraint.type, constraint.left, constraint.right,
                         closed=constraint.closed)]
    return [constraint]


def without_bools(parameter_constraints):
    """``parameter_constraints`` with every integer constraint refusing booleans.

    ``"random_state"`` becomes ``[Interval(Integral, 0, 2**32 - 1), RandomState, None]``,
    ``Integral``/``int`` become an unbounded integer :class:`Interval`, all refusing ``True``
    and ``False``; ``"boolean"`` and ``"verbose"`` (which accept them on purpose) stay.

    Parameters
    ----------
    parameter_constraints : dict
        ``{name: list of constraints or "no_validation"}``, as scikit-learn takes them.

    Returns
    -------
    constraints : dict
        The same keys, bool-refusing constraints.

    Examples
    --------
    >>> from sklearn.utils._param_validation import validate_parameter_constraints
    >>> from skdc.utils._sklearn_compat import without_bools
    >>> try:
    ...     validate_parameter_constraints(without_bools({"seed": ["random_state"]}),
    ...                                    {"seed": True}, caller_name="f")
    ... except ValueError as exc:
    ...     print(str(exc)[:44])
    The 'seed' parameter of f must be an int in
    """
    return {
        name: constraints if isinstance(constraints, str)
        else [new for old in constraints for new in _bool_free(old)]
        for name, constraints in parameter_constraints.items()
    }


def validate_params(parameter_constraints, *, prefer_skip_nested_validation):
    """scikit-learn's ``validate_params`` decorator, refusing booleans as numbers.

    See :func:`without_bools`.
    """
    return _sklearn_validate_params(without_bools(parameter_constraints),
                                    prefer_skip_nested_validation=prefer_skip_nested_validation)


def _seed_like(parameter_constraints):
    """The constraints whose scikit-learn form (a string or a type) would accept a bool."""
    return {name: constraints for name, constraints in parameter_constraints.items()
            if not isinstance(constraints, str) and any(
                (isinstance(c, str) and c == "random_state") or c is Integral or c is int
                or type(c) is _SklearnInterval for c in constraints)}


def validate_estimator_params(estimator):
    """Validate ``estimator``'s parameters against its ``_parameter_constraints``, no bools.

    What ``estimator._validate_params()`` does, with :func:`without_bools` applied: call it
    where an estimator validates outside a ``fit`` decorated by :func:`_fit_context`.

    Examples
    --------
    >>> from skdc.mechanisms import GDP
    >>> from skdc.utils._sklearn_compat import validate_estimator_params
    >>> try:
    ...     validate_estimator_params(GDP(random_state=True))
    ... except ValueError as exc:
    ...     print(str(exc)[:46])
    The 'random_state' parameter of GDP must be an
    """
    validate_parameter_constraints(
        without_bools(estimator._parameter_constraints), estimator.get_params(deep=False),
        caller_name=type(estimator).__name__)


def _fit_context(*, prefer_skip_nested_validation):
    """scikit-learn's ``_fit_context`` decorator, refusing booleans as numbers.

    scikit-learn's decorator validates ``_parameter_constraints`` before ``fit`` runs; the
    constraints it would let a bool through (``"random_state"``, ``Integral``) are checked
    here first through :func:`without_bools` (the others are :class:`Interval` already).
    """
    decorate = _sklearn_fit_context(prefer_skip_nested_validation=prefer_skip_nested_validation)

    def decorator(fit_method):
        fit = decorate(fit_method)

        @functools.wraps(fit_method)
        def wrapper(estimator, *args, **kwargs):
            if not get_config()["skip_parameter_validation"]:
                seeds = _seed_like(estimator._parameter_constraints)
                if seeds:
                    params = estimator.get_params(deep=False)
                    validate_parameter_constraints(
                        without_bools(seeds), {k: params[k] for k in seeds if k in params},
                        caller_name=type(estimator).__name__)
            return fit(estimator, *args, **kwargs)

        return wrapper

    return decorator
