"""The secret file: what a participant keeps at home, and the pair it makes with its upload.

A participant's secret is a checksummed skdc container (:mod:`skdc.protocol._container`) of
kind ``skdc-secret``, written owner-only (``0o600``): the two seeds, the mechanism's public
parameters, the declared anchor noise, the raw anchor, this participant's rotation and
translation, the raw columns' names, and the digests of the upload it made and of its anchor
upload. :func:`read_secret` checks every field against the others and the stored arrays
before :meth:`Participant.load_secret <skdc.protocol.Participant.load_secret>` re-derives the
mechanism from the seeds; :func:`write_pair` writes an upload and its secret so that the pair
left behind always belongs together.
"""

# Licence: BSD 3 clause

import contextlib
import os
from numbers import Integral

import numpy as np

from ..mechanisms import CGDP, IGDP
from ..utils._outputs import output_mode
from ..utils._random import fresh_seed
from ._container import (
    Container,
    UploadError,
    atomic_file,
    check_digest_field,
    check_feature_names,
    is_int,
    write_container,
    write_members,
)
from ._upload import _UPLOAD

__all__ = ["check_noise_seed", "check_seed", "chosen_seed_field", "read_secret", "write_pair",
           "write_secret"]

_SECRET = "skdc-secret"
#: Seeds a secret file may hold: a chosen int below 2**32 (tests only) or a fresh seed of
#: 128 bits of entropy below 2**129 (:func:`~skdc.utils._random.fresh_seed`).
_SEED_BOUND = 2**129
#: A given seed of at least this many bits' range (``skdc participant new-seed``) is no
#: chosen, test-only seed: C-GDP's participants share one as their common secret.
_WIDE = 2**128
_MECHANISMS = {"IGDP": IGDP, "CGDP": CGDP}
_SECRET_PARAMS = ("n_participants", "noise", "translation_scale", "n_anchors")
#: Largest collaboration size: participant ids are numpy int64 (setting a participant up
#: draws its own secret only, so the size costs nothing).
_MAX_PARTICIPANTS = int(np.iinfo(np.int64).max)


def check_seed(value, name):
    """A seed as stored: ``None`` draws 128 bits of operating-system entropy
    (:func:`~skdc.utils._random.fresh_seed`); an int is a chosen seed (tests only)."""
    if value is None:
        return fresh_seed()
    if isinstance(value, Integral) and not isinstance(value, bool) and 0 <= value < _SEED_BOUND:
        return int(value)
    raise TypeError(
        f"{name} must be an int in [0, 2**129) or None (128 bits drawn from the operating "
        f"system); got {type(value).__name__}. A deployment stores the seed in the secret "
        "file, so it must be a plain int."
    )


def check_noise_seed(value, name):
    # None: the mechanism derives its noise stream from its own (private) secret seed
    return None if value is None else check_seed(value, name)


def write_secret(path, header, arrays):
    """Write a secret file's ``(header, arrays)`` owner-only (``0o600``); return the path."""
    return write_container(path, _SECRET, header, arrays, mode=0o600, what="the secret")


def read_secret(path):
    """The header and the arrays of a secret file, every field checked (:class:`UploadError`
    naming the file and the field)."""
    with Container(path, _SECRET) as c:
        _check_secret_header(c)
        return c.header, c.read()


def write_pair(upload_path, upload, secret_path, secret, *, overwrite=False):
    """Write an upload and its secret, each a ``(header, arrays)``, as a pair that always
    belongs together (:meth:`Participant.save <skdc.protocol.Participant.save>`)."""
    with _folder_locks([upload_path, secret_path]):
        published = None
        try:
            with atomic_file(upload_path, output_mode(0o644), exclusive=not overwrite,
                             what="the upload", kind=_UPLOAD) as fu:
                write_members(fu, _UPLOAD, *upload, header_digests=True)
                with atomic_file(secret_path, 0o600, exclusive=not overwrite,
                                 what="the secret", kind=_SECRET) as fs:
                    write_members(fs, _SECRET, *secret)
                published = os.lstat(secret_path)
        except BaseException:
            if published is not None and not overwrite:
                _remove_if_same(secret_path, published)
            raise


def chosen_seed_field(h):
    """Whether a secret file's seeds were chosen (a file written before the field existed
    drew 31-bit seeds: as searchable as a chosen one)."""
    chosen = h.get("chosen_seed", True)
    if not isinstance(chosen, bool):
        raise TypeError(f"field 'chosen_seed' must be true or false; got {chosen!r}")
    return chosen


def _check_secret_header(c):
    """The public fields of a secret file, checked against each other and the stored arrays."""
    h, where = c.header, c.path
    if not isinstance(h.get("mechanism"), str) or h["mechanism"] not in _MECHANISMS:
        raise UploadError(f"{where}: field 'mechanism' must be one of {sorted(_MECHANISMS)}.")
    params = h.get("params")
    if not isinstance(params, dict) or set(params) != set(_SECRET_PARAMS):
        raise UploadError(
            f"{where}: field 'params' must be an object with exactly the keys "
            f"{list(_SECRET_PARAMS)}."
        )
    p = params["n_participants"]
    if not is_int(p) or not 1 <= p <= _MAX_PARTICIPANTS:
        raise UploadError(
            f"{where}: field 'params.n_participants' must be an int in 1 .. "
            f"{_MAX_PARTICIPANTS}; got {p!r}."
        )
    c.int_field("participant_id", 0, p - 1,
                expected=f"an int in 0 .. {p - 1} (n_participants={p})")
    if check_digest_field(h, "upload_digest", where) is None:
        raise UploadError(f"{where}: field 'upload_digest' must be the digest of the upload "
                          "this secret made; got null.")
    check_digest_field(h, "anchor_upload_digest", where)
    d = c.int_field("n_features_in", 1)
    check_feature_names(h.get("feature_names"), where, d)
    c.expect_members(["rotation", "translation"], optional=["anchor"])
    expected = {"rotation": (d, d), "translation": (d,)}
    for name, (shape, dtype) in c.array_members().items():
        if dtype != np.dtype("<f8"):
            raise UploadError(f"{where}: field {name!r} has dtype {dtype}; expected float64.")
        if name == "anchor" and (len(shape) != 2 or shape[1] != d):
            raise UploadError(
                f"{where}: field 'anchor' has shape {shape}; expected (n_anchors, {d})."
            )
        if name in expected and shape != expected[name]:
            raise UploadError(
                f"{where}: field {name!r} has shape {shape}; n_features_in={d} makes it "
                f"{expected[name]}."
            )


@contextlib.contextmanager
def _folder_locks(paths):
    """Hold an exclusive lock on the folders of ``paths`` (in a fixed order: no deadlock).

    Writers of the same pair of files take turns, so each pair is written whole. Where the
    operating system has no ``flock`` (Windows), nothing is locked; exclusive creation still
    keeps a pair together.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    folders = sorted({os.path.dirname(os.path.abspath(p)) for p in paths})
    with contextlib.ExitStack() as stack:
        for folder in folders:
            try:
                fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            except OSError as exc:
                raise UploadError(f"{folder}: cannot open the folder to write into it "
                                  f"({exc.strerror}).") from None
            stack.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield


def _remove_if_same(path, st):
    """Remove ``path`` only if it is still the file ``st`` (``os.lstat``) describes."""
    with contextlib.suppress(OSError):
        now = os.lstat(path)
        if (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
            os.unlink(path)
