"""Hadamard matrices as Kronecker products of small factors, never formed densely.

Sylvester doubling gives the powers of two; Paley's constructions give ``q + 1`` (Paley I, a
prime ``q = 3 mod 4``) and ``2 (q + 1)`` (Paley II, a prime ``q = 1 mod 4``). The default factor
set is the one of Bourne and Allison (arXiv:2610.13768, Sec 4): powers of two, ``H12`` (Paley I,
``q = 11``) once and ``H28`` (Paley II, ``q = 13``) up to twice, each listed factor being used at
most once. Then MNIST's 784 = 28 x 28, CIFAR's 3072 = 12 x 256, CelebA's 12,288 = 12 x 1024 and
LPIPS' 31,872 padded to 2^15 come out as in the paper's table (allowing ``H12`` twice would pad
LPIPS to 12 x 12 x 28 x 8 = 32,256 instead, with a grid of 16 block sizes rather than the
paper's 6).
"""

# Licence: BSD 3 clause

import math
from functools import lru_cache
from numbers import Integral

import numpy as np

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["hadamard", "hadamard_factors", "hadamard_order", "apply_hadamard"]

_DEFAULT_FACTORS = (12, 28, 28)
_MAX_POW2_FACTOR = 64

# The parameters of the functions that build a Hadamard matrix of a given order.
_ORDER_PARAMS = {"order": [Interval(Integral, 1, None, closed="left")], "factors": [tuple, list]}


def _is_prime(q):
    return q > 1 and all(q % p for p in range(2, int(math.isqrt(q)) + 1))


def _sylvester(order):
    H = np.ones((1, 1))
    while H.shape[0] < order:
        H = np.block([[H, H], [H, -H]])
    return H


def _jacobsthal(q):
    chi = np.full(q, -1.0)
    chi[0] = 0.0
    chi[[(i * i) % q for i in range(1, q)]] = 1.0
    idx = (np.arange(q)[None, :] - np.arange(q)[:, None]) % q
    return chi[idx]


def _paley(order):
    if _is_prime(order - 1) and (order - 1) % 4 == 3:  # Paley I
        q = order - 1
        Q = _jacobsthal(q)
        S = np.zeros((q + 1, q + 1))
        S[0, 1:] = 1.0
        S[1:, 0] = -1.0
        S[1:, 1:] = Q
        return S + np.eye(q + 1)
    q = order // 2 - 1
    if order % 2 == 0 and _is_prime(q) and q % 4 == 1:  # Paley II
        Q = _jacobsthal(q)
        C = np.zeros((q + 1, q + 1))
        C[0, 1:] = 1.0
        C[1:, 0] = 1.0
        C[1:, 1:] = Q
        A = np.array([[1.0, -1.0], [-1.0, -1.0]])
        B = np.array([[1.0, 1.0], [1.0, -1.0]])
        H = np.kron(C, A) + np.kron(np.eye(q + 1), B)
        return H
    raise ValueError(f"no Paley construction of order {order}.")


@lru_cache(maxsize=64)
def _factor_matrix(order):
    if order & (order - 1) == 0:
        return _sylvester(order)
    return _paley(order)


def _split(order, factors):
    """Factor orders whose product is ``order`` (largest Paley factors first), or None.

    ``factors`` is a multiset: each entry is used at most once; powers of two are free.
    """
    if order & (order - 1) == 0:
        out, rest = [], order
        while rest > 1:
            p = min(rest, _MAX_POW2_FACTOR)
            out.append(p)
            rest //= p
        return out
    factors = sorted(factors, reverse=True)
    for i, f in enumerate(factors):
        if order % f == 0:
            rest = _split(order // f, factors[:i] + factors[i + 1 :])
            if rest is not None:
                return [f, *rest]
    return None


@validate_params(
    {
        "m": [Interval(Integral, 1, None, closed="left")],
        "factors": [tuple, list],
    },
    prefer_skip_nested_validation=True,
)
def hadamard_order(m, factors=_DEFAULT_FACTORS):
    """Smallest constructible Hadamard order ``>= m`` (zero-padding target).

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    Examples
    --------
    >>> from skdc.privacy import hadamard_order
    >>> hadamard_order(784), hadamard_order(3072), hadamard_order(31872)
    (784, 3072, 32768)
    """
    if m < 1:
        raise ValueError(f"the dimension must be >= 1; got {m}.")
    order = m
    while _split(order, factors) is None:
        order += 1
    return order


@validate_params(_ORDER_PARAMS, prefer_skip_nested_validation=True)
def hadamard_factors(order, factors=_DEFAULT_FACTORS):
    """The small Hadamard factors whose Kronecker product has the given ``order``.

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    Examples
    --------
    >>> from skdc.privacy import hadamard_factors
    >>> [H.shape[0] for H in hadamard_factors(784)]
    [28, 28]
    """
    parts = _split(order, factors)
    if parts is None:
        raise ValueError(
            f"no Hadamard matrix of order {order} from the factors {sorted(factors)} and powers "
            f"of two; zero-pad to {hadamard_order(order, factors)}."
        )
    return [_factor_matrix(p) for p in parts]


@validate_params(_ORDER_PARAMS, prefer_skip_nested_validation=True)
def hadamard(order, factors=_DEFAULT_FACTORS):
    """Dense Hadamard matrix of the given order (for tests and small orders only).

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    Examples
    --------
    >>> from skdc.privacy import hadamard
    >>> hadamard(4).astype(int).tolist()
    [[1, 1, 1, 1], [1, -1, 1, -1], [1, 1, -1, -1], [1, -1, -1, 1]]
    """
    H = np.ones((1, 1))
    for F in hadamard_factors(order, factors):
        H = np.kron(H, F)
    return H


@validate_params(
    {"X": ["array-like"], "factors": [tuple, list]}, prefer_skip_nested_validation=True
)
def apply_hadamard(X, factors):
    """Rows of ``X`` times ``H^T`` for ``H`` the Kronecker product of ``factors``.

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.privacy import apply_hadamard, hadamard, hadamard_factors
    >>> X = np.random.RandomState(0).standard_normal((3, 12))
    >>> bool(np.allclose(apply_hadamard(X, hadamard_factors(12)), X @ hadamard(12).T))
    True
    """
    n = X.shape[0]
    shape = [F.shape[0] for F in factors]
    T = np.asarray(X, dtype=np.float64).reshape([n, *shape])
    for axis, F in enumerate(factors):
        T = np.moveaxis(np.tensordot(T, F, axes=([axis + 1], [1])), -1, axis + 1)
    return T.reshape(n, -1)
