"""Utilities shared by every room of skdc: linear algebra primitives."""

from ._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__, {"._linalg": ["center", "haar_orthogonal", "polar", "polar_batched"]})
