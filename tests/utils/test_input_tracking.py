"""The file boundary's memory of a command's inputs (skdc/utils/_input_tracking.py): no output
replaces a file the command read or is about to read (issue 31)."""

import os

import numpy as np
import pytest

from skdc.utils._files import FileError, read_bytes
from skdc.utils._input_tracking import declare_inputs, track_inputs
from skdc.utils._outputs import check_output, write_file, write_output
from tests._fuzz import CASES


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
