"""The file boundary's entry: its error, and opening and reading a user's file.

Every file skdc reads or writes goes through the few functions of this module and of the
modules beside it, one for each part of the boundary. A file that crosses the boundary may come
from someone else (an upload, a config, a checkpoint left by another run, a data set downloaded
elsewhere) or land where someone else's file already is. The rules (the developer guide's "file
boundary") are kept here once, so that a new reader or writer cannot forget one:

* **read** only regular files (:func:`open_regular`): never a named pipe, a device, a socket
  or a folder, nor a link to one, so a hostile path can neither block a reader nor feed it
  endless bytes;
* **bound** every read in bytes, also after decompression (:func:`open_input`,
  :func:`read_bytes`, :func:`read_text`; a ``.npy`` header's declared size:
  :func:`check_npy_size`): a compressed bomb stops at the limit plus one byte;
* **write** through a temporary file beside the output, with its permission bits set before
  the first byte (:func:`~skdc.utils._outputs.write_file`); the output appears whole or not at
  all, is created exclusively when asked (two racing writers: one wins, the other gets a
  one-line error), and never written through a link (a link at the output is replaced, or
  refused when exclusive);
* **never destroy** what a command needs (:func:`~skdc.utils._outputs.check_output`): an
  output is never one of the command's inputs (the same file by device and inode:
  :func:`~skdc.utils._input_tracking.track_inputs` remembers every file read while a command
  runs, :func:`~skdc.utils._input_tracking.declare_inputs` the ones it is about to read) and
  never a file of another kind that skdc wrote (a secret, a map, a model, an upload, an
  anchor: :func:`~skdc.utils._outputs.written_kind` tells them by their bytes, never their
  names), refused even with ``--force``; an existing output of the same kind is replaced only
  when the caller says so (``exclusive=False``: the command's ``--force``);
* **remove** only the files skdc wrote, by name (:func:`~skdc.utils._folders.remove_written`):
  a folder holding anything else is refused, nothing in it deleted;
* **own** a folder of outputs by a record of the run that filled it
  (:func:`~skdc.utils._folders.write_run_record`): a folder holding another run's outputs is
  refused unless ``--force``, which clears exactly that run's files
  (:func:`~skdc.utils._folders.check_run_folder`, :func:`~skdc.utils._folders.clear_run_folder`);
  the same run (resumed, repeated) replaces its own.

Where each part lives, all in ``skdc/utils/``:

* ``_files`` (this module): :class:`FileError` and the helpers every part shares
  (:func:`one_line`, :func:`file_kind`, :func:`is_int`), opening (:func:`open_regular`,
  :func:`peek_regular`) and bounded reading;
* ``_input_tracking``: the inputs of the command running, which no output may replace;
* ``_outputs``: checking and writing one output, and the kinds of file skdc writes, told by
  their bytes (with the ``.npy`` writer that names its kind);
* ``_folders``: folders of outputs: created or checked, filled, cleared of only what skdc
  wrote, and owned by the record ``skdc-run.json`` of the run that filled them.

Every refusal is a :class:`FileError` (a :class:`ValueError`) on one line that names the file,
says what was expected and what to do; callers pass their own subclass as ``error`` (the
protocol's ``UploadError``) and the flag or field as ``what``.
"""

# Licence: BSD 3 clause

import gzip
import io
import math
import os
import stat
import zlib

from ._input_tracking import _note_input

__all__ = [
    "FileError",
    "check_npy_size",
    "file_kind",
    "is_int",
    "one_line",
    "open_input",
    "open_regular",
    "peek_regular",
    "read_bytes",
    "read_text",
]

_GZIP_MAGIC = b"\x1f\x8b"


class FileError(ValueError):
    """A file at the boundary is of the wrong kind, too large, or in the way of an output.

    The message is one line naming the file; a :class:`ValueError`, so the command line prints
    it without a traceback.
    """


def is_int(value):
    """Whether a decoded value is an integer (``True`` and ``1.0`` are not).

    Examples
    --------
    >>> from skdc.utils._files import is_int
    >>> is_int(3), is_int(True), is_int(3.0)
    (True, False, False)
    """
    return isinstance(value, int) and not isinstance(value, bool)


