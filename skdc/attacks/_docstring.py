"""Docstring text that the attacks share, substituted by ``utils._docstring.Substitution``.

Each fragment is written with the indentation of the class or function docstring it goes into.
"""

# Licence: BSD 3 clause

# The start of the examples: the imports (a GDP mechanism, optionally GOPP alignment, the view)
# and sixty rows of four features.
_examples_setup = """
    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdc.alignment import GOPPAligner
    >>> from skdc.attacks import collusion_view
    >>> from skdc.mechanisms import CGDP, IGDP
    >>> X = np.random.RandomState(0).rand(60, 4)
"""
