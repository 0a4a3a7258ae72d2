"""The upload file: what a participant sends the analyst, as it is written.

An upload is a checksummed skdc container (:mod:`skdc.protocol._container`) of kind
``skdc-upload``: the participant's private-data upload ``Y_i`` (``data``), its anchor upload
``B_i + v W_i`` (``anchor_upload``), its labels, and a public header (participant id, widths,
anchor rows, the mechanism's public description, the anchor fingerprint, the declared anchor
noise, the raw columns' names). :func:`upload_contents` makes a file's header and arrays, which
:func:`save_upload` (a participant's own upload), :func:`save_simulated_uploads` (a simulated
collaboration's, one file each) and :class:`~skdc.protocol.Participant` write. The feature
schema, the raw columns' names in order, is compared here too (:func:`column_difference`,
:func:`match_columns`). The analyst reads the files with :func:`~skdc.protocol.load_uploads`
(:mod:`skdc.protocol._upload_set`).
"""

# Licence: BSD 3 clause

import hashlib
import os
from numbers import Integral, Real

import numpy as np

from .. import Uploads
from ..utils._deprecation import renamed_argument
from ..utils._folders import ensure_folder
from ..utils._outputs import output_mode
from ..utils._sklearn_compat import HasMethods, Interval, validate_params
from ._container import UploadError, write_container, write_members

__all__ = ["save_simulated_uploads", "save_upload"]

_UPLOAD = "skdc-upload"
_PUBLIC_PARAMS = ("n_participants", "noise", "translation_scale", "n_anchors")


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
        "v": [Interval(Real, 0, None, closed="left"), None],
        "anchor_id": [str, None],
        "anchor_noise": [Interval(Real, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def save_upload(path, uploads, participant_id, *, labels=None, mechanism=None, v=None,
                anchor_id=None, anchor_noise=None):
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
    v : float, default=None
        The anchor-noise scale ``v`` the participant added (Def 4.1 of the GDP paper),
        declared in the header's ``anchor_noise`` field (``None``: not declared). Only
        declared: the writer adds nothing.
    anchor_id : str, default=None
        Fingerprint of the raw anchor; computed from ``mechanism.anchor_`` when not given.
    anchor_noise : float, default=None
        Deprecated spelling of ``v``.

        .. deprecated:: 0.2
           ``anchor_noise`` is renamed ``v`` and will be removed in 0.3.

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
    >>> me = Participant(0, IGDP(n_participants=2, random_state=5), v=0.05)
    >>> up = me.upload(np.random.RandomState(0).rand(10, 3), anchor=A)
    >>> path = save_upload(os.path.join(tempfile.mkdtemp(), "u0.npz"), up, 0,
    ...                    mechanism=me.mechanism_, v=0.05)
    >>> header = load_uploads(path).headers[0]
    >>> header["participant_id"], header["n_samples"], header["anchor_noise"]
    (0, 10, 0.05)
    """
    v = renamed_argument("anchor_noise", anchor_noise, "v", v)
    header, arrays = upload_contents(uploads, participant_id, labels=labels,
                                     mechanism=mechanism, v=v, anchor_id=anchor_id)
    return write_upload(path, header, arrays)


@validate_params(
    {
        "folder_or_paths": [str, os.PathLike, list, tuple],
        # an skdc.Uploads of a simulated collaboration; checked in the body
        "uploads": "no_validation",
        # required: None is refused in the body, where the deprecated spelling may give it
        "v": [Interval(Real, 0, None, closed="left"), None],
        "labels": ["array-like", None],
        "mechanism": [HasMethods(["get_params"]), None],
        "anchor_id": [str, None],
        "anchor_noise": [Interval(Real, 0, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def save_simulated_uploads(folder_or_paths, uploads, *, v=None, labels=None, mechanism=None,
                           anchor_id=None, anchor_noise=None):
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
    v : float
        The anchor-noise scale ``v`` every participant adds (Def 4.1 of the GDP paper; ``v`` of
        :class:`~skdc.alignment.GOPPAligner`), declared in each header's ``anchor_noise``
        field. Required. ``0`` writes the anchor uploads clean, which a colluding analyst
        inverts exactly.
    labels : array-like of shape (n_samples,), default=None
        Labels of all the rows; each file gets its participant's.
    mechanism : BaseMechanism, default=None
        The fitted mechanism, for its public description and its anchor fingerprint.
    anchor_id : str, default=None
        Fingerprint of the raw anchor; computed from ``mechanism.anchor_`` when not given.
    anchor_noise : float, default=None
        Deprecated spelling of ``v``.

        .. deprecated:: 0.2
           ``anchor_noise`` is renamed ``v`` and will be removed in 0.3.

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
    >>> paths = save_simulated_uploads(tempfile.mkdtemp(), Y, v=0.1, mechanism=mech)
    >>> [p[-12:] for p in paths]
    ['upload_0.npz', 'upload_1.npz', 'upload_2.npz']
    >>> B = load_uploads(paths).uploads.anchors[1]
    >>> bool(np.array_equal(B, Y.anchors[1] + 0.1 * Y.unit_anchor_noise[1]))
    True
    """
    v = renamed_argument("anchor_noise", anchor_noise, "v", v)
    if v is None:
        raise TypeError("save_simulated_uploads() missing required keyword argument: 'v' (the "
                        "anchor-noise scale every participant adds)")
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
    anchors = uploads.noisy_anchors(v)  # B_i + v W_i, Def 4.1 of the GDP paper
    contents = []
    for i in range(p):
        rows = uploads.participant == i
        own = Uploads(np.asarray(uploads)[rows], np.zeros(int(rows.sum()), dtype=np.intp),
                      anchors=None if anchors is None else [anchors[i]],
                      anchor_y=uploads.anchor_y)
        contents.append(upload_contents(
            own, i, labels=None if labels is None else labels[rows], mechanism=mechanism,
            v=v, anchor_id=anchor_id))
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


def write_upload(path, header, arrays):
    """Write an upload's ``(header, arrays)`` (shared: ``output_mode(0o644)``); return path."""
    return write_container(path, _UPLOAD, header, arrays, mode=output_mode(0o644),
                           what="the upload", header_digests=True)


def upload_digests(header, arrays):
    """The digests of the upload file ``(header, arrays)`` makes: the file's, the anchor
    upload's (``None`` without one)."""
    digest, members = write_members(None, _UPLOAD, header, arrays, header_digests=True)
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
            f"Participant({participant_id}, mechanism, v=v).upload(X, y, anchor=A) "
            "and write what it returns (Participant.save); for a simulated deployment call "
            "save_simulated_uploads(folder, uploads, v=v)."
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
            "save_simulated_uploads(folder, uploads, v=v), which writes every "
            "participant's file."
        )


def upload_contents(uploads, participant_id, *, labels=None, mechanism=None, v=None,
                    anchor_id=None, feature_names=None):
    """The header and arrays of :func:`save_upload`'s file (same parameters, ``v`` declared as
    the header's ``anchor_noise``, and the names of the columns, in order, where the rows came
    with a header: ``None`` where they did not)."""
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
        "anchor_noise": None if v is None else float(v),
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
