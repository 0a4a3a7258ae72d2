"""skdc's one ``.npy`` reader (skdc.utils._npy): a plain array as saved, or one line naming the
file and what it is; never an unpickling, never an allocation the file cannot fill."""

import io
import os

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc.utils._files import FileError
from skdc.utils._npy import npy_bytes, npy_header, read_npy


class _Refusal(FileError):
    """A caller's own exception class (the protocol's ``UploadError``)."""


@pytest.mark.parametrize("arr", [np.arange(12, dtype=np.uint8).reshape(3, 4),
                                 np.asfortranarray(np.random.RandomState(0).rand(3, 4)),
                                 np.array(["a", "bc"]), np.zeros((0, 3))])
def test_reads_the_array_as_saved(tmp_path, arr):
    np.save(tmp_path / "a.npy", arr)
    got = read_npy(tmp_path / "a.npy", "--data", max_bytes=10**6)
    assert got.dtype == arr.dtype and got.shape == arr.shape
    assert_array_equal(got, arr)


def _header_of(declared):
    """A version 2 ``.npy`` header field declaring ``declared`` bytes, and as many spaces."""
    return b"\x93NUMPY\x02\x00" + declared.to_bytes(4, "little") + b" " * declared


@pytest.mark.parametrize("case, words", [
    ("csv", ["is not a .npy file (it looks like text: a CSV?", "numpy.loadtxt"]),
    ("huge header", ["the .npy header declares 20000 bytes", "safety limit of 10000"]),
    ("pickle", ["dtype object is not a plain numeric or string dtype", "pickled"]),
    ("structured", ["is not a plain numeric or string dtype"]),
    ("truncated", ["declares shape (4, 3) of float64 (96 bytes) but the file holds 88",
                   "truncated or has trailing bytes"]),
    ("trailing", ["but the file holds 104", "trailing bytes"]),
    ("too large", ["has 224 bytes, above the limit 200. Raise it."]),
    ("folder", ["not a regular file"]),
])
def test_refusals_are_one_line_naming_file_and_what(tmp_path, case, words):
    path = tmp_path / "X.npy"
    X = np.ones((4, 3))
    if case == "csv":
        np.savetxt(path, X, delimiter=",")
    elif case == "huge header":
        path.write_bytes(_header_of(20000))
    elif case == "pickle":
        np.save(path, np.array([object()] * 3), allow_pickle=True)
    elif case == "structured":
        np.save(path, np.zeros(3, dtype=[("a", "f8"), ("b", "i4")]))
    elif case == "folder":
        path.mkdir()
    else:
        np.save(path, X)
        data = path.read_bytes()
        path.write_bytes({"truncated": data[:-8], "trailing": data + bytes(8)}.get(case, data))
    max_bytes = 200 if case == "too large" else 10**6
    with pytest.raises(_Refusal) as exc:
        read_npy(path, "--data", max_bytes=max_bytes, error=_Refusal, advice="Raise it.")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"{path}: --data"), msg
    for word in words:
        assert word in msg, (word, msg)


def test_a_header_declaring_more_than_the_file_holds_allocates_nothing(tmp_path):
    path = tmp_path / "X.npy"
    buf = io.BytesIO()
    np.lib.format.write_array_header_2_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": (10**7, 10**6)})
    path.write_bytes(buf.getvalue() + bytes(64))
    with pytest.raises(FileError, match=r"declares shape \(10000000, 1000000\) of float64 "
                                        r"\(80000000000000 bytes\) but the file holds 64"):
        read_npy(path, "--data", max_bytes=10**6)


def test_a_fortran_member_is_refused_unless_allowed():
    buf = io.BytesIO()
    np.save(buf, np.asfortranarray(np.ones((2, 3))))
    buf.seek(0)
    with pytest.raises(FileError, match="member: Fortran-ordered array"):
        npy_header(buf, "member")
    buf.seek(0)
    assert npy_header(buf, "member", allow_fortran=True)[2]


def test_npy_bytes_is_exact_beyond_int64():
    assert npy_bytes((2**40, 2**40), np.dtype("float64")) == 2**83


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(FileError, match="named pipe"):
        read_npy(tmp_path / "pipe", "--data", max_bytes=100)
