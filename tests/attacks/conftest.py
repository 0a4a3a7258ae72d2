"""Run this room's tests with one BLAS thread: the matrices are tiny, and on a shared machine
oversubscribed BLAS threads make them tens of times slower."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield
