"""One warning for every deprecated spelling (skdc/utils/_deprecation.py)."""

import pytest

from skdc.utils._deprecation import (
    REMOVED_IN,
    renamed_argument,
    renamed_attribute,
    renamed_function,
    warn_renamed,
)


def test_the_warning_names_both_spellings_and_the_release():
    with pytest.warns(FutureWarning, match=rf"old= is deprecated .* skdc {REMOVED_IN}; use new="):
        warn_renamed("old=", "new=")


def test_a_renamed_argument_takes_either_spelling_but_not_both():
    assert renamed_argument("old", None, "new", 3) == 3
    with pytest.warns(FutureWarning, match="old= is deprecated"):
        assert renamed_argument("old", 4, "new", None) == 4
    with pytest.raises(TypeError, match="pass new= only"):
        renamed_argument("old", 4, "new", 3)
    sentinel = object()
    assert renamed_argument("old", sentinel, "new", None, unset=sentinel) is None


def test_a_renamed_function_warns_and_calls_through():
    def double(x):
        return 2 * x

    old = renamed_function(double, "skdc.metrics.twice")
    with pytest.warns(FutureWarning, match="skdc.metrics.twice is deprecated"):
        assert old(21) == 42
    assert old.__name__ == "double" and "Deprecated alias" in old.__doc__


def test_a_renamed_attribute_warns_and_reads_the_new_one():
    class Fitted:
        def __init__(self):
            self.new_ = [1, 2]
        old_ = renamed_attribute("old_", "new_")

    fitted = Fitted()
    with pytest.warns(FutureWarning, match=r"Fitted.old_ is deprecated .* use Fitted.new_"):
        assert fitted.old_ is fitted.new_


def test_the_warning_points_at_the_users_line():
    import warnings

    from sklearn.utils._param_validation import validate_params

    @validate_params({"partition": [None, list]}, prefer_skip_nested_validation=True)
    def audit_like(partition=None, participant=None):
        return renamed_argument("partition", partition, "participant", participant)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        audit_like(partition=[0])  # this line
    assert caught[0].filename == __file__
