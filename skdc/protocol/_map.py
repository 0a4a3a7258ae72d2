"""The alignment-map file: what the analyst returns to each participant.

An alignment map (:class:`AlignmentMap`) is participant ``i``'s rotation and offsets, applied
exactly as the fitted aligner applies them (:func:`map_of` reads one off the aligner), written
as a checksummed skdc container (:mod:`skdc.protocol._container`) of kind ``skdc-map``. Each
map records the fingerprint of the ``analyst fit`` run that made it (:func:`run_fingerprint`,
shared with the run's model) and the digest of the upload it was fitted on, which a
participant's predict checks (:func:`check_same_run`, :func:`check_same_upload`).
"""

# Licence: BSD 3 clause

import hashlib
from dataclasses import dataclass

import numpy as np

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ._container import (
    Container,
    UploadError,
    check_digest_field,
    check_feature_names,
    write_container,
)

__all__ = ["AlignmentMap"]

_MAP = "skdc-map"


@Substitution(references=gdp_paper_references)
@dataclass
class AlignmentMap:
    """Participant ``i``'s alignment map, as the analyst returns it.

    ``kind='gopp'``: ``Z = (Y - offset_in) @ rotation`` (eq. (33) of [1]_);
    ``kind='reference'``: ``Z = (Y - offset_in) @ rotation + offset_out`` (Algorithm 2 of
    [1]_);
    ``kind='identity'``: ``Z = Y`` (the reference participant, or no aligner). These are the
    fitted aligners' own maps, so applying the file gives the aligner's output bit for bit.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    participant_id : int
        Whose map this is.
    kind : {'gopp', 'reference', 'identity'}
        Form of the map.
    rotation : ndarray of shape (n_features, n_features) or None
        The alignment rotation.
    offset_in : ndarray of shape (n_features,) or None
        The participant's anchor-upload mean ``b_i``.
    offset_out : ndarray of shape (n_features,) or None
        The reference participant's mean ``b_s`` (``kind='reference'`` only).
    run_id : str or None, default=None
        Fingerprint of the ``analyst fit`` run that made the map; the run's model carries the
        same one, and :meth:`Participant.predict <skdc.protocol.Participant.predict>` refuses a
        map and a model of different runs.
    upload_digest : str or None, default=None
        Digest of the upload file the map was fitted on (its checksum). The participant's
        secret records the digest of the upload it made, and
        :meth:`Participant.predict <skdc.protocol.Participant.predict>` refuses a map fitted
        on another upload (``None``: fitted on in-memory uploads; refused too).
    anchor_upload_digest : str or None, default=None
        Digest of that upload's anchor upload.
    feature_names : list of str or None, default=None
        The raw columns' names, in order, that the run's uploads declared (``None``: none
        did); :meth:`Participant.predict <skdc.protocol.Participant.predict>` refuses a map
        whose names differ from its secret's.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.protocol import AlignmentMap
    >>> m = AlignmentMap(0, "gopp", rotation=np.eye(2)[::-1], offset_in=np.ones(2))
    >>> m.apply([[1.0, 3.0]])
    array([[2., 0.]])
    """

    participant_id: int
    kind: str
    rotation: np.ndarray | None = None
    offset_in: np.ndarray | None = None
    offset_out: np.ndarray | None = None
    run_id: str | None = None
    upload_digest: str | None = None
    anchor_upload_digest: str | None = None
    feature_names: list | None = None

    def apply(self, Y):
        """Map rows ``Y`` (n_samples, n_features) into the collaboration frame."""
        Y = np.asarray(Y, dtype=np.float64)
        if self.kind == "identity":
            return Y
        if Y.ndim != 2 or Y.shape[1] != self.rotation.shape[0]:
            raise ValueError(
                f"the alignment map of participant {self.participant_id} takes rows of width "
                f"{self.rotation.shape[0]}; got shape {Y.shape}."
            )
        Z = (Y - self.offset_in) @ self.rotation
        if self.kind == "reference":
            Z = Z + self.offset_out
        return Z

    def save(self, path):
        """Write the map as a checksummed skdc file, owner-only (``0o600``); return the path.

        A map plus what one colluding participant discloses reveals this participant's
        rotation: only this participant and the analyst may hold it.
        """
        arrays = {
            k: np.asarray(getattr(self, k), dtype=np.float64)
            for k in ("rotation", "offset_in", "offset_out")
            if getattr(self, k) is not None
        }
        header = {"participant_id": int(self.participant_id), "kind": self.kind,
                  **{key: getattr(self, key) for key in _MAP_DIGESTS},
                  "feature_names": None if self.feature_names is None
                  else [str(n) for n in self.feature_names]}
        return write_container(path, _MAP, header, arrays, mode=0o600, what="the map")

    @classmethod
    def load(cls, path):
        """Read and verify a map file written by :meth:`save`.

        Refuses (with an :class:`UploadError` naming the file and the field) a malformed
        header, arrays of the wrong shape or dtype (offsets and rotation are real floats:
        complex, bool, integer or datetime arrays are refused), non-finite values and a
        rotation farther than ``1e-10`` (entrywise, in ``R.T @ R - I``) from orthogonal.
        """
        with Container(path, _MAP) as c:
            kind = c.header.get("kind")
            if not isinstance(kind, str) or kind not in _MAP_MEMBERS:
                raise UploadError(
                    f"{c.path}: field 'kind' is {kind!r}; expected one of "
                    f"{sorted(_MAP_MEMBERS)}."
                )
            pid = c.int_field("participant_id", 0)
            run_id, upload, anchor_upload = (check_digest_field(c.header, key, c.path)
                                             for key in _MAP_DIGESTS)
            # a map written before the field existed: names not checked
            names = check_feature_names(c.header.get("feature_names"), c.path)
            c.expect_members(_MAP_MEMBERS[kind])
            for name, (_shape, dtype) in c.array_members().items():
                if dtype.kind != "f":
                    raise UploadError(
                        f"{c.path}: field {name!r} has dtype {dtype}; a map holds real floats "
                        "(float64)."
                    )
            arrays = c.read()
        if arrays:
            _check_map_arrays(arrays, c.path)
        return cls(pid, kind, **{k: v.astype(np.float64) for k, v in arrays.items()},
                   run_id=run_id, upload_digest=upload, anchor_upload_digest=anchor_upload,
                   feature_names=names)


