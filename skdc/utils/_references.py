"""The papers skdc implements, as References sections for ``_docstring.Substitution``.

The rooms cite the same papers in many docstrings; each fragment is the whole numpydoc
References section of a class or function docstring (four-space indentation), citing its paper
as ``[1]``. A docstring that cites more papers lists them after the placeholder as ``.. [2]``
and on.

Examples
--------
>>> from skdc.utils._docstring import Substitution
>>> from skdc.utils._references import gdp_paper_references
>>> @Substitution(references=gdp_paper_references)
... def f():
...     '''Do it as eq. (70) of [1]_ does.
...
...     {references}
...     '''
>>> print(f.__doc__.splitlines()[4])
        .. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with
"""

# Licence: BSD 3 clause

__all__ = ["gdp_paper_references", "kti_paper_references"]

# The noisy-anchor GDP paper: mechanisms, GOPP alignment, the collusion attacks, linkage.
gdp_paper_references = """
    References
    ----------
    .. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with
       Noisy-Anchor Alignment for Privacy-Preserving Collaborative Learning",
       arXiv:2608.18749, 2026.
"""

# The KTI paper: LTI / KTI integration and its reconstruction-risk experiment.
kti_paper_references = """
    References
    ----------
    .. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods
       for Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""
