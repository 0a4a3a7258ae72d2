"""The house rule of DESIGN.md section 5: a room enters another only through its public door.

A room is a subpackage of skdc (``skdc.alignment``) or a top-level module (``skdc._uploads``,
``skdc.anchors``). A module may import anything from its own room and from ``skdc.utils``, the
ground floor; from any other room it imports only public names (no leading underscore), and
from a subpackage room only through the package itself (``from ..mechanisms import IGDP``,
not ``from ..mechanisms._gdp import IGDP``).
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "skdc"
GROUND_FLOOR = "skdc.utils"


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module, subpackages):
    parts = module.split(".")
    if len(parts) == 1:
        return "skdc"
    return ".".join(parts[:2]) if parts[1] in subpackages or len(parts) == 2 else module


def _imports(tree, module, is_package):
    """``(line, target module, imported names)`` of every skdc import in a module's tree."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield node.lineno, target, [alias.name for alias in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def room_violations(source, module, subpackages, is_package=False):
    """The imports of ``source`` (the code of ``module``) that break the house rule."""
    found = []
    own = _room(module, subpackages)
    for line, target, names in _imports(ast.parse(source), module, is_package):
        if target != "skdc" and not target.startswith("skdc."):
            continue
        room = _room(target, subpackages)
        if room == own or target == GROUND_FLOOR or target.startswith(GROUND_FLOOR + "."):
            continue
        if room in {f"skdc.{name}" for name in subpackages} and target != room:
            found.append(f"{module}:{line} reaches into {target} (import from {room})")
        for name in names:
            if name.startswith("_") and not name.startswith("__"):  # __version__ is public
                found.append(f"{module}:{line} imports the private {target}.{name}")
    return found


def _subpackages():
    return {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}


def test_no_room_imports_another_rooms_private_names():
    subpackages = _subpackages()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        found += room_violations(path.read_text(encoding="utf-8"), _module_name(path),
                                 subpackages, is_package=path.name == "__init__.py")
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    "source, module, expected",
    [
        ("from ..privacy._gaussmix_rdp import smallest_scale", "skdc.mechanisms._gaussmix",
         "reaches into skdc.privacy._gaussmix_rdp"),
        ("from ..privacy import _smallest_scale", "skdc.mechanisms._gaussmix",
         "imports the private skdc.privacy._smallest_scale"),
        ("from .._uploads import _check_ids", "skdc.experiments._baselines",
         "imports the private skdc._uploads._check_ids"),
        ("def f():\n    from skdc.anchors import _make_anchor\n", "skdc.mechanisms._base",
         "imports the private skdc.anchors._make_anchor"),
        ("import skdc.alignment._kti", "skdc.attacks._view", "reaches into skdc.alignment._kti"),
    ],
)
def test_the_rule_catches_a_private_import(source, module, expected):
    found = room_violations(source, module, _subpackages())
    assert len(found) == 1 and expected in found[0]


@pytest.mark.parametrize(
    "source, module",
    [
        ("from ._base import _BaseAligner", "skdc.alignment._kti"),  # the same room
        ("from ..utils._linalg import polar", "skdc.attacks._gdp"),  # the ground floor
        ("from .._uploads import Uploads", "skdc.mechanisms._base"),  # a public name
        ("from ..mechanisms import IGDP", "skdc.protocol._roles"),  # through the door
        ("from .. import __version__", "skdc.protocol._format"),  # a dunder is public
    ],
)
def test_the_rule_allows_public_doors(source, module):
    assert room_violations(source, module, _subpackages()) == []
