"""Files that cross the boundary between participants and the analyst.

Every skdc file is a ``.npz`` archive (a zip of ``.npy`` members, readable by
``numpy.load(path, allow_pickle=False)``) with a fixed layout:

* ``header.npy``: a UTF-8 JSON object (uint8 bytes) naming the file kind (``skdc-upload``,
  ``skdc-map``, ``skdc-model``, ``skdc-secret``), the format version and the public fields;
* one member per array, stored uncompressed, in C order, with a plain dtype (never ``object``);
* ``checksum.npy``: the SHA-256, in hex, of every other member's name, bytes and length.

Readers never unpickle: each ``.npy`` header is parsed by :mod:`numpy.lib.format` and the
array bytes are streamed, through the hash, straight into their destination (one copy, so
checking a file costs no second copy of it). Anything off (kind, version, checksum, zip CRC,
member set, dtype, shape, finiteness, size) raises :class:`UploadError` naming the file and the
field.
"""

# Licence: BSD 3 clause

import hashlib
import io
import json
import os
import stat
import struct
import tempfile
import zipfile
from numbers import Integral
from typing import NamedTuple

import numpy as np

from .._uploads import Uploads

__all__ = ["FORMAT_VERSION", "UploadError", "UploadSet", "load_uploads", "save_upload"]

#: Version of the file layout written by this skdc; readers accept exactly this version.
FORMAT_VERSION = 1

_HEADER = "header"
_CHECKSUM = "checksum"
_MAX_HEADER_BYTES = 1 << 20
_CHUNK_BYTES = 1 << 20
_DEFAULT_MAX_BYTES = 1 << 36  # 64 GiB per file
_LABEL_KINDS = "iufbU"
_NPY_MAGIC = b"\x93NUMPY"
_NPY_MAX_HEADER = 10000  # numpy's own safety limit on a .npy header
# what the zip and .npy readers may raise on a hostile file, turned into UploadError
_READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
                NotImplementedError, struct.error, OverflowError, UnicodeDecodeError,
                RecursionError, KeyError, IndexError, MemoryError)


class UploadError(ValueError):
    """A file that crosses the protocol boundary is malformed, corrupted or inconsistent.

    The message names the file and the field at fault and says what to do. A subclass of
    :class:`ValueError`, so ``python -m skdc`` prints it as one line.
    """


class UploadSet(NamedTuple):
    """What :func:`load_uploads` returns.

    Attributes
    ----------
    uploads : Uploads of shape (n_samples, n_components)
        The stacked private-data uploads, in participant-id order, with the anchor uploads.
    y : ndarray of shape (n_samples,) or None
        The uploaded labels, stacked the same way (``None`` when no file carries labels).
    headers : list of dict
        The public header of each participant's file, in participant-id order.
    """

    uploads: Uploads
    y: np.ndarray | None
    headers: list


# -- opening ------------------------------------------------------------------------------
def _file_kind(mode):
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _open_regular(path, what="the file"):
    """Open ``path`` for reading only if it is a regular file (after following links).

    Named pipes, devices (``/dev/zero``, ``/dev/urandom``), sockets and directories, or links to
    them, are refused before anything is read from them, so a hostile path can neither block
    the reader nor feed it endless bytes. The check is repeated on the opened descriptor, so the
    path cannot be swapped in between.
    """
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            # O_NONBLOCK: should the path turn into a pipe after the check, open returns at once
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                         | getattr(os, "O_CLOEXEC", 0))
            mode = os.fstat(fd).st_mode
            if stat.S_ISREG(mode):
                return os.fdopen(fd, "rb")
            os.close(fd)
    except OSError as exc:
        raise UploadError(f"{path}: cannot read {what} ({exc.strerror}).") from None
    raise UploadError(
        f"{path}: {what} is {_file_kind(mode)}, not a regular file; skdc reads only regular "
        "files (never pipes, devices or links to them). Pass the file itself."
    )


def _one_line(exc, limit=160):
    """An exception message as one short line (numpy's messages span several)."""
    msg = " ".join(str(exc).split())
    return msg if len(msg) <= limit else msg[: limit - 3] + "..."


