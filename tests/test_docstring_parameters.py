"""Documented parameters match signatures, for every public class and function of skdc.

As imbalanced-learn's ``test_docstring_parameters.py``: the numpydoc ``Parameters`` section of an
estimator lists exactly its ``__init__`` arguments, and every public class or function that has
a ``Parameters`` section lists exactly its arguments.
"""

import importlib
import importlib.util
import inspect

import pytest

docscrape = pytest.importorskip("numpydoc.docscrape")

SUBPACKAGES = [
    "skdc", "skdc.mechanisms", "skdc.anchors", "skdc.alignment", "skdc.attacks", "skdc.metrics",
    "skdc.privacy", "skdc.linear_model", "skdc.datasets", "skdc.experiments", "skdc.protocol",
    "skdc.utils",
]
# skdc.nn's names import torch and skorch (its DP-SGD names need Opacus only when they run)
if all(importlib.util.find_spec(m) is not None for m in ("torch", "skorch")):
    SUBPACKAGES.append("skdc.nn")


def _public_objects():
    seen = set()
    for name in SUBPACKAGES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if id(obj) in seen or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if not getattr(obj, "__module__", "").startswith("skdc"):
                continue
            seen.add(id(obj))
            yield f"{name}.{attr}", obj


def _documented(doc):
    names = []
    for param in doc["Parameters"]:
        # "low, high : float" documents two parameters
        names.extend(n.strip().lstrip("*") for n in param.name.split(","))
    return [n for n in names if n not in ("args", "kwargs")]


OBJECTS = list(_public_objects())


@pytest.mark.parametrize("name, obj", OBJECTS, ids=[n for n, _ in OBJECTS])
def test_documented_parameters_match_signature(name, obj):
    if inspect.isclass(obj):
        if inspect.isabstract(obj) or obj.__doc__ is None or obj.__name__.startswith("Base"):
            pytest.skip("abstract base class")
        if obj.__init__ is object.__init__:
            pytest.skip("no constructor arguments")
        doc = docscrape.ClassDoc(obj)
        sig = inspect.signature(obj.__init__)
    else:
        doc = docscrape.FunctionDoc(obj)
        sig = inspect.signature(obj)
    params = [p for p in sig.parameters if p not in ("self", "args", "kwargs")]
    if not params:
        return
    if not doc["Parameters"] and not hasattr(obj, "get_params"):
        pytest.skip("helper without a Parameters section")
    assert _documented(doc) == params, f"{name}: docstring Parameters differ from the signature"
