"""The upload file: what a participant sends the analyst, and how the analyst reads them all.

An upload is a checksummed skdc container (:mod:`skdc.protocol._container`) of kind
``skdc-upload``: the participant's private-data upload ``Y_i`` (``data``), its anchor upload
``B_i + v W_i`` (``anchor_upload``), its labels, and a public header (participant id, widths,
anchor rows, the mechanism's public description, the anchor fingerprint, the declared anchor
noise). :func:`load_uploads` checks every file on its own, then the files against each other,
and only then stacks them into one :class:`~skdc.Uploads`.
"""

# Licence: BSD 3 clause

import contextlib
import hashlib
import os
import warnings
from collections.abc import Iterable
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np

from .. import Uploads
from ..utils._folders import ensure_folder
from ..utils._outputs import output_mode
from ..utils._sklearn_compat import HasMethods, Interval, validate_params
from ._container import (
    DEFAULT_MAX_BYTES,
    LABEL_KINDS,
    Container,
    UploadError,
    check_digest_field,
    check_feature_names,
    check_values,
    container_digest,
    is_int,
    max_magnitude,
    write_container,
)

__all__ = ["UploadSet", "load_uploads", "save_simulated_uploads", "save_upload"]

_UPLOAD = "skdc-upload"
_PUBLIC_PARAMS = ("n_participants", "noise", "translation_scale", "n_anchors")


class UploadSet(NamedTuple):
    """What :func:`load_uploads` returns.

    Read more in the :ref:`User Guide <deployment>`.

    Attributes
    ----------
    uploads : Uploads of shape (n_samples, n_components)
        The stacked private-data uploads, in participant-id order, with the anchor uploads.
    y : ndarray of shape (n_samples,) or None
        The uploaded labels, stacked the same way (``None`` when no file carries labels).
    headers : list of dict
        The public header of each participant's file, in participant-id order.
    paths : list of str or None
        Each participant's file, in participant-id order (``None`` for in-memory uploads).
    digests : list of str or None
        Each file's digest (its checksum), which the participant's secret records and the
        analyst's alignment map carries.
    """

    uploads: Uploads
    y: np.ndarray | None
    headers: list
    paths: list | None = None
    digests: list | None = None


def anchor_fingerprint(A):
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


