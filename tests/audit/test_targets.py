"""Who is who in a calibrated deployment and what its attacks are judged against
(skdc/audit/_targets.py): roles, participant ids, the attacker's own guess of a column, the
error ratio and the per-attack targets."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skdc.audit._targets import (
    _check_ids,
    _error_ratio,
    _judged,
    _prior_guess,
    _resolve_target,
    _targets,
)


def test_the_attacked_party_is_the_smallest_id_not_colluding():
    assert _resolve_target(0, None, 5) == 1
    assert _resolve_target([1, 2], None, 5) == 0
    assert _resolve_target(0, 3, 5) == 3
    with pytest.raises(ValueError, match="every participant colludes"):
        _resolve_target([0, 1], None, 2)
    with pytest.raises(ValueError):
        _resolve_target(0, 0, 5)  # the colluder cannot be its own target


def test_ids_are_one_integer_per_row_in_range():
    assert_array_equal(_check_ids([0, 2, 1], 3, 3, "participant"), [0, 2, 1])
    with pytest.raises(ValueError, match=r"one integer participant id per row \(3\)"):
        _check_ids([0.0, 1.0, 1.0], 3, 2, "participant")
    with pytest.raises(ValueError, match="ids 0 .. 1; got ids from 0 to 2"):
        _check_ids([0, 1, 2], 3, 2, "participant")
    with pytest.raises(ValueError, match="got ids from -1"):
        _check_ids([0, -1], 2, None, "participant")


def test_the_prior_guess_is_the_colluders_mean_per_label():
    x_colluder = np.array([1.0, 3.0, 10.0])
    y_colluder = np.array([0, 0, 1])
    guess = _prior_guess(x_colluder, y_colluder, np.array([1, 0, 2]), 3)
    # label 1: 10; label 0: mean(1, 3) = 2; label 2, which the colluders lack: mean of all
    assert_allclose(guess, [10.0, 2.0, 14.0 / 3.0], rtol=1e-12)
    assert_allclose(_prior_guess(x_colluder, None, None, 2), [14.0 / 3.0] * 2, rtol=1e-12)


def test_the_error_ratio_is_the_mse_over_the_prior_mse():
    truth = np.array([0.0, 1.0, 2.0])
    assert_allclose(_error_ratio(truth, truth + 0.5, truth + 1.0), 0.25, rtol=1e-12)
    assert _error_ratio(truth, truth, truth) == 1.0
    assert _error_ratio(truth, truth + 1.0, truth) == 1e6
    assert _error_ratio(truth, np.full(3, np.nan), truth + 1.0) == 0.0


def test_one_target_per_attack():
    assert _targets(0.5, ["a", "b"]) == {"a": 0.5, "b": 0.5}
    assert _targets({"a": 0.1, "b": 0.2}, ["a", "b"]) == {"a": 0.1, "b": 0.2}
    with pytest.raises(ValueError, match="one target per attack"):
        _targets({"a": 0.1}, ["a", "b"])
    with pytest.raises(TypeError, match="got True for a"):
        _targets(True, ["a"])
    for bad in (-0.1, math.inf, math.nan):
        with pytest.raises(ValueError, match="finite error >= 0"):
            _targets(bad, ["a"])


def test_the_judged_columns_and_their_targets():
    attacks, targets, named = _judged(["procrustes"], 0, 1, None, None, 0.15, None, None)
    assert named == ["procrustes"]
    assert set(attacks) == {"procrustes", "procrustes unlinked"}
    assert_allclose(targets["procrustes unlinked"], 0.85, rtol=1e-12)
    with pytest.raises(ValueError, match="Nothing is judged"):
        _judged(["procrustes"], 0, 1, None, None, None, None, None)
    with pytest.raises(ValueError, match="sensitive must be a column index from 0 to 3"):
        _judged(["procrustes"], 0, 1, None, 0.5, None, 4, None, n_features=4)
    with pytest.raises(ValueError, match="name it with sensitive="):
        _judged(["procrustes"], 0, 1, None, 0.5, None, None, 0.1)
