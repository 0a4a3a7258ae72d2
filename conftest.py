"""Test configuration shared by the suite and the doctests."""

import collections
import os

import numpy as np
import pytest


def pytest_configure(config):
    # NumPy 2 prints scalars as np.float64(...); doctests show plain numbers
    np.set_printoptions(legacy="1.25")
    # hostile inputs the fuzz tests tried, by reader (tests/_fuzz.py)
    config.skdc_fuzz_cases = collections.Counter()
    # pytest-xdist: the workers share the cores, so each keeps its share of BLAS threads
    # (several workers each running a full BLAS thread pool oversubscribe the machine)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers:
        from threadpoolctl import threadpool_limits

        threadpool_limits(max(1, (os.cpu_count() or 1) // workers), user_api="blas")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    # pytest-xdist: a worker finished; add the fuzz counts it sent
    node.config.skdc_fuzz_cases.update(getattr(node, "workeroutput", {}).get("skdc_fuzz_cases", {}))


def pytest_sessionfinish(session):
    # hand the fuzz counts of this process to the report (and, under pytest-xdist, from a
    # worker to the controller process, which collects no test)
    import sys

    fuzz = sys.modules.get("tests._fuzz")
    cases = dict(fuzz.CASES) if fuzz is not None else {}
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["skdc_fuzz_cases"] = cases
    else:
        session.config.skdc_fuzz_cases.update(cases)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    counts = config.skdc_fuzz_cases
    if sum(counts.values()):
        parts = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
        terminalreporter.write_line(
            f"skdc fuzz: {sum(counts.values())} hostile cases tried ({parts})")


@pytest.fixture
def global_random_seed():
    """Seed for seed-robust tests: 42, or SKDC_TESTS_GLOBAL_RANDOM_SEED (an int)."""
    return int(os.environ.get("SKDC_TESTS_GLOBAL_RANDOM_SEED", "42"))
