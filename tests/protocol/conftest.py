"""A guard against hanging readers, shared with every fuzz test (tests/_fuzz.py)."""

from tests._fuzz import deadline

__all__ = ["deadline"]
