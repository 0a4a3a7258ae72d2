"""The kernel eigendecompositions that ``KTIAligner(solver="eigh")`` fits share across alphas.

One symmetric eigendecomposition ``K^(k) = V diag(l) V^T`` of a participant's anchor kernel
serves every ridge ``alpha``: ``(K^(k) + alpha I)^{-1} = V diag(1 / (l + alpha)) V^T``. A grid
search over ``alpha`` clones and refits fresh aligners, so the decompositions are kept in an
explicit cache object, :data:`kernel_eigh_cache`, that outlives the aligners: bounded in bytes,
least recently used dropped first, and cleared or switched off by the user.
"""

# Licence: BSD 3 clause

import threading
from collections import OrderedDict
from numbers import Integral

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["KernelEighCache", "kernel_eigh_cache"]


class KernelEighCache:
    """Bounded store of kernel eigendecompositions, least recently used dropped first.

    :class:`~skdc.alignment.KTIAligner` with ``solver="eigh"`` keeps each participant's
    ``(eigenvalues, eigenvectors)`` here, keyed by a digest of the anchor upload, its shape,
    the kernel and its ``gamma``, and reuses them when an aligner is fitted again on the same
    anchor uploads with another ``alpha``. Fitted results are the same with or without the
    cache; only the time differs. The aligners use the shared instance
    :data:`skdc.alignment.kernel_eigh_cache`.

    Read more in the :ref:`User Guide <nonlinear>`.

    Parameters
    ----------
    max_bytes : int, default=268435456
        Largest total size of the stored arrays (256 MiB). A decomposition larger than that is
        computed and not stored; ``0`` switches the cache off. May be changed at any time;
        the next store drops entries down to the new bound.

    Attributes
    ----------
    max_bytes : int
        The bound, as set.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.alignment import KernelEighCache
    >>> cache = KernelEighCache(max_bytes=2**20)
    >>> value = cache.get("k", lambda: (np.ones(3), np.eye(3)))
    >>> len(cache), cache.nbytes
    (1, 96)
    >>> cache.get("k", lambda: 1 / 0) is value  # stored: not computed again
    True
    >>> cache.clear()
    >>> len(cache)
    0
    """

    @validate_params(
        {"max_bytes": [Interval(Integral, 0, None, closed="left")]},
        prefer_skip_nested_validation=True,
    )
    def __init__(self, max_bytes=256 * 2**20):
        self.max_bytes = max_bytes
        self._store = OrderedDict()
        self._nbytes = 0
        self._lock = threading.Lock()

    def get(self, key, compute):
        """The stored value of ``key``, else ``compute()``, stored when it fits.

        Parameters
        ----------
        key : hashable
            What identifies the decomposition; ``None`` computes without storing.
        compute : callable
            Returns the value, a tuple of arrays (``(eigenvalues, eigenvectors)``).

        Returns
        -------
        value : tuple of ndarray
            The stored or computed value.
        """
        if key is None:
            return compute()
        with self._lock:
            if key in self._store:
                self._store.move_to_end(key)
                return self._store[key]
        value = compute()
        size = sum(a.nbytes for a in value)
        with self._lock:
            if size <= self.max_bytes and key not in self._store:
                while self._store and self._nbytes + size > self.max_bytes:
                    _, old = self._store.popitem(last=False)
                    self._nbytes -= sum(a.nbytes for a in old)
                self._store[key] = value
                self._nbytes += size
        return value

    def clear(self):
        """Drop every stored decomposition."""
        with self._lock:
            self._store.clear()
            self._nbytes = 0

    @property
    def nbytes(self):
        """Total size in bytes of the stored arrays."""
        return self._nbytes

    def __len__(self):
        return len(self._store)

    def __repr__(self):
        return (f"KernelEighCache(max_bytes={self.max_bytes}; {len(self)} stored, "
                f"{self.nbytes} bytes)")


#: The cache every :class:`~skdc.alignment.KTIAligner` with ``solver="eigh"`` uses.
#: ``kernel_eigh_cache.clear()`` frees it; ``kernel_eigh_cache.max_bytes = 0`` switches it off.
kernel_eigh_cache = KernelEighCache()
