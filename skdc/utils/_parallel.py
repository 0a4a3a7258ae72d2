"""How many threads the thread-pooled kernels may use."""

# Licence: BSD 3 clause

import os

__all__ = ["available_cpus"]


def available_cpus():
    """CPUs this process may run on (its affinity mask where the OS has one), at least 1.

    Examples
    --------
    >>> from skdc.utils._parallel import available_cpus
    >>> available_cpus() >= 1
    True
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity masks on this OS
        return max(1, os.cpu_count() or 1)