# -- writing ------------------------------------------------------------------------------
class _HashingWriter(io.RawIOBase):
    def __init__(self, raw, hasher):
        self._raw, self._hasher, self.n_bytes = raw, hasher, 0

    def writable(self):
        return True

    def write(self, b):
        b = memoryview(b).cast("B")
        self._hasher.update(b)
        self.n_bytes += b.nbytes
        return self._raw.write(b)


def _plain_array(name, value):
    arr = np.asarray(value)
    if arr.dtype.hasobject or arr.dtype.names is not None:
        raise TypeError(
            f"{name} must be a plain numeric or string array; got dtype {arr.dtype}. Convert "
            "it (e.g. labels to int or str) before writing: skdc files never hold pickles."
        )
    return np.ascontiguousarray(arr)


def _write_container(path, kind, header, arrays, *, mode=0o644):
    """Write ``arrays`` and ``header`` as an skdc ``.npz`` with a checksum, atomically."""
    path = os.fspath(path)
    header = {"format": kind, "version": FORMAT_VERSION, **header}
    members = [(_HEADER, np.frombuffer(json.dumps(header, sort_keys=True).encode(), np.uint8))]
    members += [(name, _plain_array(name, arrays[name])) for name in sorted(arrays)]
    hasher = hashlib.sha256()
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise ValueError(f"cannot write {path}: the folder {directory} does not exist (or is "
                         "not a folder); create it first.")
    if os.path.isdir(path):
        raise ValueError(f"cannot write {path}: it is an existing folder; give a file name.")
    fd, tmp = tempfile.mkstemp(prefix=".skdc-", suffix=".tmp", dir=directory)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
            for name, arr in members:
                hasher.update(name.encode() + b"\0")
                with zf.open(name + ".npy", "w", force_zip64=True) as raw:
                    w = _HashingWriter(raw, hasher)
                    np.lib.format.write_array(w, arr, allow_pickle=False)
                hasher.update(w.n_bytes.to_bytes(8, "little"))
            digest = np.frombuffer(hasher.hexdigest().encode(), np.uint8)
            with zf.open(_CHECKSUM + ".npy", "w") as raw:
                np.lib.format.write_array(raw, digest, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


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
            chunk = self._raw.read(min(view.nbytes - done, _CHUNK_BYTES))
            if not chunk:
                break
            view[done : done + len(chunk)] = chunk
            self._hasher.update(chunk)
            done += len(chunk)
        self.n_bytes += done
        return done


def _npy_header(fp, where, *, allow_fortran=False):
    try:
        version = np.lib.format.read_magic(fp)
        if version not in ((1, 0), (2, 0), (3, 0)):
            raise ValueError(f"unsupported .npy version {version}")
        # the header length field first, so an oversized header gets a one-line message
        length = fp.read(2 if version == (1, 0) else 4)
        declared = int.from_bytes(length, "little")
        if declared > _NPY_MAX_HEADER:
            raise UploadError(
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
    except UploadError:
        raise
    except (TypeError, SyntaxError, *_READ_ERRORS) as exc:
        raise UploadError(f"{where}: unreadable .npy header ({_one_line(exc)}).") from None
    if dtype.hasobject or dtype.names is not None or dtype.subdtype is not None:
        raise UploadError(
            f"{where}: dtype {dtype} is not a plain numeric or string dtype; skdc files never "
            "hold pickled objects. Refusing the file; ask its sender to re-export it with skdc."
        )
    if fortran and not allow_fortran:
        raise UploadError(f"{where}: Fortran-ordered array; skdc writes C order. Re-export it.")
    return (shape, dtype, fortran) if allow_fortran else (shape, dtype)


def _read_npy(path, what, *, max_bytes=_DEFAULT_MAX_BYTES):
    """Read a plain ``.npy`` array (a participant's data, labels, the anchor) safely.

    Only a regular file is opened; its ``.npy`` header is parsed without unpickling, object and
    structured dtypes are refused, and the declared size must match the file exactly (no
    truncation, no trailing bytes). Every error is one :class:`UploadError` line naming ``path``
    and ``what`` (the flag or field).
    """
    path = os.fspath(path)
    with _open_regular(path, what) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise UploadError(f"{path}: {what} has {size} bytes, above the limit {max_bytes}.")
        magic = fh.read(len(_NPY_MAGIC))
        if magic != _NPY_MAGIC:
            hint = (" (it looks like text: a CSV? convert it with numpy.save('X.npy', "
                    "numpy.loadtxt('X.csv', delimiter=',')))") if _looks_like_text(magic) else ""
            raise UploadError(
                f"{path}: {what} is not a .npy file{hint}; skdc reads arrays written by "
                "numpy.save."
            )
        fh.seek(0)
        shape, dtype, fortran = _npy_header(fh, f"{path}: {what}", allow_fortran=True)
        offset = fh.tell()
        n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if offset + n_bytes != size:
            raise UploadError(
                f"{path}: {what} declares shape {shape} of {dtype} ({n_bytes} bytes) but the "
                f"file holds {size - offset}: it is truncated or has trailing bytes."
            )
        out = np.empty(shape[::-1] if fortran else shape, dtype=dtype)
        if n_bytes and fh.readinto(out.reshape(-1).view(np.uint8)) != n_bytes:
            raise UploadError(f"{path}: {what} is truncated.")
    return out.T if fortran else out


def _looks_like_text(head):
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(c.isprintable() or c.isspace() for c in head.decode("utf-8"))


class _Container:
    """A validated view of an skdc ``.npz``: header, member shapes, and streamed reads."""

    def __init__(self, path, kind, *, max_bytes=_DEFAULT_MAX_BYTES):
        self.path = os.fspath(path)
        self.kind = kind
        self._fh = _open_regular(self.path, "the file")
        self.size = size = os.fstat(self._fh.fileno()).st_size
        if size > max_bytes:
            self.close()
            raise UploadError(
                f"{self.path}: {size} bytes, above the limit max_bytes={max_bytes}. Raise "
                "max_bytes if the file is expected to be that large."
            )
        try:
            self._zip = zipfile.ZipFile(self._fh)
            infos = self._zip.infolist()
        except _READ_ERRORS as exc:
            self.close()
            raise UploadError(
                f"{self.path}: not a readable skdc .npz archive ({_one_line(exc)}). The file is "
                "truncated, corrupted or not an skdc file; ask its sender for a fresh copy."
            ) from None
        self.infos = {}
        for info in infos:
            name = info.filename
            if not name.endswith(".npy") or name[:-4] in self.infos or "/" in name:
                self.close()
                raise UploadError(f"{self.path}: unexpected archive member {name!r}.")
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
                self.close()
                raise UploadError(
                    f"{self.path}: member {name!r} is compressed or encrypted; skdc files are "
                    "stored uncompressed. Re-export the file with skdc."
                )
            if info.header_offset + info.file_size > size:
                self.close()
                raise UploadError(
                    f"{self.path}: member {name!r} claims {info.file_size} bytes, more than the "
                    "file holds: the file is truncated."
                )
            self.infos[name[:-4]] = info
        try:
            self._check_layout(infos)
        except BaseException:
            self.close()
            raise
        for required in (_HEADER, _CHECKSUM):
            if required not in self.infos:
                self.close()
                raise UploadError(
                    f"{self.path}: missing member {required!r}; this is not an skdc file (or it "
                    "is truncated)."
                )
        try:
            self.header = self._read_header()
            self.members = self._read_member_shapes()
        except BaseException:
            self.close()
            raise

    def close(self):
        if getattr(self, "_zip", None) is not None:
            self._zip.close()
        if getattr(self, "_fh", None) is not None:
            self._fh.close()

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
        info = self.infos[_HEADER]
        if info.file_size > _MAX_HEADER_BYTES:
            raise UploadError(
                f"{self.path}: field 'header' is {info.file_size} bytes, above the limit of "
                f"{_MAX_HEADER_BYTES}; skdc headers are a few hundred bytes."
            )
        try:
            with self._open(_HEADER) as fp:
                shape, dtype = _npy_header(fp, f"{self.path}: field 'header'")
                if dtype != np.uint8 or len(shape) != 1:
                    raise UploadError(f"{self.path}: field 'header' is not a byte string.")
                if fp.tell() + shape[0] != info.file_size:
                    raise UploadError(
                        f"{self.path}: field 'header' declares {shape[0]} bytes but its member "
                        f"holds {info.file_size - fp.tell()}: trailing bytes are refused."
                    )
                raw = fp.read(shape[0])
            header = json.loads(raw.decode("utf-8"))
        except UploadError:
            raise
        except _READ_ERRORS as exc:
            raise UploadError(
                f"{self.path}: field 'header' is not valid JSON ({_one_line(exc)})."
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

    def _read_member_shapes(self):
        out = {}
        for name, info in self.infos.items():
            if name == _HEADER:
                continue
            try:
                with self._open(name) as fp:
                    where = f"{self.path}: field {name!r}"
                    shape, dtype = _npy_header(fp, where)
                    offset = fp.tell()
            except UploadError:
                self.close()
                raise
            except _READ_ERRORS as exc:
                self.close()
                raise UploadError(
                    f"{self.path}: field {name!r} unreadable ({_one_line(exc)})."
                ) from None
            n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if offset + n_bytes != info.file_size:
                self.close()
                raise UploadError(
                    f"{self.path}: field {name!r} declares shape {shape} of {dtype} "
                    f"({n_bytes} bytes) but its member holds {info.file_size - offset}: the "
                    "file is truncated or corrupted."
                )
            out[name] = (tuple(int(s) for s in shape), dtype)
        return out

    def expect_members(self, required, optional=()):
        names = set(self.members) - {_CHECKSUM}
        missing = set(required) - names
        extra = names - set(required) - set(optional)
        if missing or extra:
            what = (f"missing {sorted(missing)}" if missing else "") + (
                f"{'; ' if missing else ''}unexpected {sorted(extra)}" if extra else ""
            )
            raise UploadError(f"{self.path}: fields do not match a {self.kind} file: {what}.")

    def read(self, into=None):
        """Stream every member through the checksum; return the arrays, verified."""
        into = into or {}
        hasher = hashlib.sha256()
        arrays = {}
        order = [_HEADER] + sorted(n for n in self.members if n != _CHECKSUM)
        try:
            for name in order:
                hasher.update(name.encode() + b"\0")
                with self._open(name) as raw:
                    fp = _HashingReader(raw, hasher)
                    if name == _HEADER:
                        fp.read()
                    else:
                        shape, dtype = self.members[name]
                        again = _npy_header(fp, f"{self.path}: field {name!r}")
                        if again != (shape, dtype):
                            raise UploadError(f"{self.path}: field {name!r} changed while read.")
                        arrays[name] = self._read_body(fp, name, shape, dtype, into.get(name))
                    if raw.read(1):
                        raise UploadError(f"{self.path}: field {name!r} has trailing bytes.")
                hasher.update(fp.n_bytes.to_bytes(8, "little"))
            with self._open(_CHECKSUM) as fp:
                stored = np.lib.format.read_array(fp, allow_pickle=False)
        except UploadError:
            raise
        except _READ_ERRORS as exc:
            raise UploadError(
                f"{self.path}: corrupted while reading ({_one_line(exc)}). Ask the sender for a "
                "fresh copy."
            ) from None
        if stored.dtype != np.uint8 or stored.tobytes() != hasher.hexdigest().encode():
            raise UploadError(
                f"{self.path}: field 'checksum' does not match the content: the file was "
                "modified or corrupted after it was written. Ask the sender for a fresh copy."
            )
        return arrays

    def _read_body(self, fp, name, shape, dtype, out):
        if out is None:
            out = np.empty(shape, dtype=dtype)
        elif out.shape != shape:
            raise UploadError(f"{self.path}: field {name!r} has shape {shape}.")
        if out.flags.c_contiguous and out.dtype == dtype:
            got = fp.readinto(out.reshape(-1).view(np.uint8)) if out.size else 0
        else:
            got = 0
            rows = max(1, _CHUNK_BYTES // max(1, dtype.itemsize * int(np.prod(shape[1:]))))
            for start in range(0, shape[0], rows):
                chunk = np.empty((min(rows, shape[0] - start),) + shape[1:], dtype=dtype)
                got += fp.readinto(chunk.reshape(-1).view(np.uint8)) if chunk.size else 0
                out[start : start + chunk.shape[0]] = chunk
        if got != int(np.prod(shape, dtype=object)) * dtype.itemsize:
            raise UploadError(f"{self.path}: field {name!r} is truncated.")
        return out


# -- uploads ------------------------------------------------------------------------------
_UPLOAD = "skdc-upload"
_PUBLIC_PARAMS = ("n_participants", "noise", "translation_scale", "n_anchors")


def _anchor_id(A):
    """Public fingerprint of a raw anchor: SHA-256 of its float64 bytes and shape."""
    A = np.ascontiguousarray(A, dtype="<f8")
    h = hashlib.sha256(repr(A.shape).encode())
    h.update(memoryview(A).cast("B"))
    return h.hexdigest()


def _public_description(mechanism):
    """The mechanism's public description: its kind and public scale parameters only."""
    if mechanism is None:
        return None
    params = mechanism.get_params(deep=False)
    desc = {"kind": type(mechanism).__name__}
    for name in _PUBLIC_PARAMS:
        value = params.get(name)
        if isinstance(value, (bool, Integral, float, int)) or value is None:
            desc[name] = value if not isinstance(value, np.generic) else value.item()
    desc["n_features_in"] = int(getattr(mechanism, "n_features_in_", 0)) or None
    return desc


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def save_upload(path, uploads, participant_id, *, labels=None, mechanism=None,
                anchor_noise=None, anchor_id=None):
    """Write one participant's upload to an skdc ``.npz`` file.

    The file holds the participant's private-data upload ``Y_i``, its anchor upload ``B_i``
    (already carrying the participant's anchor noise), its labels, and a public header: format
    version, participant id, widths, anchor rows, the mechanism's public description (kind and
    scale parameters, never its seed or secrets), the anchor fingerprint and the declared anchor
    noise. A SHA-256 checksum covers the whole content.

    Parameters
    ----------
    path : str or path-like
        Output file (conventionally ``*.npz``); written atomically.
    uploads : Uploads
        Either a one-participant :class:`~skdc.Uploads` (all of it is written, its anchor upload
        is ``anchors[0]``), or a multi-participant one, from which the rows and the anchor
        upload of ``participant_id`` are taken (a simulated deployment).
    participant_id : int
        The participant's id in the collaboration, ``0 .. n_participants - 1``.
    labels : array-like of shape (n_rows,), default=None
        Labels of the written rows (numeric or string; never objects).
    mechanism : BaseMechanism, default=None
        The fitted mechanism, for its public description and its anchor fingerprint.
    anchor_noise : float, default=None
        The anchor noise ``v`` the participant adds (``None``: not declared). Uploads that
        carry unit anchor noise (a mechanism's own output: a simulated deployment) are written
        with the anchor upload ``B_i + v W_i``, never ``W_i`` nor the clean ``B_i`` unless
        ``v`` is 0 or not declared; uploads that are already noisy
        (:meth:`Participant.upload`) are written as they are.
    anchor_id : str, default=None
        Fingerprint of the raw anchor; computed from ``mechanism.anchor_`` when not given.

    Returns
    -------
    path : str
        The written file.

    See Also
    --------
    load_uploads : Read and validate upload files.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import load_uploads, save_upload
    >>> X = np.random.RandomState(0).rand(30, 3)
    >>> mech = IGDP(n_participants=2, random_state=0)
    >>> Y = mech.fit_transform(X, participant=np.arange(30) % 2)
    >>> tmp = tempfile.mkdtemp()
    >>> paths = [save_upload(os.path.join(tmp, f"u{i}.npz"), Y, i, mechanism=mech)
    ...          for i in range(2)]
    >>> loaded = load_uploads(paths)
    >>> loaded.uploads.shape, loaded.uploads.n_participants
    ((30, 3), 2)
    """
    if not isinstance(uploads, Uploads) or uploads.participant is None:
        raise TypeError(
            f"save_upload expects the skdc.Uploads returned by a mechanism's transform; got "
            f"{type(uploads).__name__}."
        )
    if not _is_int(participant_id) and not isinstance(participant_id, np.integer):
        raise TypeError(f"participant_id must be an int; got {type(participant_id).__name__}.")
    participant_id = int(participant_id)
    if participant_id < 0:
        raise ValueError(f"participant_id must be non-negative; got {participant_id}.")
    local = uploads.n_participants == 1 or (
        uploads.anchors is None and np.all(uploads.participant == participant_id)
    )
    rows = np.ones(uploads.shape[0], bool) if local else uploads.participant == participant_id
    if not np.any(rows):
        raise ValueError(
            f"save_upload: the uploads hold no rows of participant {participant_id}; an upload "
            "needs at least one row."
        )
    anchor = None
    if uploads.anchors is not None:
        # what leaves is B_i + v W_i (a no-op on already noisy uploads, which carry no W_i)
        anchors = uploads.anchors if uploads.anchor_noise is None else uploads.noisy_anchors(
            float(anchor_noise or 0.0))
        anchor = anchors[0 if local else participant_id]
    width = uploads.shape[1] if anchor is None else anchor.shape[1]
    data = np.asarray(uploads)[rows, :width]
    if not np.all(np.isfinite(data)):
        raise ValueError("save_upload: the uploads contain NaN or infinity; refusing to write.")
    arrays = {"data": data}
    if anchor is not None:
        arrays["anchor_upload"] = anchor
        if uploads.anchor_y is not None:
            arrays["anchor_y"] = np.asarray(uploads.anchor_y)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape == (uploads.shape[0],) and not local:
            labels = labels[rows]
        if labels.shape != (data.shape[0],):
            raise ValueError(
                f"labels must have one entry per uploaded row, shape ({data.shape[0]},); got "
                f"{labels.shape}."
            )
        arrays["labels"] = labels
    if anchor_id is None and getattr(mechanism, "anchor_", None) is not None:
        anchor_id = _anchor_id(mechanism.anchor_)
    if anchor_noise is not None:
        anchor_noise = float(anchor_noise)
    header = {
        "participant_id": participant_id,
        "n_samples": int(data.shape[0]),
        "n_components": int(width),
        "n_anchors": 0 if anchor is None else int(anchor.shape[0]),
        "has_labels": labels is not None,
        "mechanism": _public_description(mechanism),
        "anchor_id": anchor_id,
        "anchor_noise": anchor_noise,
    }
    from .. import __version__

    header["skdc_version"] = __version__
    return _write_container(path, _UPLOAD, header, arrays)


def _check_upload_header(c):
    h, where = c.header, c.path
    for key in ("participant_id", "n_samples", "n_components", "n_anchors"):
        if not _is_int(h.get(key)) or h[key] < 0:
            raise UploadError(
                f"{where}: field {key!r} must be a non-negative integer; got {h.get(key)!r}."
            )
    if h["n_samples"] < 1 or h["n_components"] < 1:
        raise UploadError(
            f"{where}: field 'n_samples'/'n_components' is {h['n_samples']}/"
            f"{h['n_components']}: an upload needs at least one row and one column."
        )
    if not isinstance(h.get("has_labels"), bool):
        raise UploadError(f"{where}: field 'has_labels' must be true or false.")
    if h.get("anchor_id") is not None and not isinstance(h["anchor_id"], str):
        raise UploadError(f"{where}: field 'anchor_id' must be a string or null.")
    v = h.get("anchor_noise")
    if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)
                          or not np.isfinite(v) or v < 0):
        raise UploadError(f"{where}: field 'anchor_noise' must be a finite number >= 0.")
    m = h.get("mechanism")
    if m is not None and not isinstance(m, dict):
        raise UploadError(f"{where}: field 'mechanism' must be an object or null.")
    if m is not None:
        if m.get("kind") is not None and not isinstance(m["kind"], str):
            raise UploadError(f"{where}: field 'mechanism.kind' must be a string or null.")
        n_in = m.get("n_features_in")
        if n_in is not None and (not _is_int(n_in) or n_in < 1):
            raise UploadError(
                f"{where}: field 'mechanism.n_features_in' must be a positive integer or null; "
                f"got {n_in!r}."
            )
    required = ["data"] + (["anchor_upload"] if h["n_anchors"] else [])
    required += ["labels"] if h["has_labels"] else []
    c.expect_members(required, optional=["anchor_y"] if h["n_anchors"] else [])
    n, w, r = h["n_samples"], h["n_components"], h["n_anchors"]
    expected = {"data": (n, w), "anchor_upload": (r, w), "labels": (n,), "anchor_y": (r,)}
    for name, (shape, dtype) in c.members.items():
        if name == _CHECKSUM:
            continue
        if shape != expected[name]:
            raise UploadError(
                f"{where}: field {name!r} has shape {shape}; the header declares "
                f"{expected[name]}."
            )
        if name in ("data", "anchor_upload") and dtype != np.dtype("<f8"):
            raise UploadError(
                f"{where}: field {name!r} has dtype {dtype}; uploads are little-endian float64."
            )
        if name in ("labels", "anchor_y") and dtype.kind not in _LABEL_KINDS:
            raise UploadError(f"{where}: field {name!r} has unsupported dtype {dtype}.")


def _check_finite(block, where, name):
    step = max(1, _CHUNK_BYTES // max(1, 8 * block.shape[1]))
    for start in range(0, block.shape[0], step):
        chunk = block[start : start + step]
        if not np.isfinite(chunk).all():
            bad = start + int(np.flatnonzero(~np.isfinite(chunk).all(axis=1))[0])
            raise UploadError(
                f"{where}: field {name!r} contains NaN or infinity (first at row {bad}). "
                "Uploads must be finite; ask the participant to check its data."
            )


def load_uploads(paths, *, max_bytes=_DEFAULT_MAX_BYTES, max_total_bytes=None,
                 allow_different_widths=False):
    """Read, verify and stack participants' upload files into one :class:`~skdc.Uploads`.

    Every file is checked before any of its numbers are used: format and version, the SHA-256
    checksum (streamed while the arrays are read, so no second copy is made), the member set,
    dtypes and shapes against the header, finiteness, and, across files, duplicate or missing
    participant ids, equal anchor rows and anchor fingerprints, identical anchor uploads
    (the same upload under two ids), label presence, and size limits. Files are opened without
    ever unpickling.

    Parameters
    ----------
    paths : str, path-like or sequence of them
        The upload files, one per participant, in any order.
    max_bytes : int, default=2**36
        Largest accepted file size in bytes.
    max_total_bytes : int, default=None
        Largest accepted total size of all files; ``None`` means no limit.
    allow_different_widths : bool, default=False
        Accept participants whose representations have different widths (nonlinear
        reductions, for the integration aligners). GDP uploads share one width.

    Returns
    -------
    loaded : UploadSet
        ``(uploads, y, headers)``: the stacked uploads in participant-id order, the stacked
        labels (or ``None``) and each file's public header.

    Raises
    ------
    UploadError
        Naming the file and the field at fault.

    See Also
    --------
    save_upload : Write one participant's upload.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import load_uploads, save_upload
    >>> X = np.random.RandomState(0).rand(20, 2)
    >>> Y = IGDP(n_participants=2, random_state=0).fit_transform(X, participant=np.arange(20) % 2)
    >>> tmp = tempfile.mkdtemp()
    >>> paths = [save_upload(os.path.join(tmp, f"u{i}.npz"), Y, i) for i in (1, 0)]
    >>> load_uploads(paths).uploads.participant[:4]
    array([0, 0, 0, 0])
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise UploadError("load_uploads got no files; pass one upload file per participant.")
    containers = []
    try:
        for path in paths:
            c = _Container(path, _UPLOAD, max_bytes=max_bytes)
            containers.append(c)
            _check_upload_header(c)
        total = sum(c.size for c in containers)
        if max_total_bytes is not None and total > max_total_bytes:
            raise UploadError(
                f"the {len(paths)} files hold {total} bytes, above max_total_bytes="
                f"{max_total_bytes}."
            )
        by_id = {}
        for c in containers:
            i = c.header["participant_id"]
            if i in by_id:
                raise UploadError(
                    f"{c.path}: field 'participant_id' is {i}, already used by {by_id[i].path}. "
                    "Each participant uploads once, under its own id."
                )
            by_id[i] = c
        p = len(by_id)
        missing = sorted(set(range(p)) - set(by_id))
        if missing:
            # p distinct ids with one missing: some file's id is out of range; name it
            i, c = next((i, c) for i, c in sorted(by_id.items()) if i >= p)
            raise UploadError(
                f"{c.path}: field 'participant_id' is {i}; participant ids must be 0 .. "
                f"{p - 1} for {p} files (missing {missing}). Collect every participant's "
                "upload, or renumber them."
            )
        ordered = [by_id[i] for i in range(p)]
        first = ordered[0]
        for c in ordered[1:]:
            for key in ("n_anchors", "anchor_id", "has_labels"):
                if c.header[key] != first.header[key]:
                    raise UploadError(
                        f"{c.path}: field {key!r} is {c.header[key]!r} but {first.path} has "
                        f"{first.header[key]!r}. All participants must share one anchor (same "
                        "file from `skdc anchor make`) and all upload labels, or none."
                    )
            m0, m1 = first.header.get("mechanism") or {}, c.header.get("mechanism") or {}
            for key in ("kind", "n_features_in"):
                if m0.get(key) is not None and m1.get(key) is not None and m0[key] != m1[key]:
                    raise UploadError(
                        f"{c.path}: field 'mechanism.{key}' is {m1[key]!r} but {first.path} "
                        f"has {m0[key]!r}. All participants run the same mechanism on data "
                        "of the same schema."
                    )
        widths = [c.header["n_components"] for c in ordered]
        if len(set(widths)) > 1 and not allow_different_widths:
            i = next(k for k, w in enumerate(widths) if w != widths[0])
            raise UploadError(
                f"{ordered[i].path}: field 'n_components' is {widths[i]} but {first.path} has "
                f"{widths[0]}: participants upload different widths. GDP uploads share one "
                "width; pass allow_different_widths=True for nonlinear reductions."
            )
        n_rows = [c.header["n_samples"] for c in ordered]
        width = max(widths)
        Y = (np.empty if len(set(widths)) == 1 else np.zeros)((sum(n_rows), width))
        y = None
        if first.header["has_labels"]:
            label_dtypes = [c.members["labels"][1] for c in ordered]
            for c, dt in zip(ordered[1:], label_dtypes[1:]):
                if (dt.kind == "U") != (label_dtypes[0].kind == "U"):
                    raise UploadError(
                        f"{c.path}: field 'labels' has dtype {dt} but {first.path} has "
                        f"{label_dtypes[0]}: the labels mix strings and numbers across files. All "
                        "participants upload one label type."
                    )
            y = np.empty(sum(n_rows), dtype=np.result_type(*label_dtypes))
        anchors, anchor_y = [], None
        start = 0
        for c, n, w in zip(ordered, n_rows, widths):
            block = Y[start : start + n, :w]
            into = {"data": block}
            if y is not None:
                into["labels"] = y[start : start + n]
            arrays = c.read(into=into)
            _check_finite(block, c.path, "data")
            if "anchor_upload" in arrays:
                _check_finite(arrays["anchor_upload"], c.path, "anchor_upload")
                anchors.append(arrays["anchor_upload"])
            if "labels" in arrays:
                lab = arrays["labels"]
                if lab.dtype.kind == "f" and not np.isfinite(lab).all():
                    raise UploadError(f"{c.path}: field 'labels' contains NaN or infinity.")
            if "anchor_y" in arrays:
                lab = arrays["anchor_y"]
                if lab.dtype.kind == "f" and not np.isfinite(lab).all():
                    raise UploadError(f"{c.path}: field 'anchor_y' contains NaN or infinity.")
                if anchor_y is not None and not np.array_equal(anchor_y, arrays["anchor_y"]):
                    raise UploadError(f"{c.path}: field 'anchor_y' differs between files.")
                anchor_y = arrays["anchor_y"]
            start += n
        seen = {}
        for i, b in enumerate(anchors):
            key = hashlib.sha256(memoryview(np.ascontiguousarray(b)).cast("B")).digest()
            if key in seen:
                raise UploadError(
                    f"{ordered[i].path}: field 'anchor_upload' is identical to that of "
                    f"{ordered[seen[key]].path}: the same upload under two participant ids, or "
                    "two participants sharing a secret and anchor noise. Each participant draws "
                    "its own secret and noise."
                )
            seen[key] = i
        participant = np.repeat(np.arange(p), n_rows)
        try:
            uploads = Uploads(Y, participant, anchors=anchors or None, anchor_y=anchor_y)
        except (ValueError, TypeError) as exc:
            raise UploadError(f"the uploads are inconsistent: {exc}") from None
        return UploadSet(uploads, y, [dict(c.header) for c in ordered])
    finally:
        for c in containers:
            c.close()
