"""The audit: whether a data collaboration is safe, and what it costs.

One engine (the noise draws, each a fresh deployment, resumable from checkpoints, judged by a
criterion), three products on it: :func:`calibrate_noise` (the smallest noise meeting a
target), :func:`audit` (one mechanism audited on the data, with a report for the regulator)
and :func:`compare_options` (every option of a collaboration, Local and Central included, on
the same draws). :class:`Local` and :class:`Central` are the baselines of a comparison.
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
