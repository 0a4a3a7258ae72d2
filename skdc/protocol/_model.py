"""The model file: the analyst's fitted model, as its arrays (never a pickle).

The model is exported as its fitted arrays (coefficients, intercepts, classes) in a
checksummed skdc container (:mod:`skdc.protocol._container`) of kind ``skdc-model``, so only
linear models from an allow-list travel (:func:`save_model`); :func:`load_model` rebuilds the
estimator from them, checking every field.
"""

# Licence: BSD 3 clause

import os

import numpy as np
from sklearn import linear_model, svm
from sklearn.base import is_classifier

from ..utils._sklearn_compat import HasMethods, validate_params
from ._container import (
    LABEL_KINDS,
    Container,
    UploadError,
    check_digest_field,
    check_feature_names,
    write_container,
)

__all__ = ["load_model", "save_model"]

_MODEL = "skdc-model"
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
