"""Docstring sections that the attacks share, substituted by ``utils._docstring.Substitution``.

Each fragment is written with the indentation of the class or function docstring it goes into.
"""

# Licence: BSD 3 clause

# The paper whose threat model, attacks and equations the GDP attacks implement, cited as [1].
_gdp_references = """
    References
    ----------
    .. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with
       Noisy-Anchor Alignment for Privacy-Preserving Collaborative Learning",
       arXiv:2608.18749, 2026.
"""

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
