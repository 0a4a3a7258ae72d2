"""Offline data, loaders for local files of the papers' data sets, and partitions."""

from ._partition import partition

__all__ = ["partition"]
