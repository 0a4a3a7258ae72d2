"""The checks of a release's privacy parameters (skdc/utils/_validation.py): each returns a
float, refuses booleans and non-finite values, and its message names what it expected."""

import math

import numpy as np
import pytest

from skdc.utils._validation import check_delta, check_positive, check_rate


@pytest.mark.parametrize("value", [3, 0.5, np.float32(1e-6), np.int64(7)])
def test_check_positive_returns_a_float(value):
    out = check_positive(value, "sigma")
    assert type(out) is float and out == float(value)


@pytest.mark.parametrize("value", [True, math.nan, math.inf, "1", None])
def test_check_positive_refuses_what_is_not_a_finite_real(value):
    with pytest.raises(TypeError, match="sigma must be a finite real number"):
        check_positive(value, "sigma")


@pytest.mark.parametrize("value", [0, 0.0, -1e-9])
def test_check_positive_refuses_zero_and_negatives(value):
    with pytest.raises(ValueError, match=r"noise_multiplier must be > 0; got noise_multiplier="):
        check_positive(value, "noise_multiplier")


@pytest.mark.parametrize("q", [1, 1.0, 1e-12, 0.25])
def test_check_rate_accepts_the_half_open_unit_interval(q):
    assert check_rate(q) == float(q)


@pytest.mark.parametrize("q", [0, -0.1, 1.0 + 1e-12, 2])
def test_check_rate_refuses_rates_outside_zero_one(q):
    with pytest.raises(ValueError, match=r"sampling rate q must lie in \(0, 1\]"):
        check_rate(q)


@pytest.mark.parametrize("q", [True, False, math.nan, "0.5"])
def test_check_rate_refuses_booleans_and_non_numbers(q):
    with pytest.raises(TypeError, match="sampling rate q must be a real number"):
        check_rate(q)


@pytest.mark.parametrize("delta", [1e-5, 0.5, np.float64(1e-9)])
def test_check_delta_accepts_the_open_unit_interval(delta):
    assert check_delta(delta) == float(delta)


@pytest.mark.parametrize("delta", [0, 1, 1.5, -1e-5, True, math.nan, "1e-5"])
def test_check_delta_refuses_values_outside_zero_one(delta):
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 1\)"):
        check_delta(delta)
