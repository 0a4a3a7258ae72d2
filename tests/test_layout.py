"""The house rules of the developer guide's "Layout": rooms enter each other only through public
doors, and the tests mirror the package.

A room is a subpackage of skdc (``skdc.alignment``) or a top-level module (``skdc._uploads``,
``skdc.anchors``). A module may import anything from its own room and from ``skdc.utils``, the
ground floor; from any other room it imports only public names (no leading underscore), and
from a subpackage room only through the package itself (``from ..mechanisms import IGDP``,
not ``from ..mechanisms._gdp import IGDP``).

The tests mirror the package: ``tests/<room>/test_<name>.py`` tests ``skdc/<room>/_<name>.py``
(``tests/test_anchors.py`` tests ``skdc/anchors.py``), and every module with a function or a
class has its test module. The exceptions are listed below, each with its reason.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "skdc"
GROUND_FLOOR = "skdc.utils"


def _load_house():
    """``tools/house.py``, the survey of rooms and floors these rules share."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("house", PACKAGE.parent / "tools" / "house.py")
    house = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(house)
    return house


HOUSE = _load_house()
_room = HOUSE._room


def _module_name(path):
    return HOUSE._module_name(path, PACKAGE)


def room_violations(source, module, subpackages, is_package=False):
    """The imports of ``source`` (the code of ``module``) that break the house rule."""
    found = []
    own = _room(module, subpackages)
    for line, target, names in HOUSE._targets(ast.parse(source), module, is_package):
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
        ("from .._uploads import _check_ids", "skdc.audit._baselines",
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
        ("from ..mechanisms import IGDP", "skdc.protocol._participant"),  # through the door
        ("from .. import __version__", "skdc.protocol._upload"),  # a dunder is public
    ],
)
def test_the_rule_allows_public_doors(source, module):
    assert room_violations(source, module, _subpackages()) == []


# -- the tests mirror the package --------------------------------------------------------------
TESTS = PACKAGE.parent / "tests"

# Modules with code but no test module of their own: where they are tested instead.
TESTED_ELSEWHERE = {
    "skdc/__main__.py": "the command line's entry point, run by the tests of every command "
                        "(tests/experiments/test_cli.py, tests/audit/test_cli.py, "
                        "tests/privacy/test_cli.py, tests/protocol/test_cli.py)",
    "skdc/alignment/_base.py": "the aligners' template, run by every aligner's tests",
    "skdc/attacks/_base.py": "the attacks' template, run by every attack's tests",
    "skdc/experiments/_cli_papers.py": "the bound, GaussMix and GDP-solver reproductions' "
                                        "command line, run by tests/experiments/"
                                        "test_reproduce_{bound,gaussmix,gdp}.py",
    "skdc/linear_model/_base.py": "the private linear models' template, run by their tests",
    "skdc/mechanisms/_base.py": "the mechanisms' template, run by every mechanism's tests",
    "skdc/protocol/_container.py": "the upload file's container, tested through the files of "
                                   "tests/protocol/test_upload.py, test_upload_set.py and "
                                   "test_fuzz.py",
    "skdc/protocol/_screen.py": "the analyst's anchor screen, tested by "
                                "tests/protocol/test_analyst_screen.py",
    "skdc/utils/_config.py": "the config reader, run by the sweep's config "
                             "(tests/experiments/test_sweep_config.py) and `skdc audit --config` "
                             "(tests/audit/test_cli.py)",
    "skdc/utils/_device.py": "resolve_device, public as skdc.nn.resolve_device and tested in "
                             "tests/nn/test_net.py (it needs torch)",
    "skdc/utils/_lazy.py": "the stubs' reader, tested over every package by tests/test_stubs.py",
    "skdc/utils/_parallel.py": "available_cpus, one call of os.sched_getaffinity, checked by its "
                               "doctest",
}