def one_line(exc, limit=160):
    """An exception message as one short line (numpy's messages span several).

    Examples
    --------
    >>> from skdc.utils._files import one_line
    >>> one_line(ValueError("two\\n  lines"))
    'two lines'
    """
    msg = " ".join(str(exc).split())
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


def file_kind(mode):
    """What a non-regular file of ``st_mode`` ``mode`` is, in words (``"a named pipe"``)."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a link")):
        if test(mode):
            return name
    return "not a regular file"


# -- reading ------------------------------------------------------------------------------
def open_regular(path, what="the file", *, max_bytes=None, error=FileError):
    """Open ``path`` for binary reading only if it is a regular file (after following links).

    Named pipes, devices (``/dev/zero``), sockets and folders, or links to them, are refused
    before a byte is read. The check is repeated on the opened descriptor, so the path cannot
    be swapped in between, and the descriptor is opened non-blocking, so a path turned into a
    pipe meanwhile cannot block the open.

    Parameters
    ----------
    path : str or path-like
        The file.
    what : str, default="the file"
        What the file is (a flag such as ``"--data"``, or ``"the config"``), for messages.
    max_bytes : int, default=None
        Refuse a file larger than this on disk (``None``: no limit).
    error : type, default=FileError
        The exception class raised (a subclass of :class:`FileError` or ``ValueError``).

    Returns
    -------
    fh : file object
        Open for binary reading.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, open_regular
    >>> try:
    ...     open_regular(tempfile.mkdtemp(), "--data")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:33])
    --data is a directory, not a regu
    """
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0))
            st = os.fstat(fd)
            mode = st.st_mode
            if stat.S_ISREG(mode):
                if max_bytes is not None and st.st_size > max_bytes:
                    os.close(fd)
                    raise error(f"{path}: {what} has {st.st_size} bytes, above the limit of "
                                f"{max_bytes}; is it the right file?")
                _note_input(st, path, what)  # a command's outputs never replace it
                return os.fdopen(fd, "rb")
            os.close(fd)
    except OSError as exc:
        raise error(f"{path}: cannot read {what} ({exc.strerror or one_line(exc)}).") from None
    raise error(
        f"{path}: {what} is {file_kind(mode)}, not a regular file; skdc reads only regular "
        "files (never pipes, devices, folders or links to them). Pass the file itself."
    )


def peek_regular(path):
    """``path`` opened for reading when it is a regular file (never through a link, never
    blocking on a pipe), without noting it as an input; ``None`` otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a folder
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


_CHUNK = 1 << 20  # bytes taken at a time when a whole file is read
_SLACK = 1 << 12  # bytes asked beyond a file's size, to see whether it delivers more
_HOLD = 1 << 28  # decompressed bytes held before a stream is measured to its end first


class _AtRest(io.RawIOBase):
    """The bytes of a regular file, refusing any beyond the size it reported when opened.

    A file that reports one size and delivers more is not a file at rest: a ``/proc`` file
    (``/proc/self/pagemap`` reports 0 bytes and never ends) or one still being written.
    """

    def __init__(self, file, size, where, error):
        self._file, self._size, self._where, self._error = file, size, where, error
        self._pos = 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, buf):
        view = memoryview(buf).cast("B")
        try:
            data = self._file.read(min(view.nbytes, self._size - self._pos + _SLACK))
        except OSError as exc:
            raise self._error(
                f"{self._where} cannot be read ({exc.strerror or one_line(exc)}); it is no "
                "ordinary file (a /proc or device file?). Pass the file itself."
            ) from None
        if self._pos + len(data) > self._size:
            raise self._error(
                f"{self._where} delivers more bytes than the {self._size} its size says: a "
                "special file (such as /proc/self/pagemap) or one still being written. skdc "
                "reads only ordinary files at rest; pass the file itself, once written."
            )
        self._pos += len(data)
        view[: len(data)] = data
        return len(data)

    def seek(self, offset, whence=io.SEEK_SET):
        self._pos = self._file.seek(offset, whence)
        return self._pos

    def tell(self):
        return self._pos

    def close(self):
        self._file.close()
        super().close()


