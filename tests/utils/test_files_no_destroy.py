"""The file boundary's rule that outputs destroy nothing a command needs (issue 31)."""

import io
import os
import zipfile

import numpy as np
import pytest

from skdc.utils._files import (
    FileError,
    check_output,
    declare_inputs,
    ensure_folder,
    read_bytes,
    remove_written,
    track_inputs,
    write_file,
    write_npy,
    write_output,
    written_kind,
)
from tests._fuzz import CASES


def _npz_with_header(path, header_json):
    """An skdc-like container: a ``header.npy`` member holding JSON bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.frombuffer(header_json, np.uint8))
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.npy", buf.getvalue())


def test_an_input_is_never_an_output_inside_track_inputs(tmp_path):
    data = tmp_path / "X.csv"
    data.write_text("a\n1\n")
    with track_inputs() as seen:
        read_bytes(data, "--data", max_bytes=100)
        assert list(seen.values()) == [(str(data), "--data")]
        for exclusive in (False, True):
            with pytest.raises(FileError, match=r"X.csv: --out is one of this command's "
                                                r"inputs \(--data\).*even with --force"):
                write_output(data, "b\n", "--out") if not exclusive else \
                    check_output(data, "--out", exclusive=True)
        # a link, or a hard link, to the input is the same file
        os.symlink(data, tmp_path / "soft")
        os.link(data, tmp_path / "hard")
        for name in ("soft", "hard"):
            with pytest.raises(FileError, match=f"{name}: --out is one of this command's "
                                                rf"inputs \(--data, {data}\)"):
                check_output(tmp_path / name, "--out")
        # a checkpoint rewrites its own state
        with write_file(data, "checkpoint", mode=0o644, rewrite=True) as fh:
            fh.write(b"c\n")
    # outside the block the file is an ordinary output again
    write_output(data, "d\n", "--out")
    assert data.read_text() == "d\n"
    CASES["output onto an input or a secret"] += 1


def test_declared_inputs_are_refused_before_they_are_read(tmp_path):
    data = tmp_path / "X.npy"
    np.save(data, np.ones(3))
    with track_inputs():
        declare_inputs([(data, "--data"), (None, "--labels"), (tmp_path / "none", "--map")])
        with pytest.raises(FileError, match=r"--out is one of this command's inputs \(--data"):
            check_output(data, "--out")
    declare_inputs([(data, "--data")])  # outside a command: nothing noted
    check_output(data, "--out")


def test_written_kind_reads_the_bytes(tmp_path):
    _npz_with_header(tmp_path / "s.bin", b'{"format": "skdc-secret", "version": 2}')
    assert written_kind(tmp_path / "s.bin") == "skdc-secret"
    with write_file(tmp_path / "a.npy", mode=0o600, kind="skdc-anchor") as fh:
        write_npy(fh, np.arange(6.0).reshape(3, 2), kind="skdc-anchor")
    assert written_kind(tmp_path / "a.npy") == "skdc-anchor"
    np.testing.assert_allclose(np.load(tmp_path / "a.npy"), np.arange(6.0).reshape(3, 2),
                               rtol=0)
    np.save(tmp_path / "plain.npy", np.ones(2))
    _npz_with_header(tmp_path / "other.npz", b'{"format": "not-skdc"}')
    os.symlink(tmp_path / "s.bin", tmp_path / "link")
    for name in ("plain.npy", "other.npz", "link", "missing"):
        assert written_kind(tmp_path / name) is None, name
    assert written_kind(tmp_path) is None


_NOISE = np.random.RandomState(0).bytes(200)  # fixed bytes: the xdist workers collect alike


@pytest.mark.parametrize("blob", [
    b"", b"PK\x03\x04", b"PK\x03\x04" + _NOISE, b"\x93NUMPY", b"\x93NUMPY\x01\x00\xff",
    b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'} # skdc-kind:", _NOISE[:100],
], ids=["empty", "zip magic", "zip magic and noise", "npy magic", "npy version",
        "npy header with an empty kind", "noise"])
def test_written_kind_of_a_damaged_file_is_none(tmp_path, blob):
    (tmp_path / "f").write_bytes(blob)
    assert written_kind(tmp_path / "f") is None
    CASES["written_kind"] += 1


def test_another_kind_is_refused_even_when_not_exclusive(tmp_path):
    _npz_with_header(tmp_path / "secret.npz", b'{"format": "skdc-secret"}')
    before = (tmp_path / "secret.npz").read_bytes()
    for kind in (None, "skdc-map", "skdc-anchor"):
        with pytest.raises(FileError, match="secret.npz: --out would replace a participant's "
                                            "secret that skdc wrote.*even with --force"):
            with write_file(tmp_path / "secret.npz", "--out", mode=0o600, kind=kind) as fh:
                fh.write(b"x")
    assert (tmp_path / "secret.npz").read_bytes() == before
    # its own kind: replaced when not exclusive, refused when exclusive
    with pytest.raises(FileError, match="already exists"):
        check_output(tmp_path / "secret.npz", "--out", exclusive=True, kind="skdc-secret")
    with write_file(tmp_path / "secret.npz", "--out", mode=0o600, kind="skdc-secret") as fh:
        fh.write(b"new")
    assert (tmp_path / "secret.npz").read_bytes() == b"new"


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_ensure_folder_mode_whatever_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        ensure_folder(tmp_path / "a" / "b", "--out", mode=0o700)
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "a" / "b").st_mode & 0o777 == 0o700
    assert os.stat(tmp_path / "a").st_mode & 0o777 == 0o777 & ~umask
    # an existing folder is left as it is
    (tmp_path / "c").mkdir(mode=0o755)
    ensure_folder(tmp_path / "c", "--out", mode=0o700)
    assert os.stat(tmp_path / "c").st_mode & 0o777 == 0o755 & ~os.umask(os.umask(0))


def test_remove_written_keep_others(tmp_path):
    for name in ("map_3.npz", "notes.txt"):
        (tmp_path / name).write_text("x")
    assert remove_written(tmp_path, ["map_3.npz"], keep_others=True) == ["map_3.npz"]
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]
    (tmp_path / "map_4.npz").write_text("x")
    with pytest.raises(FileError, match="map_4.npz"):  # not recognised: nothing removed
        remove_written(tmp_path, ["map_4.npz"], keep_others=True, is_ours=lambda p: False)
    assert sorted(os.listdir(tmp_path)) == ["map_4.npz", "notes.txt"]


def test_peek_regular_opens_regular_files_only(tmp_path):
    """No link, folder or pipe is opened (a pipe would block), and nothing is noted as an
    input."""
    from skdc.utils._files import peek_regular

    (tmp_path / "f").write_bytes(b"abc")
    with peek_regular(tmp_path / "f") as fh:
        assert fh.read() == b"abc"
    os.symlink(tmp_path / "f", tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    for name in ("link", "fifo", "missing"):
        assert peek_regular(tmp_path / name) is None
    assert peek_regular(tmp_path) is None


def test_a_run_record_that_is_a_folder_or_a_fifo_is_no_record(tmp_path):
    """A hostile ``skdc-run.json`` (a folder, a pipe) reads as no record: no traceback, no
    block; the folder's check then refuses the report files no record describes."""
    from skdc.utils._files import RUN_RECORD, check_run_folder

    for make in (os.mkdir, os.mkfifo):
        folder = tmp_path / make.__name__
        folder.mkdir()
        make(folder / RUN_RECORD)
        (folder / "report.html").write_text("old")
        with pytest.raises(FileError, match="report.html"):
            check_run_folder(folder, {"run": 1}, ["report.html"])
        CASES["run record"] += 1
