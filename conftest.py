"""Test configuration shared by the suite and the doctests."""

import os

import numpy as np
import pytest


def pytest_configure(config):
    # NumPy 2 prints scalars as np.float64(...); doctests show plain numbers
    np.set_printoptions(legacy="1.25")


@pytest.fixture
def global_random_seed():
    """Seed for seed-robust tests: 42, or SKDC_TESTS_GLOBAL_RANDOM_SEED (an int)."""
    return int(os.environ.get("SKDC_TESTS_GLOBAL_RANDOM_SEED", "42"))


def pytest_collection_modifyitems(config, items):
    # The optional heavy stacks are imported lazily by the modules that need them.
    pass
