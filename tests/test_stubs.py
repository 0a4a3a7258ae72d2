"""The ``__init__.pyi`` stubs: each lists exactly what its package exports, and ships.

Every subpackage's public names are written once, in the stub beside its ``__init__.py``
(``skdc/utils/_lazy.py``): type checkers read it, and ``lazy_exports`` reads it at import time.
These tests check that the two readings agree with the code: each stub name is the object the
named module defines, the package exports nothing else, and the wheel carries the stubs.
"""

import fnmatch
import importlib
import re
import sys
from pathlib import Path

import pytest

from skdc.utils._lazy import read_stub

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "skdc"
PACKAGES = sorted(p.parent for p in PACKAGE.rglob("__init__.py"))
# extras that a name may need: without them, the name is skipped, not failed
OPTIONAL = {"torch", "skorch", "opacus", "umap", "pandas", "matplotlib", "skimage", "PIL"}


def _name(package_dir):
    return ".".join(package_dir.relative_to(ROOT).parts)


def _stub(package_dir):
    return read_stub(str(package_dir / "__init__.pyi"))


def _resolve(package, relative, name):
    try:
        return getattr(importlib.import_module(relative, package), name)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{package}.{name} needs {exc.name}")
        raise


def test_every_package_has_a_stub():
    assert len(PACKAGES) > 5
    missing = [_name(p) for p in PACKAGES if not (p / "__init__.pyi").is_file()]
    assert not missing


@pytest.mark.parametrize("package_dir", PACKAGES, ids=_name)
def test_stub_lists_exactly_what_the_package_exports(package_dir):
    package = _name(package_dir)
    exports, submodules, own = _stub(package_dir)
    module = importlib.import_module(package)
    assert module.__all__ == [*exports, *own]
    assert len(set(module.__all__)) == len(module.__all__)
    assert set(module.__all__) | set(submodules) <= set(dir(module))
    namespace = {}
    exec(f"from {package} import *", namespace)
    assert {k for k in namespace if k != "__builtins__"} == set(module.__all__)
    for name in own:  # annotated in the stub, defined by the __init__.py
        assert name in vars(module), f"{package}.{name} is annotated but not defined"
    for sub in submodules:
        assert (package_dir / sub).is_dir() or (package_dir / f"{sub}.py").is_file(), sub


@pytest.mark.parametrize("package_dir", PACKAGES, ids=_name)
def test_each_stub_name_is_what_the_named_module_defines(package_dir):
    """What a type checker resolves through the stub is the object the package hands out."""
    package = _name(package_dir)
    exports, _, _ = _stub(package_dir)
    module = importlib.import_module(package)
    for name, relative in exports.items():
        assert getattr(module, name) is _resolve(package, relative, name), name


def _documented(rst):
    """The package and the names listed in the autosummary blocks of an API reference page."""
    text = rst.read_text()
    package = re.search(r"^\.\. currentmodule:: (\S+)", text, re.MULTILINE)
    names = set()
    for block in re.findall(r"^\.\. autosummary::\n((?:   .*\n|\n)*)", text, re.MULTILINE):
        names |= {line.strip() for line in block.splitlines()
                  if line.strip() and not line.strip().startswith(":")}
    return (package.group(1) if package else None), names


def test_every_documented_name_is_in_its_stub():
    """The API reference (docs/api) is a second list of the public names: none is missing."""
    checked = 0
    for rst in sorted((ROOT / "docs" / "api").glob("*.rst")):
        package, names = _documented(rst)
        stub = ROOT.joinpath(*(package or "-").split("."), "__init__.pyi")
        if not stub.is_file():  # a page of a plain module (skdc.anchors) or the index
            continue
        exports, _, own = read_stub(str(stub))
        assert sorted(names - set(exports) - set(own)) == [], rst.name
        checked += len(names)
    assert checked > 50


def test_importing_a_package_reads_its_stub_and_imports_nothing_else():
    code = ("import sys, skdc.alignment, skdc.metrics, skdc.privacy\n"
            "print(sorted(m for m in sys.modules if m.startswith('skdc')))")
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout
    assert out.strip() == str(sorted(["skdc", "skdc.alignment", "skdc.metrics", "skdc.privacy",
                                      "skdc.utils", "skdc.utils._lazy"]))


@pytest.mark.parametrize("text, message", [
    ("from ._a import *\n", "'\\*' is starred or renamed"),
    ("from ._a import f as g\n", "'f' is starred or renamed"),
    ("from ._a import f as f\nfrom ._b import f as f\n", "'f' is listed twice"),
    ("from .. import sibling as sibling\n", "a sibling package is not a subpackage"),
    ("import numpy\n", "line 3: a statement of type Import"),
    ("X = 1\n", "line 3: a statement of type Assign"),
])
def test_a_malformed_stub_is_refused_with_its_line(tmp_path, text, message):
    stub = tmp_path / "__init__.pyi"
    stub.write_text('"""A package."""\n# a comment\n' + text)
    with pytest.raises(ValueError, match=message):
        read_stub(str(stub))


def test_the_wheel_ships_the_stubs_and_py_typed():
    """setuptools' package data (``[tool.setuptools.package-data]``) covers every stub."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        tomllib = pytest.importorskip("tomli")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    package_data = config["tool"]["setuptools"]["package-data"]
    assert (PACKAGE / "py.typed").is_file()  # PEP 561: the package carries its types

    def shipped(path):
        package = _name(path.parent)
        patterns = package_data.get("*", []) + package_data.get(package, [])
        return any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns)

    files = [p / "__init__.pyi" for p in PACKAGES] + [PACKAGE / "py.typed"]
    assert [str(p.relative_to(ROOT)) for p in files if not shipped(p)] == []


@pytest.mark.parametrize("name", ["audit", "AuditReport", "calibrate_noise", "NoiseCalibration",
                                  "compare_options", "Comparison", "ComparedOption", "Local",
                                  "Central"])
def test_the_audits_names_stay_importable_from_experiments(name):
    """The audit moved to skdc.audit; its public names keep their old path, skdc.experiments."""
    import skdc.audit
    import skdc.experiments

    assert name in skdc.experiments.__all__
    assert getattr(skdc.experiments, name) is getattr(skdc.audit, name)
    exec(f"from skdc.experiments import {name}", {})