class _Bounded(io.RawIOBase):
    """A reader that refuses to deliver more than ``limit`` bytes of ``raw``."""

    def __init__(self, raw, limit, where, error, file=None, advice=None):
        self._raw, self._left, self._where, self._error = raw, limit, where, error
        self._limit = limit
        self._file = file  # the file under a decompressor (which leaves it open)
        self._advice = advice

    def readable(self):
        return True

    def _take(self, size):
        """Up to ``size`` bytes of ``raw``; refused past the limit."""
        try:
            data = self._raw.read(min(size, self._left + 1))
        except (OSError, EOFError, zlib.error) as exc:
            raise self._error(f"{self._where} cannot be decompressed ({one_line(exc)}).") \
                from None
        if len(data) > self._left:
            raise self._error(_too_large(self._where, self._limit, self._file is not None,
                                         self._advice))
        self._left -= len(data)
        return data

    def readinto(self, buf):
        view = memoryview(buf).cast("B")
        data = self._take(view.nbytes)
        view[: len(data)] = data
        return len(data)

    def readall(self):
        """The rest as one ``bytes``, in one buffer (no copy at the end).

        A decompressed stream that grows past ``_HOLD`` bytes is measured to its end holding
        nothing, then read again: a bomb is refused at the limit having taken at most
        ``_HOLD`` bytes of memory.
        """
        out, measure = io.BytesIO(), self._file is not None and self._left == self._limit
        while chunk := self._take(_CHUNK):
            out.write(chunk)
            if measure and out.tell() > _HOLD:
                out = measure = None
                while self._take(_CHUNK):  # raises above the limit
                    pass
                try:
                    self._raw.seek(0)
                except (OSError, EOFError, zlib.error) as exc:
                    raise self._error(f"{self._where} cannot be decompressed "
                                      f"({one_line(exc)}).") from None
                out, self._left = io.BytesIO(), self._limit
        return out.getvalue()  # hands its buffer over when it holds it alone

    def close(self):
        self._raw.close()
        if self._file is not None:
            self._file.close()
        super().close()


def _too_large(where, limit, decompressed, advice, size=None):
    """The one line refusing a file above its limit (``size``: its size, when known)."""
    return (f"{where} holds more than {limit} bytes{f' ({size})' if size is not None else ''}"
            f"{' after decompression' if decompressed else ''}, the most accepted; is it the "
            f"right file?{' ' + advice if advice else ''}")


def open_input(path, what="the file", *, max_bytes, error=FileError, decompress="auto",
               advice=None):
    """Open a regular file for reading, bounded to ``max_bytes`` also after decompression.

    The bound is counted while streaming. The file itself must also stay within the size it
    reports when opened: a ``/proc`` file (``/proc/self/pagemap`` reports 0 bytes and never
    ends) is refused at its first bytes, and a read error (``/proc/self/mem``) is ``error``
    too, never an ``OSError``.

    Parameters
    ----------
    path : str or path-like
        The file.
    what : str, default="the file"
        What the file is, for messages.
    max_bytes : int
        Most bytes the reader delivers: reading past them raises ``error`` (so a gzip file that
        inflates beyond them stops there, one byte after the limit).
    error : type, default=FileError
        The exception class raised.
    decompress : {"auto", "gzip", None}, default="auto"
        ``"auto"``: gunzip when the file starts with the gzip magic bytes.
    advice : str, default=None
        What to do about a file above ``max_bytes`` (how to raise the limit), appended to that
        message.

    Returns
    -------
    fh : io.BufferedReader
        Open for binary reading.

    Examples
    --------
    >>> import gzip, os, tempfile
    >>> from skdc.utils._files import FileError, open_input
    >>> path = os.path.join(tempfile.mkdtemp(), "bomb.gz")
    >>> with gzip.open(path, "wb") as f:
    ...     _ = f.write(bytes(10_000))
    >>> with open_input(path, "--data", max_bytes=100) as fh:
    ...     try:
    ...         fh.read()
    ...     except FileError as exc:
    ...         print(str(exc).split(": ", 1)[1][:46])
    --data holds more than 100 bytes after decompr
    """
    path, where, max_bytes = os.fspath(path), f"{os.fspath(path)}: {what}", int(max_bytes)
    file = open_regular(path, what, error=error)
    try:
        size = os.fstat(file.fileno()).st_size
        raw = file = io.BufferedReader(_AtRest(file, size, where, error), _CHUNK)
        gunzip = decompress == "gzip" or (decompress == "auto"
                                          and file.peek(2)[:2] == _GZIP_MAGIC)
        if gunzip:
            raw = gzip.GzipFile(fileobj=file, mode="rb")
        elif size > max_bytes:  # refused before a byte is read
            raise error(_too_large(where, max_bytes, False, advice, size))
        return io.BufferedReader(_Bounded(raw, max_bytes, where, error,
                                          file if gunzip else None, advice))
    except BaseException:
        file.close()
        raise


