"""Kernel bandwidth rules that both sides of a collaboration apply.

The median heuristic sets an RBF bandwidth from the rows themselves. A participant applies it to
its own standardized rows (kernel PCA, :class:`~skdc.mechanisms.KernelPCAMechanism`) and the
analyst to each participant's intermediate anchor rows (:class:`~skdc.alignment.KTIAligner`,
``gamma="median"``), so the rule lives on the ground floor, which both sides import; its public
name is :func:`skdc.mechanisms.median_heuristic_gamma`.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

import numpy as np
from scipy.spatial.distance import pdist

from ._docstring import Substitution
from ._references import kti_paper_references
from ._sklearn_compat import validate_params

__all__ = ["median_heuristic_gamma"]


@validate_params({"X": ["array-like"]}, prefer_skip_nested_validation=True)
@Substitution(references=kti_paper_references)
def median_heuristic_gamma(X):
    """RBF bandwidth ``1 / (2 m^2)`` with ``m`` the median nonzero pairwise distance of ``X``.

    Read more in the :ref:`User Guide <nonlinear_participant_side>`.

    The authors' code's form of the median heuristic of Sec. 5.5 of [1]_ (the paper names the
    heuristic, not the formula; ``1 / m^2`` is the other common convention). Kernel PCA applies
    it to each participant's standardized rows, and ``KTIAligner(gamma="median")`` to each
    participant's intermediate anchor rows.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Rows; at least two distinct rows.

    Returns
    -------
    gamma : float
        The bandwidth; ``1.0`` when every row is identical.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import median_heuristic_gamma
    >>> median_heuristic_gamma(np.array([[0.0], [1.0], [3.0]]))  # median distance 2
    0.125
    """
    d = pdist(np.asarray(X, dtype=np.float64))
    d = d[d > 0]
    if d.size == 0:
        return 1.0
    return float(1.0 / (2.0 * np.median(d) ** 2))