# the members of each kind of map, and how far from orthogonal a stored rotation may be: the
# aligners' rotations (polar factors, SVDs) are orthogonal to a few ulps times the width
_MAP_MEMBERS = {"gopp": ["rotation", "offset_in"], "identity": [],
                "reference": ["rotation", "offset_in", "offset_out"]}
# the fingerprints a map carries: its run's, and its participant's upload's
_MAP_DIGESTS = ("run_id", "upload_digest", "anchor_upload_digest")
_ORTHOGONAL_ATOL = 1e-10


def _check_map_arrays(arrays, where):
    """A square, finite, orthogonal rotation and finite offsets of its width."""
    R = arrays["rotation"]
    if R.ndim != 2 or R.shape[0] != R.shape[1]:
        raise UploadError(f"{where}: field 'rotation' must be square; got {R.shape}.")
    d = R.shape[0]
    for name, a in arrays.items():
        if name != "rotation" and a.shape != (d,):
            raise UploadError(
                f"{where}: field {name!r} has shape {a.shape}; the rotation is {d} x "
                f"{d}, so it must be ({d},)."
            )
        if not np.isfinite(a).all():
            raise UploadError(f"{where}: field {name!r} contains NaN or infinity.")
    R64 = R.astype(np.float64)
    error = float(np.abs(R64.T @ R64 - np.eye(d)).max()) if d else 0.0
    if not error <= _ORTHOGONAL_ATOL:
        raise UploadError(
            f"{where}: field 'rotation' is not orthogonal (max |R^T R - I| = "
            f"{error:.2g} > {_ORTHOGONAL_ATOL:g}). Ask the analyst for the map again."
        )


def run_fingerprint(maps, model_arrays):
    """SHA-256 over every map and the model's arrays: what ties one run's files together."""
    h = hashlib.sha256(b"skdc-run")
    items = [(f"map{m.participant_id}.{m.kind}.{k}", getattr(m, k))
             for m in maps for k in ("rotation", "offset_in", "offset_out")]
    items += [(f"model.{k}", v) for k, v in sorted(model_arrays.items())]
    for name, value in items:
        h.update(name.encode() + b"\0")
        if value is not None:
            a = np.ascontiguousarray(value)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
    return h.hexdigest()


def check_same_run(map_, map_path, model_run_id, model_path):
    """Refuse a map and a model that were written by different ``analyst fit`` runs."""
    if map_.run_id != model_run_id:
        raise UploadError(
            f"{map_path}: field 'run_id' is {str(map_.run_id)[:12]}... but {model_path} has "
            f"{str(model_run_id)[:12]}...: the map and the model come from different "
            "`analyst fit` runs. Use the map_<id>.npz and the model.npz written together."
        )


def check_same_upload(map_, map_path, upload_digest, secret_path):
    """Refuse a map fitted on another upload than the one the participant's secret made."""
    if map_.upload_digest == upload_digest:
        return
    got = ("null (the analyst fitted in-memory uploads, not upload files)"
           if map_.upload_digest is None else f"{map_.upload_digest[:12]}...")
    raise UploadError(
        f"{map_path}: field 'upload_digest' is {got} but {secret_path} made the upload "
        f"{str(upload_digest)[:12]}...: the map was fitted on another upload than the one this "
        "secret made (an upload re-sent with a new secret?). Predict with the secret that made "
        "the map's upload, or ask the analyst to fit this secret's upload."
    )


def map_of(aligner, i):
    """Participant ``i``'s map read off a fitted aligner's public attributes."""
    from ..alignment import GOPPAligner, ReferenceAligner

    if aligner is None:
        return AlignmentMap(i, "identity")
    if isinstance(aligner, GOPPAligner):
        return AlignmentMap(i, "gopp", aligner.rotations_[i], aligner.anchor_means_[i])
    if isinstance(aligner, ReferenceAligner):
        if i == aligner.reference:
            return AlignmentMap(i, "identity")
        return AlignmentMap(i, "reference", aligner.rotations_[i], aligner.anchor_means_[i],
                            aligner.anchor_means_[aligner.reference])
    raise TypeError(
        f"exporting alignment maps supports GOPPAligner and ReferenceAligner; got "
        f"{type(aligner).__name__}."
    )
