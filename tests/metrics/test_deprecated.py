"""Tests of the deprecated spellings of skdc.metrics' names (skdc/metrics/_deprecated.py)."""

import pytest

import skdc.attacks
import skdc.metrics


def test_metrics_make_attack_warns_and_makes_the_same_attack():
    with pytest.warns(FutureWarning, match=r"skdc\.metrics\.make_attack is deprecated .* 0\.3; "
                                           r"use skdc\.attacks\.make_attack instead"):
        old = skdc.metrics.make_attack("known_input", n_known=20)
    new = skdc.attacks.make_attack("known_input", n_known=20)
    assert type(old) is type(new) and old.get_params() == new.get_params()
    assert "make_attack" in skdc.metrics.__all__
    from skdc.metrics import make_attack  # the old import line keeps working

    with pytest.warns(FutureWarning):
        assert repr(make_attack("mp")) == repr(skdc.attacks.make_attack("mp"))