# Test modules that test no single module: what they test.
CROSS_CUTTING = {
    "tests/test_common.py": "scikit-learn's estimator checks over every public estimator",
    "tests/test_docstring_parameters.py": "documented parameters against the signatures of every "
                                          "public name",
    "tests/test_examples.py": "the gallery (examples/) runs",
    "tests/test_layout.py": "the house rules of the package and of its tests",
    "tests/test_paper_claims.py": "the papers' headline claims, end to end",
    "tests/test_properties.py": "algebraic identities of mechanisms and aligners together "
                                "(hypothesis)",
    "tests/test_readme.py": "the README's code and numbers",
    "tests/test_stubs.py": "the __init__.pyi stubs of every package",
    "tests/test_trust.py": "no analyst-side object holds a participant's secret, across rooms",
    "tests/protocol/test_no_destroy.py": "no deployment command's output replaces one of its "
                                         "inputs or another kind of skdc file "
                                         "(skdc/utils/_files.py through skdc/protocol/_cli.py)",
    "tests/experiments/test_outputs.py": "the audit's and the sweep config's outputs stay off "
                                         "their inputs and inside their folder, and replace "
                                         "an earlier output (the audit: another audit's "
                                         "report) only with --force "
                                         "(skdc/utils/_files.py through skdc/audit/ and "
                                         "skdc/experiments/)",
    "tests/protocol/test_secret_entropy.py": "a search of the old seed space against a "
                                             "participant's upload (skdc/utils/_random.py "
                                             "through skdc/protocol/_participant.py and the CLI)",
    "tests/test_anchors_smote.py": "the SMOTE anchors of skdc/anchors.py, which need "
                                   "imbalanced-learn",
    "tests/test_docs_links.py": "the built documentation: every module's source page, no "
                                "broken internal link",
    "tests/test_set_output.py": "set_output('pandas') through mechanism, aligner and model "
                                "together",
    "tests/test_tables_cli.py": "CSV and Parquet tables through every command's --data",
    "tests/experiments/test_sweep_plot.py": "the sweep's figure (SweepConfig.plot of "
                                            "skdc/experiments/_sweep_config.py, written by "
                                            "_plot_sweep of skdc/experiments/_cli.py)",
    "tests/mechanisms/test_anchor_coverage.py": "the nonlinear mechanisms' anchor-coverage "
                                                "warning (skdc/anchors.py and "
                                                "skdc/mechanisms/_embedding.py together)",
    "tests/mechanisms/test_numerics.py": "mechanisms and aligners at awkward scales together",
    "tests/privacy/test_validation.py": "parameter validation of every public function of "
                                        "skdc.privacy",
    "tests/protocol/test_analyst_screen.py": "the analyst's anchor screen "
                                             "(skdc/protocol/_screen.py) in a deployment",
    "tests/protocol/test_cli_checks.py": "the deployment commands' refusals, in process",
    "tests/protocol/test_digests.py": "the digests tying a secret, its upload and its map, across "
                                      "the protocol's files",
    "tests/protocol/test_fuzz.py": "hostile input to every entry point of a deployment",
    "tests/protocol/test_numerics.py": "numerics of a deployment: degenerate anchors and sizes",
    "tests/protocol/test_outputs.py": "what a deployment writes: pairs, links, modes",
    "tests/protocol/test_refusals.py": "API-level refusals of a deployment",
    "tests/protocol/test_schema.py": "the feature schema (a table's column names) from upload "
                                     "through the analyst, maps and model to predict, and "
                                     "predictions by --out's suffix with --id-column",
}


def _has_code(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
               for node in tree.body)


def _mirror_of_module(path):
    """``tests/<room>/test_<name>.py`` of ``skdc/<room>/_<name>.py`` (or ``<name>.py``)."""
    rel = path.relative_to(PACKAGE)
    return TESTS.joinpath(*rel.parts[:-1], f"test_{rel.stem.lstrip('_')}.py")


def _mirrors_of_test(path):
    """The modules ``tests/<room>/test_<name>.py`` may test: ``_<name>.py`` or ``<name>.py``."""
    rel = path.relative_to(TESTS)
    name = rel.stem[len("test_"):]
    return [PACKAGE.joinpath(*rel.parts[:-1], f"{prefix}{name}.py") for prefix in ("_", "")]


def _modules():
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__init__.py" and _has_code(p)]


def _tests():
    return sorted(TESTS.rglob("test_*.py"))


def _key(path):
    return path.relative_to(PACKAGE.parent).as_posix()


def test_every_module_with_code_has_its_test_module():
    missing = [_key(p) for p in _modules()
               if not _mirror_of_module(p).is_file() and _key(p) not in TESTED_ELSEWHERE]
    assert not missing, (
        "modules without tests/<room>/test_<name>.py (write one, or list the module in "
        f"TESTED_ELSEWHERE with where it is tested): {missing}"
    )


def test_every_test_module_mirrors_a_module():
    orphans = [_key(p) for p in _tests() if _key(p) not in CROSS_CUTTING
               and not any(m.is_file() for m in _mirrors_of_test(p))]
    assert not orphans, (
        "test modules named after no skdc/<room>/_<name>.py (rename or move them, or list them "
        f"in CROSS_CUTTING with what they test): {orphans}"
    )


def test_the_exception_lists_are_current():
    """An entry whose module gained its test module (or whose test found its module), or whose
    file is gone, leaves its list."""
    root = PACKAGE.parent
    stale = [k for k in TESTED_ELSEWHERE
             if not (root / k).is_file() or _mirror_of_module(root / k).is_file()]
    stale += [k for k in CROSS_CUTTING
              if not (root / k).is_file() or any(m.is_file() for m in _mirrors_of_test(root / k))]
    assert not stale, f"remove these entries from the exception lists: {stale}"
    assert all(reason.strip() for reason in [*TESTED_ELSEWHERE.values(), *CROSS_CUTTING.values()])


