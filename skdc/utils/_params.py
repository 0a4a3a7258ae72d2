"""``KEY=VALUE`` settings of an estimator from the command line (``--model-param``).

Every command that trains a model (``skdc analyst fit``, ``skdc audit``) reads its
``--model-param`` flags through :func:`parse_model_params`, so that a setting one command takes
the other takes the same way.
"""

# Licence: BSD 3 clause

import json

__all__ = ["parse_model_params"]


def parse_model_params(items, flag="--model-param"):
    """Parameters of an estimator from ``KEY=VALUE`` words, each value read as JSON.

    A value that is not JSON is kept as the string it is (``class_weight=balanced``);
    ``null`` is ``None`` (``class_weight=null`` turns a default off).

    Parameters
    ----------
    items : list of str or None
        The words, one ``KEY=VALUE`` each (``None``: none given).
    flag : str, default="--model-param"
        The flag the words came from, named in the error.

    Returns
    -------
    params : dict
        ``{KEY: value}``, a later word winning over an earlier one of the same key.

    Raises
    ------
    ValueError
        A word without ``=`` or whose key is no Python identifier, in one line naming
        ``flag``.

    Examples
    --------
    >>> from skdc.utils._params import parse_model_params
    >>> parse_model_params(["max_iter=1000", "class_weight=balanced", "C=0.5"])
    {'max_iter': 1000, 'class_weight': 'balanced', 'C': 0.5}
    >>> parse_model_params(["class_weight=null"])
    {'class_weight': None}
    >>> parse_model_params(["oops"])
    Traceback (most recent call last):
    ...
    ValueError: --model-param takes key=value; got 'oops'.
    """
    params = {}
    for item in items or []:
        key, sep, value = str(item).partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"{flag} takes key=value; got {item!r}.")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params
