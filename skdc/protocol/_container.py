"""The checksummed, never-unpickled file container under every skdc deployment file.

Every skdc file is a ``.npz`` archive (a zip of ``.npy`` members, readable by
``numpy.load(path, allow_pickle=False)``) with a fixed layout:

* ``header.npy``: a UTF-8 JSON object (uint8 bytes) naming the file kind (``skdc-upload``,
  ``skdc-map``, ``skdc-model``, ``skdc-secret``), the format version and the public fields;
* one member per array, stored uncompressed, in C order, with a plain dtype (never ``object``);
* ``checksum.npy``: the file's digest, in hex: the SHA-256 over every member's name, length
  and own SHA-256 (the member digest), the header first, then the arrays by name. A file's
  digest thus commits to each member's digest, which other files can record (a participant's
  secret and the analyst's map record the digest of the upload they belong to).

Readers never unpickle: each ``.npy`` header is parsed by :mod:`numpy.lib.format` and the
array bytes are streamed, through their member's hash, straight into their destination (one
copy, so checking a file costs no second copy of it). Anything off (kind, version, checksum,
zip CRC, member set, dtype, shape, finiteness, size) raises :class:`UploadError` naming the
file and the field.

The file kinds sit on top of this module, one module each: uploads in ``_upload.py`` (read
together by ``_upload_set.py``), secrets in ``_secret.py``, maps in ``_map.py``, models in
``_model.py``. Each writes with :func:`write_container` and reads with :class:`Container` (its
header, then its member shapes, then the arrays, verified); the anchor of ``_anchor.py``, a
plain ``.npy``, is read with :func:`read_npy`, skdc's one ``.npy`` reader (``skdc.utils._npy``,
which parses every member's header here too). Of its names only :data:`FORMAT_VERSION` and
:class:`UploadError` are part of :mod:`skdc.protocol`: users read and write files through the
functions of each kind.
"""

# Licence: BSD 3 clause

import contextlib
import hashlib
import io
import json
import os
import struct
import zipfile

import numpy as np

from ..utils._files import FileError, file_kind, is_int, one_line, open_regular
from ..utils._npy import npy_bytes as _n_bytes
from ..utils._npy import npy_header
from ..utils._npy import read_npy as _read_npy
from ..utils._outputs import write_file

__all__ = [
    "CHUNK_BYTES",
    "DEFAULT_MAX_BYTES",
    "FORMAT_VERSION",
    "LABEL_KINDS",
    "Container",
    "UploadError",
    "atomic_file",
    "check_digest_field",
    "check_feature_names",
    "check_values",
    "file_kind",
    "is_int",
    "max_magnitude",
    "one_line",
    "read_npy",
    "write_container",
    "write_members",
]

#: Version of the file layout written by this skdc; readers accept exactly this version.
#: Version 2: the checksum commits to each member's digest; uploads, secrets and maps record
#: the digests that tie a participant's secret, its upload and its alignment map together.
FORMAT_VERSION = 2

#: dtype kinds a label array may have (numbers, booleans, strings; never objects).
LABEL_KINDS = "iufbU"

#: Largest file a reader accepts unless told otherwise: 4 GiB, as a table (an upload of about
#: 500 million numbers: five million rows of 100 features).
DEFAULT_MAX_BYTES = 1 << 32

#: Bytes streamed (and hashed, or checked for finiteness) at a time.
CHUNK_BYTES = 1 << 20

_HEADER = "header"
_CHECKSUM = "checksum"
_MAX_HEADER_BYTES = 1 << 20
# what the zip and .npy readers may raise on a hostile file, turned into UploadError
_READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
                NotImplementedError, struct.error, OverflowError, UnicodeDecodeError,
                RecursionError, KeyError, IndexError, MemoryError)


class UploadError(FileError):
    """A file that crosses the protocol boundary is malformed, corrupted or inconsistent.

    The message names the file and the field at fault and says what to do. A subclass of
    :class:`ValueError`, so ``python -m skdc`` prints it as one line.

    Read more in the :ref:`User Guide <deployment>`.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.protocol import UploadError, load_model
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> _ = open(path, "wb").write(b"not an archive")
    >>> try:
    ...     load_model(path)
    ... except UploadError as exc:
    ...     print(str(exc).split(": ", 1)[1][:33])
    not a readable skdc .npz archive
    """


# -- opening ------------------------------------------------------------------------------
def _open_regular(path, what="the file"):
    """:func:`skdc.utils._files.open_regular`, refusing with :class:`UploadError`."""
    return open_regular(path, what, error=UploadError)


