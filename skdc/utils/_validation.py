"""Checks of the privacy parameters of a noisy release: a noise level, a rate, a delta.

The leakage accountants of :mod:`skdc.privacy` and the DP-SGD training of :mod:`skdc.nn` read
the same parameters (the noise multiplier and clipping norm, the Poisson sampling rate ``q``,
the ``delta`` of an ``(epsilon, delta)`` statement), so one check of each serves both. Each
refuses a boolean and a non-finite value (``True`` is an ``int`` to Python, not a rate).
"""

# Licence: BSD 3 clause

from numbers import Real

import numpy as np

__all__ = ["check_delta", "check_positive", "check_rate"]


def check_positive(value, name):
    """``value`` as a float, refused unless it is a finite real number > 0.

    Parameters
    ----------
    value : object
        The value to check (a noise level, a clipping norm, a leakage target).
    name : str
        Its parameter name, as the error message shows it.

    Returns
    -------
    value : float

    Examples
    --------
    >>> from skdc.utils._validation import check_positive
    >>> check_positive(2, "sigma")
    2.0
    """
    if not isinstance(value, Real) or isinstance(value, bool) or not np.isfinite(value):
        raise TypeError(f"{name} must be a finite real number; got {value!r}.")
    if value <= 0:
        raise ValueError(
            f"{name} must be > 0; got {name}={value}. A noise level of zero gives no privacy: "
            "pass a positive value."
        )
    return float(value)


def check_rate(q):
    """A Poisson sampling rate ``q`` as a float, refused unless ``0 < q <= 1``.

    Parameters
    ----------
    q : object
        The rate to check.

    Returns
    -------
    q : float

    Examples
    --------
    >>> from skdc.utils._validation import check_rate
    >>> check_rate(1)
    1.0
    """
    if not isinstance(q, Real) or isinstance(q, bool) or not np.isfinite(q):
        raise TypeError(f"the sampling rate q must be a real number in (0, 1]; got {q!r}.")
    if not 0 < q <= 1:
        raise ValueError(
            f"the sampling rate q must lie in (0, 1]; got q={q}. Use q = expected batch size / "
            "number of training records."
        )
    return float(q)


def check_delta(delta):
    """The ``delta`` of an ``(epsilon, delta)`` statement as a float, refused unless in (0, 1).

    Parameters
    ----------
    delta : object
        The value to check.

    Returns
    -------
    delta : float

    Examples
    --------
    >>> from skdc.utils._validation import check_delta
    >>> check_delta(1e-5)
    1e-05
    """
    if not isinstance(delta, Real) or not 0 < delta < 1:
        raise ValueError(
            f"delta must lie in (0, 1); got delta={delta!r}. Typical values are 1e-5 or "
            "1 / n_records**1.1."
        )
    return float(delta)
