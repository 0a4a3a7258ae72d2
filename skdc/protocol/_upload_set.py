"""The upload files as the analyst reads them: every file checked, then stacked.

:func:`load_uploads` checks every upload file (:mod:`skdc.protocol._upload`) on its own, then
the files against each other, and only then stacks them into one :class:`~skdc.Uploads`,
returned with the labels, headers, paths and digests as an :class:`UploadSet`.
"""

# Licence: BSD 3 clause

import contextlib
import hashlib
import os
import warnings
from collections.abc import Iterable
from numbers import Integral
from typing import NamedTuple

import numpy as np

from .. import Uploads
from ..utils._sklearn_compat import Interval, validate_params
from ._container import (
    DEFAULT_MAX_BYTES,
    LABEL_KINDS,
    Container,
    UploadError,
    check_digest_field,
    check_feature_names,
    check_values,
    is_int,
    max_magnitude,
)
from ._upload import _UPLOAD, column_difference

__all__ = ["UploadSet", "load_uploads"]


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
            f"{', '.join(chosen)}: made with a chosen seed (--seed or --noise-seed), "
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
    >>> files = save_simulated_uploads(folder, Y, v=0.1)
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
