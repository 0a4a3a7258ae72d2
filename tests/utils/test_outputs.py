"""The file boundary's writing of one output (skdc/utils/_outputs.py): how each writer
publishes, and that no output replaces a file of another kind that skdc wrote, told by its
bytes (issue 31)."""

import io
import os
import stat
import zipfile

import numpy as np
import pytest

from skdc.utils._files import FileError
from skdc.utils._outputs import (
    check_output,
    output_mode,
    write_file,
    write_npy,
    write_output,
    written_kind,
)
from tests._fuzz import CASES


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
def test_an_exclusive_write_refuses_any_entry_at_the_output(tmp_path, regular, entry,
                                                             our_error):
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
    with pytest.raises(our_error, match="already exists"):
        with write_file(out, "--out", mode=0o600, exclusive=True, error=our_error) as fh:
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


def _npz_with_header(path, header_json):
    """An skdc-like container: a ``header.npy`` member holding JSON bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.frombuffer(header_json, np.uint8))
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.npy", buf.getvalue())


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
