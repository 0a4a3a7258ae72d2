"""``parse_model_params``: the one reader of ``--model-param`` (``analyst fit`` and ``audit``)."""

import pytest

from skdc.utils._params import parse_model_params


def test_values_are_json_or_kept_as_strings():
    got = parse_model_params(["max_iter=200", "class_weight=balanced", "C=1e-2",
                              "fit_intercept=false", "class_weight=null"])
    assert got == {"max_iter": 200, "class_weight": None, "C": 0.01, "fit_intercept": False}
    assert parse_model_params(None) == {}


@pytest.mark.parametrize("word", ["oops", "=1", "1x=2", "a b=3"])
def test_a_word_that_is_no_setting_names_the_flag(word):
    with pytest.raises(ValueError, match=r"^--model-param takes key=value"):
        parse_model_params([word])


def test_both_commands_read_the_flag_through_it():
    from skdc.audit import _cli as _audit_cli
    from skdc.protocol import _cli

    assert _cli.parse_model_params is parse_model_params
    assert _audit_cli.parse_model_params is parse_model_params
