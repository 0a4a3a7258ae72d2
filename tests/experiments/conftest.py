"""Fixtures and helpers shared by the experiments' tests."""

import pytest
from threadpoolctl import threadpool_limits

from skdc.__main__ import main


@pytest.fixture
def one_blas_thread():
    """One BLAS thread, as the reproductions' draws run: the same numbers on any machine."""
    with threadpool_limits(limits=1):
        yield


def cli(argv, capsys):
    """``skdc ARGV`` in process: ``(status, stdout)``."""
    status = main(argv)
    return status, capsys.readouterr().out
