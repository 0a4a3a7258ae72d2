"""Fixtures for the skdc.nn tests: fixed torch seeds, at most two torch threads, a small net."""

import pytest

try:  # the test modules skip themselves without torch (pytest.importorskip)
    import torch
except ImportError:  # pragma: no cover
    torch = None


@pytest.fixture(autouse=True)
def seeds_fixed():
    """Seed torch's global generator for every test (skorch/tests/conftest.py)."""
    if torch is None:  # pragma: no cover
        yield
        return
    torch.set_num_threads(2)
    state = torch.random.get_rng_state()
    torch.manual_seed(0)
    yield
    torch.random.set_rng_state(state)


@pytest.fixture(scope="session")
def digits():
    """Small digits task: 240 rows scaled to [0, 1] (3 classes to keep nets tiny)."""
    import numpy as np
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    keep = np.isin(y, [0, 1, 2])
    return (X[keep] / 16.0)[:240], y[keep][:240]


@pytest.fixture(scope="session")
def small_cnn():
    """A factory of small seeded CPU utility CNNs: ``small_cnn(**params)`` is a
    ``RepresentationCNN`` of 2 epochs and batches of 64, ``params`` over those."""
    from skdc.nn import RepresentationCNN

    def make(**params):
        return RepresentationCNN(**{**dict(max_epochs=2, batch_size=64, device="cpu",
                                           random_state=0), **params})

    return make
