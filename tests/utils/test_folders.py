"""The file boundary's folders of outputs (skdc/utils/_folders.py): how a folder is created or
refused, what the cleaner leaves alone, and a run record no run wrote."""

import os

import pytest

from skdc.utils._files import FileError
from skdc.utils._folders import RUN_RECORD, check_run_folder, ensure_folder, remove_written
from tests._fuzz import CASES


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


def test_a_run_record_that_is_a_folder_or_a_fifo_is_no_record(tmp_path):
    """A hostile ``skdc-run.json`` (a folder, a pipe) reads as no record: no traceback, no
    block; the folder's check then refuses the report files no record describes."""
    for make in (os.mkdir, os.mkfifo):
        folder = tmp_path / make.__name__
        folder.mkdir()
        make(folder / RUN_RECORD)
        (folder / "report.html").write_text("old")
        with pytest.raises(FileError, match="report.html"):
            check_run_folder(folder, {"run": 1}, ["report.html"])
        CASES["run record"] += 1
