"""Docstring sections that the metrics share, substituted by ``utils._docstring.Substitution``.

Each fragment is written with the indentation of the function docstring it goes into.
"""

# Licence: BSD 3 clause

# The paper whose leakage metrics (relative discrepancy, the two linkage protocols) these are.
_gdp_references = """
    References
    ----------
    .. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with
       Noisy-Anchor Alignment for Privacy-Preserving Collaborative Learning",
       arXiv:2608.18749, 2026.
"""

# The two arguments of every reconstruction error.
_pair_parameters = """
    X_true : array-like of shape (n_samples, n_features)
        The true records (e.g. flattened images).
    X_hat : array-like of shape (n_samples, n_features)
        Their reconstructions, one per true record, in the same order and space.
"""
