"""The file boundary's entry (skdc/utils/_files.py): what each reader refuses. The readers of
the rooms are attacked through their own commands (tests/protocol, tests/datasets,
tests/experiments); these tests pin the rules those rely on, one function at a time. The
writers are tested in tests/utils/test_outputs.py, the folders in tests/utils/test_folders.py.
"""

import gzip
import os

import pytest

from skdc.utils._files import (
    FileError,
    check_npy_size,
    open_input,
    open_regular,
    peek_regular,
    read_bytes,
    read_text,
)
from tests._fuzz import CASES, deadline, npy_declaring


def _hostile_paths(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    link_to_fifo = tmp_path / "link_to_fifo"
    link_to_fifo.symlink_to(fifo)
    cases = {"a directory": folder, "a named pipe": fifo, "a link to a pipe": link_to_fifo}
    if os.path.exists("/dev/zero"):
        cases["a character device"] = "/dev/zero"
    return cases


def test_open_regular_refuses_what_is_not_a_regular_file_without_blocking(tmp_path,
                                                                          our_error):
    for kind, path in _hostile_paths(tmp_path).items():
        CASES["open_regular"] += 1
        with deadline(10), pytest.raises(our_error, match="not a regular file") as info:
            open_regular(path, "--data", error=our_error)
        assert str(info.value).startswith(f"{path}: --data is "), kind
        assert "\n" not in str(info.value)


def test_open_regular_follows_a_link_to_a_regular_file_and_bounds_its_size(tmp_path, regular):
    link = tmp_path / "link"
    link.symlink_to(regular)
    with open_regular(link) as fh:
        assert fh.read() == b"0123456789"
    CASES["open_regular"] += 1
    with pytest.raises(FileError, match="has 10 bytes, above the limit of 9"):
        open_regular(regular, max_bytes=9)
    CASES["open_regular"] += 1
    with pytest.raises(FileError, match="cannot read the file"):
        open_regular(tmp_path / "missing")


def test_reads_stop_one_byte_past_the_limit_also_after_decompression(tmp_path, regular):
    assert read_bytes(regular, max_bytes=10) == b"0123456789"  # exactly at the limit
    CASES["read_bytes"] += 1
    with pytest.raises(FileError, match="holds more than 9 bytes"):
        read_bytes(regular, max_bytes=9)
    bomb = tmp_path / "bomb.gz"
    with gzip.open(bomb, "wb") as fh:
        fh.write(bytes(10**7))
    assert bomb.stat().st_size < 20_000
    CASES["read_bytes"] += 1
    with open_input(bomb, "--data", max_bytes=1000) as fh:
        with pytest.raises(FileError, match="--data holds more than 1000 bytes"):
            fh.read()
    # undecompressed, the same file is its own few bytes
    assert read_bytes(bomb, max_bytes=20_000, decompress=None) == bomb.read_bytes()
    broken = tmp_path / "broken.gz"
    broken.write_bytes(bomb.read_bytes()[:40])
    CASES["read_bytes"] += 1
    with pytest.raises(FileError, match="cannot be decompressed"):
        read_bytes(broken, max_bytes=10**8)


@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="no /proc here")
def test_a_file_delivering_more_than_its_size_is_refused_at_its_first_bytes(tmp_path):
    # /proc/self/pagemap is a regular file reporting 0 bytes that never ends: reached through
    # a link with a table's name, it is refused before its bytes take memory
    link = tmp_path / "rows.csv"
    link.symlink_to("/proc/self/pagemap")
    def npy_header():
        with open_regular(link) as fh:
            check_npy_size(fh, 0, f"{link}: --data")

    for read in (lambda: read_bytes(link, "--data", max_bytes=2**40),
                 lambda: read_bytes(link, "--data", max_bytes=2**40, decompress=None),
                 npy_header):
        CASES["read_bytes"] += 1
        with deadline(), pytest.raises(FileError, match="delivers more bytes than the 0") as info:
            read()
        assert str(info.value).startswith(f"{link}: --data ") and "\n" not in str(info.value)


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc here")
def test_a_read_error_is_one_line_not_an_oserror(tmp_path):
    link = tmp_path / "rows.csv"
    link.symlink_to("/proc/self/mem")  # reading at offset 0 is an input/output error
    CASES["read_bytes"] += 1
    with pytest.raises(FileError, match=r"--data cannot be read \(.*\); it is no ordinary"):
        read_bytes(link, "--data", max_bytes=2**30)


def test_a_file_above_the_limit_is_refused_before_a_byte_is_read(tmp_path, regular):
    CASES["read_bytes"] += 1
    with pytest.raises(FileError, match=r"holds more than 9 bytes \(10\), the most accepted; "
                       r"is it the right file\? Raise it\.$"):
        read_text(regular, "the config", max_bytes=9, advice="Raise it.")


def test_a_large_bomb_is_measured_holding_nothing_then_read_in_one_buffer(tmp_path,
                                                                          monkeypatch):
    import skdc.utils._files as files

    monkeypatch.setattr(files, "_HOLD", 1000)  # streams past it are measured first
    ok, bomb = tmp_path / "ok.gz", tmp_path / "bomb.gz"
    content = bytes(range(256)) * 40
    with gzip.open(ok, "wb") as fh:
        fh.write(content)
    with gzip.open(bomb, "wb") as fh:
        fh.write(bytes(10**7))
    assert read_bytes(ok, max_bytes=len(content)) == content  # measured, then read again
    CASES["read_bytes"] += 1
    with pytest.raises(FileError, match="holds more than 100000 bytes after decompression"):
        read_bytes(bomb, "--data", max_bytes=100_000)


def test_peek_regular_opens_regular_files_only(tmp_path):
    """No link, folder or pipe is opened (a pipe would block), and nothing is noted as an
    input."""
    (tmp_path / "f").write_bytes(b"abc")
    with peek_regular(tmp_path / "f") as fh:
        assert fh.read() == b"abc"
    os.symlink(tmp_path / "f", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    for name in ("link", "fifo", "missing"):
        assert peek_regular(tmp_path / name) is None
    assert peek_regular(tmp_path) is None


# -- .npy headers: the declared size is checked before numpy allocates it ---------------------
@pytest.mark.parametrize("shape, payload", [((10**7, 10**6), bytes(64)), ((3, 2), bytes(40)),
                                            ((2**40,), b"")])
def test_check_npy_size_refuses_a_header_declaring_more_than_the_file_holds(shape, payload,
                                                                            our_error):
    import io

    CASES["npy header"] += 1
    blob = npy_declaring(shape, payload)
    with pytest.raises(our_error) as exc:
        check_npy_size(io.BytesIO(blob), len(blob), "X.npy: --data", error=our_error)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"X.npy: --data declares shape {shape}")
    assert f"but holds {len(payload)}" in msg


def test_check_npy_size_passes_a_whole_array_and_leaves_garbage_to_the_reader():
    import io

    import numpy as np

    buf = io.BytesIO()
    np.save(buf, np.arange(6.0).reshape(3, 2))
    blob = buf.getvalue()
    shape, dtype = check_npy_size(io.BytesIO(blob), len(blob), "X.npy")
    assert shape == (3, 2) and dtype == np.float64
    assert check_npy_size(io.BytesIO(b"not an npy file"), 15, "X.npy") is None
