"""The other files of a deployment: the shared anchor, alignment maps, the model, secrets.

* The **anchor** is a plain ``.npy`` (made once with :func:`make_anchor`, distributed to the
  participants out of band, never to the analyst), whose header names its kind in a comment
  (``# skdc-kind: skdc-anchor``; ``numpy.load`` ignores it), so that no command's output
  replaces it unasked.
* An **alignment map** (:class:`AlignmentMap`) is what the analyst returns to participant
  ``i``: its rotation and offsets, applied exactly as the fitted aligner applies them.
* The **model** is exported as its fitted arrays (coefficients, intercepts, classes), never as
  a pickle, so only linear models from an allow-list travel (:func:`save_model`).

All but the anchor use the checksummed container of :mod:`skdc.protocol._container`.
"""

# Licence: BSD 3 clause

import hashlib
import os
import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
from sklearn import linear_model, svm
from sklearn.base import is_classifier

from ..anchors import orthonormal_anchor, uniform_anchor
from ..utils._docstring import Substitution
from ..utils._outputs import write_npy
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._container import (
    LABEL_KINDS,
    Container,
    UploadError,
    atomic_file,
    check_digest_field,
    check_feature_names,
    check_values,
    max_magnitude,
    read_npy,
    write_container,
)
from ._screen import rank_deficient

__all__ = ["AlignmentMap", "load_anchor", "load_model", "make_anchor", "save_model"]

_MAP = "skdc-map"
_MODEL = "skdc-model"
_ANCHOR = "skdc-anchor"

# anchors whose centered version has a larger condition number amplify the anchor noise
_ANCHOR_COND_WARN = 1e6


_ANCHOR_MAKERS = {"orthonormal": orthonormal_anchor, "uniform": uniform_anchor}


@validate_params(
    {
        "path": [str, os.PathLike],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 2, None, closed="left"), None],
        "kind": [StrOptions(set(_ANCHOR_MAKERS))],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references)
def make_anchor(path, n_features, *, n_anchors=None, kind="orthonormal", random_state=None):
    """Make the shared anchor once and write it as a ``.npy`` file.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        Output ``.npy`` file, written owner-only (``0o600``). Distribute it to the
        participants only, over a private channel (never to the analyst).
    n_features : int
        Width ``d`` of the participants' data.
    n_anchors : int, default=None
        Anchor rows ``r``; ``None`` means ``4 * n_features`` (the papers' choice). At least
        ``n_features + 1``.
    kind : {'orthonormal', 'uniform'}, default='orthonormal'
        The centered orthonormal anchor of eq. (22) of [1]_, or uniform entries.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor written.

    {references}

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.protocol import load_anchor, make_anchor
    >>> path = os.path.join(tempfile.mkdtemp(), "anchor.npy")
    >>> make_anchor(path, 3, random_state=0).shape
    (12, 3)
    >>> load_anchor(path).shape
    (12, 3)
    """
    r = 4 * n_features if n_anchors is None else n_anchors
    A = _ANCHOR_MAKERS[kind](r, n_features, random_state=random_state)
    # owner-only: the raw anchor with one clean anchor upload reveals that participant's
    # secret; a link, pipe or device at ``path`` is replaced, never written through, and so is
    # an earlier anchor, but never another kind of skdc file (a secret) nor a command's input
    with atomic_file(path, 0o600, what="the anchor", kind=_ANCHOR) as fh:
        write_npy(fh, A, kind=_ANCHOR)
    return A


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def load_anchor(path):
    """Read an anchor ``.npy`` (never unpickling) and check it can align.

    Raises :class:`UploadError` for an unreadable, non-float, non-2-D or non-finite file and for
    too few rows or a rank-deficient centered anchor; warns when the centered anchor is
    ill-conditioned (the anchor noise is then amplified).

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        The anchor file.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor, float64.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.protocol import UploadError, load_anchor
    >>> path = os.path.join(tempfile.mkdtemp(), "anchor.npy")
    >>> np.save(path, np.ones((6, 2)))  # every row alike: its centered version is zero
    >>> try:
    ...     load_anchor(path)
    ... except UploadError as exc:
    ...     print(str(exc).split(": ", 1)[1][:37])
    the centered anchor is rank-deficient
    """
    path = os.fspath(path)
    A = read_npy(path, "the anchor")
    if A.ndim != 2 or A.dtype.kind not in "fiu":
        raise UploadError(
            f"{path}: an anchor is a 2-D numeric array (n_anchors, n_features); got "
            f"{getattr(A, 'shape', None)} of {getattr(A, 'dtype', type(A).__name__)}."
        )
    return check_anchor(A.astype(np.float64), path)


