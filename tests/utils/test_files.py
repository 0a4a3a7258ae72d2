"""The file boundary itself (skdc/utils/_files.py): what each reader refuses, how each writer
publishes, what the cleaner leaves alone. The readers and writers of the rooms are attacked
through their own commands (tests/protocol, tests/datasets, tests/experiments); these tests pin
the rules those rely on, one function at a time."""

import gzip
import os
import stat

import pytest

from skdc.utils._files import (
    FileError,
    check_npy_size,
    ensure_folder,
    open_input,
    open_regular,
    output_mode,
    read_bytes,
    read_text,
    remove_written,
    write_file,
    write_output,
)
from tests._fuzz import CASES, deadline, npy_declaring


class _OurError(FileError):
    """A caller's own error class (as the protocol's UploadError)."""


@pytest.fixture
def regular(tmp_path):
    path = tmp_path / "data.bin"
    path.write_bytes(b"0123456789")
    return path


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


def test_open_regular_refuses_what_is_not_a_regular_file_without_blocking(tmp_path):
    for kind, path in _hostile_paths(tmp_path).items():
        CASES["open_regular"] += 1
        with deadline(10), pytest.raises(_OurError, match="not a regular file") as info:
            open_regular(path, "--data", error=_OurError)
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


def test_write_file_sets_the_mode_before_the_first_byte(tmp_path):
    path = tmp_path / "secret.npz"
    with write_file(path, "--secret-out", mode=0o600) as fh:
        assert stat.S_IMODE(os.fstat(fh.fileno()).st_mode) == 0o600
        assert not path.exists()  # published only when the block ends
        fh.write(b"s")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and path.read_bytes() == b"s"


def test_a_failed_write_leaves_the_output_as_it_was_and_no_temporary_file(tmp_path, regular):
    with pytest.raises(RuntimeError, match="stopped"):
        with write_file(regular, mode=0o644) as fh:
            fh.write(b"half")
            raise RuntimeError("stopped")
    assert regular.read_bytes() == b"0123456789"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.bin"]


def test_a_link_at_the_output_is_replaced_never_written_through(tmp_path, regular):
    out = tmp_path / "out.bin"
    out.symlink_to(regular)
    with write_file(out, mode=0o644) as fh:
        fh.write(b"new")
    assert not out.is_symlink() and out.read_bytes() == b"new"
    assert regular.read_bytes() == b"0123456789"  # the link's target is untouched


@pytest.mark.parametrize("entry", ["file", "link", "dangling link", "pipe"])
def test_an_exclusive_write_refuses_any_entry_at_the_output(tmp_path, regular, entry):
    out = tmp_path / "out.bin"
    if entry == "file":
        out.write_bytes(b"theirs")
    elif entry == "link":
        out.symlink_to(regular)
    elif entry == "dangling link":
        out.symlink_to(tmp_path / "nowhere")
    else:
        os.mkfifo(out)
    CASES["write_file"] += 1
    with pytest.raises(_OurError, match="already exists"):
        with write_file(out, "--out", mode=0o600, exclusive=True, error=_OurError) as fh:
            fh.write(b"ours")
    assert regular.read_bytes() == b"0123456789"
    assert not (tmp_path / "nowhere").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".skdc-")]


def test_a_folder_at_the_output_or_a_missing_parent_is_refused(tmp_path):
    CASES["write_file"] += 2
    with pytest.raises(FileError, match="is an existing folder"):
        with write_file(tmp_path, "--out", mode=0o644):
            pass
    with pytest.raises(FileError, match="does not exist"):
        with write_file(tmp_path / "no" / "out.bin", "--out", mode=0o644):
            pass


def test_output_mode_removes_the_umask_bits():
    old = os.umask(0o077)
    try:
        assert output_mode(0o644) == 0o600
    finally:
        os.umask(old)
    assert output_mode(0o644) == 0o644 & ~old


def test_ensure_folder_creates_parents_and_refuses_files_and_links_when_asked(tmp_path):
    deep = tmp_path / "a" / "b"
    assert ensure_folder(deep) == str(deep) and deep.is_dir()
    (tmp_path / "f").write_bytes(b"")
    CASES["ensure_folder"] += 2
    with pytest.raises(FileError, match="is a file, not a folder"):
        ensure_folder(tmp_path / "f", "--out")
    link = tmp_path / "link"
    link.symlink_to(deep)
    assert ensure_folder(link) == str(link)  # a link to a folder is fine by default
    with pytest.raises(FileError, match="is a link"):
        ensure_folder(link, "--checkpoint", allow_link=False)


def test_remove_written_removes_only_its_own_files(tmp_path):
    assert remove_written(tmp_path / "missing", ["a"]) == []
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("grid.jsonl", "w.pt"):
        (folder / name).write_bytes(b"x")
    assert remove_written(folder, ["grid.jsonl", "w.pt", "other"]) == ["grid.jsonl", "w.pt"]
    assert folder.is_dir() and not any(folder.iterdir())


@pytest.mark.parametrize("intruder", ["a file of someone else", "a link", "a folder",
                                      "a file is_ours rejects"])
def test_remove_written_refuses_a_folder_holding_anything_else_and_removes_nothing(
        tmp_path, intruder):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "grid.jsonl").write_bytes(b"ours")
    names, is_ours = ["grid.jsonl", "w.pt"], None
    if intruder == "a file of someone else":
        (folder / "notes.txt").write_bytes(b"theirs")
    elif intruder == "a link":
        (folder / "w.pt").symlink_to(tmp_path / "elsewhere")
    elif intruder == "a folder":
        (folder / "w.pt").mkdir()
    else:
        (folder / "w.pt").write_bytes(b"theirs")
        is_ours = lambda path: open(path, "rb").read() == b"ours"  # noqa: E731
    CASES["remove_written"] += 1
    with pytest.raises(FileError, match="which skdc did not write; refusing"):
        remove_written(folder, names, is_ours=is_ours)
    assert (folder / "grid.jsonl").read_bytes() == b"ours"


def test_remove_written_refuses_a_file_or_a_link_in_place_of_the_folder(tmp_path):
    (tmp_path / "file").write_bytes(b"")
    (tmp_path / "link").symlink_to(tmp_path)
    for path in (tmp_path / "file", tmp_path / "link"):
        CASES["remove_written"] += 1
        with pytest.raises(FileError, match="is not a folder"):
            remove_written(path, ["file", "link"])
    assert (tmp_path / "file").exists()


# -- .npy headers: the declared size is checked before numpy allocates it ---------------------
@pytest.mark.parametrize("shape, payload", [((10**7, 10**6), bytes(64)), ((3, 2), bytes(40)),
                                            ((2**40,), b"")])
def test_check_npy_size_refuses_a_header_declaring_more_than_the_file_holds(shape, payload):
    import io

    CASES["npy header"] += 1
    blob = npy_declaring(shape, payload)
    with pytest.raises(_OurError) as exc:
        check_npy_size(io.BytesIO(blob), len(blob), "X.npy: --data", error=_OurError)
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


def test_write_output_replaces_a_link_and_refuses_a_path_under_a_file(tmp_path, regular):
    CASES["output link"] += 1
    os.symlink(regular, tmp_path / "out.csv")
    path = write_output(tmp_path / "out.csv", "a,b\n", "--csv")
    assert regular.read_bytes() == b"0123456789"
    assert not os.path.islink(path) and open(path).read() == "a,b\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == output_mode(0o644)
    CASES["output under a file"] += 1
    with pytest.raises(FileError, match=r"cannot write --csv: the folder .* does not exist"):
        write_output(regular / "out.csv", b"x", "--csv")
