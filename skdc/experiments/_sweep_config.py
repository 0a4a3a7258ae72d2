"""Privacy-utility sweeps from a config file: a pipeline, data and noise values, as plain data.

:func:`load_sweep_config` reads a small TOML (or YAML) file naming a scikit-learn pipeline of
estimator classes, the data (scikit-learn's digits, an ``.npz`` file, or a CSV or Parquet table)
and the noise values to sweep, and checks all of it before any work; :func:`run_sweep_config`
then runs :func:`~skdc.experiments.privacy_utility_sweep` on it. ``skdc sweep CONFIG`` is these
two calls, and ``skdc sweep --example`` prints a commented config.

A config comes from someone else as often as from its user, so it carries plain data only and
crosses skdc's file boundary: a regular file of at most 1 MiB, parsed into strings, finite
numbers, booleans, lists and tables nested at most 32 levels and holding at most 100,000 values
(YAML aliases could otherwise turn ten lines into 10**9 values). It names public estimator
classes of scikit-learn, skdc or imbalanced-learn, never functions, and gives them plain,
validated parameters; a parameter that would make an estimator load pickles (``memory``) is
refused. The data file it names is read through the same boundary. Every refusal is one
``ValueError`` line naming the file and the key.
"""

# Licence: BSD 3 clause

import importlib
import io
import json
import os
import zlib
from numbers import Integral
from pathlib import Path

import numpy as np

from ..utils._config import _load_config, _plain_data_problem, _shown
from ..utils._files import FileError, check_npy_size, is_int, one_line, read_bytes
from ..utils._sklearn_compat import StrOptions, validate_params

__all__ = ["SweepConfig", "load_sweep_config", "run_sweep_config"]

# ----------------------------------------------------------------------------- public API