# -- writing ------------------------------------------------------------------------------
class _HashingWriter(io.RawIOBase):
    """Hashes what passes through; writes it to ``raw`` unless ``raw`` is None."""

    def __init__(self, raw, hasher):
        self._raw, self._hasher, self.n_bytes = raw, hasher, 0

    def writable(self):
        return True

    def write(self, b):
        b = memoryview(b).cast("B")
        self._hasher.update(b)
        self.n_bytes += b.nbytes
        return b.nbytes if self._raw is None else self._raw.write(b)


def _plain_array(name, value):
    arr = np.asarray(value)
    if arr.dtype.hasobject or arr.dtype.names is not None:
        raise TypeError(
            f"{name} must be a plain numeric or string array; got dtype {arr.dtype}. Convert "
            "it (e.g. labels to int or str) before writing: skdc files never hold pickles."
        )
    return np.ascontiguousarray(arr)


def _npy_digest(arr, raw=None):
    """SHA-256 (hex) and length of ``arr``'s ``.npy`` bytes, written to ``raw`` on the way."""
    hasher = hashlib.sha256()
    w = _HashingWriter(raw, hasher)
    np.lib.format.write_array(w, arr, allow_pickle=False)
    return hasher.hexdigest(), w.n_bytes


def _file_digest(entries):
    """The file digest over ``(name, n_bytes, member digest)``, header first, then by name."""
    hasher = hashlib.sha256(b"skdc-container-2\0")
    for name, n_bytes, digest in entries:
        hasher.update(name.encode() + b"\0" + n_bytes.to_bytes(8, "little")
                      + bytes.fromhex(digest))
    return hasher.hexdigest()


def _contents(kind, header, arrays, header_digests):
    """The plain arrays by name, and a function from their digests to the header member."""
    arrays = {name: _plain_array(name, arrays[name]) for name in sorted(arrays)}

    def header_member(digests):
        full = {"format": kind, "version": FORMAT_VERSION, **header}
        if header_digests:
            full["digests"] = dict(digests)
        return np.frombuffer(json.dumps(full, sort_keys=True).encode(), np.uint8)

    return arrays, header_member


def write_members(fh, kind, header, arrays, *, header_digests=False):
    """Write an skdc ``.npz`` into the open binary file ``fh``; return its digests.

    The arrays are written first, then the header (which, with ``header_digests``, lists the
    arrays' digests under ``digests``), then the checksum; readers find members by name.
    ``fh=None`` only computes the digests.

    Returns
    -------
    digest : str
        The file digest stored in ``checksum``.
    member_digests : dict of str to str
        Each array member's digest.
    """
    arrays, header_member = _contents(kind, header, arrays, header_digests)
    with (contextlib.nullcontext() if fh is None
          else zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED)) as zf:
        def member(name):
            return (contextlib.nullcontext() if zf is None
                    else zf.open(name + ".npy", "w", force_zip64=True))

        entries = {}
        for name, arr in arrays.items():
            with member(name) as raw:
                entries[name] = _npy_digest(arr, raw)
        digests = {name: d for name, (d, _) in entries.items()}
        with member(_HEADER) as raw:
            h_digest, h_bytes = _npy_digest(header_member(digests), raw)
        digest = _file_digest([(_HEADER, h_bytes, h_digest)]
                              + [(n, b, d) for n, (d, b) in entries.items()])
        if zf is not None:
            with member(_CHECKSUM) as raw:
                np.lib.format.write_array(raw, np.frombuffer(digest.encode(), np.uint8),
                                          allow_pickle=False)
    return digest, digests


@contextlib.contextmanager
def atomic_file(path, mode, *, exclusive=False, what="the file", kind=None):
    """Write ``path`` whole or not at all, never through a link, with permission bits ``mode``.

    :func:`skdc.utils._outputs.write_file` (the file boundary), refusing with
    :class:`UploadError`: a link, pipe or device at ``path`` is replaced, never written
    into; ``exclusive=True`` refuses any existing entry instead.

    Parameters
    ----------
    path : str or path-like
        The file to write.
    mode : int
        Its permission bits: ``0o600`` for secrets, maps, models and the anchor,
        ``output_mode(0o644)`` for uploads and other shared outputs.
    exclusive : bool, default=False
        Refuse to replace an existing entry (of two racing writers, one wins).
    what : str, default="the file"
        What the file is, for messages.
    kind : str, default=None
        The kind of skdc file written (``"skdc-secret"``, ...): an existing skdc file of
        another kind, or one of the command's inputs, is never replaced.

    Yields
    ------
    fh : file object
        The temporary file, open for binary writing.
    """
    with write_file(path, what, mode=mode, exclusive=exclusive, kind=kind,
                    error=UploadError) as fh:
        yield fh