# -- writing ------------------------------------------------------------------------------
@validate_params(
    {
        "path": [str, os.PathLike],
        # an skdc.Uploads with participant ids; checked in the body, whose message says
        # where such an object comes from
        "uploads": "no_validation",
        "participant_id": [Interval(Integral, 0, None, closed="left")],
        "labels": ["array-like", None],
        "mechanism": [HasMethods(["get_params"]), None],
        "anchor_noise": [Interval(Real, 0, None, closed="left"), None],
        "anchor_id": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def save_upload(path, uploads, participant_id, *, labels=None, mechanism=None,
                anchor_noise=None, anchor_id=None):
    """Write a participant's own upload to an skdc ``.npz`` file, as it is.

    The one writer of upload files. ``uploads`` is the participant's own upload, already
    noisy, as :meth:`Participant.upload <skdc.protocol.Participant.upload>` returns it: its
    rows under the local id 0 and its anchor upload ``B_i + v W_i``. The writer adds no noise,
    and refuses uploads that still carry unit anchor noise draws ``W_i`` (a mechanism's own
    output) or the rows of several participants (a simulation: write those with
    :func:`save_simulated_uploads`). :meth:`Participant.save
    <skdc.protocol.Participant.save>` writes the same file together with the participant's
    secret, which records the upload's digest; use it in a deployment.

    The file holds the private-data upload ``Y_i``, the anchor upload, the labels, and a
    public header: format version, participant id, widths, anchor rows, the mechanism's public
    description (kind and scale parameters, never its seed or secrets), the anchor fingerprint
    and the declared anchor noise. A SHA-256 checksum covers the whole content.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        Output file (conventionally ``*.npz``); written atomically.
    uploads : Uploads
        The participant's own one-participant :class:`~skdc.Uploads` (local id 0), whose
        anchor upload (if any) already carries the anchor noise: what
        :meth:`Participant.upload <skdc.protocol.Participant.upload>` returns.
    participant_id : int
        The participant's id in the collaboration, ``0 .. n_participants - 1``.
    labels : array-like of shape (n_rows,), default=None
        Labels of the rows (numeric or string; never objects).
    mechanism : BaseMechanism, default=None
        The fitted mechanism, for its public description and its anchor fingerprint.
    anchor_noise : float, default=None
        The anchor noise ``v`` the participant added, declared in the header (``None``: not
        declared). Only declared: the writer adds nothing.
    anchor_id : str, default=None
        Fingerprint of the raw anchor; computed from ``mechanism.anchor_`` when not given.

    Returns
    -------
    path : str
        The written file (permissions ``0o644`` less the umask: an upload is shared with the
        analyst). Its header lists the digest of each of its arrays (``digests``), and its
        checksum, the file's digest, commits to them.

    See Also
    --------
    save_simulated_uploads : Write a simulated collaboration's uploads, one file each.
    load_uploads : Read and validate upload files.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.anchors import orthonormal_anchor
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import Participant, load_uploads, save_upload
    >>> A = orthonormal_anchor(12, 3, random_state=0)
    >>> me = Participant(0, IGDP(n_participants=2, random_state=5), anchor_noise=0.05)
    >>> up = me.upload(np.random.RandomState(0).rand(10, 3), anchor=A)
    >>> path = save_upload(os.path.join(tempfile.mkdtemp(), "u0.npz"), up, 0,
    ...                    mechanism=me.mechanism_, anchor_noise=0.05)
    >>> header = load_uploads(path).headers[0]
    >>> header["participant_id"], header["n_samples"], header["anchor_noise"]
    (0, 10, 0.05)
    """
    header, arrays = upload_contents(uploads, participant_id, labels=labels,
                                     mechanism=mechanism, anchor_noise=anchor_noise,
                                     anchor_id=anchor_id)
    return write_upload(path, header, arrays)


@validate_params(
    {
        "folder_or_paths": [str, os.PathLike, list, tuple],
        # an skdc.Uploads of a simulated collaboration; checked in the body
        "uploads": "no_validation",
        "anchor_noise": [Interval(Real, 0, None, closed="left")],
        "labels": ["array-like", None],
        "mechanism": [HasMethods(["get_params"]), None],
        "anchor_id": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def save_simulated_uploads(folder_or_paths, uploads, *, anchor_noise, labels=None,
                           mechanism=None, anchor_id=None):
    """Write a simulated collaboration's uploads as every participant would: one file each.

    Splits a mechanism's output over all participants (a simulation in one process) into each
    participant's own upload, adds each participant's anchor noise, ``B_i + v W_i`` from the
    unit draws ``W_i`` the mechanism carries (:meth:`Uploads.noisy_anchors
    <skdc.Uploads.noisy_anchors>`, the sum a deployed :class:`~skdc.protocol.Participant`
    and the simulated :class:`~skdc.alignment.GOPPAligner` form), and writes each with
    :func:`save_upload`. Nothing is written unless every participant's upload can be: each
    participant needs at least one row.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    folder_or_paths : str, path-like, or list of them
        A folder (created if missing), into which participant ``i``'s upload goes as
        ``upload_<i>.npz``; or one path per participant, in participant-id order.
    uploads : Uploads
        A mechanism's own output over all participants: its rows of every participant, the
        clean anchor uploads with their unit anchor noise ``W_i`` (or no anchor uploads).
    anchor_noise : float
        The anchor-noise scale ``v`` every participant adds (``v`` of
        :class:`~skdc.alignment.GOPPAligner`), declared in each header. ``0`` writes the
        anchor uploads clean, which a colluding analyst inverts exactly.
    labels : array-like of shape (n_samples,), default=None
        Labels of all the rows; each file gets its participant's.
    mechanism : BaseMechanism, default=None
        The fitted mechanism, for its public description and its anchor fingerprint.
    anchor_id : str, default=None
        Fingerprint of the raw anchor; computed from ``mechanism.anchor_`` when not given.

    Returns
    -------
    paths : list of str
        The written files, in participant-id order.

    See Also
    --------
    save_upload : The writer of one participant's own upload.
    load_uploads : Read and validate upload files.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import load_uploads, save_simulated_uploads
    >>> X = np.random.RandomState(0).rand(30, 3)
    >>> mech = IGDP(n_participants=3, random_state=0)
    >>> Y = mech.fit_transform(X, participant=np.arange(30) % 3)
    >>> paths = save_simulated_uploads(tempfile.mkdtemp(), Y, anchor_noise=0.1,
    ...                                mechanism=mech)
    >>> [p[-12:] for p in paths]
    ['upload_0.npz', 'upload_1.npz', 'upload_2.npz']
    >>> B = load_uploads(paths).uploads.anchors[1]
    >>> bool(np.array_equal(B, Y.anchors[1] + 0.1 * Y.unit_anchor_noise[1]))
    True
    """
    uploads = _check_uploads_type(uploads, "save_simulated_uploads")
    p = uploads.n_participants
    paths = _simulation_paths(folder_or_paths, p)
    labels = _check_labels(labels, uploads.shape[0], "row of the uploads")
    if uploads.anchors is not None and uploads.unit_anchor_noise is None:
        raise ValueError(
            "save_simulated_uploads adds each participant's anchor noise to a mechanism's own "
            "output, whose clean anchor uploads come with the unit draws W_i; these Uploads "
            "carry no unit anchor noise (uploads already noisy, such as received ones). Pass "
            "the mechanism's transform output."
        )
    anchors = uploads.noisy_anchors(anchor_noise)  # B_i + v W_i, Def 4.1 of the GDP paper
    contents = []
    for i in range(p):
        rows = uploads.participant == i
        own = Uploads(np.asarray(uploads)[rows], np.zeros(int(rows.sum()), dtype=np.intp),
                      anchors=None if anchors is None else [anchors[i]],
                      anchor_y=uploads.anchor_y)
        contents.append(upload_contents(
            own, i, labels=None if labels is None else labels[rows], mechanism=mechanism,
            anchor_noise=anchor_noise, anchor_id=anchor_id))
    if isinstance(folder_or_paths, (str, os.PathLike)):
        ensure_folder(folder_or_paths, "the uploads folder", error=UploadError)
    return [write_upload(path, *content) for path, content in zip(paths, contents)]


def _simulation_paths(folder_or_paths, n_participants):
    """One output path per participant: ``upload_<i>.npz`` in a folder, or the paths given."""
    if isinstance(folder_or_paths, (str, os.PathLike)):
        folder = os.fspath(folder_or_paths)
        return [os.path.join(folder, f"upload_{i}.npz") for i in range(n_participants)]
    paths = [os.fspath(path) for path in folder_or_paths]
    if len(paths) != n_participants:
        raise ValueError(
            f"save_simulated_uploads got {len(paths)} path(s) for uploads of "
            f"{n_participants} participants; give one path per participant, in id order, or "
            "a folder."
        )
    if len({os.path.abspath(path) for path in paths}) != len(paths):
        raise ValueError(
            "save_simulated_uploads got the same path for two participants; give each "
            "participant its own file."
        )
    return paths


def write_upload(path, header, arrays, *, exclusive=False, what="the upload"):
    """Write an upload's ``(header, arrays)`` (shared: ``output_mode(0o644)``); return path."""
    return write_container(path, _UPLOAD, header, arrays, mode=output_mode(0o644),
                           exclusive=exclusive, what=what, header_digests=True)


def upload_digests(header, arrays):
    """The digests of the upload file ``(header, arrays)`` makes: the file's, the anchor
    upload's (``None`` without one)."""
    digest, members = container_digest(_UPLOAD, header, arrays, header_digests=True)
    return digest, members.get("anchor_upload")


def _check_uploads_type(uploads, who):
    if not isinstance(uploads, Uploads) or uploads.participant is None:
        source = ("the skdc.Uploads returned by Participant.upload" if who == "save_upload"
                  else "the skdc.Uploads returned by a mechanism's transform")
        raise TypeError(f"{who} expects {source}; got {type(uploads).__name__}.")
    return uploads


def _check_own_upload(uploads, participant_id):
    """Refuse what is not one participant's own, already noisy upload (with what to call)."""
    if uploads.unit_anchor_noise is not None:
        raise ValueError(
            "save_upload writes a participant's own upload as it is, its anchor upload already "
            "noisy; these Uploads still carry unit anchor noise draws W_i (a mechanism's own "
            "output), so their anchor uploads are clean. In a deployment call "
            f"Participant({participant_id}, mechanism, anchor_noise=v).upload(X, y, anchor=A) "
            "and write what it returns (Participant.save); for a simulated deployment call "
            "save_simulated_uploads(folder, uploads, anchor_noise=v)."
        )
    if uploads.shape[0] == 0:
        raise ValueError(
            f"the uploads hold no rows of participant {participant_id}; an upload needs at "
            "least one row."
        )
    if uploads.n_participants != 1:
        ids = np.unique(uploads.participant)
        raise ValueError(
            f"save_upload writes one participant's own upload (local id 0, as "
            f"Participant.upload returns it); these Uploads hold "
            f"{uploads.n_participants} participants (rows of {ids[:5].tolist()}"
            f"{' ...' if ids.size > 5 else ''}). For a simulated deployment call "
            "save_simulated_uploads(folder, uploads, anchor_noise=v), which writes every "
            "participant's file."
        )


def upload_contents(uploads, participant_id, *, labels=None, mechanism=None,
                    anchor_noise=None, anchor_id=None, feature_names=None):
    """The header and arrays of :func:`save_upload`'s file (same parameters, and the names of
    the columns, in order, where the rows came with a header: ``None`` where they did not)."""
    uploads = _check_uploads_type(uploads, "save_upload")
    if isinstance(participant_id, bool):
        raise TypeError(f"participant_id must be an int; got {type(participant_id).__name__}.")
    participant_id = int(participant_id)
    _check_own_upload(uploads, participant_id)
    arrays = _upload_arrays(uploads, labels)
    if anchor_id is None and getattr(mechanism, "anchor_", None) is not None:
        anchor_id = anchor_fingerprint(mechanism.anchor_)
    from .. import __version__

    header = {
        "participant_id": participant_id,
        "n_samples": int(arrays["data"].shape[0]),
        "n_components": int(arrays["data"].shape[1]),
        "n_anchors": int(arrays["anchor_upload"].shape[0]) if "anchor_upload" in arrays else 0,
        "has_labels": "labels" in arrays,
        "mechanism": _public_description(mechanism),
        "anchor_id": anchor_id,
        "anchor_noise": None if anchor_noise is None else float(anchor_noise),
        # the raw columns' names in order (from a table's header), or null: only counted
        "feature_names": None if feature_names is None else [str(n) for n in feature_names],
        "skdc_version": __version__,
    }
    return header, arrays


# -- the feature schema: the raw columns' names, in order --------------------------------------
def _names(names, most=6):
    names = list(names)
    return ", ".join(repr(n) for n in names[:most]) + (", ..." if len(names) > most else "")


def column_difference(expected, got):
    """Where the column names ``got`` first differ from ``expected``: one phrase, such as
    ``column 2 is 'bmi' where ... has 'age'``, followed by what is missing and what is extra
    (``None`` when they are the same names in the same order)."""
    expected, got = list(expected), list(got)
    if expected == got:
        return None
    k = next(k for k in range(max(len(expected), len(got)))
             if k >= len(expected) or k >= len(got) or expected[k] != got[k])
    here = f"{got[k]!r}" if k < len(got) else "missing"
    there = f"{expected[k]!r}" if k < len(expected) else "nothing"
    known, given = set(expected), set(got)  # sets: linear in the columns, however many
    missing = [n for n in expected if n not in given]
    extra = [n for n in got if n not in known]
    if not missing and not extra:
        more = "the same names in another order"
    else:
        more = ", ".join(x for x in (f"{_names(missing)} missing" if missing else "",
                                     f"{_names(extra)} extra" if extra else "") if x)
    return here, there, k + 1, more


def match_columns(expected, got, where, against):
    """The positions that put the named columns ``got`` in the order ``expected``.

    Parameters
    ----------
    expected : list of str
        The names recorded (the secret's: those of the uploaded table).
    got : list of str
        The names of the new table's columns.
    where : str
        The new table, for messages (``"new.csv: --data"``).
    against : str
        What recorded ``expected``, for messages.

    Returns
    -------
    order : list of int or None
        ``None`` when ``got`` is ``expected``; else the position in ``got`` of each name of
        ``expected`` (the same names in another order).

    Raises
    ------
    UploadError
        When the names differ: one line naming the first differing column.
    """
    diff = column_difference(expected, got)
    if diff is None:
        return None
    here, there, k, more = diff
    if sorted(got) == sorted(expected):
        position = {n: k for k, n in enumerate(got)}
        return [position[n] for n in expected]
    raise UploadError(
        f"{where} column {k} is {here} where {against} has {there} ({more}): its columns "
        f"are not the uploaded ones ({_names(expected)}). Give rows with those columns, "
        "named as the upload named them (rename or drop the others).")


def _upload_arrays(uploads, labels):
    """The file's arrays: the rows (cut to the anchor upload's width), the anchor upload as it
    is, the anchor targets and the labels."""
    anchor = None if uploads.anchors is None else uploads.anchors[0]
    width = uploads.shape[1] if anchor is None else anchor.shape[1]
    data = np.asarray(uploads)[:, :width]
    if not np.all(np.isfinite(data)):
        raise ValueError("save_upload: the uploads contain NaN or infinity; refusing to write.")
    arrays = {"data": data}
    if anchor is not None:
        arrays["anchor_upload"] = anchor
        if uploads.anchor_y is not None:
            arrays["anchor_y"] = np.asarray(uploads.anchor_y)
    labels = _check_labels(labels, data.shape[0], "uploaded row")
    if labels is not None:
        arrays["labels"] = labels
    return arrays


def _check_labels(labels, n_rows, row):
    """``labels`` as an array of one entry per ``row`` (``None`` stays ``None``)."""
    if labels is None:
        return None
    labels = np.asarray(labels)
    if labels.shape != (n_rows,):
        raise ValueError(
            f"labels must have one entry per {row}, shape ({n_rows},); got {labels.shape}."
        )
    return labels


# -- reading, one file at a time ------------------------------------------------------------
def _check_upload_header(c):
    """An upload's header fields, then its members against what the header declares."""
    h, where = c.header, c.path
    for key in ("participant_id", "n_samples", "n_components", "n_anchors"):
        c.int_field(key, 0, expected="a non-negative integer")
    if h["n_samples"] < 1 or h["n_components"] < 1:
        raise UploadError(
            f"{where}: field 'n_samples'/'n_components' is {h['n_samples']}/"
            f"{h['n_components']}: an upload needs at least one row and one column."
        )
    if not isinstance(h.get("has_labels"), bool):
        raise UploadError(f"{where}: field 'has_labels' must be true or false.")
    if not isinstance(h.get("chosen_seed", False), bool):
        raise UploadError(f"{where}: field 'chosen_seed' must be true or false.")
    if h.get("anchor_id") is not None and not isinstance(h["anchor_id"], str):
        raise UploadError(f"{where}: field 'anchor_id' must be a string or null.")
    v = h.get("anchor_noise")
    if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)
                          or not np.isfinite(v) or v < 0):
        raise UploadError(f"{where}: field 'anchor_noise' must be a finite number >= 0.")
    _check_mechanism_field(h.get("mechanism"), where)
    check_feature_names(h.get("feature_names"), where,
                        (h.get("mechanism") or {}).get("n_features_in"))
    _check_upload_members(c)
    digests = h.get("digests")
    members = sorted(c.array_members())
    if not isinstance(digests, dict) or sorted(digests) != members:
        raise UploadError(
            f"{where}: field 'digests' must list the digest of each array ({members}); got "
            f"{str(digests)[:60]}."
        )
    for name in members:
        check_digest_field(digests, name, f"{where}: field 'digests'")


def _warn_chosen_seeds(containers):
    """Warn about uploads whose header says their seed was chosen: a chosen seed is for tests
    only, and whoever holds the upload can search for it."""
    chosen = [c.path for c in containers if c.header.get("chosen_seed") is True]
    if chosen:
        warnings.warn(
            f"{', '.join(chosen)}: made with a chosen seed (--seed or --anchor-noise-seed), "
            "which is for tests only: anyone holding the upload can search for the seed and "
            "undo the obfuscation. Ask the participant to upload again without a seed.",
            UserWarning, stacklevel=4,  # the caller of load_uploads (under validate_params)
        )


def _check_mechanism_field(m, where):
    if m is None:
        return
    if not isinstance(m, dict):
        raise UploadError(f"{where}: field 'mechanism' must be an object or null.")
    if m.get("kind") is not None and not isinstance(m["kind"], str):
        raise UploadError(f"{where}: field 'mechanism.kind' must be a string or null.")
    for key in ("n_features_in", "n_participants"):
        value = m.get(key)
        if value is not None and (not is_int(value) or value < 1):
            raise UploadError(
                f"{where}: field 'mechanism.{key}' must be a positive integer or null; got "
                f"{value!r}."
            )


def _check_upload_members(c):
    h, where = c.header, c.path
    required = ["data"] + (["anchor_upload"] if h["n_anchors"] else [])
    required += ["labels"] if h["has_labels"] else []
    c.expect_members(required, optional=["anchor_y"] if h["n_anchors"] else [])
    n, w, r = h["n_samples"], h["n_components"], h["n_anchors"]
    expected = {"data": (n, w), "anchor_upload": (r, w), "labels": (n,), "anchor_y": (r,)}
    for name, (shape, dtype) in c.array_members().items():
        if shape != expected[name]:
            raise UploadError(
                f"{where}: field {name!r} has shape {shape}; the header declares "
                f"{expected[name]}."
            )
        if name in ("data", "anchor_upload") and dtype != np.dtype("<f8"):
            raise UploadError(
                f"{where}: field {name!r} has dtype {dtype}; uploads are little-endian float64."
            )
        if name in ("labels", "anchor_y") and dtype.kind not in LABEL_KINDS:
            raise UploadError(f"{where}: field {name!r} has unsupported dtype {dtype}.")


def _check_finite_labels(labels, where, name):
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise UploadError(f"{where}: field {name!r} contains NaN or infinity.")


# -- reading, the files against each other ---------------------------------------------------
def _in_participant_order(containers):
    """The files by participant id, refusing a repeated id or a gap in ``0 .. p - 1``."""
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
    return [by_id[i] for i in range(p)]


def _check_one_collaboration(ordered, allow_different_widths):
    """One anchor, one mechanism, one schema, labels all or none, and (GDP) one width."""
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
        for key in ("kind", "n_features_in", "n_participants"):
            if m0.get(key) is not None and m1.get(key) is not None and m0[key] != m1[key]:
                raise UploadError(
                    f"{c.path}: field 'mechanism.{key}' is {m1[key]!r} but {first.path} "
                    f"has {m0[key]!r}. All participants of one collaboration run the same "
                    "mechanism, for the same number of participants, on data of one schema."
                )
    _check_one_schema(ordered)
    widths = [c.header["n_components"] for c in ordered]
    if len(set(widths)) > 1 and not allow_different_widths:
        i = next(k for k, w in enumerate(widths) if w != widths[0])
        raise UploadError(
            f"{ordered[i].path}: field 'n_components' is {widths[i]} but {first.path} has "
            f"{widths[0]}: participants upload different widths. GDP uploads share one "
            "width; pass allow_different_widths=True for nonlinear reductions."
        )


def _check_one_schema(ordered):
    """Refuse uploads whose tables named their columns differently (swapped, renamed): the
    rows of one collaboration share one schema. An upload without names (rows from a
    ``.npy``) is held to the count only."""
    named = [c for c in ordered if c.header.get("feature_names") is not None]
    for c in named[1:]:
        diff = column_difference(named[0].header["feature_names"], c.header["feature_names"])
        if diff is None:
            continue
        here, there, k, more = diff
        raise UploadError(
            f"{c.path}: field 'feature_names' has column {k} {here} where {named[0].path} "
            f"has {there} ({more}): the participants' tables differ in their columns, so "
            "their rows do not line up. Ask the participants to upload their columns in the "
            "agreed order and names.")


def _label_dtype(ordered):
    """The stacked labels' dtype, refusing strings in one file and numbers in another."""
    dtypes = [c.members["labels"][1] for c in ordered]
    for c, dt in zip(ordered[1:], dtypes[1:]):
        if (dt.kind == "U") != (dtypes[0].kind == "U"):
            raise UploadError(
                f"{c.path}: field 'labels' has dtype {dt} but {ordered[0].path} has "
                f"{dtypes[0]}: the labels mix strings and numbers across files. All "
                "participants upload one label type."
            )
    return np.result_type(*dtypes)


def _magnitude_limit(ordered):
    """:func:`max_magnitude` over every entry the analyst computes with (rows and anchors)."""
    return max_magnitude(sum((c.header["n_samples"] + c.header["n_anchors"])
                             * c.header["n_components"] for c in ordered))


def _read_stacked(ordered):
    """Stream each file, verified, into its block of the stacked ``Y`` (and ``y``)."""
    n_rows = [c.header["n_samples"] for c in ordered]
    widths = [c.header["n_components"] for c in ordered]
    limit = _magnitude_limit(ordered)
    Y = (np.empty if len(set(widths)) == 1 else np.zeros)((sum(n_rows), max(widths)))
    y = np.empty(sum(n_rows), _label_dtype(ordered)) if ordered[0].header["has_labels"] else None
    anchors, anchor_y = [], None
    start = 0
    for c, n, w in zip(ordered, n_rows, widths):
        into = {"data": Y[start : start + n, :w]}
        if y is not None:
            into["labels"] = y[start : start + n]
        arrays = c.read(into=into)
        if c.member_digests != c.header["digests"]:
            bad = next(k for k in sorted(c.member_digests)
                       if c.member_digests[k] != c.header["digests"][k])
            raise UploadError(
                f"{c.path}: field 'digests' lists {c.header['digests'][bad][:12]}... for "
                f"{bad!r}, whose digest is {c.member_digests[bad][:12]}...: the header does "
                "not describe this file's arrays. Ask the participant for a fresh upload."
            )
        check_values(into["data"], c.path, "data", limit)
        if "anchor_upload" in arrays:
            check_values(arrays["anchor_upload"], c.path, "anchor_upload", limit)
            anchors.append(arrays["anchor_upload"])
        if "labels" in arrays:
            _check_finite_labels(arrays["labels"], c.path, "labels")
        if "anchor_y" in arrays:
            _check_finite_labels(arrays["anchor_y"], c.path, "anchor_y")
            if anchor_y is not None and not np.array_equal(anchor_y, arrays["anchor_y"]):
                raise UploadError(f"{c.path}: field 'anchor_y' differs between files.")
            anchor_y = arrays["anchor_y"]
        start += n
    return Y, y, anchors, anchor_y


def _check_distinct_anchor_uploads(ordered, anchors):
    """Refuse two identical anchor uploads: one upload under two ids, or a shared secret."""
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


@validate_params(
    {
        "paths": [str, bytes, os.PathLike, Iterable],
        "max_bytes": [Interval(Integral, 0, None, closed="left")],
        "max_total_bytes": [Interval(Integral, 0, None, closed="left"), None],
        "allow_different_widths": ["boolean"],
    },
    prefer_skip_nested_validation=True,
)
def load_uploads(paths, *, max_bytes=DEFAULT_MAX_BYTES, max_total_bytes=None,
                 allow_different_widths=False):
    """Read, verify and stack participants' upload files into one :class:`~skdc.Uploads`.

    Every file is checked before any of its numbers are used: format and version, the SHA-256
    checksum and each array's digest (streamed while the arrays are read, so no second copy is
    made), the member set, dtypes and shapes against the header, finiteness, magnitudes (no
    entry so large that float64 sums of products over the uploads could overflow), and,
    across files, duplicate or missing participant ids, one collaboration (anchor rows and
    fingerprints, mechanism kind, width and number of participants), identical anchor uploads
    (the same upload under two ids), label presence, and size limits. Files are opened without
    ever unpickling.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    paths : str, path-like or sequence of them
        The upload files, one per participant, in any order.
    max_bytes : int, default=2**32
        Largest accepted file size in bytes.
    max_total_bytes : int, default=None
        Largest accepted total size of all files; ``None`` means no limit.
    allow_different_widths : bool, default=False
        Accept participants whose representations have different widths (nonlinear
        reductions, for the integration aligners). GDP uploads share one width.

    Returns
    -------
    loaded : UploadSet
        ``(uploads, y, headers, paths, digests)``: the stacked uploads in participant-id
        order, the stacked labels (or ``None``), each file's public header, path and digest.

    Raises
    ------
    UploadError
        Naming the file and the field at fault.

    See Also
    --------
    save_upload : Write one participant's own upload.
    save_simulated_uploads : Write a simulated collaboration's uploads, one file each.

    Examples
    --------
    Two participants' files, given in the wrong order, come back in participant-id order:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from numpy.random import RandomState
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import load_uploads, save_simulated_uploads
    >>> X = RandomState(0).rand(20, 2)
    >>> Y = IGDP(n_participants=2, random_state=0).fit_transform(X, participant=[0, 1] * 10)
    >>> folder = Path(tempfile.mkdtemp())
    >>> files = save_simulated_uploads(folder, Y, anchor_noise=0.1)
    >>> load_uploads(files[::-1]).uploads.participant[:4]
    array([0, 0, 0, 0])
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise UploadError("load_uploads got no files; pass one upload file per participant.")
    with contextlib.ExitStack() as files:
        containers = []
        for path in paths:
            containers.append(files.enter_context(Container(path, _UPLOAD, max_bytes=max_bytes)))
            _check_upload_header(containers[-1])
        total = sum(c.size for c in containers)
        if max_total_bytes is not None and total > max_total_bytes:
            raise UploadError(
                f"the {len(paths)} files hold {total} bytes, above max_total_bytes="
                f"{max_total_bytes}."
            )
        ordered = _in_participant_order(containers)
        _check_one_collaboration(ordered, allow_different_widths)
        _warn_chosen_seeds(ordered)
        Y, y, anchors, anchor_y = _read_stacked(ordered)
        _check_distinct_anchor_uploads(ordered, anchors)
        participant = np.repeat(np.arange(len(ordered)),
                                [c.header["n_samples"] for c in ordered])
        try:
            uploads = Uploads(Y, participant, anchors=anchors or None, anchor_y=anchor_y)
        except (ValueError, TypeError) as exc:
            raise UploadError(f"the uploads are inconsistent: {exc}") from None
        return UploadSet(uploads, y, [dict(c.header) for c in ordered],
                         [c.path for c in ordered], [c.digest for c in ordered])