class SweepConfig:
    """A sweep config, read and checked: the pipeline, the data and the noise values.

    Made by :func:`load_sweep_config`; :meth:`run` runs the sweep it describes.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    path : str
        The config file.
    config : dict
        Its content, as plain data.
    pipeline : sklearn.pipeline.Pipeline
        The unfitted pipeline its ``[[pipeline.steps]]`` build.
    X : ndarray of shape (n_samples, n_features)
        The rows its ``[data]`` table names.
    y : ndarray of shape (n_samples,) or None
        Their labels.
    test_size : float or int
        The share (or number) of rows held out.
    values : list or frozen scipy.stats distribution
        The noise values of ``[sweep] values``, or the distribution of ``[sweep]
        distribution``.

    Attributes
    ----------
    sweep : dict
        The ``[sweep]`` table (``param``, ``n_draws``, ``attacks``, ``scoring``, ``seed``,
        ``n_jobs``, ``label``).
    output : dict
        The ``[output]`` table (``csv``, ``plot``: where ``skdc sweep`` writes).

    See Also
    --------
    load_sweep_config : Read and check a config file.
    run_sweep_config : Run the sweep a config describes.
    """

    def __init__(self, path, *, config, pipeline, X, y, test_size, values):
        self.path = path
        self.config = config
        self.pipeline = pipeline
        self.X = X
        self.y = y
        self.test_size = test_size
        self.values = values

    @property
    def sweep(self):
        return self.config.get("sweep", {})

    @property
    def output(self):
        return self.config.get("output", {})

    def __repr__(self):
        names = [name for name, _ in self.pipeline.steps]
        return (f"SweepConfig({str(self.path)!r}, steps={names}, param="
                f"{self.sweep['param']!r}, rows={self.X.shape[0]})")

    def run(self, *, n_jobs=None, progress="auto"):
        """Run the sweep: :func:`~skdc.experiments.privacy_utility_sweep` on the config.

        Parameters
        ----------
        n_jobs : int, default=None
            Parallel draws (joblib's ``n_jobs``); ``None``: the config's ``[sweep] n_jobs``.
        progress : bool or "auto", default="auto"
            A progress bar; ``"auto"`` shows it when stderr is a terminal.

        Returns
        -------
        results : pandas.DataFrame
            One row per draw, as :func:`~skdc.experiments.privacy_utility_sweep` returns.
        """
        from ._sweep import privacy_utility_sweep

        sweep = self.sweep
        return privacy_utility_sweep(
            self.pipeline, self.X, self.y, param=sweep["param"], values=self.values,
            n_draws=sweep.get("n_draws"), attacks=sweep.get("attacks") or None,
            scoring=sweep.get("scoring", "balanced_accuracy"), test_size=self.test_size,
            label=sweep.get("label"), random_state=sweep.get("seed", 0),
            n_jobs=n_jobs if n_jobs is not None else sweep.get("n_jobs"), progress=progress,
        )

    def plot(self, results):
        """The sweep's scores against the swept noise, as ``skdc sweep --plot`` draws them.

        Utility above, attack errors below (each on its own axis and scale, a monotone spline
        with a bootstrap band through the draws), titled by the data and the attacks.

        Parameters
        ----------
        results : pandas.DataFrame
            What :meth:`run` returned.

        Returns
        -------
        fig : matplotlib.figure.Figure
            The figure (close it with ``matplotlib.pyplot.close`` when done).
        """
        return _sweep_figure(results, self.sweep, self.config)


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def load_sweep_config(path):
    """Read a sweep config (TOML or YAML) and check all of it before any work.

    The file crosses skdc's file boundary (a regular file of at most 1 MiB; YAML through
    ``yaml.safe_load``), holds plain data only (nested at most 32 levels, at most 100,000
    values), names public estimator classes of scikit-learn, skdc or imbalanced-learn (never
    functions) with plain, validated parameters, and names its data: ``dataset = "digits"``
    (scikit-learn's, standardised), ``"npz"`` (arrays ``X`` and ``y``), ``"csv"`` or
    ``"parquet"`` (a table and its label column, read by :func:`~skdc.datasets.load_table`);
    relative paths start at the config's folder. ``skdc sweep --example`` prints a commented
    config.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    path : str or path-like
        The config: ``.yaml`` or ``.yml`` is read as YAML, anything else as TOML.

    Returns
    -------
    config : SweepConfig
        The pipeline, the data and the noise values, checked.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        One line naming the file and the key: a file that is not regular, too large, not
        valid TOML or YAML, nested too deeply, not plain data; an unknown section or key; a
        value of the wrong type; a class that is not a public estimator class; parameters the
        class refuses; data that cannot be read.

    See Also
    --------
    run_sweep_config : Run the sweep a config describes.
    privacy_utility_sweep : The sweep itself, from Python.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.experiments import load_sweep_config
    >>> path = os.path.join(tempfile.mkdtemp(), "sweep.toml")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('''
    ... [[pipeline.steps]]
    ... name = "gdp"
    ... class = "IGDP"
    ... params = { n_participants = 3, random_state = 0 }
    ...
    ... [[pipeline.steps]]
    ... name = "align"
    ... class = "GOPPAligner"
    ...
    ... [[pipeline.steps]]
    ... name = "clf"
    ... class = "sklearn.linear_model.LogisticRegression"
    ...
    ... [sweep]
    ... param = "align__v"
    ... values = [0.0, 0.1]
    ... ''')
    >>> config = load_sweep_config(path)
    >>> [name for name, _ in config.pipeline.steps], config.X.shape
    (['gdp', 'align', 'clf'], (1797, 64))
    >>> with open(path, "a") as fh:
    ...     _ = fh.write('n_jobs = "all"\\n')
    >>> try:
    ...     load_sweep_config(path)
    ... except ValueError as exc:
    ...     print(str(exc).split(": ", 1)[1])
    [sweep] n_jobs must be a non-zero integer (joblib's n_jobs); got 'all'.
    """
    config = _load_config(path)
    try:
        extra = sorted(set(config) - {"data", "pipeline", "sweep", "output"})
        if extra:
            raise ValueError(f"unknown sections {extra}; allowed: data, pipeline, sweep, output.")
        sweep = _sweep_section(config)
        output = _section(config, "output", {"csv", "plot"})
        for key in ("csv", "plot"):
            _key(output, "output", key, _is_text, "a file name")
        values = sweep["values"] if "values" in sweep else _distribution(sweep["distribution"])
        pipe = _build_pipeline(config)
        X, y, test_size = _load_data(config, Path(path).resolve().parent)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {one_line(exc, 600)}") from None
    return SweepConfig(os.fspath(path), config=config, pipeline=pipe, X=X, y=y,
                       test_size=test_size, values=values)


