"""Docstring fragments that several functions of the experiments room share.

Each is substituted into a docstring by :class:`skdc.utils._docstring.Substitution`: the
docstring names it ``{fragment}`` on a line of its own, at the indentation of a function's
docstring (four spaces), and the fragment carries that indentation on its further lines.
"""

# Licence: BSD 3 clause

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
