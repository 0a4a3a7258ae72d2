"""Booleans are not numbers: every skdc estimator and validated function refuses ``True`` and
``False`` where it takes an integer (skdc/utils/_sklearn_compat.py)."""

import importlib
import inspect
import re
from numbers import Integral
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.utils._param_validation import Interval as SklearnInterval
from sklearn.utils._param_validation import InvalidParameterError, make_constraint

from skdc.utils._sklearn_compat import Interval, validate_params, without_bools

PACKAGE = Path(__file__).resolve().parents[2] / "skdc"
ROOMS = ["skdc", "skdc.mechanisms", "skdc.alignment", "skdc.anchors", "skdc.attacks",
         "skdc.metrics", "skdc.privacy", "skdc.linear_model", "skdc.datasets",
         "skdc.experiments", "skdc.protocol"]


def _public():
    """Every public estimator class and validated function of skdc's rooms (not skdc.nn: its
    skorch nets validate their arguments as skorch does)."""
    found = {}
    for room in ROOMS:
        module = importlib.import_module(room)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                found[obj] = None
            elif callable(obj) and hasattr(obj, "_skl_parameter_constraints"):
                found[obj] = None
    return list(found)


def _meant_as_int(constraints):
    """Whether scikit-learn's reading of ``constraints`` takes an integer (and so a bool) that
    is not meant as a boolean."""
    if isinstance(constraints, str):
        return False
    if any((isinstance(c, str) and c in ("boolean", "verbose")) or c is bool
           for c in constraints):
        return False
    return any((isinstance(c, str) and c == "random_state") or c is Integral or c is int
               or (isinstance(c, SklearnInterval) and c.type is Integral)
               for c in constraints)


_FUNCTIONS = [f for f in _public() if not inspect.isclass(f)]
_CLASSES = [c for c in _public() if inspect.isclass(c) and not inspect.isabstract(c)]


def test_every_room_validates_through_the_compat_module():
    """No module imports scikit-learn's validation directly (it would let bools through)."""
    direct = re.compile(r"sklearn\.utils\._param_validation|from sklearn\.base import .*"
                        r"_fit_context")
    offenders = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                 if p.name != "_sklearn_compat.py" and direct.search(p.read_text())]
    assert offenders == []


@pytest.mark.parametrize("func", _FUNCTIONS, ids=lambda f: f.__qualname__)
def test_validated_functions_refuse_bools_as_ints(func):
    for name, constraints in func._skl_parameter_constraints.items():
        if _meant_as_int(constraints):
            accepted = [c for c in constraints if make_constraint(c).is_satisfied_by(True)]
            assert accepted == [], (name, accepted)


# the arguments of the estimators that have required ones
_REQUIRED = {
    "SMOTEAnchor": lambda cls: cls(20, np.random.RandomState(0).rand(20, 3),
                                   np.repeat([0, 1], 10)),
    "ParticipantWise": lambda cls: cls(_pca()),
    "Central": lambda cls: cls(_logistic()),
    "Local": lambda cls: cls(_logistic()),
}


def _pca():
    from sklearn.decomposition import PCA

    return PCA(n_components=2)


def _logistic():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression()


def _use(estimator):
    """Run the estimator's entry point on small data (its parameters are validated first)."""
    rng = np.random.RandomState(0)
    X, y = rng.rand(20, 3), np.repeat([0, 1], 10)
    if hasattr(estimator, "fit"):
        return estimator.fit(X, y)
    if hasattr(estimator, "reconstruct"):  # an attack on a CollusionView
        return estimator.reconstruct(None)
    return estimator.make_anchor(3)  # the SMOTE anchor


def _cases():
    for cls in _CLASSES:
        for name, constraints in cls._parameter_constraints.items():
            if _meant_as_int(constraints):
                yield pytest.param(cls, name, id=f"{cls.__name__}-{name}")


@pytest.mark.parametrize("cls, name", list(_cases()))
@pytest.mark.parametrize("value", [True, False])
def test_estimators_refuse_bools_as_ints(cls, name, value):
    make = _REQUIRED.get(cls.__name__, lambda c: c())
    estimator = clone(make(cls)).set_params(**{name: value})
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of {cls.__name__}"):
        _use(estimator)


def test_without_bools_keeps_boolean_constraints():
    both = without_bools({"verbose": ["verbose"], "flag": ["boolean", Integral],
                          "seed": ["random_state"], "free": "no_validation"})
    assert both["verbose"] == ["verbose"] and both["free"] == "no_validation"
    assert both["flag"][0] == "boolean"
    seed = [make_constraint(c) for c in both["seed"]]
    assert not any(c.is_satisfied_by(True) for c in seed)
    assert all(any(c.is_satisfied_by(v) for c in seed)
               for v in (0, 2**32 - 1, np.int64(3), None, np.random.RandomState(0)))
    assert not any(c.is_satisfied_by(2**32) or c.is_satisfied_by(-1) for c in seed)


def test_validate_params_refuses_bools_and_says_what_it_wanted():
    @validate_params({"n": [Interval(Integral, 1, None, closed="left")],
                      "seed": ["random_state"], "k": [Integral]},
                     prefer_skip_nested_validation=True)
    def f(n, seed=None, k=0):
        return n

    assert f(2, seed=np.int64(5), k=-3) == 2
    for kwargs in ({"n": True}, {"n": 1, "seed": False}, {"n": 1, "k": True}):
        with pytest.raises(InvalidParameterError, match=r"must be an int .*Got (True|False)"):
            f(**kwargs)