def write_container(path, kind, header, arrays, *, mode=0o600, exclusive=False,
                    what="the file", header_digests=False):
    """Write ``arrays`` and ``header`` as an skdc ``.npz`` with a checksum, atomically.

    Parameters
    ----------
    path : str or path-like
        Output file; its folder must exist.
    kind : str
        The file kind (``"skdc-upload"``, ...), stored as the header's ``format``.
    header : dict
        The public fields, JSON-serialisable.
    arrays : dict of str to array-like
        The members, plain numeric or string arrays (never objects).
    mode : int, default=0o600
        Permission bits of the written file (owner-only unless a shared output says
        otherwise: uploads are written ``output_mode(0o644)``).
    exclusive : bool, default=False
        Refuse to replace an existing file (or link, or anything) at ``path``.
    what : str, default="the file"
        What the file is (a flag such as ``"--out"``), for messages.
    header_digests : bool, default=False
        List the array members' digests in the header (``digests``).

    Returns
    -------
    path : str
        The written file.
    """
    path = os.fspath(path)
    with atomic_file(path, mode, exclusive=exclusive, what=what, kind=kind) as fh:
        write_members(fh, kind, header, arrays, header_digests=header_digests)
    return path


# -- values -------------------------------------------------------------------------------
def max_magnitude(n_terms):
    """Largest entry magnitude for which float64 arithmetic over ``n_terms`` entries is safe.

    A product of two sums of at most ``n_terms`` entries each, every entry at most
    ``sqrt(finfo.max) / n_terms`` in magnitude, stays below float64's largest value: no Gram
    matrix, matrix product or sum of squares over those entries can overflow.
    """
    return float(np.sqrt(np.finfo(np.float64).max)) / max(1, int(n_terms))


