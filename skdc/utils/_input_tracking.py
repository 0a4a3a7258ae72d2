"""The file boundary's memory of a command's inputs, so that no output replaces one of them.

The command line opens :func:`track_inputs` around every command: while it runs, every regular
file opened for reading (:func:`~skdc.utils._files.open_regular`, under every reader) is noted
by device and inode, and :func:`declare_inputs` notes the files a command is about to read.
:func:`~skdc.utils._outputs.check_output` (under every writer) refuses an output that is one of
them, whatever its name or the links to it, even with ``--force`` (the developer guide's "file
boundary": never destroy what a command needs).
"""

# Licence: BSD 3 clause

import contextlib
import os
import stat
import threading

__all__ = ["declare_inputs", "track_inputs"]

# One {(st_dev, st_ino): (path, what)} per open track_inputs block (the command line opens one
# around every command): every regular file opened for reading is noted in each.
_INPUTS_LOCK = threading.Lock()
_INPUTS = []


@contextlib.contextmanager
def track_inputs():
    """Remember every file read while the block runs: no output may replace one of them.

    The command line opens one around every command; :func:`open_regular` (under every reader)
    notes each regular file it opens by device and inode, and :func:`check_output` (under
    every writer) refuses an output that is one of them, whatever its name or the links to it.

    Yields
    ------
    inputs : dict of {(int, int): (str, str)}
        ``{(st_dev, st_ino): (path, what)}`` of the files read so far.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, read_bytes
    >>> from skdc.utils._input_tracking import track_inputs
    >>> from skdc.utils._outputs import write_output
    >>> path = os.path.join(tempfile.mkdtemp(), "X.csv")
    >>> _ = write_output(path, "a\\n1\\n")
    >>> with track_inputs():
    ...     _ = read_bytes(path, "--data", max_bytes=100)
    ...     try:
    ...         write_output(path, "b\\n2\\n", "--out")
    ...     except FileError as exc:
    ...         print(str(exc).split(": ", 1)[1][:41])
    --out is one of this command's inputs (--
    """
    seen = {}
    with _INPUTS_LOCK:
        _INPUTS.append(seen)
    try:
        yield seen
    finally:
        with _INPUTS_LOCK:
            for i, block in enumerate(_INPUTS):
                if block is seen:
                    del _INPUTS[i]
                    break


def _note_input(st, path, what):
    """Note the file of ``stat`` result ``st`` as an input of the commands running."""
    with _INPUTS_LOCK:
        for block in _INPUTS:
            block.setdefault((st.st_dev, st.st_ino), (os.fspath(path), what))


def declare_inputs(inputs):
    """Note the files a command is about to read, so its outputs are checked against them
    before anything is read or written.

    Parameters
    ----------
    inputs : iterable of (str or path-like or None, str)
        ``(path, what)`` pairs (``what``: the flag, ``"--data"``); a ``None`` or missing path
        is skipped (its reader will say so). Outside :func:`track_inputs`, nothing is noted.
    """
    for path, what in inputs:
        if path is None:
            continue
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode):
            _note_input(st, path, what)


def _input_at(path, st):
    """``(path, what)`` of the input that the entry ``path`` (``lstat`` result ``st``) is, or
    reaches by a link; ``None`` when it is none."""
    keys = [(st.st_dev, st.st_ino)]
    if stat.S_ISLNK(st.st_mode):
        with contextlib.suppress(OSError):
            target = os.stat(path)
            keys.append((target.st_dev, target.st_ino))
    with _INPUTS_LOCK:
        for block in _INPUTS:
            for key in keys:
                if key in block:
                    return block[key]
    return None