@validate_params({"config": [str, os.PathLike, SweepConfig], "n_jobs": [Integral, None],
                  "progress": ["boolean", StrOptions({"auto"})]},
                 prefer_skip_nested_validation=True)
def run_sweep_config(config, *, n_jobs=None, progress="auto"):
    """Run the privacy-utility sweep a config file describes.

    :func:`load_sweep_config` (when given a path), then
    :func:`~skdc.experiments.privacy_utility_sweep` with the config's pipeline, data, noise
    values, attacks, scoring and seed: the same table ``skdc sweep CONFIG`` prints.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    config : str, path-like or SweepConfig
        The config file, or a config already loaded.
    n_jobs : int, default=None
        Parallel draws (joblib's ``n_jobs``); ``None``: the config's ``[sweep] n_jobs``.
    progress : bool or "auto", default="auto"
        A progress bar; ``"auto"`` shows it when stderr is a terminal.

    Returns
    -------
    results : pandas.DataFrame
        One row per draw, as :func:`~skdc.experiments.privacy_utility_sweep` returns.

    See Also
    --------
    load_sweep_config : Read and check a config without running it.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.experiments import run_sweep_config
    >>> path = os.path.join(tempfile.mkdtemp(), "sweep.toml")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write('''
    ... [[pipeline.steps]]
    ... name = "gdp"
    ... class = "IGDP"
    ... params = { n_participants = 3, random_state = 0 }
    ...
    ... [[pipeline.steps]]
    ... name = "align"
    ... class = "GOPPAligner"
    ...
    ... [[pipeline.steps]]
    ... name = "clf"
    ... class = "sklearn.linear_model.LogisticRegression"
    ...
    ... [sweep]
    ... param = "align__v"
    ... values = [0.0, 0.05]
    ... ''')
    >>> results = run_sweep_config(path, progress=False)
    >>> results["value"].tolist(), bool(results["balanced_accuracy"].gt(0.8).all())
    ([0.0, 0.05], True)
    """
    if not isinstance(config, SweepConfig):
        config = load_sweep_config(config)
    return config.run(n_jobs=n_jobs, progress=progress)


# ----------------------------------------------------------------------------- the example

def _toml_value(value):
    """A scalar as TOML writes it (strings double-quoted, booleans in lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def _steps_toml(steps):
    """The ``[[pipeline.steps]]`` tables of a sweep config, one per ``(name, class, params)``
    (``params`` a dict of scalars, or ``None``), separated by blank lines."""
    blocks = []
    for name, cls, params in steps:
        lines = ["[[pipeline.steps]]", f"name = {_toml_value(name)}",
                 f"class = {_toml_value(cls)}"]
        if params:
            pairs = ", ".join(f"{k} = {_toml_value(v)}" for k, v in params.items())
            lines.append(f"params = {{ {pairs} }}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


_EXAMPLE_STEPS = (("gdp", "IGDP", {"n_participants": 10, "random_state": 0}),
                  ("align", "GOPPAligner", None),
                  ("clf", "sklearn.linear_model.LogisticRegression", {"max_iter": 2000}))
_EXAMPLE_CONFIG = """\
# skdc sweep config: python -m skdc sweep THIS_FILE
[data]
dataset = "digits"          # "digits", or "npz" with path = "data.npz" holding arrays X and y,
                            # or "csv" / "parquet" with path = "rows.csv" and label = "COLUMN"
test_size = 0.3

