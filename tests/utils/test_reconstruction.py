"""The reconstruction ratio rho (skdc/utils/_reconstruction.py), shared by the ratio scorer of
skdc.metrics and the self-scoring attacks below it."""

import math

import numpy as np
import pytest

from skdc.utils._reconstruction import reconstruction_ratio


def test_ratio_is_the_rms_error_per_record_over_the_trace():
    rng = np.random.RandomState(0)
    Z, Z_hat = rng.standard_normal((7, 3)), rng.standard_normal((7, 3))
    expected = math.sqrt(sum(np.sum((z - w) ** 2) for z, w in zip(Z, Z_hat)) / 7 / 2.5)
    assert reconstruction_ratio(Z, Z_hat, 2.5) == pytest.approx(expected, rel=1e-12)


def test_images_count_as_one_record_each():
    rng = np.random.RandomState(1)
    Z, Z_hat = rng.standard_normal((4, 2, 3)), rng.standard_normal((4, 2, 3))
    assert reconstruction_ratio(Z, Z_hat, 3.0) == pytest.approx(
        reconstruction_ratio(Z.reshape(4, 6), Z_hat.reshape(4, 6), 3.0), rel=1e-12)


def test_mismatched_shapes_are_refused():
    with pytest.raises(ValueError, match=r"shapes differ: \(3, 2\) vs \(2, 3\)"):
        reconstruction_ratio(np.ones((3, 2)), np.ones((2, 3)), 1.0)


@pytest.mark.parametrize("trace", [0.0, -1.0, math.inf, math.nan, True, "1"])
def test_a_trace_that_is_not_a_finite_positive_number_is_refused(trace):
    with pytest.raises(ValueError, match="must be a finite number > 0"):
        reconstruction_ratio(np.ones((2, 2)), np.zeros((2, 2)), trace)
