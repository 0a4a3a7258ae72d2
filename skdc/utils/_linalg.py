"""Linear-algebra primitives shared by mechanisms, aligners and attacks.

All of them run in float64: the papers' exactness checks reach 1e-13.
"""

# Licence: BSD 3 clause

import numpy as np
from sklearn.utils import check_random_state

__all__ = ["center", "haar_orthogonal", "polar", "polar_batched"]


def haar_orthogonal(n_features, random_state=None):
    """Draw a Haar-distributed orthogonal matrix by sign-corrected Gaussian QR.

    The secret rotation ``O_i in O(d)`` of geometric data perturbation (Def 2.3 and 2.7 of the
    GDP paper, Nosaka et al., arXiv:2608.18749, which asks only for an orthogonal draw). The QR
    factor of a Gaussian matrix, its columns multiplied by the signs of ``diag(R)``, is Haar
    distributed (Mezzadri, "How to Generate Random Matrices from the Classical Compact Groups",
    Notices of the AMS 54, 2007): the same law as :class:`scipy.stats.ortho_group`.

    Parameters
    ----------
    n_features : int
        Size ``d`` of the ``d x d`` matrix.
    random_state : int, RandomState instance or None
        Source of randomness.

    Returns
    -------
    O : ndarray of shape (n_features, n_features)
        An orthogonal matrix, ``O.T @ O = I``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.utils import haar_orthogonal
    >>> O = haar_orthogonal(4, random_state=0)
    >>> bool(np.allclose(O.T @ O, np.eye(4)))
    True
    """
    rng = check_random_state(random_state)
    q, r = np.linalg.qr(rng.standard_normal((n_features, n_features)))
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return q * signs[None, :]


def polar(S):
    """Orthogonal polar factor ``Pi(S) = U V^T`` of a square matrix (eq. (30) in the GDP paper).

    It is the orthogonal matrix closest to ``S`` in Frobenius norm and the maximiser of
    ``<S, R>`` over the orthogonal group.
    """
    u, _, vt = np.linalg.svd(S)
    return u @ vt


def polar_batched(M):
    """Polar factors of a stack of square matrices, ``M`` of shape (k, d, d).

    One batched LAPACK call (no Python loop over blocks). This is the blockwise projection
    ``Pi_p`` of eq. (31) in the GDP paper when ``M`` holds the ``d x d`` blocks.
    """
    u, _, vt = np.linalg.svd(M)
    return u @ vt


def center(B):
    """Column means and the centered matrix: ``b = B.mean(0)``, ``Bbar = B - b``."""
    b = B.mean(axis=0)
    return b, B - b
