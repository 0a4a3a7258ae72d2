"""The reconstruction ratio ``rho`` of an attack, the quantity the reconstruction bound floors.

``rho = sqrt(mean_i ||z_i - z_hat_i||^2 / tr Sigma)``: the root mean squared error of the
reconstructions, per record, on the scale of the population's total variance (the ratio
bounded below by Corollary 3.7 of Bourne and Allison, "From Pixels to Privacy-Sensitive
Features: An Information-Theoretic Framework for Reconstruction Bounds", arXiv:2610.13768,
2026). The public scorer is :func:`skdc.metrics.reconstruction_ratio_score`; the attacks and
releases that score themselves (:class:`skdc.attacks.PriorAwareLikelihoodAttack`,
:class:`skdc.mechanisms.CodebookRelease`) sit below :mod:`skdc.metrics`, so the computation
lives here, on the ground floor, and serves all three.
"""

# Licence: BSD 3 clause

import math
from numbers import Real

import numpy as np

__all__ = ["reconstruction_ratio"]


def reconstruction_ratio(Z_true, Z_hat, trace):
    """``sqrt(mean ||z - z_hat||^2 / trace)`` over the rows (a row may be an image).

    Parameters
    ----------
    Z_true : array-like of shape (n_samples, ...)
        The true records.
    Z_hat : array-like of the same shape
        Their reconstructions, row by row.
    trace : float
        The normaliser ``tr Sigma``, finite and > 0.

    Returns
    -------
    rho : float

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.utils._reconstruction import reconstruction_ratio
    >>> reconstruction_ratio(np.ones((2, 2)), np.zeros((2, 2)), 8.0)
    0.5
    """
    if not (isinstance(trace, Real) and not isinstance(trace, bool) and 0 < trace < math.inf):
        raise ValueError(
            f"the normaliser trace (tr Sigma of the population) must be a finite number > 0; "
            f"got {trace!r}. Pass the trace of the rows' covariance."
        )
    Z_true = np.asarray(Z_true, dtype=np.float64)
    Z_hat = np.asarray(Z_hat, dtype=np.float64)
    if Z_true.shape != Z_hat.shape:
        raise ValueError(f"shapes differ: {Z_true.shape} vs {Z_hat.shape}.")
    mse = np.mean(np.sum((Z_true - Z_hat).reshape(Z_true.shape[0], -1) ** 2, axis=1))
    return float(math.sqrt(mse / float(trace)))
