"""The privacy room's public functions validate their parameters as sklearn's do."""

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from skdc import privacy

# One wrong call per public function: (name, args, kwargs).
WRONG_CALLS = [
    ("trace_ucb", (np.ones((4, 2)), -1.0), {}),
    ("mc_constant", (0, 0.5, 1.0), {}),
    ("mc_margin", (1.0, 1, 10, 2, 4, 1.5), {}),
    ("plugin_entropy", (np.ones((4, 1)), 0.0, 2), {}),
    ("sampling_margin", (1, 4, 0.025), {}),
    ("adaptive_threshold", (0.0,), {}),
    ("auto_sketch_rows", (0,), {}),
    ("calibrate_gaussmix", (0, 1.0, 1e-6, False), {}),
    ("gaussmix_epsilon", (1, 10.0, 1e-5), {"conversion": "best"}),
    ("gaussmix_rdp", (2.0, "3", 5.0), {}),
    ("paper_budget", (-1.0, 5.0, 2, 1e-5), {}),
    ("mechanism_leakage_bits", (object(), -1.0), {}),
    ("shannon_lower_bound", (1.0, 1.0, 0), {}),
    ("per_block_bound", (None, np.ones((2, 2)), [0, 1], -1.0), {}),
    ("hadamard", (0,), {}),
    ("apply_hadamard", (np.ones((2, 2)), "H"), {}),
    ("hadamard_factors", (0,), {}),
    ("hadamard_order", (0,), {}),
    ("binary_symmetric_leakage", (1.5, 0.9), {}),
    ("rdp_to_dp", ([0.5], [2.0], 1e-5), {"conversion": "best"}),
    ("subsampled_gaussian_kl", (1.5, 1.0), {}),
    ("subsampled_gaussian_rdp", (0.5, 1.0, -1), {}),
]


@pytest.mark.parametrize("name, args, kwargs", WRONG_CALLS, ids=[c[0] for c in WRONG_CALLS])
def test_public_function_validates_its_parameters(name, args, kwargs):
    with pytest.raises(InvalidParameterError, match=f"of {name} must be"):
        getattr(privacy, name)(*args, **kwargs)