@pytest.mark.parametrize("module, test", [
    ("skdc/alignment/_gopp.py", "tests/alignment/test_gopp.py"),
    ("skdc/anchors.py", "tests/test_anchors.py"),
    ("skdc/_uploads.py", "tests/test_uploads.py"),
])
def test_the_mirror_maps_a_module_to_its_test_and_back(module, test):
    assert _key(_mirror_of_module(PACKAGE.parent / module)) == test
    assert PACKAGE.parent / module in _mirrors_of_test(PACKAGE.parent / test)


# -- the developer guide's layout block is the tree ---------------------------------------------
GUIDE = PACKAGE.parent / "docs" / "developer_guide.rst"


def _layout_block():
    """The entries of the guide's "Layout" code block: ``(indent, name)`` per listed path."""
    text = GUIDE.read_text(encoding="utf-8")
    block = text[text.index("5. Layout"):].split(".. code-block:: text", 1)[1]
    entries = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith(" "):
            break
        words = line.split()
        if words and (words[0].endswith("/") or words[0].endswith(".py")) \
                and len(line) - len(line.lstrip()) in (3, 5):
            entries.append((len(line) - len(line.lstrip()), words[0]))
    return entries


def test_the_guides_layout_block_lists_the_tree():
    entries = _layout_block()
    listed = {name for indent, name in entries if indent == 5}
    on_disk = {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    on_disk |= {p.name for p in PACKAGE.glob("*.py")}
    assert listed == on_disk, (
        f"the guide's layout block lacks {sorted(on_disk - listed)} and lists "
        f"{sorted(listed - on_disk)}, which skdc/ does not have")
    top = [name for indent, name in entries if indent == 3]
    missing = [name for name in top if not (PACKAGE.parent / name).exists()]
    assert top[0] == "skdc/" and not missing, missing


def test_the_house_keeps_its_size_rules_and_has_no_cycle():
    house = HOUSE
    found = house.survey(PACKAGE.parent)
    assert not found["long_modules"], f"modules over 800 lines: {found['long_modules']}"
    assert not found["long_functions"], f"function bodies over 60 lines: {found['long_functions']}"
    assert not found["room_cycles"] and not found["module_cycles"], (
        found["room_cycles"], found["module_cycles"])
    assert not found["up"], f"arrows back up: {found['up']}"


@pytest.mark.parametrize("source, long_functions", [
    ("def f():\n    '''doc'''\n" + "    x = 1\n" * 61, 1),
    ("def f():\n    '''doc\n\n    more\n    '''\n" + "    x = 1\n" * 60, 0),
])
def test_the_house_counts_a_function_body_without_its_docstring(source, long_functions):
    import ast

    lengths = [n for *_, n in HOUSE._function_lengths(ast.parse(source))]
    assert sum(n > 60 for n in lengths) == long_functions


def test_the_house_finds_a_cycle_and_floors():
    house = HOUSE
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert house._cycles(graph) == [["a", "b", "c"]]
    floors = house._floors({"top": {"mid", "low"}, "mid": {"low"}, "low": set()})
    assert floors == {"top": 2, "mid": 1, "low": 0}


def _paths_named(text):
    """The module paths a text names (``privacy/_entropy.py``; a bare ``_lti.py`` is in the
    room named last), relative to ``skdc/``."""
    import re

    room, found = "", []
    for token in re.findall(r"``((?:skdc/)?(?:\w+/)*\w+\.py)``", text):
        top = token.startswith("skdc/") or token in ("anchors.py", "_uploads.py", "_routing.py")
        token = token.removeprefix("skdc/")
        if top and "/" not in token:
            found.append(token)
        elif "/" in token:
            room = token.rpartition("/")[0]
            found.append(token)
        else:
            found.append(f"{room}/{token}" if room else token)
    return found


def test_the_paper_table_and_the_papers_doors_name_modules_that_exist():
    text = GUIDE.read_text(encoding="utf-8")
    table = text[text.index("8. The papers and where they live"):text.index("9. Mechanisms")]
    named = _paths_named(table)
    assert len(named) > 30
    for home in ("mechanisms/_gdp.py", "alignment/_kti.py", "mechanisms/_gaussmix.py",
                 "privacy/_bound.py"):
        doc = ast.get_docstring(ast.parse((PACKAGE / home).read_text(encoding="utf-8")))
        named += _paths_named(doc)
    missing = sorted({p for p in named if not (PACKAGE / p).is_file()})
    assert not missing, f"the guide's paper table or a paper's home names {missing}"
