"""The other files of a deployment: the shared anchor, alignment maps, the model, secrets.

* The **anchor** is a plain ``.npy`` (made once with :func:`make_anchor`, distributed to the
  participants out of band, never to the analyst).
* An **alignment map** (:class:`AlignmentMap`) is what the analyst returns to participant
  ``i``: its rotation and offsets, applied exactly as the fitted aligner applies them.
* The **model** is exported as its fitted arrays (coefficients, intercepts, classes), never as
  a pickle, so only linear models from an allow-list travel (:func:`save_model`).

All but the anchor use the checksummed container of :mod:`skdc.protocol._format`.
"""

# Licence: BSD 3 clause

import json
import os
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn import linear_model, svm
from sklearn.base import is_classifier

from ..anchors import orthonormal_anchor, uniform_anchor
from ._format import UploadError, _Container, _write_container

__all__ = ["AlignmentMap", "load_anchor", "load_model", "make_anchor", "save_model"]

_MAP = "skdc-map"
_MODEL = "skdc-model"

# anchors whose centered version has a larger condition number amplify the anchor noise
_ANCHOR_COND_WARN = 1e6


def make_anchor(path, n_features, *, n_anchors=None, kind="orthonormal", random_state=None):
    """Make the shared anchor once and write it as a ``.npy`` file.

    Parameters
    ----------
    path : str or path-like
        Output ``.npy`` file. Distribute it to the participants only (never the analyst).
    n_features : int
        Width ``d`` of the participants' data.
    n_anchors : int, default=None
        Anchor rows ``r``; ``None`` means ``4 * n_features`` (the papers' choice). At least
        ``n_features + 1``.
    kind : {'orthonormal', 'uniform'}, default='orthonormal'
        The centered orthonormal anchor of eq. (22) of the GDP paper, or uniform entries.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor written.

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
    makers = {"orthonormal": orthonormal_anchor, "uniform": uniform_anchor}
    if kind not in makers:
        raise ValueError(f"kind must be one of {sorted(makers)}; got {kind!r}.")
    r = 4 * n_features if n_anchors is None else n_anchors
    A = makers[kind](r, n_features, random_state=random_state)
    with open(path, "wb") as fh:
        np.save(fh, A, allow_pickle=False)
    return A


def load_anchor(path):
    """Read an anchor ``.npy`` (never unpickling) and check it can align.

    Raises :class:`UploadError` for an unreadable, non-float, non-2-D or non-finite file and for
    too few rows or a rank-deficient centered anchor; warns when the centered anchor is
    ill-conditioned (the anchor noise is then amplified).

    Parameters
    ----------
    path : str or path-like
        The anchor file.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor, float64.
    """
    path = os.fspath(path)
    try:
        A = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise UploadError(f"{path}: not a readable .npy anchor ({exc}).") from None
    if not isinstance(A, np.ndarray) or A.ndim != 2 or A.dtype.kind not in "fiu":
        raise UploadError(
            f"{path}: an anchor is a 2-D numeric array (n_anchors, n_features); got "
            f"{getattr(A, 'shape', None)} of {getattr(A, 'dtype', type(A).__name__)}."
        )
    return _check_anchor(A.astype(np.float64), path)


def _check_anchor(A, where):
    """Refuse anchors that cannot align; warn on ill-conditioned ones (what to change)."""
    if not np.isfinite(A).all():
        raise UploadError(f"{where}: the anchor contains NaN or infinity; make a new one.")
    r, d = A.shape
    if r < d + 1:
        raise UploadError(
            f"{where}: the anchor has {r} rows for {d} features; alignment needs at least "
            f"n_features + 1 = {d + 1} (the papers use {4 * d}). Make it with more rows."
        )
    s = np.linalg.svd(A - A.mean(axis=0), compute_uv=False)
    if s[-1] <= 1e-10 * max(s[0], np.finfo(float).tiny):
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


@dataclass
class AlignmentMap:
    """Participant ``i``'s alignment map, as the analyst returns it.

    ``kind='gopp'``: ``Z = (Y - offset_in) @ rotation`` (eq. (33) of the GDP paper);
    ``kind='reference'``: ``Z = (Y - offset_in) @ rotation + offset_out`` (Algorithm 2);
    ``kind='identity'``: ``Z = Y`` (the reference participant, or no aligner). These are the
    fitted aligners' own maps, so applying the file gives the aligner's output bit for bit.

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
        """Write the map as a checksummed skdc file; return the path."""
        arrays = {
            k: getattr(self, k)
            for k in ("rotation", "offset_in", "offset_out")
            if getattr(self, k) is not None
        }
        header = {"participant_id": int(self.participant_id), "kind": self.kind}
        return _write_container(path, _MAP, header, arrays)

    @classmethod
    def load(cls, path):
        """Read and verify a map file written by :meth:`save`."""
        c = _Container(path, _MAP)
        try:
            h = c.header
            kind = h.get("kind")
            need = {"gopp": ["rotation", "offset_in"], "identity": [],
                    "reference": ["rotation", "offset_in", "offset_out"]}
            if kind not in need:
                raise UploadError(f"{c.path}: field 'kind' must be one of {sorted(need)}.")
            pid = h.get("participant_id")
            if not isinstance(pid, int) or isinstance(pid, bool) or pid < 0:
                raise UploadError(f"{c.path}: field 'participant_id' must be an int >= 0.")
            c.expect_members(need[kind])
            arrays = c.read()
        finally:
            c.close()
        if arrays:
            R = arrays.get("rotation")
            d = R.shape[0] if R is not None and R.ndim == 2 else -1
            ok = R is not None and R.shape == (d, d) and R.dtype.kind == "f"
            ok = ok and all(arrays[k].shape == (d,) for k in arrays if k != "rotation")
            if not ok or not all(np.isfinite(a).all() for a in arrays.values()):
                raise UploadError(f"{c.path}: the map's arrays have inconsistent shapes or NaN.")
            if not np.allclose(R.T @ R, np.eye(d), atol=1e-8):
                raise UploadError(f"{c.path}: field 'rotation' is not orthogonal.")
        return cls(pid, kind, **{k: v.astype(np.float64) for k, v in arrays.items()})