def check_values(block, where, name, limit=None):
    """Refuse NaN, infinity, and (with ``limit``) entries above ``limit`` in magnitude.

    Scans a 2-D float block in chunks (no copy of it); the message names ``where`` (the file)
    and the field ``name``, and the first row at fault.
    """
    block = block.reshape(block.shape[0], -1) if block.ndim != 2 else block
    step = max(1, CHUNK_BYTES // max(1, 8 * block.shape[1]))
    for start in range(0, block.shape[0], step):
        chunk = np.abs(block[start : start + step])
        bad = ~np.isfinite(chunk).all(axis=1)
        if bad.any():
            raise UploadError(
                f"{where}: field {name!r} contains NaN or infinity (first at row "
                f"{start + int(np.flatnonzero(bad)[0])}). Values must be finite; ask its "
                "sender to check the data."
            )
        if limit is not None and chunk.size and chunk.max() > limit:
            row = start + int(np.flatnonzero((chunk > limit).any(axis=1))[0])
            raise UploadError(
                f"{where}: field {name!r} holds {chunk.max():.3g} (first at row {row}), above "
                f"the {limit:.3g} at which float64 sums of products over these "
                f"{'values' if name == 'the anchor' else 'uploads'} can overflow; rescale the "
                "data (e.g. StandardScaler) before the mechanism."
            )


def check_feature_names(names, where, n_features=None):
    """A ``feature_names`` field: ``None`` (rows without a header: only their count is
    checked), or a list of distinct, non-empty strings (``n_features`` of them when given)."""
    if names is None:
        return None
    ok = (isinstance(names, (list, tuple)) and all(isinstance(n, str) and n for n in names)
          and len(set(names)) == len(names))
    if not ok:
        raise UploadError(f"{where}: field 'feature_names' must be null or a list of distinct "
                          f"column names; got {str(names)[:60]}.")
    if n_features is not None and len(names) != n_features:
        raise UploadError(f"{where}: field 'feature_names' names {len(names)} columns; the "
                          f"file is for {n_features}.")
    return list(names)


def check_digest_field(header, key, where):
    """The header's ``key``: a 64-digit lowercase hex digest, or None."""
    value = header.get(key)
    if value is not None and (not isinstance(value, str) or len(value) != 64
                              or any(ch not in "0123456789abcdef" for ch in value)):
        raise UploadError(
            f"{where}: field {key!r} must be a 64-digit hex digest or null; got "
            f"{str(value)[:40]!r}."
        )
    return value


# -- reading ------------------------------------------------------------------------------
class _HashingReader(io.RawIOBase):
    def __init__(self, raw, hasher):
        self._raw, self._hasher, self.n_bytes = raw, hasher, 0

    def readable(self):
        return True

    def read(self, n=-1):
        b = self._raw.read(n)
        self._hasher.update(b)
        self.n_bytes += len(b)
        return b

    def readinto(self, buf):
        view = memoryview(buf).cast("B")
        done = 0
        while done < view.nbytes:
            chunk = self._raw.read(min(view.nbytes - done, CHUNK_BYTES))
            if not chunk:
                break
            view[done : done + len(chunk)] = chunk
            self._hasher.update(chunk)
            done += len(chunk)
        self.n_bytes += done
        return done


def _npy_header(fp, where, *, allow_fortran=False):
    """:func:`skdc.utils._npy.npy_header`, refusing with :class:`UploadError`."""
    return npy_header(fp, where, allow_fortran=allow_fortran, error=UploadError)


def read_npy(path, what, *, max_bytes=DEFAULT_MAX_BYTES):
    """Read a plain ``.npy`` array (the anchor) safely: :func:`skdc.utils._npy.read_npy`,
    refusing with :class:`UploadError` (one line naming ``path`` and ``what``).

    Parameters
    ----------
    path : str or path-like
        The ``.npy`` file.
    what : str
        What the file is (``"the anchor"``), for the error messages.
    max_bytes : int, default=2**32
        Largest accepted file size in bytes.

    Returns
    -------
    array : ndarray
        The array, in the file's dtype and order.
    """
    return _read_npy(path, what, max_bytes=max_bytes, error=UploadError)


class Container:
    """A validated view of an skdc ``.npz``: header, member shapes, and streamed reads.

    Opening checks, in this order, that the path is a regular file within ``max_bytes``, that
    it is an uncompressed zip whose members lie back to back (no byte outside the checksum),
    that the header is a JSON object of this ``kind`` and :data:`FORMAT_VERSION`, and that
    every member's ``.npy`` header is plain and its declared size is what the member holds.
    Nothing of the arrays is read until :meth:`read`, which streams them through the checksum.
    Use it as a context manager (or call :meth:`close`).

    Parameters
    ----------
    path : str or path-like
        The file.
    kind : str
        The expected file kind (the header's ``format``).
    max_bytes : int, default=2**32
        Largest accepted file size in bytes.

    Attributes
    ----------
    path : str
        The file, for error messages.
    kind : str
        The file kind.
    size : int
        The file's size in bytes.
    header : dict
        The decoded public header.
    members : dict of str to tuple
        Each array member's ``(shape, dtype)``, from its ``.npy`` header (with ``checksum``).
    """

    def __init__(self, path, kind, *, max_bytes=DEFAULT_MAX_BYTES):
        self.path = os.fspath(path)
        self.kind = kind
        self._zip = None
        self._fh = _open_regular(self.path, "the file")
        try:
            self.size = os.fstat(self._fh.fileno()).st_size
            if self.size > max_bytes:
                raise UploadError(
                    f"{self.path}: {self.size} bytes, above the limit max_bytes={max_bytes}. "
                    "Raise max_bytes if the file is expected to be that large."
                )
            infos = self._open_archive()
            self.infos = self._index_members(infos)
            self._check_layout(infos)
            for required in (_HEADER, _CHECKSUM):
                if required not in self.infos:
                    raise UploadError(
                        f"{self.path}: missing member {required!r}; this is not an skdc file "
                        "(or it is truncated)."
                    )
            self.header = self._read_header()
            self.members = self._read_member_shapes()
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        """Close the file (idempotent)."""
        if getattr(self, "_zip", None) is not None:
            self._zip.close()
        if getattr(self, "_fh", None) is not None:
            self._fh.close()

    def _open_archive(self):
        try:
            self._zip = zipfile.ZipFile(self._fh)
            return self._zip.infolist()
        except _READ_ERRORS as exc:
            raise UploadError(
                f"{self.path}: not a readable skdc .npz archive ({one_line(exc)}). The file is "
                "truncated, corrupted or not an skdc file; ask its sender for a fresh copy."
            ) from None

    def _index_members(self, infos):
        """Name to zip entry: stored, unencrypted ``.npy`` members that fit in the file."""
        out = {}
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or name[:-4] in out or "/" in name:
                raise UploadError(f"{self.path}: unexpected archive member {name!r}.")
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                raise UploadError(
                    f"{self.path}: member {name!r} is compressed or encrypted; skdc files are "
                    "stored uncompressed. Re-export the file with skdc."
                )
            if info.header_offset + info.file_size > self.size:
                raise UploadError(
                    f"{self.path}: member {name!r} claims {info.file_size} bytes, more than the "
                    "file holds: the file is truncated."
                )
            out[name[:-4]] = info
        return out

    def _check_layout(self, infos):
        """Members back to back from byte 0 to the zip directory: no byte rides unchecked."""
        if self._zip.comment:
            raise UploadError(
                f"{self.path}: the archive carries a {len(self._zip.comment)}-byte comment; skdc "
                "files have none. Refusing bytes the checksum does not cover."
            )
        pos = 0
        for info in sorted(infos, key=lambda i: i.header_offset):
            if info.header_offset != pos:
                raise UploadError(
                    f"{self.path}: {abs(info.header_offset - pos)} stray bytes before member "
                    f"{info.filename!r}; skdc files have none. Ask the sender for a fresh copy."
                )
            self._fh.seek(pos)
            local = self._fh.read(30)
            if len(local) != 30 or local[:4] != b"PK\x03\x04" or info.flag_bits & 0x08:
                raise UploadError(f"{self.path}: member {info.filename!r} has a malformed entry.")
            n_name, n_extra = struct.unpack("<HH", local[26:30])
            pos += 30 + n_name + n_extra + info.compress_size
        if pos != getattr(self._zip, "start_dir", pos):
            raise UploadError(
                f"{self.path}: {abs(self._zip.start_dir - pos)} stray bytes after the last "
                "member; skdc files have none. Ask the sender for a fresh copy."
            )

    def _open(self, name):
        return self._zip.open(self.infos[name])

    def _read_header(self):
        try:
            header = json.loads(self._header_bytes().decode("utf-8"))
        except UploadError:
            raise
        except _READ_ERRORS as exc:
            raise UploadError(
                f"{self.path}: field 'header' is not valid JSON ({one_line(exc)})."
            ) from None
        if not isinstance(header, dict):
            raise UploadError(f"{self.path}: field 'header' is not a JSON object.")
        if header.get("format") != self.kind:
            raise UploadError(
                f"{self.path}: field 'format' is {header.get('format')!r}, expected "
                f"{self.kind!r}. Pass the right kind of skdc file."
            )
        if header.get("version") != FORMAT_VERSION:
            raise UploadError(
                f"{self.path}: field 'version' is {header.get('version')!r}; this skdc reads "
                f"version {FORMAT_VERSION}. Re-export the file with a matching skdc version."
            )
        return header

    def _header_bytes(self):
        info = self.infos[_HEADER]
        if info.file_size > _MAX_HEADER_BYTES:
            raise UploadError(
                f"{self.path}: field 'header' is {info.file_size} bytes, above the limit of "
                f"{_MAX_HEADER_BYTES}; skdc headers are a few hundred bytes."
            )
        with self._open(_HEADER) as fp:
            shape, dtype = _npy_header(fp, f"{self.path}: field 'header'")
            if dtype != np.uint8 or len(shape) != 1:
                raise UploadError(f"{self.path}: field 'header' is not a byte string.")
            if fp.tell() + shape[0] != info.file_size:
                raise UploadError(
                    f"{self.path}: field 'header' declares {shape[0]} bytes but its member "
                    f"holds {info.file_size - fp.tell()}: trailing bytes are refused."
                )
            return fp.read(shape[0])

    def _read_member_shapes(self):
        out = {}
        for name, info in self.infos.items():
            if name == _HEADER:
                continue
            try:
                with self._open(name) as fp:
                    shape, dtype = _npy_header(fp, f"{self.path}: field {name!r}")
                    offset = fp.tell()
            except UploadError:
                raise
            except _READ_ERRORS as exc:
                raise UploadError(
                    f"{self.path}: field {name!r} unreadable ({one_line(exc)})."
                ) from None
            n_bytes = _n_bytes(shape, dtype)
            if offset + n_bytes != info.file_size:
                raise UploadError(
                    f"{self.path}: field {name!r} declares shape {shape} of {dtype} "
                    f"({n_bytes} bytes) but its member holds {info.file_size - offset}: the "
                    "file is truncated or corrupted."
                )
            out[name] = (tuple(int(s) for s in shape), dtype)
        return out

    def int_field(self, key, low=0, high=None, *, expected=None):
        """The header's integer ``key``, checked to lie in ``low .. high``.

        Parameters
        ----------
        key : str
            The header field.
        low : int, default=0
            Smallest accepted value.
        high : int or None, default=None
            Largest accepted value; ``None`` means no limit.
        expected : str, default=None
            What the error says the field must be; ``None`` derives it from the bounds
            (``"an int >= 0"``, ``"a positive int"``, ``"an int in 1 .. 9"``).

        Returns
        -------
        value : int
            The field.
        """
        value = self.header.get(key)
        if is_int(value) and low <= value and (high is None or value <= high):
            return value
        if expected is None:
            expected = (f"an int in {low} .. {high}" if high is not None
                        else "a positive int" if low == 1 else f"an int >= {low}")
        raise UploadError(f"{self.path}: field {key!r} must be {expected}; got {value!r}.")

    def expect_members(self, required, optional=()):
        """Refuse a member set other than ``required`` plus some of ``optional``."""
        names = set(self.members) - {_CHECKSUM}
        missing = set(required) - names
        extra = names - set(required) - set(optional)
        if missing or extra:
            what = (f"missing {sorted(missing)}" if missing else "") + (
                f"{'; ' if missing else ''}unexpected {sorted(extra)}" if extra else ""
            )
            raise UploadError(f"{self.path}: fields do not match a {self.kind} file: {what}.")

    def array_members(self):
        """Each array member's ``(shape, dtype)``, without the checksum."""
        return {k: v for k, v in self.members.items() if k != _CHECKSUM}

    def read(self, into=None):
        """Stream every member through its digest; return the arrays once the checksum matched.

        Sets :attr:`digest` (the file digest) and :attr:`member_digests` (each array member's).

        Parameters
        ----------
        into : dict of str to ndarray, default=None
            Preallocated destinations of some members (of their shape), written in place.

        Returns
        -------
        arrays : dict of str to ndarray
            Every array member, once the checksum matched.
        """
        into = into or {}
        arrays, entries = {}, []
        try:
            for name in [_HEADER] + sorted(self.array_members()):
                hasher = hashlib.sha256()
                with self._open(name) as raw:
                    fp = _HashingReader(raw, hasher)
                    if name == _HEADER:
                        fp.read()
                    else:
                        arrays[name] = self._read_member(fp, name, into.get(name))
                    if raw.read(1):
                        raise UploadError(f"{self.path}: field {name!r} has trailing bytes.")
                entries.append((name, fp.n_bytes, hasher.hexdigest()))
            with self._open(_CHECKSUM) as fp:
                stored = np.lib.format.read_array(fp, allow_pickle=False)
        except UploadError:
            raise
        except _READ_ERRORS as exc:
            raise UploadError(
                f"{self.path}: corrupted while reading ({one_line(exc)}). Ask the sender for a "
                "fresh copy."
            ) from None
        digest = _file_digest(entries)
        if stored.dtype != np.uint8 or stored.tobytes() != digest.encode():
            raise UploadError(
                f"{self.path}: field 'checksum' does not match the content: the file was "
                "modified or corrupted after it was written. Ask the sender for a fresh copy."
            )
        self.digest = digest
        self.member_digests = {name: d for name, _, d in entries[1:]}
        return arrays

    def _read_member(self, fp, name, out):
        shape, dtype = self.members[name]
        if _npy_header(fp, f"{self.path}: field {name!r}") != (shape, dtype):
            raise UploadError(f"{self.path}: field {name!r} changed while read.")
        if out is None:
            out = np.empty(shape, dtype=dtype)
        elif out.shape != shape:
            raise UploadError(f"{self.path}: field {name!r} has shape {shape}.")
        if out.flags.c_contiguous and out.dtype == dtype:
            got = fp.readinto(out.reshape(-1).view(np.uint8)) if out.size else 0
        else:
            got = 0
            rows = max(1, CHUNK_BYTES // max(1, dtype.itemsize * int(np.prod(shape[1:]))))
            for start in range(0, shape[0], rows):
                chunk = np.empty((min(rows, shape[0] - start),) + shape[1:], dtype=dtype)
                got += fp.readinto(chunk.reshape(-1).view(np.uint8)) if chunk.size else 0
                out[start : start + chunk.shape[0]] = chunk
        if got != _n_bytes(shape, dtype):
            raise UploadError(f"{self.path}: field {name!r} is truncated.")
        return out
