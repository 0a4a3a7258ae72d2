"""Docstring text that the attacks share, substituted by ``utils._docstring.Substitution``.

Each fragment is written with the indentation of the class or function docstring it goes into.
"""

# Licence: BSD 3 clause

# The start of every attack's example: the GDP mechanisms, the collusion view and sixty rows of
# four features (an example with an aligner imports it and the pipeline itself).
_examples_setup = """
    Examples
    --------
    >>> import numpy as np
    >>> from skdc.attacks import collusion_view
    >>> from skdc.mechanisms import CGDP, IGDP
    >>> X = np.random.RandomState(0).rand(60, 4)
"""
