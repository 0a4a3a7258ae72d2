"""Tests of the attacks by name (skdc/attacks/_registry.py)."""

import pytest

from skdc.attacks import (
    BaseAttack,
    KnownAnchorAttack,
    KnownSecretAttack,
    get_attack_names,
    make_attack,
)
from skdc.metrics import make_attack_scorer
from skdc.utils._sklearn_compat import InvalidParameterError


def test_every_name_makes_an_unfitted_attack_with_its_defaults():
    names = get_attack_names()
    assert names == sorted(names) and len(names) == 11
    for name in names:
        attack = make_attack(name)
        assert isinstance(attack, BaseAttack) and callable(attack.reconstruct), name
        assert make_attack_scorer(name)._attack.get_params() == attack.get_params(), name
    assert [make_attack(e).estimator for e in ("known_anchor", "mp", "procrustes")] == [
        "exact", "mp", "procrustes"]
    assert isinstance(make_attack("known_secret"), KnownSecretAttack)


def test_parameters_go_over_the_names_defaults():
    attack = make_attack("mp", estimator="procrustes")
    assert isinstance(attack, KnownAnchorAttack) and attack.estimator == "procrustes"
    assert make_attack("known_input", n_known=20).n_known == 20


def test_an_unknown_name_is_refused_with_the_names():
    with pytest.raises(InvalidParameterError, match="'attack' parameter of make_attack must be"):
        make_attack("linear")
    with pytest.raises(InvalidParameterError, match="procrustes"):
        make_attack_scorer("linear")
