"""Experiment helpers: the Central and Local baselines of data-collaboration comparisons."""

from ._baselines import Central, Local

__all__ = ["Central", "Local"]
