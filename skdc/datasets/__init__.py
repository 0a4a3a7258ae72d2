"""Offline data, loaders for local files of the papers' data sets and of your own tables, and
partitions."""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
