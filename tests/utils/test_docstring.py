"""Shared docstring fragments (skdc/utils/_docstring.py): only the named placeholders change, and
a placeholder that is missing is an error, not a silently unchanged docstring."""

import pytest

from skdc.utils._docstring import Substitution


def test_only_the_named_placeholders_are_replaced():
    @Substitution(params="x : int\n        The input.\n")
    def f(x):
        """Sum over {1, 2} of x (a set literal and LaTeX ``\\frac{a}{b}`` keep their braces).

        Parameters
        ----------
        {params}
        """

    assert "{1, 2}" in f.__doc__ and "\\frac{a}{b}" in f.__doc__
    assert "        x : int\n        The input.\n" in f.__doc__
    assert "{params}" not in f.__doc__


def test_a_missing_placeholder_is_refused_with_its_name():
    with pytest.raises(ValueError, match=r"g's docstring has no \{random_state\} to substitute"):
        @Substitution(random_state="random_state : int\n")
        def g():
            """No placeholder here."""


def test_an_object_without_docstring_passes_through():
    def h():
        pass

    assert Substitution(anything="text")(h) is h and h.__doc__ is None
