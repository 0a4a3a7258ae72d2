"""Utilities shared by every room of skdc: linear algebra primitives."""

from ._linalg import center, haar_orthogonal, polar, polar_batched

__all__ = ["center", "haar_orthogonal", "polar", "polar_batched"]
