"""The file boundary: every file skdc reads or writes goes through these few functions.

A file that crosses the boundary may come from someone else (an upload, a config, a
checkpoint left by another run, a data set downloaded elsewhere) or land where someone else's
file already is. The rules (the developer guide's "file boundary") are kept here once, so that
a new reader or writer cannot forget one:

* **read** only regular files (:func:`open_regular`): never a named pipe, a device, a socket
  or a folder, nor a link to one, so a hostile path can neither block a reader nor feed it
  endless bytes;
* **bound** every read in bytes, also after decompression (:func:`open_input`,
  :func:`read_bytes`, :func:`read_text`): a compressed bomb stops at the limit plus one byte;
* **write** through a temporary file beside the output, with its permission bits set before
  the first byte (:func:`write_file`); the output appears whole or not at all, is created
  exclusively when asked (two racing writers: one wins, the other gets a one-line error), and
  never written through a link (a link at the output is replaced, or refused when exclusive);
* **never destroy** what a command needs (:func:`check_output`): an output is never one of the
  command's inputs (the same file by device and inode: :func:`track_inputs` remembers every
  file read while a command runs, :func:`declare_inputs` the ones it is about to read) and
  never a file of another kind that skdc wrote (a secret, a map, a model, an upload, an
  anchor: :func:`written_kind` tells them by their bytes, never their names), refused even
  with ``--force``; an existing output of the same kind is replaced only when the caller says
  so (``exclusive=False``: the command's ``--force``);
* **remove** only the files skdc wrote, by name (:func:`remove_written`): a folder holding
  anything else is refused, nothing in it deleted;
* **own** a folder of outputs by a record of the run that filled it
  (:func:`write_run_record`): a folder holding another run's outputs is refused unless
  ``--force``, which clears exactly that run's files (:func:`check_run_folder`,
  :func:`clear_run_folder`); the same run (resumed, repeated) replaces its own.

Every refusal is a :class:`FileError` (a :class:`ValueError`) on one line that names the file,
says what was expected and what to do; callers pass their own subclass as ``error`` (the
protocol's ``UploadError``) and the flag or field as ``what``.
"""

# Licence: BSD 3 clause

import contextlib
import errno
import gzip
import io
import json
import math
import os
import stat
import tempfile
import threading
import zipfile
import zlib

