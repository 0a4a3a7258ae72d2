"""Shared docstring fragments, substituted into docstrings by one decorator.

As imbalanced-learn's ``Substitution``: a parameter or reference text that several
estimators share is written once, as a module-level string, and a docstring names it
``{fragment}`` on a line of its own. Only the names given are replaced, so the other braces of
a docstring (sets, LaTeX) need no escaping.
"""

# Licence: BSD 3 clause

__all__ = ["Substitution"]


class Substitution:
    """Decorator: replace ``{name}`` in the decorated object's docstring by a shared fragment.

    Parameters
    ----------
    **fragments : str
        Name to text. A fragment is written with the indentation of the docstring it goes
        into (four spaces for a class or function docstring's parameter entries) and ends
        with a newline.

    Examples
    --------
    >>> from skdc.utils._docstring import Substitution
    >>> _random_state_doc = '''random_state : int, RandomState instance or None, default=None
    ...         Seed of the secrets.
    ... '''
    >>> @Substitution(random_state=_random_state_doc)
    ... def f(random_state=None):
    ...     '''Do it.
    ...
    ...     Parameters
    ...     ----------
    ...     {random_state}
    ...     '''
    >>> print(f.__doc__.splitlines()[4])
        random_state : int, RandomState instance or None, default=None
    """

    def __init__(self, **fragments):
        self.fragments = fragments

    def __call__(self, obj):
        doc = obj.__doc__
        if doc is None:  # python -OO strips docstrings
            return obj
        for name, text in self.fragments.items():
            placeholder = "{" + name + "}"
            if placeholder not in doc:
                raise ValueError(
                    f"{obj.__qualname__}'s docstring has no {placeholder} to substitute; "
                    "write the placeholder where the shared text goes, or drop the fragment."
                )
            doc = doc.replace(placeholder, text.rstrip("\n").lstrip())
        obj.__doc__ = doc
        return obj


# The first lines of the examples that run a noisy-anchor pipeline (I-GDP, GOPP alignment, a
# logistic regression) on a small synthetic classification task.
_GOPP_PIPELINE_EXAMPLE = """\
>>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import Pipeline
    >>> from skdc import IGDP, GOPPAligner
    >>> X, y = make_classification(n_samples=240, n_features=6, random_state=0)
    >>> pipe = Pipeline([("gdp", IGDP(n_participants=3, random_state=0)),
    ...                  ("align", GOPPAligner()), ("clf", LogisticRegression())])
"""
