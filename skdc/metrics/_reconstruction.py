"""How close a reconstruction is to the true records (lower error = less privacy).

The relative Frobenius discrepancy ``rel(L, R) = ||L - R||_F / max(||R||_F, 1e-15)`` is the GDP
paper's algebraic metric (the discrepancy of Section 5.2.2 of [1]_, and the NRMSE its reference
code records); per-record mean squared error and PSNR are the reference code's secondary
reconstruction metrics.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from numbers import Real

import numpy as np
from sklearn.utils import check_array

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["psnr", "record_mse", "relative_error"]

# The two arguments of every reconstruction error.
_pair_parameters = """
    X_true : array-like of shape (n_samples, n_features)
        The true records (e.g. flattened images).
    X_hat : array-like of shape (n_samples, n_features)
        Their reconstructions, one per true record, in the same order and space.
"""


def _check_pair(X_true, X_hat):
    X_true = check_array(X_true, dtype=np.float64, ensure_min_samples=1)
    X_hat = check_array(X_hat, dtype=np.float64, ensure_min_samples=1, ensure_all_finite=False)
    if X_true.shape != X_hat.shape:
        raise ValueError(
            f"X_true and X_hat must have the same shape (one reconstruction per true record, "
            f"in the same space); got {X_true.shape} and {X_hat.shape}."
        )
    return X_true, X_hat


@validate_params(
    {"X_true": ["array-like"], "X_hat": ["array-like"]}, prefer_skip_nested_validation=True
)
@Substitution(pair=_pair_parameters, references=gdp_paper_references)
def relative_error(X_true, X_hat):
    """Relative Frobenius error ``||X_hat - X_true||_F / max(||X_true||_F, 1e-15)``.

    The relative discrepancy of Section 5.2.2 of [1]_ (and the NRMSE of its reference code).
    Zero means exact recovery; a higher value means a more private release.

    Read more in the :ref:`User Guide <numbers>`.

    Parameters
    ----------
    {pair}

    Returns
    -------
    error : float
        The relative error.

    {references}

    Examples
    --------
    >>> from skdc.metrics import relative_error
    >>> relative_error([[3.0, 4.0]], [[3.0, 4.5]])
    0.1
    """
    X_true, X_hat = _check_pair(X_true, X_hat)
    return float(np.linalg.norm(X_hat - X_true) / max(np.linalg.norm(X_true), 1e-15))


@validate_params(
    {"X_true": ["array-like"], "X_hat": ["array-like"], "average": ["boolean"]},
    prefer_skip_nested_validation=True,
)
@Substitution(pair=_pair_parameters)
def record_mse(X_true, X_hat, *, average=True):
    """Mean squared error of each record's reconstruction (higher = more private).

    Read more in the :ref:`User Guide <numbers>`.

    Parameters
    ----------
    {pair}
    average : bool, default=True
        Return the mean over records instead of one value per record.

    Returns
    -------
    mse : float or ndarray of shape (n_samples,)
        ``mean_j (X_hat[k, j] - X_true[k, j])^2`` per record ``k``, or its mean.

    Examples
    --------
    >>> from skdc.metrics import record_mse
    >>> record_mse([[0.0, 0.0], [1.0, 1.0]], [[0.0, 2.0], [1.0, 1.0]], average=False)
    array([2., 0.])
    """
    X_true, X_hat = _check_pair(X_true, X_hat)
    mse = ((X_hat - X_true) ** 2).mean(axis=1)
    return float(mse.mean()) if average else mse


@validate_params(
    {
        "X_true": ["array-like"],
        "X_hat": ["array-like"],
        "data_range": [None, Interval(Real, 0, None, closed="neither")],
        "average": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(pair=_pair_parameters)
def psnr(X_true, X_hat, *, data_range=None, average=True):
    """Peak signal-to-noise ratio of each record's reconstruction, in dB (higher = more leak).

    ``10 log10(data_range^2 / mse_k)`` for record ``k``; ``inf`` for an exact reconstruction.

    Read more in the :ref:`User Guide <numbers>`.

    Parameters
    ----------
    {pair}
    data_range : float, default=None
        The range of the data; ``None`` uses ``X_true.max() - X_true.min()``.
    average : bool, default=True
        Return the mean over records instead of one value per record.

    Returns
    -------
    psnr : float or ndarray of shape (n_samples,)
        The PSNR per record, or its mean.

    Examples
    --------
    >>> from skdc.metrics import psnr
    >>> round(psnr([[0.0, 1.0]], [[0.1, 1.0]]), 2)
    23.01
    """
    X_true, X_hat = _check_pair(X_true, X_hat)
    if data_range is None:
        data_range = float(X_true.max() - X_true.min())
        if data_range == 0:
            raise ValueError(
                "psnr needs a data range: X_true is constant. Pass data_range explicitly."
            )
    mse = ((X_hat - X_true) ** 2).mean(axis=1)
    with np.errstate(divide="ignore"):
        out = 10 * np.log10(data_range**2 / mse)
    return float(out.mean()) if average else out