# the pipeline's steps, in order; class: an estimator class of skdc (mechanisms, alignment) or
# a public dotted path under sklearn., skdc. or imblearn.; params: plain values only
""" + _steps_toml(_EXAMPLE_STEPS) + """
[sweep]
param = "align__v"
distribution = { name = "uniform", low = 0.0, high = 0.3 }   # or values = [0.0, 0.05, 0.1]
n_draws = 20
# attacks = ["procrustes"]  # names of skdc.metrics.make_attack_scorer (default: none)
scoring = "balanced_accuracy"
seed = 0
n_jobs = 1

[output]
csv = "sweep.csv"
plot = "sweep.png"
"""

# ----------------------------------------------------------------------------- the reader

_DATA_MAX_BYTES = 2**31
_CLASS_ROOTS = ("sklearn", "skdc", "imblearn")
_BARE_CLASS_MODULES = ("skdc", "skdc.mechanisms", "skdc.alignment", "skdc.anchors")
# estimator parameters a config may not set, and why
_UNSAFE_PARAMS = {"memory": "names a joblib cache folder, whose pickled files the estimator "
                            "would load (pickles run code)"}


def _section(config, name, allowed, required=()):
    sec = config.get(name, {})
    if not isinstance(sec, dict):
        raise ValueError(f"[{name}] must be a table; got {_shown(sec)}.")
    unknown = sorted(set(sec) - set(allowed))
    if unknown:
        raise ValueError(f"[{name}] has unknown keys {unknown}; allowed: {sorted(allowed)}.")
    lacking = [k for k in required if k not in sec]
    if lacking:
        raise ValueError(f"[{name}] lacks {lacking}; `skdc sweep --example` shows a config.")
    return sec


def _key(sec, section, key, ok, expected, default=None):
    """``sec[key]`` when ``ok`` accepts it (``default`` when absent), else one line naming it."""
    if key not in sec:
        return default
    if not ok(sec[key]):
        raise ValueError(f"[{section}] {key} must be {expected}; got {_shown(sec[key])}.")
    return sec[key]


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_text(value):
    return isinstance(value, str) and value != ""


def _is_scalar(value):
    return value is None or isinstance(value, (str, bool, int, float))


def _check_settable(param, where):
    """Refuse a parameter a config may not set (see ``_UNSAFE_PARAMS``)."""
    base = param.rsplit("__", 1)[-1]
    if base in _UNSAFE_PARAMS:
        raise ValueError(f"{where} sets {param!r}, which {_UNSAFE_PARAMS[base]}; a config may "
                         "not set it.")


def _sweep_section(config):
    """The ``[sweep]`` table, every key of the right type."""
    sec = _section(config, "sweep", {"param", "values", "distribution", "n_draws", "attacks",
                                     "scoring", "seed", "n_jobs", "label"}, ("param",))
    _key(sec, "sweep", "param", _is_text, "a parameter name such as 'align__v'")
    _check_settable(sec["param"], "[sweep] param")
    if ("values" in sec) == ("distribution" in sec):
        raise ValueError("[sweep] needs exactly one of values = [...] or distribution = {...}.")
    _key(sec, "sweep", "values", lambda v: isinstance(v, list) and v
         and all(_is_scalar(x) for x in v), "a non-empty list of numbers (or strings)")
    _key(sec, "sweep", "n_draws", lambda v: is_int(v) and v >= 1, "a positive integer")
    _key(sec, "sweep", "attacks", lambda v: isinstance(v, str) or (
        isinstance(v, list) and all(_is_text(x) for x in v)),
        "a list of attack names such as ['procrustes']")
    _key(sec, "sweep", "scoring", _is_text, "a scorer name such as 'balanced_accuracy'")
    _key(sec, "sweep", "seed", lambda v: is_int(v) and 0 <= v < 2**32,
         "an integer in [0, 2**32 - 1]")
    _key(sec, "sweep", "n_jobs", lambda v: v is None or (is_int(v) and v != 0),
         "a non-zero integer (joblib's n_jobs)")
    _key(sec, "sweep", "label", lambda v: isinstance(v, str), "a string")
    return sec


def _resolve_class(name):
    """The public estimator class a config names: a bare name exported by skdc (``"IGDP"``) or a
    dotted path under sklearn, skdc or imblearn, every component public, no test module."""
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        raise ValueError(f"{name!r} is not a dotted name such as "
                         "'sklearn.linear_model.LogisticRegression'.")
    private = [part for part in parts if part.startswith("_")]
    if private:
        raise ValueError(f"{name!r} goes through the private name {private[0]!r}; configs name "
                         "public estimator classes only, such as "
                         "'sklearn.linear_model.LogisticRegression'.")
    if any(part in ("tests", "conftest") or part.startswith("test") for part in parts[:-1]):
        raise ValueError(f"{name!r} is in a test module; configs name the libraries' estimator "
                         "classes.")
    if len(parts) == 1:
        found = [getattr(importlib.import_module(m), name, None) for m in _BARE_CLASS_MODULES]
        cls = next((c for c in found if c is not None), None)
        if cls is None:
            raise ValueError(
                f"No class {name!r} in skdc, skdc.mechanisms or skdc.alignment; give a dotted "
                "path such as 'sklearn.linear_model.LogisticRegression'."
            )
    else:
        if parts[0] not in _CLASS_ROOTS:
            raise ValueError(f"Classes come from sklearn, skdc or imblearn; got {name!r}.")
        try:
            cls = getattr(importlib.import_module(".".join(parts[:-1])), parts[-1])
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"Cannot import {name!r}: {one_line(exc)}.") from None
    from sklearn.base import BaseEstimator

    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
        raise ValueError(f"{name!r} is not an estimator class (a subclass of sklearn's "
                         "BaseEstimator); configs name estimator classes only, never functions "
                         "or other objects.")
    return cls


def _build_step(k, step):
    """``(name, estimator)`` of the ``k``-th ``[[pipeline.steps]]`` table."""
    where = f"pipeline step {k}"
    if not isinstance(step, dict) or "class" not in step:
        raise ValueError(f"{where} must be a table with 'class' (and 'name', 'params'); got "
                         f"{_shown(step)}.")
    extra = sorted(set(step) - {"name", "class", "params"})
    if extra:
        raise ValueError(f"{where} has unknown keys {extra}; allowed: name, class, params.")
    cls_name, name = step["class"], step.get("name", f"step{k}")
    if not _is_text(cls_name):
        raise ValueError(f"{where} class must be a class name such as "
                         f"'sklearn.linear_model.LogisticRegression'; got {_shown(cls_name)}.")
    if not _is_text(name) or "__" in name:
        raise ValueError(f"{where} name must be a non-empty string without '__'; got "
                         f"{_shown(name)}.")
    where = f"{where} ({name}: {cls_name})"
    params = step.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"{where}: params must be a table of the class's parameters; got "
                         f"{_shown(params)}.")
    problem = _plain_data_problem(params)
    if problem:
        raise ValueError(f"{where}: params {problem}.")
    for param in params:
        _check_settable(param, where)
    from ..utils._sklearn_compat import validate_estimator_params  # imports scikit-learn

    try:
        cls = _resolve_class(cls_name)
        est = cls(**params)
        if hasattr(est, "_parameter_constraints"):  # before any work, bools not numbers
            validate_estimator_params(est)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {one_line(exc, 400)}") from None
    return name, est


def _build_pipeline(config):
    from sklearn.pipeline import Pipeline

    sec = _section(config, "pipeline", {"steps"}, ("steps",))
    steps = sec["steps"]
    if not isinstance(steps, list) or not steps:
        raise ValueError("[pipeline] steps must be a non-empty list of tables ([[pipeline.steps]]"
                         f" with class, name, params); got {_shown(steps)}.")
    built = [_build_step(k, step) for k, step in enumerate(steps)]
    names = [name for name, _ in built]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"[pipeline] step names must differ; {twice} appear twice.")
    return Pipeline(built)


def _distribution(spec):
    """The frozen scipy.stats distribution of ``[sweep] distribution``: a public continuous or
    discrete distribution, numbers as parameters, finite draws."""
    from scipy import stats

    if not isinstance(spec, dict):
        raise ValueError('[sweep] distribution must be a table such as { name = "uniform", '
                         f"low = 0.0, high = 0.3 }}; got {_shown(spec)}.")
    params = dict(spec)
    name = params.pop("name", "uniform")
    if not isinstance(name, str):
        raise ValueError("[sweep] distribution name must be the name of a scipy.stats "
                         f"distribution such as 'uniform'; got {_shown(name)}.")
    dist = (getattr(stats, name, None) if name.isidentifier() and not name.startswith("_")
            else None)
    if not isinstance(dist, (stats.rv_continuous, stats.rv_discrete)):
        raise ValueError(f"[sweep] distribution {name!r} is not a distribution of scipy.stats; "
                         "give a continuous or discrete one such as 'uniform', 'loguniform' or "
                         "'randint'.")
    for key, value in params.items():
        if not _is_number(value):
            raise ValueError(f"[sweep] distribution {key} must be a finite number; got "
                             f"{_shown(value)}.")
    if name == "uniform" and ("low" in params or "high" in params):
        low, high = float(params.pop("low", 0.0)), float(params.pop("high", 1.0))
        params.update(loc=low, scale=high - low)
    try:
        frozen = dist(**params)
        draws = np.asarray(frozen.rvs(size=8, random_state=0), dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"[sweep] distribution {name!r}: {one_line(exc)}; check its "
                         f"parameters (scipy.stats.{name}).") from None
    if not np.all(np.isfinite(draws)):
        raise ValueError(f"[sweep] distribution {name!r} draws values that are not finite; "
                         "check its parameters.")
    return frozen


def _load_data(config, base):
    sec = _section(config, "data", {"dataset", "path", "label", "test_size"})
    dataset = _key(sec, "data", "dataset", lambda v: v in ("digits", "npz", "csv", "parquet"),
                   "'digits', 'npz', 'csv' or 'parquet'", "digits")
    test_size = _key(sec, "data", "test_size", lambda v: (isinstance(v, float) and 0 < v < 1)
                     or (is_int(v) and v >= 1), "a fraction in (0, 1) or a number of rows", 0.3)
    if dataset == "digits":
        from sklearn.datasets import load_digits
        from sklearn.preprocessing import StandardScaler

        X, y = load_digits(return_X_y=True)
        X = StandardScaler().fit_transform(X) / np.sqrt(X.shape[1])
        return X, y, float(test_size)
    if dataset in ("csv", "parquet"):
        X, y = _load_table_data(sec, base, dataset)
        return X, y, test_size if is_int(test_size) else float(test_size)
    if "path" not in sec:
        raise ValueError("[data] dataset = 'npz' needs path = 'file.npz' (arrays X, y).")
    _key(sec, "data", "path", _is_text, "the path of an .npz file")
    path = Path(sec["path"]) if os.path.isabs(sec["path"]) else base / sec["path"]
    X, y = _read_npz(path)
    return X, y, test_size if is_int(test_size) else float(test_size)


def _read_npz(path):
    """Arrays ``X`` and ``y`` (optional) of an .npz file, read through the file boundary: a
    regular file of at most 2 GiB, no pickles, each member's declared size checked before it is
    allocated, ``X`` a finite numeric matrix and ``y`` one value per row."""
    import zipfile

    what = "[data] path"
    blob = read_bytes(path, what, max_bytes=_DATA_MAX_BYTES, decompress=None)
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            members = {info.filename: info for info in zf.infolist()}
            if "X.npy" not in members:
                raise FileError(f"{path}: {what} must hold an array named X (and y); it holds "
                                f"{sorted(members)[:5]}.")
            for name in ("X.npy", "y.npy"):
                if name in members:
                    _check_npy_member(zf, members[name], path, what)
        with np.load(io.BytesIO(blob), allow_pickle=False) as f:
            X, y = f["X"], (f["y"] if "y" in f else None)
    except FileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, KeyError,
            RuntimeError, NotImplementedError, zlib.error) as exc:
        raise FileError(f"{path}: {what} is not a readable .npz file of arrays X and y "
                        f"({one_line(exc)}).") from None
    if X.ndim != 2 or X.dtype.kind not in "biuf" or X.shape[0] < 2:
        raise FileError(f"{path}: {what}: X must be a numeric matrix of at least two rows; got "
                        f"shape {X.shape} and dtype {X.dtype}.")
    if not np.isfinite(X).all():
        raise FileError(f"{path}: {what}: X holds values that are not finite (NaN or inf).")
    if y is not None and (y.ndim != 1 or len(y) != len(X)):
        raise FileError(f"{path}: {what}: y must hold one label per row of X ({len(X)} rows); "
                        f"got shape {y.shape}.")
    return X, y


def _check_npy_member(zf, info, path, what):
    """Refuse a member holding objects, or declaring more data than it holds (before numpy
    allocates the declared shape)."""
    with zf.open(info) as fh:
        header = check_npy_size(fh, info.file_size, f"{path}: {what}: {info.filename}",
                                error=FileError)
    if header is None:
        raise FileError(f"{path}: {what}: {info.filename} is not a .npy array numpy can read; "
                        "save it with numpy.savez.")
    if header[1].hasobject:
        raise FileError(f"{path}: {what}: {info.filename} holds Python objects; skdc reads "
                        "numeric arrays only (no pickles).")

def _load_table_data(sec, base, dataset):
    """``(X, y)`` of ``[data] path`` (a table) and ``label`` (its label column or a labels file,
    relative paths from the config's folder), read by :func:`skdc.datasets.load_table`."""
    from ..datasets import load_table

    if "path" not in sec or "label" not in sec:
        raise ValueError(f"[data] dataset = '{dataset}' needs path = 'rows.{dataset}' and label = "
                         "'COLUMN' (the label column, or a labels file).")
    for key in ("path", "label"):
        _key(sec, "data", key, _is_text, "a file name" if key == "path" else
             "a column name or a labels file")
    path, label = (str(base / v) if not os.path.isabs(v) and (base / v).exists() else v
                   for v in (sec["path"], sec["label"]))
    return load_table(path, label=label, return_X_y=True, what="[data] path",
                      label_what="[data] label")



# ----------------------------------------------------------------------------- the figure


def _sweep_figure(results, sweep, config):
    """The sweep's scores against the swept noise: utility above, attack errors below (each on
    its own axis and scale), titled by the data and the attacks."""
    import textwrap

    import matplotlib.pyplot as plt

    from ._plot import column_label, plot_noise_curves

    scores = [c for c in results.columns if c not in (
        "draw", "method", "param", "value", "seed", "n_iter", "converged",
        "fixed_point_residual", "seconds")]
    named = sweep.get("attacks") or []
    named = [named] if isinstance(named, str) else named
    attacks = [c for c in scores if c in named or c.removesuffix("_linkage") in named]
    utility = [c for c in scores if c not in attacks]
    data = config.get("data", {})
    name = Path(data["path"]).stem if data.get("dataset", "digits") != "digits" else "digits"
    attack_names = [column_label(a).removesuffix(" attack error") for a in attacks]
    title = f"{name}: {column_label(sweep['param'])}" + (
        f" against the {', '.join(attack_names)} attack{'s' if len(attacks) > 1 else ''}"
        if attacks else "")
    panels = [cols for cols in (utility, attacks) if cols]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False, layout="constrained",
                             figsize=(6.4, 2.2 + 2.6 * len(panels)))
    # a monotone fit where the quantity is known to move one way (accuracy falls, attack
    # error rises); human axis labels come from column_label
    common = dict(n_boot=1000 if len(results) >= 9 else 0, monotone="auto")
    for ax, cols in zip(axes[:, 0], panels):
        plot_noise_curves(results, cols, ax=ax, ylabel=None, **common)
        if ax is not axes[-1, 0]:
            ax.set_xlabel("")
    if attacks:
        axes[-1, 0].set_ylabel("attack relative error\n(higher = more private)"
                               if not all(c.endswith("_linkage") for c in attacks) else
                               "attack linkage privacy\n(higher = more private)")
    fig.suptitle("\n".join(textwrap.wrap(title, 60)))
    return fig