def check_anchor(A, where):
    """Refuse anchors that cannot align; warn on ill-conditioned ones (what to change)."""
    if not np.isfinite(A).all():
        raise UploadError(f"{where}: the anchor contains NaN or infinity; make a new one.")
    # refused before any arithmetic on it (an SVD of entries near 1e300 overflows)
    check_values(A, where, "the anchor", max_magnitude(A.size))
    r, d = A.shape
    if r < d + 1:
        raise UploadError(
            f"{where}: the anchor has {r} rows for {d} features; alignment needs at least "
            f"n_features + 1 = {d + 1} (the papers use {4 * d}). Make it with more rows."
        )
    s = np.linalg.svd(A - A.mean(axis=0), compute_uv=False)
    if rank_deficient(s):
        raise UploadError(
            f"{where}: the centered anchor is rank-deficient (singular values {s[0]:.3g} .. "
            f"{s[-1]:.3g}): alignment cannot identify the rotations. Make it with "
            "`skdc anchor make` (orthonormal)."
        )
    if s[0] / s[-1] > _ANCHOR_COND_WARN:
        warnings.warn(
            f"{where}: the centered anchor is ill-conditioned (condition number "
            f"{s[0] / s[-1]:.3g} > {_ANCHOR_COND_WARN:.0g}): anchor noise and rounding are "
            "amplified in the alignment. Use the orthonormal anchor (`skdc anchor make`), "
            "whose condition number is 1.",
            UserWarning,
        )
    return A


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


# -- models -------------------------------------------------------------------------------
_MODELS = {
    cls.__name__: cls
    for cls in (
        linear_model.LogisticRegression, linear_model.LinearRegression, linear_model.Ridge,
        linear_model.Lasso, linear_model.ElasticNet,
        linear_model.SGDClassifier, linear_model.SGDRegressor, svm.LinearSVC, svm.LinearSVR,
    )
}
_MODEL_ARRAYS = ("coef_", "intercept_", "classes_")


def _json_params(model):
    out = {}
    for k, v in model.get_params(deep=False).items():
        if isinstance(v, np.generic):
            v = v.item()
        if v is None or isinstance(v, (bool, int, float, str)):
            out[k] = v
    return out


def model_arrays(model):
    """The fitted arrays of an allow-listed linear model, and which of them are scalars."""
    name = type(model).__name__
    if _MODELS.get(name) is not type(model):
        raise TypeError(
            f"save_model exports only linear models ({', '.join(sorted(_MODELS))}), whose "
            f"fitted state is plain arrays; got {name}. Arbitrary models would need a pickle, "
            "which skdc never sends across organisations."
        )
    arrays, scalars = {}, []
    for attr in _MODEL_ARRAYS:
        if hasattr(model, attr):
            value = getattr(model, attr)
            if np.ndim(value) == 0:
                scalars.append(attr)
            arrays[attr] = np.asarray(value)
    if "coef_" not in arrays:
        raise ValueError(f"{name} is not fitted; fit it before saving.")
    return arrays, scalars