__all__ = [
    "FileError",
    "check_folder",
    "check_npy_size",
    "check_output",
    "check_run_folder",
    "clear_run_folder",
    "declare_inputs",
    "ensure_folder",
    "file_kind",
    "is_int",
    "kind_words",
    "one_line",
    "peek_regular",
    "open_input",
    "open_regular",
    "output_mode",
    "read_bytes",
    "read_text",
    "remove_written",
    "track_inputs",
    "write_file",
    "write_output",
    "write_npy",
    "write_outputs",
    "write_run_record",
    "written_kind",
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


# -- what a command must not destroy -------------------------------------------------------
# One {(st_dev, st_ino): (path, what)} per open track_inputs block (the command line opens one
# around every command): every regular file opened for reading is noted in each.
_INPUTS_LOCK = threading.Lock()
_INPUTS = []

# the kinds of file skdc writes, told by their bytes (the container's header, the .npy mark)
_KINDS = {"skdc-secret": "a participant's secret", "skdc-map": "an alignment map",
          "skdc-model": "an analyst's model", "skdc-upload": "a participant's upload",
          "skdc-anchor": "a shared anchor"}
# a .npy skdc writes names its kind in a comment after the header's dict (numpy ignores it)
_NPY_KIND_MARK = "# skdc-kind: "
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"
_KIND_HEADER_BYTES = 1 << 20  # a container's header member, read to learn its kind


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
    >>> from skdc.utils._files import FileError, read_bytes, track_inputs, write_output
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


def kind_words(kind):
    """A file kind in words (``"skdc-secret"``: ``"a participant's secret"``)."""
    return _KINDS.get(kind, f"an skdc file ({kind})")


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


def written_kind(path):
    """The kind of skdc file at ``path``, read from its bytes (never its name); ``None`` when
    it is none (another file, a link, a folder, missing, unreadable).

    An skdc container (a ``.npz``) names its kind in its header member (``"skdc-secret"``,
    ``"skdc-map"``, ``"skdc-model"``, ``"skdc-upload"``); a ``.npy`` skdc writes
    (:func:`write_npy`: the anchor) in a comment of its header (``"skdc-anchor"``).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.utils._files import write_file, write_npy, written_kind
    >>> path = os.path.join(tempfile.mkdtemp(), "anchor.npy")
    >>> with write_file(path, mode=0o600, kind="skdc-anchor") as fh:
    ...     write_npy(fh, np.eye(3), kind="skdc-anchor")
    >>> written_kind(path), np.load(path).shape
    ('skdc-anchor', (3, 3))
    """
    try:
        fh = peek_regular(path)
        if fh is None:
            return None
        with fh:
            head = fh.read(4)
            if head == _ZIP_MAGIC:
                fh.seek(0)
                kind = _container_kind(fh)
            elif head + fh.read(2) == _NPY_MAGIC:
                fh.seek(0)
                kind = _npy_kind(fh.read(12 + 65536))
            else:
                kind = None
    except Exception:  # noqa: BLE001 (a damaged or hostile file is simply no skdc file)
        return None
    return kind if isinstance(kind, str) and kind.startswith("skdc-") else None


def _npy_text(blob):
    """The header text of the ``.npy`` bytes ``blob`` and the offset of the data after it."""
    major = blob[6]
    size = 2 if major == 1 else 4
    length = int.from_bytes(blob[8:8 + size], "little")
    start = 8 + size
    return blob[start:start + length].decode("latin1"), start + length


def _npy_kind(blob):
    text = _npy_text(blob)[0]
    at = text.find(_NPY_KIND_MARK, text.rfind("}"))
    return None if at < 0 else text[at + len(_NPY_KIND_MARK):].split()[0]


def _container_kind(fh):
    with zipfile.ZipFile(fh) as zf:
        info = zf.getinfo("header.npy")
        if info.file_size > _KIND_HEADER_BYTES:
            return None
        with zf.open(info) as member:
            blob = member.read(_KIND_HEADER_BYTES + 1)
    _, start = _npy_text(blob)
    header = json.loads(blob[start:].decode("utf-8"))
    return header.get("format") if isinstance(header, dict) else None


def write_npy(fh, array, *, kind):
    """Write ``array`` as ``.npy`` bytes into ``fh``, its header naming the file's ``kind``.

    The kind is a comment after the header's dict (``# skdc-kind: skdc-anchor``): ``numpy.load``
    reads the file as any ``.npy``, and :func:`written_kind` tells it from other arrays.

    Parameters
    ----------
    fh : binary file object
        Open for writing (:func:`write_file`'s temporary file).
    array : array-like
        A plain numeric array (no objects, no structured dtypes).
    kind : str
        The file kind, ``"skdc-..."``.
    """
    import numpy as np

    arr = np.ascontiguousarray(array)
    if arr.dtype.hasobject or arr.dtype.names is not None:
        raise TypeError(f"write_npy writes plain arrays; got dtype {arr.dtype}.")
    d = np.lib.format.header_data_from_array_1_0(arr)
    text = ("{" + "".join(f"{k!r}: {d[k]!r}, " for k in sorted(d)) + "} "
            + _NPY_KIND_MARK + kind)
    size = 2 if len(text) + 64 < 65536 else 4
    pad = -(len(_NPY_MAGIC) + 2 + size + len(text) + 1) % 64
    header = (text + " " * pad + "\n").encode("latin1")
    fh.write(_NPY_MAGIC + bytes([1 if size == 2 else 2, 0]) + len(header).to_bytes(size, "little"))
    fh.write(header)
    fh.write(arr.tobytes())


# -- writing ------------------------------------------------------------------------------
def output_mode(mode):
    """``mode`` less the process's umask: the bits a shared (non-secret) output gets.

    Secrets, alignment maps and models are written ``0o600`` exactly; uploads, reports and
    tables ``output_mode(0o644)``, as an ordinary file would be.
    """
    try:  # read without changing it (os.umask both sets and returns: racy under threads)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return mode & ~int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mode & ~mask


def _check_output_path(path, what, exclusive, error, kind=None, rewrite=False,
                       force_flag=None):
    """Refuse an existing folder, one of the command's inputs (unless ``rewrite``), a file of
    another kind that skdc wrote, or anything at all when ``exclusive`` (the refusal names
    ``force_flag``, the flag that replaces it, when given)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise error(f"{path}: cannot write {what} ({exc.strerror}).") from None
    if stat.S_ISDIR(st.st_mode):
        raise error(f"{path}: {what} is an existing folder; give a file name.")
    source = None if rewrite else _input_at(path, st)
    if source is not None:
        in_path, in_what = source
        same = "" if os.path.abspath(in_path) == os.path.abspath(path) else f", {in_path}"
        raise error(f"{path}: {what} is one of this command's inputs ({in_what}{same}); "
                    "writing it would destroy that input. Refused even with --force: give "
                    f"{what} another path.")
    found = written_kind(path)
    if found is not None and found != kind:
        writes = kind_words(kind) if kind else "another kind of file"
        raise error(f"{path}: {what} would replace {kind_words(found)} that skdc wrote (its "
                    f"header says {found}) with {writes}. Refused even with --force: give "
                    f"{what} another path, or move that file away first.")
    if exclusive:
        kind = "file" if stat.S_ISREG(st.st_mode) else file_kind(st.st_mode)
        fix = ("Remove it or choose another path." if force_flag is None else
               f"Pass {force_flag} to replace it, or choose another path.")
        raise error(f"{path}: {what} already exists (as {'a ' + kind if kind == 'file' else kind}"
                    f"); refusing to overwrite it. {fix}")


def check_output(path, what="the output", *, exclusive=False, kind=None, rewrite=False,
                 force_flag=None, error=FileError):
    """Refuse, before anything is written, an output path :func:`write_file` would refuse.

    An empty path, a missing folder, an existing folder at ``path``; one of the command's
    inputs (the same file by device and inode, or a link to it: see :func:`track_inputs`) and
    a file of another kind that skdc wrote (:func:`written_kind`), whatever ``exclusive`` says;
    and (when ``exclusive``) any existing entry, a link or a pipe included. A link, pipe or
    device at a non-exclusive output passes: :func:`write_file` replaces it, never writes
    through it.

    Parameters
    ----------
    path : str or path-like
        The output file.
    what : str, default="the output"
        What the file is (``"--out"``), for messages.
    exclusive : bool, default=False
        Refuse any existing entry (a command without ``--force``).
    kind : str, default=None
        The kind of skdc file written (``"skdc-secret"``, ...); ``None``: an ordinary file.
        An existing skdc file of another kind is refused.
    rewrite : bool, default=False
        The output is the command's own state, read earlier and now rewritten (a
        checkpoint): being one of its inputs is no reason to refuse.
    force_flag : str, default=None
        The flag that replaces an existing output (``"--force"``): the refusal of an exclusive
        output then says to pass it.
    error : type, default=FileError
        The exception class raised.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, check_output
    >>> try:
    ...     check_output(os.path.join(tempfile.mkdtemp(), "no", "p.npy"), "--out")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:31])
    cannot write --out: the folder
    """
    path = os.fspath(path)
    if not path:
        raise error(f"{what} is empty; give a file name.")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise error(f"{path}: cannot write {what}: the folder {directory} does not exist (or "
                    "is not a folder); create it first.")
    _check_output_path(path, what, exclusive, error, kind, rewrite, force_flag)


@contextlib.contextmanager
def write_file(path, what="the output", *, mode, exclusive=False, kind=None, rewrite=False,
               force_flag=None, error=FileError):
    """Write ``path`` through a temporary file beside it; it appears whole or not at all.

    The temporary file gets the permission bits ``mode`` before anything is written to it (a
    secret is never readable by others, not even half-written). When the block ends without an
    error, the file is published under ``path``:

    * ``exclusive=True``: by a hard link, which fails when anything is at ``path`` (a file, a
      link, even a dangling one): of two racing writers exactly one wins, the other gets
      ``error``;
    * ``exclusive=False``: by a rename over whatever non-folder entry is at ``path``. A link is
      replaced, never written through, and so is a pipe or a device.

    On any error the temporary file is removed and ``path`` is left as it was.

    Parameters
    ----------
    path : str or path-like
        The output file; its folder must exist.
    what : str, default="the output"
        What the file is (``"--out"``), for messages.
    mode : int
        Its permission bits (``0o600`` for secrets, maps and models;
        ``output_mode(0o644)`` for shared outputs).
    exclusive : bool, default=False
        Refuse to replace an existing entry.
    kind : str, default=None
        The kind of skdc file written (``"skdc-secret"``, ...; ``None``: an ordinary file).
        Whatever ``exclusive`` says, the output never replaces one of the command's inputs
        nor an skdc file of another kind (:func:`check_output`).
    rewrite : bool, default=False
        The output is the command's own state, read earlier (a checkpoint).
    force_flag : str, default=None
        The flag that replaces an existing output (``"--force"``), named when ``exclusive``
        refuses one.
    error : type, default=FileError
        The exception class raised.

    Yields
    ------
    fh : file object
        The temporary file, open for binary writing.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, write_file
    >>> path = os.path.join(tempfile.mkdtemp(), "secret.bin")
    >>> with write_file(path, "--secret-out", mode=0o600, exclusive=True) as fh:
    ...     _ = fh.write(b"s")
    >>> oct(os.stat(path).st_mode & 0o777)
    '0o600'
    >>> try:
    ...     with write_file(path, "--secret-out", mode=0o600, exclusive=True) as fh:
    ...         _ = fh.write(b"t")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:36])
    --secret-out already exists (as a fi
    """
    path = os.fspath(path)
    check_output(path, what, exclusive=exclusive, kind=kind, rewrite=rewrite,
                 force_flag=force_flag, error=error)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".skdc-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise error(f"{path}: cannot write {what} ({exc.strerror}).") from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _publish(tmp, path, what, exclusive, error, kind, rewrite, force_flag)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _publish(tmp, path, what, exclusive, error, kind=None, rewrite=False, force_flag=None):
    if not exclusive:
        # a folder, an input or another kind of file may have appeared meanwhile
        _check_output_path(path, what, False, error, kind, rewrite)
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        _check_output_path(path, what, True, error, kind, rewrite, force_flag)
        raise error(f"{path}: {what} already exists; refusing to overwrite it.") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise error(f"{path}: cannot write {what} ({exc.strerror}).") from None
        # no hard links on this file system: claim the name exclusively, then rename onto it
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                             | getattr(os, "O_NOFOLLOW", 0), 0o600))
        except FileExistsError:
            raise error(f"{path}: {what} already exists; refusing to overwrite it.") from None
        os.replace(tmp, path)


# -- folders ------------------------------------------------------------------------------
def check_folder(path, what="the output folder", *, allow_link=True, error=FileError):
    """Refuse, before anything is written, a folder path :func:`ensure_folder` would refuse.

    Returns
    -------
    path : str
        The folder (it may not exist yet).
    """
    path = os.fspath(path)
    if not path:
        raise error(f"{what} is empty; give a folder.")
    parent = os.path.abspath(path)
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        where = "is" if os.path.abspath(path) == parent else f"lies under {parent}, which is"
        raise error(f"{path}: {what} {where} a file, not a folder; give a folder.")
    if not allow_link and os.path.islink(path):
        raise error(f"{path}: {what} is a link; skdc fills (and may clear) this folder, so it "
                    "never reaches it through a link. Give a real folder.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise error(f"{path}: cannot write into {what} ({parent} is not writable).")
    return path


def ensure_folder(path, what="the output folder", *, allow_link=True, mode=None,
                  error=FileError):
    """Create the folder ``path`` with its parents, or check the one that is there.

    Refuses, in one line, a path that is (or lies under) an existing file, a link when
    ``allow_link`` is false (a folder skdc fills and may later clear, such as a checkpoint
    folder, is never reached through a link), and a folder that cannot be written.

    ``mode`` (``0o700`` for a folder of owner-only files, such as the analyst's maps and
    model): the folder, when created here, has exactly these permission bits from its first
    moment, whatever the umask (its parents get the usual ones); an existing folder is left as
    it is.

    Returns
    -------
    path : str
        The folder.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, ensure_folder
    >>> base = tempfile.mkdtemp()
    >>> _ = open(os.path.join(base, "f"), "w").close()
    >>> try:
    ...     ensure_folder(os.path.join(base, "f", "sub"), "--out")
    ... except FileError as exc:
    ...     msg = str(exc)
    >>> msg.split(": ", 1)[1][:16], msg.endswith("a file, not a folder; give a folder.")
    ('--out lies under', True)
    """
    path = check_folder(path, what, allow_link=allow_link, error=error)
    try:
        if mode is None or os.path.isdir(path):
            os.makedirs(path, exist_ok=True)
        else:
            parent = os.path.dirname(os.path.abspath(path))
            os.makedirs(parent, exist_ok=True)
            with contextlib.suppress(FileExistsError):  # a racing run made it: left as it is
                os.mkdir(path, mode & 0o700)  # never wider than the owner's, umask or not
                os.chmod(path, mode)
    except OSError as exc:
        raise error(f"{path}: cannot create {what} ({exc.strerror}).") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise error(f"{path}: cannot write into {what}.")
    return path


def write_outputs(folder, outputs, what="the output", *, folder_what="the output folder",
                  mode=None, exclusive=False, force_flag=None, error=FileError):
    """Write several shared outputs into ``folder``, each through :func:`write_file`.

    The folder is created first when missing, by :func:`ensure_folder` (which refuses a path
    that is, or lies under, a file).

    Parameters
    ----------
    folder : str or path-like
        The folder.
    outputs : dict of {str: (str, str or bytes)}
        ``{name: (file name, content)}``; text is written as UTF-8.
    what : str, default="the output"
        Whose outputs these are (``"the report"``), for messages: ``"the report's
        summary.csv"``.
    folder_what : str, default="the output folder"
        What the folder is (``"--out"``), for :func:`ensure_folder`'s messages.
    mode : int, default=None
        Permission bits; ``None``: ``output_mode(0o644)`` (an ordinary shared file).
    exclusive : bool, default=False
        Refuse to replace an existing file (a command without ``--force``).
    force_flag : str, default=None
        The flag that replaces an existing file, named in that refusal.
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    files : dict of {str: str}
        ``{name: path}`` of the files written.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import write_outputs
    >>> folder = os.path.join(tempfile.mkdtemp(), "new")
    >>> files = write_outputs(folder, {"table": ("t.csv", "a,b\\n1,2\\n")}, "the audit")
    >>> os.path.basename(files["table"]), open(files["table"]).read().splitlines()
    ('t.csv', ['a,b', '1,2'])
    """
    folder = ensure_folder(folder, folder_what, error=error)
    files = {}
    for name, (filename, content) in outputs.items():
        files[name] = write_output(os.path.join(folder, filename), content,
                                   f"{what}'s {filename}", mode=mode, exclusive=exclusive,
                                   force_flag=force_flag, error=error)
    return files


def write_output(path, content, what="the output", *, mode=None, exclusive=False,
                 force_flag=None, error=FileError):
    """Write one shared output (a table, a figure) through :func:`write_file`.

    Parameters
    ----------
    path : str or path-like
        The file; its folder must exist. A link at ``path`` is replaced, never written
        through.
    content : str or bytes
        What to write; text is written as UTF-8.
    what : str, default="the output"
        What the file is (``"--csv"``), for messages.
    mode : int, default=None
        Permission bits; ``None``: ``output_mode(0o644)`` (an ordinary shared file).
    exclusive : bool, default=False
        Refuse to replace an existing file (a command without ``--force``).
    force_flag : str, default=None
        The flag that replaces an existing file, named in that refusal.
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    path : str
        The file written.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, write_output
    >>> folder = tempfile.mkdtemp()
    >>> path = write_output(os.path.join(folder, "t.csv"), "a,b\\n1,2\\n", "--csv")
    >>> open(path).read().splitlines()
    ['a,b', '1,2']
    >>> try:
    ...     write_output(os.path.join(path, "under.csv"), "a\\n", "--csv")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:30])
    cannot write --csv: the folder
    """
    path = os.fspath(path)
    mode = output_mode(0o644) if mode is None else mode
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    with write_file(path, what, mode=mode, exclusive=exclusive, force_flag=force_flag,
                    error=error) as fh:
        fh.write(data)
    return path


def remove_written(folder, names, what="the folder", *, is_ours=None, keep_others=False,
                   error=FileError):
    """Remove the files ``names`` that skdc wrote into ``folder``, and nothing else.

    Before anything is removed, every entry of ``folder`` is checked: an entry whose name is not
    in ``names`` (unless ``keep_others``: it is then left alone), one that is not a regular
    file (a link, a folder, a pipe), or one that ``is_ours(path)`` does not recognise makes the
    whole call refuse, removing nothing. A missing ``folder`` is fine (nothing to remove). The
    folder itself stays.

    Parameters
    ----------
    folder : str or path-like
        The folder skdc filled.
    names : iterable of str
        The file names skdc writes there.
    what : str, default="the folder"
        What the folder is (``"--out/checkpoint"``), for messages.
    is_ours : callable, default=None
        ``is_ours(path) -> bool``: a last check that a file of ours is one skdc wrote (a
        checkpoint's first line, say).
    keep_others : bool, default=False
        Leave the entries not in ``names`` alone instead of refusing (a folder holding the
        user's own files beside skdc's, such as ``analyst fit --out``).
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    removed : list of str
        The names removed.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, remove_written
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "grid.jsonl"), "w").close()
    >>> _ = open(os.path.join(folder, "w.pt"), "w").close()
    >>> try:
    ...     remove_written(folder, ["grid.jsonl"], "the checkpoint folder")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:50])
    the checkpoint folder holds w.pt, which skdc did n
    >>> sorted(os.listdir(folder))
    ['grid.jsonl', 'w.pt']
    """
    folder = os.fspath(folder)
    if not os.path.lexists(folder):
        return []
    if os.path.islink(folder) or not os.path.isdir(folder):
        raise error(f"{folder}: {what} is not a folder (a file or a link); skdc removes "
                    "nothing there. Remove it yourself or choose another folder.")
    names = set(names)
    ours = []
    for entry in sorted(os.listdir(folder)):
        full = os.path.join(folder, entry)
        if entry not in names and keep_others:
            continue
        if entry not in names:
            raise error(f"{folder}: {what} holds {entry}, which skdc did not write; refusing "
                        "to clear it. Move that file away or choose another folder.")
        st = os.lstat(full)
        if not stat.S_ISREG(st.st_mode) or (is_ours is not None and not is_ours(full)):
            kind = "a regular file" if stat.S_ISREG(st.st_mode) else file_kind(st.st_mode)
            raise error(f"{folder}: {what} holds {entry} ({kind}), which skdc did not write; "
                        "refusing to clear it. Move it away or choose another folder.")
        ours.append(entry)
    for entry in ours:
        os.unlink(os.path.join(folder, entry))
    return ours


# -- a folder of one run's outputs ----------------------------------------------------------
RUN_RECORD = "skdc-run.json"  # what a run that fills a folder leaves beside its outputs
_RUN_FORMAT = "skdc-run"
_RUN_RECORD_BYTES = 1 << 20


def _read_run_record(folder, record, names):
    """The record skdc left in ``folder``: ``(run, files)``, or ``None`` when there is none or
    it is not one skdc wrote (not a regular file, not JSON, another format). It is read
    without being noted as an input: the run rewrites it."""
    fh = peek_regular(os.path.join(folder, record))
    if fh is None:
        return None
    try:
        with fh:
            data = fh.read(_RUN_RECORD_BYTES + 1)
        doc = json.loads(data.decode("utf-8")) if len(data) <= _RUN_RECORD_BYTES else None
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and doc.get("format") == _RUN_FORMAT
            and isinstance(doc.get("run"), dict) and isinstance(doc.get("files"), list)):
        return None
    # a record names only files of the run's own kind, never a path elsewhere
    return doc["run"], [n for n in doc["files"] if isinstance(n, str) and n in names]


def check_run_folder(folder, run, names, what="the output folder", *, force=False,
                     force_flag="--force", record=RUN_RECORD, error=FileError):
    """Refuse, before a run, a folder that holds another run's outputs (unless ``force``).

    A run that fills a folder (the audit's report) leaves a record of itself beside its files
    (:func:`write_run_record`): the settings and data that make it that run, and the names it
    wrote. The folder holds another run's outputs when one of ``names`` (or the record) is
    there and the record describes another run, or is missing or damaged (no one can tell
    which run wrote them). The same run's outputs pass: a resumed or repeated run replaces
    its own files.

    Parameters
    ----------
    folder : str or path-like
        The output folder (it may not exist yet).
    run : dict
        JSON-serialisable, flat: what makes this run itself (its settings, a digest of its
        data), compared key by key with the record's.
    names : iterable of str
        Every file name this kind of run writes into ``folder``.
    what : str, default="the output folder"
        What the folder is (``"--out"``), for messages.
    force : bool, default=False
        Whether the command was given ``force_flag``: another run's files are then to be
        cleared, not refused.
    force_flag : str, default="--force"
        The flag named in the refusal.
    record : str, default="skdc-run.json"
        The record's file name.
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    earlier : list of str
        The names of another recorded run's files in ``folder`` (only with ``force``), which
        :func:`clear_run_folder` removes before this run writes; empty when the folder holds
        none, the same run's, or files no record describes (those this run writes are then
        replaced, the others left).

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._files import FileError, check_run_folder, write_run_record
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, "report.html"), "w").write("<p>seed 0</p>")
    >>> write_run_record(folder, {"seed": 0}, ["report.html"], "--out")
    >>> check_run_folder(folder, {"seed": 0}, ["report.html"], "--out")
    []
    >>> try:
    ...     check_run_folder(folder, {"seed": 1}, ["report.html"], "--out")
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:74])
    --out holds another run's files (its record skdc-run.json differs in seed)
    >>> check_run_folder(folder, {"seed": 1}, ["report.html"], "--out", force=True)
    ['report.html']
    """
    folder, names = os.fspath(folder), set(names)
    if not os.path.isdir(folder):
        return []
    present = [n for n in sorted(names) if os.path.lexists(os.path.join(folder, n))]
    if not present and not os.path.lexists(os.path.join(folder, record)):
        return []
    found = _read_run_record(folder, record, names)
    run = json.loads(json.dumps(run))
    if found is not None and found[0] == run:
        return []
    if found is None:
        whose = (f"files no run record describes (no skdc {record} there says which run wrote "
                 "them)")
        earlier = []
    else:
        old = found[0]
        differ = sorted(k for k in set(old) | set(run) if old.get(k) != run.get(k))
        whose = f"another run's files (its record {record} differs in {', '.join(differ)})"
        earlier = [n for n in found[1] if os.path.lexists(os.path.join(folder, n))]
    if not force:
        listed = ", ".join(present or [record])
        clears = ("clear that run's files" if found is not None
                  else "replace the ones this run writes")
        raise error(f"{folder}: {what} holds {whose}: {listed}; refusing to replace them. "
                    f"Pass {force_flag} to {clears} and write this run's, or choose another "
                    "folder.")
    for name in earlier:  # an input of this command, or a secret, is never cleared
        check_output(os.path.join(folder, name), f"{what}'s {name}", error=error)
    return earlier


def clear_run_folder(folder, earlier, what="the output folder", *, error=FileError):
    """Remove another run's files ``earlier`` (from :func:`check_run_folder`) from ``folder``.

    Each is checked first as an output would be (:func:`check_output`): one of the command's
    inputs, or an skdc file of another kind, is refused and nothing removed; only regular
    files are removed (:func:`remove_written`). Returns the names removed.
    """
    folder = os.fspath(folder)
    for name in earlier:
        check_output(os.path.join(folder, name), f"{what}'s {name}", error=error)
    return remove_written(folder, earlier, what, keep_others=True, error=error)


def write_run_record(folder, run, files, what="the output folder", *, record=RUN_RECORD,
                     error=FileError):
    """Leave the record of ``run`` and the ``files`` it wrote in ``folder`` (see
    :func:`check_run_folder`), written whole as an ordinary shared file."""
    doc = {"format": _RUN_FORMAT, "run": run,
           "files": sorted({os.path.basename(os.fspath(f)) for f in files})}
    write_output(os.path.join(os.fspath(folder), record), json.dumps(doc, indent=1) + "\n",
                 f"{what}'s {record}", error=error)
