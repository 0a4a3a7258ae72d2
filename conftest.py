"""Test configuration shared by the suite and the doctests."""

import collections
import os

import numpy as np
import pytest


def pytest_configure(config):
    # NumPy 2 prints scalars as np.float64(...); doctests show plain numbers
    np.set_printoptions(legacy="1.25")
    # hostile inputs the protocol fuzz suite tried, by kind (tests/protocol/conftest.py)
    config.skdc_fuzz_cases = collections.Counter()
    # pytest-xdist: the workers share the cores, so each keeps its share of BLAS threads
    # (several workers each running a full BLAS thread pool oversubscribe the machine)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers:
        from threadpoolctl import threadpool_limits

        threadpool_limits(max(1, (os.cpu_count() or 1) // workers), user_api="blas")


# tests that run UMAP in the test process (its numba kernels compile in each process that first
# uses them: about 25 s), and the rest of the embedding tests' module; they share one
# pytest-xdist worker (--dist loadgroup), so the suite compiles the kernels once
_UMAP_TESTS = ("umap", "reproduce_kti_on_digits", "mechanisms/test_embedding.py")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    for item in items:
        nodeid = item.nodeid.lower()
        if (any(key in nodeid for key in _UMAP_TESTS)
                or "umap_ready" in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("umap"))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    # pytest-xdist: a worker finished; add the fuzz counts it sent
    node.config.skdc_fuzz_cases.update(getattr(node, "workeroutput", {}).get("skdc_fuzz_cases", {}))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    counts = config.skdc_fuzz_cases
    if sum(counts.values()):
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        terminalreporter.write_line(
            f"skdc protocol fuzz: {sum(counts.values())} hostile cases tried ({parts})")


@pytest.fixture
def global_random_seed():
    """Seed for seed-robust tests: 42, or SKDC_TESTS_GLOBAL_RANDOM_SEED (an int)."""
    return int(os.environ.get("SKDC_TESTS_GLOBAL_RANDOM_SEED", "42"))