@validate_params(
    {
        "path": [str, os.PathLike],
        # the allow-list is checked in the body, whose message lists the supported classes
        "model": [HasMethods(["get_params", "predict"])],
        "run_id": [str, None],
        "feature_names": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def save_model(path, model, *, run_id=None, feature_names=None):
    """Write a fitted linear model as arrays (no pickle), owner-only (``0o600``); return it.

    Supported: ``LogisticRegression``, ``LinearRegression``, ``Ridge``, ``Lasso``,
    ``ElasticNet``, ``SGDClassifier``, ``SGDRegressor``, ``LinearSVC``, ``LinearSVR``. Their
    predictions depend on ``coef_``, ``intercept_`` and ``classes_`` only, so the loaded model
    predicts exactly as the fitted one.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        Output file.
    model : estimator
        A fitted model of an allow-listed class.
    run_id : str or None, default=None
        Fingerprint of the ``analyst fit`` run (64 hex digits) shared with the run's
        alignment maps (:attr:`AlignmentMap.run_id`); :meth:`Analyst.export
        <skdc.protocol.Analyst.export>` sets it.
    feature_names : list of str or None, default=None
        The raw columns' names, in order, of the uploads the model was trained on (the
        participants' tables' header), recorded so that a participant's predict refuses a
        model of other columns; ``None``: not recorded (only the count is checked).

    Returns
    -------
    path : str
        The written file.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdc.protocol import load_model, save_model
    >>> X, y = np.random.RandomState(0).rand(20, 3), np.arange(20) % 2
    >>> clf = LogisticRegression().fit(X, y)
    >>> path = save_model(os.path.join(tempfile.mkdtemp(), "model.npz"), clf)
    >>> bool(np.array_equal(load_model(path).predict(X), clf.predict(X)))
    True
    """
    arrays, scalars = model_arrays(model)
    check_digest_field({"run_id": run_id}, "run_id", "run_id")
    header = {"estimator": type(model).__name__, "params": _json_params(model),
              "scalars": scalars, "n_features_in": int(model.n_features_in_),
              "run_id": run_id,
              "feature_names": check_feature_names(
                  None if feature_names is None else [str(n) for n in feature_names],
                  "feature_names")}
    # owner-only: the model is the analyst's and the participants' (not the public's)
    return write_container(path, _MODEL, header, arrays, mode=0o600, what="the model")


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def load_model(path):
    """Read a model written by :func:`save_model` (allow-listed classes only, no pickle).

    Every header field and array is checked (estimator name, parameters, ``scalars``,
    ``n_features_in``, the shapes and dtypes of ``coef_``, ``intercept_`` and ``classes_``);
    anything off raises :class:`UploadError` naming the file and the field.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    model : estimator
        The model, ready to ``predict``.

    Examples
    --------
    >>> import os, tempfile
    >>> from sklearn.linear_model import Ridge
    >>> from skdc.protocol import load_model, save_model
    >>> path = os.path.join(tempfile.mkdtemp(), "model.npz")
    >>> _ = save_model(path, Ridge(alpha=2.0).fit([[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0]))
    >>> load_model(path)
    Ridge(alpha=2.0)
    """
    return read_model(path)[0]


def read_model(path, *, schema=False):
    """:func:`load_model`, also returning the file's run fingerprint (and, with ``schema``,
    the raw columns' names it records, ``None`` where it records none)."""
    with Container(path, _MODEL) as c:
        name, params, scalars, run_id = _check_model_header(c)
        names = check_feature_names(c.header.get("feature_names"), c.path)
        _check_model_members(c, scalars)
        arrays = c.read()
    try:
        model = _MODELS[name]().set_params(**params)
    except (ValueError, TypeError) as exc:
        raise UploadError(f"{c.path}: field 'params' is invalid for {name} ({exc}).") from None
    for attr, value in arrays.items():
        if value.dtype.kind == "f" and not np.isfinite(value).all():
            raise UploadError(f"{c.path}: field {attr!r} contains NaN or infinity.")
        setattr(model, attr, value.reshape(())[()] if attr in scalars else value)
    _check_model_shapes(model, arrays, c.header["n_features_in"], c.path)
    model.n_features_in_ = c.header["n_features_in"]
    return (model, run_id, names) if schema else (model, run_id)


def _check_model_header(c):
    """The estimator (allow-listed), its parameters, its scalar attributes and its run."""
    h = c.header
    name = h.get("estimator")
    if not isinstance(name, str) or name not in _MODELS:
        raise UploadError(
            f"{c.path}: field 'estimator' is {name!r}; only {sorted(_MODELS)} are loaded."
        )
    params = h.get("params")
    if not isinstance(params, dict):
        raise UploadError(f"{c.path}: field 'params' must be an object.")
    scalars = h.get("scalars", [])
    if not isinstance(scalars, list) or not all(
            isinstance(k, str) and k in _MODEL_ARRAYS for k in scalars):
        raise UploadError(
            f"{c.path}: field 'scalars' must be a list of names among {list(_MODEL_ARRAYS)};"
            f" got {str(scalars)[:40]}."
        )
    c.int_field("n_features_in", 1)
    return name, params, scalars, check_digest_field(h, "run_id", c.path)


def _check_model_members(c, scalars):
    """``coef_`` and ``intercept_`` real floats of a linear model's ranks; 1-D ``classes_``."""
    c.expect_members(["coef_", "intercept_"], optional=["classes_"])
    for attr, (shape, dtype) in c.members.items():
        if attr in ("coef_", "intercept_"):
            if dtype.kind != "f":
                raise UploadError(
                    f"{c.path}: field {attr!r} has dtype {dtype}; expected real floats."
                )
            if len(shape) > (2 if attr == "coef_" else 1):
                raise UploadError(
                    f"{c.path}: field {attr!r} has shape {shape}; a linear model's "
                    f"{attr} has at most {2 if attr == 'coef_' else 1} dimensions."
                )
        if attr == "classes_" and (dtype.kind not in LABEL_KINDS or len(shape) != 1):
            raise UploadError(
                f"{c.path}: field 'classes_' has dtype {dtype} and shape {shape}; classes "
                "are a 1-D array of numbers or strings."
            )
        if attr in scalars and shape not in ((), (1,)):
            raise UploadError(
                f"{c.path}: field 'scalars' lists {attr!r} but it has shape {shape}."
            )


def _check_model_shapes(model, arrays, n_in, where):
    """``coef_`` of ``n_in`` columns, a matching ``intercept_``; a classifier's distinct classes."""
    coef = np.atleast_2d(arrays["coef_"])
    if n_in != coef.shape[-1]:
        raise UploadError(
            f"{where}: field 'n_features_in' is {n_in} but 'coef_' has {coef.shape[-1]} "
            "columns."
        )
    if np.size(arrays["intercept_"]) not in (1, coef.shape[0]):
        raise UploadError(f"{where}: field 'intercept_' does not match 'coef_'.")
    if is_classifier(model):
        classes = arrays.get("classes_")
        if classes is None or classes.ndim != 1 or len(classes) != max(2, coef.shape[0]):
            raise UploadError(
                f"{where}: field 'classes_' must list the {max(2, coef.shape[0])} classes of "
                f"this {type(model).__name__}."
            )
        if len(np.unique(classes)) != len(classes):
            raise UploadError(f"{where}: field 'classes_' repeats a class.")
