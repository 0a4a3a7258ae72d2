"""Fixtures shared by the tests of the file boundary (tests/utils/test_files.py, test_outputs.py
and test_folders.py)."""

import pytest

from skdc.utils._files import FileError


class _OurError(FileError):
    """A caller's own error class (as the protocol's UploadError)."""


@pytest.fixture
def our_error():
    """A caller's own error class, passed as ``error``: refusals are raised as it."""
    return _OurError


@pytest.fixture
def regular(tmp_path):
    """A regular file of ten bytes, ``b"0123456789"``."""
    path = tmp_path / "data.bin"
    path.write_bytes(b"0123456789")
    return path
