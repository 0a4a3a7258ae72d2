"""The one reader of a plain ``.npy`` array, never unpickled.

Every ``.npy`` that skdc reads crosses here: a command's ``--data`` rows and ``--labels``
(through :func:`skdc.datasets.load_rows`), the audit's ``--partition``, the shared anchor, and
each member of an skdc deployment file (``skdc.protocol``'s container parses the member
headers with :func:`npy_header`). Only a regular file is opened; the header is parsed by
:mod:`numpy.lib.format` without unpickling, after its declared length is checked against
numpy's own safety limit; object and structured dtypes are refused; and the declared size must
match the bytes the file holds exactly (no truncation, no trailing bytes) before the array is
allocated. Every refusal is one line naming the file and what it is (``--data``, ``the
anchor``), raised as the caller's exception class (``FileError`` by default, the protocol's
``UploadError``).
"""

# Licence: BSD 3 clause

import io
import os
import zipfile

import numpy as np

from ._files import FileError, one_line, open_regular

__all__ = ["NPY_MAGIC", "npy_bytes", "npy_header", "read_npy"]

#: The first bytes of every ``.npy`` file.
NPY_MAGIC = b"\x93NUMPY"
_NPY_MAX_HEADER = 10000  # numpy's own safety limit on a .npy header
# what a damaged header (or the zip member holding it) raises while it is parsed
_HEADER_ERRORS = (TypeError, SyntaxError, zipfile.BadZipFile, zipfile.LargeZipFile, OSError,
                  EOFError, ValueError, RecursionError, KeyError, IndexError, MemoryError)


def npy_header(fp, where, *, allow_fortran=False, error=FileError):
    """Parse the ``.npy`` header at ``fp``'s position, never unpickling.

    Parameters
    ----------
    fp : binary file object
        At the start of the ``.npy`` data (a file, a zip member); left at the first data byte.
    where : str
        The file and what it is (``"X.npy: --data"``), for the messages.
    allow_fortran : bool, default=False
        Accept a Fortran-ordered array (a plain ``.npy`` input may be one; skdc's own files
        are written in C order).
    error : type, default=FileError
        The exception class raised.

    Returns
    -------
    shape : tuple of int
        The declared shape.
    dtype : numpy.dtype
        The declared dtype: plain numbers or strings.
    fortran : bool
        Whether the array is Fortran-ordered; returned only with ``allow_fortran``.

    Examples
    --------
    >>> import io
    >>> import numpy as np
    >>> from skdc.utils._npy import npy_header
    >>> buf = io.BytesIO()
    >>> np.save(buf, np.zeros((2, 3)))
    >>> _ = buf.seek(0)
    >>> npy_header(buf, "X.npy: --data")
    ((2, 3), dtype('float64'))
    """
    try:
        version = np.lib.format.read_magic(fp)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ValueError(f"unsupported .npy version {version}")
        # the header length field first, so an oversized header gets a one-line message
        length = fp.read(2 if version == (1, 0) else 4)
        declared = int.from_bytes(length, "little")
        if declared > _NPY_MAX_HEADER:
            raise error(
                f"{where}: the .npy header declares {declared} bytes, above numpy's safety "
                f"limit of {_NPY_MAX_HEADER}; skdc never reads such headers. Re-save the array "
                "with numpy.save."
            )
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        text = fp.read(declared)
        if len(text) != declared:
            raise EOFError("the .npy header is truncated")
        shape, fortran, dtype = read(io.BytesIO(length + text), max_header_size=_NPY_MAX_HEADER)
    except error:
        raise
    except _HEADER_ERRORS as exc:
        raise error(f"{where}: unreadable .npy header ({one_line(exc)}).") from None
    if dtype.hasobject or dtype.names is not None or dtype.subdtype is not None:
        raise error(
            f"{where}: dtype {dtype} is not a plain numeric or string dtype; skdc files never "
            "hold pickled objects. Refusing the file; ask its sender to re-export it with skdc."
        )
    if fortran and not allow_fortran:
        raise error(f"{where}: Fortran-ordered array; skdc writes C order. Re-export it.")
    return (shape, dtype, fortran) if allow_fortran else (shape, dtype)


def npy_bytes(shape, dtype):
    """The bytes an array of ``shape`` and ``dtype`` holds (exact for any size).

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.utils._npy import npy_bytes
    >>> npy_bytes((10**6, 10**7), np.dtype("float64"))
    80000000000000
    """
    return int(np.prod(shape, dtype=object)) * dtype.itemsize


def read_npy(path, what, *, max_bytes, error=FileError, advice=None):
    """Read a plain ``.npy`` array (a participant's rows or labels, the anchor) safely.

    Only a regular file is opened; its ``.npy`` header is parsed without unpickling (see
    :func:`npy_header`), and the declared size must match the file exactly (no truncation, no
    trailing bytes). Every error is one line naming ``path`` and ``what``.

    Parameters
    ----------
    path : str or path-like
        The ``.npy`` file.
    what : str
        What the file is (``"--data"``, ``"the anchor"``), for the error messages.
    max_bytes : int
        Largest accepted file size in bytes.
    error : type, default=FileError
        The exception class raised.
    advice : str, default=None
        What to do about a file above ``max_bytes`` (how to raise the limit), appended to that
        message.

    Returns
    -------
    array : ndarray
        The array, in the file's dtype and order.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.utils._files import FileError
    >>> from skdc.utils._npy import read_npy
    >>> path = os.path.join(tempfile.mkdtemp(), "X.npy")
    >>> np.save(path, np.arange(6, dtype=np.int32).reshape(2, 3))
    >>> read_npy(path, "--data", max_bytes=1000)
    array([[0, 1, 2],
           [3, 4, 5]], dtype=int32)
    >>> np.savetxt(path, np.ones((2, 3)), delimiter=",")
    >>> try:
    ...     read_npy(path, "--data", max_bytes=1000)
    ... except FileError as exc:
    ...     print(str(exc).split(": ", 1)[1][:54])
    --data is not a .npy file (it looks like text: a CSV?
    """
    path = os.fspath(path)
    with open_regular(path, what, error=error) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise error(f"{path}: {what} has {size} bytes, above the limit {max_bytes}."
                        + (f" {advice}" if advice else ""))
        magic = fh.read(len(NPY_MAGIC))
        if magic != NPY_MAGIC:
            hint = (" (it looks like text: a CSV? convert it with numpy.save('X.npy', "
                    "numpy.loadtxt('X.csv', delimiter=',')))") if _looks_like_text(magic) else ""
            raise error(
                f"{path}: {what} is not a .npy file{hint}; skdc reads arrays written by "
                "numpy.save."
            )
        fh.seek(0)
        shape, dtype, fortran = npy_header(fh, f"{path}: {what}", allow_fortran=True,
                                           error=error)
        offset = fh.tell()
        n_bytes = npy_bytes(shape, dtype)
        if offset + n_bytes != size:
            raise error(
                f"{path}: {what} declares shape {shape} of {dtype} ({n_bytes} bytes) but the "
                f"file holds {size - offset}: it is truncated or has trailing bytes."
            )
        out = np.empty(shape[::-1] if fortran else shape, dtype=dtype)
        if n_bytes and fh.readinto(out.reshape(-1).view(np.uint8)) != n_bytes:
            raise error(f"{path}: {what} is truncated.")
    return out.T if fortran else out


def _looks_like_text(head):
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c.isspace() for c in head.decode("utf-8"))