def read_bytes(path, what="the file", *, max_bytes, error=FileError, decompress="auto",
               advice=None):
    """The bytes of a regular file, at most ``max_bytes`` of them (after decompression).

    A compressed file is measured first while streaming, holding nothing, so a bomb is refused
    at the limit before its bytes take memory; the bytes are then read into one buffer, not
    copied. See :func:`open_input` for the parameters.
    """
    with open_input(path, what, max_bytes=max_bytes, error=error, decompress=decompress,
                    advice=advice) as fh:
        return fh.read()


def read_text(path, what="the file", *, max_bytes, error=FileError, encoding="utf-8",
              advice=None):
    """The text of a regular file of at most ``max_bytes`` bytes (never decompressed).

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, read_text
    >>> path = os.path.join(tempfile.mkdtemp(), "c.toml")
    >>> _ = open(path, "wb").write(b"\\xff\\xfe")
    >>> try:
    ...     read_text(path, "the config", max_bytes=100)
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:34])
    the config is not UTF-8 text (byte
    """
    data = read_bytes(path, what, max_bytes=max_bytes, error=error, decompress=None,
                      advice=advice)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise error(f"{os.fspath(path)}: {what} is not UTF-8 text (byte {exc.start} is "
                    f"{data[exc.start:exc.start + 1]!r}); save it as UTF-8.") from None


def check_npy_size(fh, size, where, *, error=FileError):
    """Refuse a ``.npy`` stream whose header declares more data than its ``size`` bytes hold.

    Only the header at ``fh``'s position is read, so numpy never allocates an array the file
    cannot fill (a hundred bytes declaring ``10**13`` floats). A header numpy cannot parse is
    left to the caller's reader, which refuses it in its own words.

    Parameters
    ----------
    fh : binary file object
        At the start of the ``.npy`` data (a file, a zip member, ``io.BytesIO``).
    size : int
        The bytes the ``.npy`` data holds, its header included.
    where : str
        The file and what it is (``"X.npy: --data"``), for the message.
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    header : tuple or None
        ``(shape, dtype)``, or ``None`` when numpy cannot read the header.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from skdc.utils._files import FileError, check_npy_size
    >>> buf = io.BytesIO()
    >>> np.lib.format.write_array_header_1_0(
    ...     buf, {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**7)})
    >>> blob = buf.getvalue() + bytes(8)
    >>> try:
    ...     check_npy_size(io.BytesIO(blob), len(blob), "X.npy: --data")
    ... except FileError as exc:
    ...     print(str(exc)[:46])
    X.npy: --data declares shape (1000000, 1000000
    """
    import numpy as np

    start = fh.tell()
    try:
        version = np.lib.format.read_magic(fh)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(fh)
        declared = math.prod(shape) * dtype.itemsize
    except (ValueError, TypeError, SyntaxError, OverflowError, EOFError, OSError):
        shape = None
    if fh.tell() - start > size:  # /proc/self/pagemap: 0 bytes, and numpy reads a header
        raise error(f"{where} delivers more bytes than the {size} its size says: a special "
                    "file (such as /proc/self/pagemap), not an array.")
    if shape is None:
        return None
    held = size - (fh.tell() - start)
    if declared > held:
        raise error(f"{where} declares shape {shape} of {dtype} ({declared} bytes) but holds "
                    f"{max(held, 0)}; the file is truncated or damaged.")
    return shape, dtype