def _map_of(aligner, i):
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


def save_model(path, model):
    """Write a fitted linear model as arrays (no pickle); return the path.

    Supported: ``LogisticRegression``, ``LinearRegression``, ``Ridge``, ``Lasso``,
    ``ElasticNet``, ``SGDClassifier``, ``SGDRegressor``, ``LinearSVC``, ``LinearSVR``. Their
    predictions depend on ``coef_``, ``intercept_`` and ``classes_`` only, so the loaded model
    predicts exactly as the fitted one.

    Parameters
    ----------
    path : str or path-like
        Output file.
    model : estimator
        A fitted model of an allow-listed class.

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
    header = {"estimator": name, "params": _json_params(model), "scalars": scalars,
              "n_features_in": int(model.n_features_in_)}
    return _write_container(path, _MODEL, header, arrays)


def load_model(path):
    """Read a model written by :func:`save_model` (allow-listed classes only, no pickle).

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    model : estimator
        The model, ready to ``predict``.
    """
    c = _Container(path, _MODEL)
    try:
        h = c.header
        name = h.get("estimator")
        if name not in _MODELS:
            raise UploadError(
                f"{c.path}: field 'estimator' is {name!r}; only {sorted(_MODELS)} are loaded."
            )
        params = h.get("params")
        if not isinstance(params, dict):
            raise UploadError(f"{c.path}: field 'params' must be an object.")
        c.expect_members(["coef_", "intercept_"], optional=["classes_"])
        arrays = c.read()
    finally:
        c.close()
    try:
        model = _MODELS[name]().set_params(**params)
    except (ValueError, TypeError) as exc:
        raise UploadError(f"{c.path}: field 'params' is invalid for {name} ({exc}).") from None
    for attr, value in arrays.items():
        if attr != "classes_" and (value.dtype.kind != "f" or not np.isfinite(value).all()):
            raise UploadError(f"{c.path}: field {attr!r} must be finite floats.")
        setattr(model, attr, value[()] if attr in h.get("scalars", []) else value)
    n_in = h.get("n_features_in")
    coef = np.atleast_2d(arrays["coef_"])
    if not isinstance(n_in, int) or isinstance(n_in, bool) or n_in != coef.shape[-1]:
        raise UploadError(f"{c.path}: field 'n_features_in' does not match 'coef_'.")
    if np.size(arrays["intercept_"]) not in (1, coef.shape[0]):
        raise UploadError(f"{c.path}: field 'intercept_' does not match 'coef_'.")
    if is_classifier(model):
        classes = arrays.get("classes_")
        if classes is None or classes.ndim != 1 or len(classes) != max(2, coef.shape[0]):
            raise UploadError(
                f"{c.path}: field 'classes_' must list the {max(2, coef.shape[0])} classes of "
                f"this {name}."
            )
    model.n_features_in_ = n_in
    return model


def _dump_json(path, obj):
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=2, sort_keys=True)
