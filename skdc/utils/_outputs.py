"""The file boundary's writing of one output: checked before anything is written, published
whole, never over what a command needs.

:func:`check_output` refuses, up front, an output that would destroy what a command needs: one
of its inputs (:mod:`skdc.utils._input_tracking`), a file of another kind that skdc wrote
(:func:`written_kind` tells the kinds by their bytes, never their names: an skdc container
names its kind in its header member, a ``.npy`` written by :func:`write_npy` in a comment of its
header), or, when exclusive, any existing entry. :func:`write_file` writes through a temporary
file beside the output, its permission bits set before the first byte, and publishes it whole
or not at all, exclusively when asked, never through a link; :func:`write_output` writes one
shared output (a table, a figure) through it, with the bits :func:`output_mode` gives.
"""

# Licence: BSD 3 clause

import contextlib
import errno
import json
import os
import stat
import tempfile
import zipfile

from ._files import FileError, file_kind, peek_regular
from ._input_tracking import _input_at

__all__ = [
    "check_output",
    "kind_words",
    "output_mode",
    "write_file",
    "write_npy",
    "write_output",
    "written_kind",
]

# -- what no output replaces: a file of another kind that skdc wrote ----------------------
# the kinds of file skdc writes, told by their bytes (the container's header, the .npy mark)
_KINDS = {"skdc-secret": "a participant's secret", "skdc-map": "an alignment map",
          "skdc-model": "an analyst's model", "skdc-upload": "a participant's upload",
          "skdc-anchor": "a shared anchor"}
# a .npy skdc writes names its kind in a comment after the header's dict (numpy ignores it)
_NPY_KIND_MARK = "# skdc-kind: "
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGIC = b"PK\x03\x04"
_KIND_HEADER_BYTES = 1 << 20  # a container's header member, read to learn its kind


def kind_words(kind):
    """A file kind in words (``"skdc-secret"``: ``"a participant's secret"``)."""
    return _KINDS.get(kind, f"an skdc file ({kind})")


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
    >>> from skdc.utils._outputs import write_file, write_npy, written_kind
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
    >>> from skdc.utils._files import FileError
    >>> from skdc.utils._outputs import check_output
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
    >>> from skdc.utils._files import FileError
    >>> from skdc.utils._outputs import write_file
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
    >>> from skdc.utils._files import FileError
    >>> from skdc.utils._outputs import write_output
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
