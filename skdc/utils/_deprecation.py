"""Deprecated spellings: one warning, one removal release, for every renamed public name.

A public name that is renamed keeps its old spelling for one release cycle. Using the old
spelling works as before and emits a ``FutureWarning`` (shown to users by default, unlike
``DeprecationWarning``) that names the new spelling and the release that removes the old one.
"""

# Licence: BSD 3 clause

import functools
import os
import sys
import warnings

REMOVED_IN = "0.3"
DEPRECATED = "deprecated"  # the default of a renamed estimator parameter's old spelling


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _callers_level():
    """The ``stacklevel`` of the first frame outside skdc and scikit-learn's parameter
    validation: the user's line that used the old spelling."""
    frame, level = sys._getframe(1), 1
    while frame is not None and (frame.f_code.co_filename.startswith(_PACKAGE)
                                 or frame.f_code.co_filename.endswith("_param_validation.py")):
        frame, level = frame.f_back, level + 1
    return level


def warn_renamed(old, new, *, stacklevel=None):
    """Warn that ``old`` is a deprecated spelling of ``new``.

    Parameters
    ----------
    old, new : str
        The old and the new spelling, as a user writes them (``"partition="``,
        ``"skdc.metrics.make_attack"``, ``"--participants"``).
    stacklevel : int, default=None
        Passed to :func:`warnings.warn`; ``None`` points at the first line outside skdc (and
        outside scikit-learn's parameter validation), the user's.

    Examples
    --------
    >>> import warnings
    >>> from skdc.utils._deprecation import warn_renamed
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_renamed("old_name=", "new_name=")
    >>> print(caught[0].message)
    old_name= is deprecated and will be removed in skdc 0.3; use new_name= instead.
    """
    warnings.warn(renamed_message(old, new), FutureWarning,
                  stacklevel=_callers_level() if stacklevel is None else stacklevel)


def renamed_message(old, new):
    """The sentence that says ``old`` is a deprecated spelling of ``new``.

    :func:`warn_renamed` warns it; the command line prints it as one warning line when a
    deprecated flag is used (:func:`skdc.utils._help.add_renamed_flag`).

    Parameters
    ----------
    old, new : str
        The old and the new spelling, as a user writes them.

    Returns
    -------
    message : str
        One sentence, naming the release that removes ``old``.

    Examples
    --------
    >>> from skdc.utils._deprecation import renamed_message
    >>> renamed_message("--participants", "--n-participants")
    '--participants is deprecated and will be removed in skdc 0.3; use --n-participants instead.'
    """
    return f"{old} is deprecated and will be removed in skdc {REMOVED_IN}; use {new} instead."


def renamed_argument(old, old_value, new, new_value, *, unset=None):
    """The value of a renamed argument, from whichever spelling the caller used.

    Parameters
    ----------
    old, new : str
        The old and the new name of the argument.
    old_value, new_value : object
        The values passed under each name; ``unset`` means not passed.
    unset : object, default=None
        The default both spellings share.

    Returns
    -------
    value : object
        ``new_value``, or ``old_value`` (with a ``FutureWarning``) when only the old spelling
        was used.

    Raises
    ------
    TypeError
        If both spellings were used.

    Examples
    --------
    >>> import warnings
    >>> from skdc.utils._deprecation import renamed_argument
    >>> renamed_argument("partition", None, "participant", [0, 1])
    [0, 1]
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     renamed_argument("partition", [0, 1], "participant", None)
    [0, 1]
    """
    if old_value is unset:
        return new_value
    if new_value is not unset:
        raise TypeError(f"pass {new}= only; {old}= is its deprecated spelling, and both were "
                        "given.")
    warn_renamed(f"{old}=", f"{new}=")
    return old_value


def renamed_function(function, old):
    """``function`` under its deprecated name ``old``: it warns, then calls ``function``.

    Parameters
    ----------
    function : callable
        The function under its new name.
    old : str
        The deprecated dotted path (``"skdc.metrics.make_attack"``).

    Returns
    -------
    alias : callable
        A wrapper with ``function``'s signature and a docstring that points to the new name.

    Examples
    --------
    >>> import warnings
    >>> from skdc.utils._deprecation import renamed_function
    >>> def area(r):
    ...     return 3 * r * r
    >>> old_area = renamed_function(area, "skdc.old_area")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     old_area(2)
    12
    """
    new = f"{function.__module__.split('._')[0]}.{function.__name__}"

    @functools.wraps(function)
    def alias(*args, **kwargs):
        warn_renamed(old, new)
        return function(*args, **kwargs)

    alias.__doc__ = (f"Deprecated alias of :func:`{new}`; ``{old}`` will be removed in skdc "
                     f"{REMOVED_IN}.\n\n    See :func:`{new}` for the parameters.\n")
    return alias


def renamed_attribute(old, new):
    """A read-only property, to be named ``old``, that warns and returns the attribute ``new``.

    Parameters
    ----------
    old, new : str
        The attribute's old and new name.

    Returns
    -------
    prop : property
        Assign it to ``old`` in the class body.

    Examples
    --------
    >>> import warnings
    >>> from skdc.utils._deprecation import renamed_attribute
    >>> class Fitted:
    ...     integration_matrix_ = 1.5
    ...     target_ = renamed_attribute("target_", "integration_matrix_")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     Fitted().target_
    1.5
    """
    def get(self):
        warn_renamed(f"{type(self).__name__}.{old}", f"{type(self).__name__}.{new}")
        return getattr(self, new)

    return property(get, doc=f"Deprecated spelling of ``{new}``; removed in skdc {REMOVED_IN}.")
