"""The house in numbers: skdc's rooms, floors, arrows and cycles, and what breaks its rules.

A *room* is a subpackage of skdc (``skdc.audit``) or a top-level module (``skdc.anchors``), as
in the developer guide's "Layout". An *arrow* is one room importing another (any import, at
module level or inside a function). A room's *floor* is the length of the longest chain of
arrows below it: ``skdc.utils``, which imports no room, is floor 0, and an arrow "back up" goes
to a room on the same or a higher floor, which only a cycle makes. A *cycle* is a set of rooms
(or of modules, within and across rooms) that import each other, directly or through others.

The rules checked: no module over 800 lines, no function body over 60 lines (from its first
statement after the docstring to its last, nested functions included), no import of another
room's private name. Run it on any checkout::

    python tools/house.py                 # this tree
    python tools/house.py --root OTHER    # another checkout, e.g. a git worktree of an old commit
    python tools/house.py --list          # also every arrow, long module and long function

It prints a summary and exits 1 when a rule is broken, so it can gate a commit.
"""

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 60


def _module_name(path, package):
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module, subpackages):
    parts = module.split(".")
    if len(parts) == 1:
        return "skdc"
    return ".".join(parts[:2]) if parts[1] in subpackages or len(parts) == 2 else module


def _targets(tree, module, is_package, known=()):
    """``(line, module, names)`` of every import in ``tree``: the module imported, with the
    names taken from it (``from . import _x`` of a module ``_x`` in ``known`` imports it)."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # ``from . import _x`` imports the module skdc.room._x
                if f"{target}.{alias.name}" in known:
                    yield node.lineno, f"{target}.{alias.name}", []
                else:
                    yield node.lineno, target, [alias.name]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def _function_lengths(tree):
    """``(name, line, body lines)`` of every function, its docstring left out."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str) and len(body) > 1):
                body = body[1:]
            yield node.name, node.lineno, body[-1].end_lineno - body[0].lineno + 1


def _cycles(graph):
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def _floors(graph):
    """Each room's floor: the longest chain of arrows below it (cycles collapsed to one room)."""
    floors = {}

    def floor(node, seen=()):
        if node not in floors:
            below = [c for c in graph[node] if c not in seen and c != node]
            floors[node] = 1 + max((floor(c, seen + (node,)) for c in below), default=-1)
        return floors[node]

    for node in graph:
        floor(node)
    return floors


def survey(root):
    """Everything the summary prints, measured on the checkout at ``root``."""
    package = Path(root).resolve() / "skdc"
    paths = sorted(package.rglob("*.py"))
    subpackages = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    known = {_module_name(p, package) for p in paths}
    rooms, modules = defaultdict(set), defaultdict(set)
    private, long_modules, long_functions = [], [], []
    for path in paths:
        module = _module_name(path, package)
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        own = _room(module, subpackages)
        rooms[own]
        lines = source.count("\n")
        if lines > MAX_MODULE_LINES:
            long_modules.append((lines, module))
        long_functions += [(n, f"{module}:{line} {name}")
                           for name, line, n in _function_lengths(tree) if n > MAX_FUNCTION_LINES]
        for _, target, names in _targets(tree, module, path.name == "__init__.py", known):
            if target != "skdc" and not target.startswith("skdc."):
                continue
            room = _room(target, subpackages)
            if target in known and target != module:
                modules[module].add(target)
            if room != own:
                rooms[own].add(room)
                private += [f"{module} imports {target}.{name}" for name in names
                            if name.startswith("_") and not name.startswith("__")
                            and room != "skdc.utils"]
    graph = {room: rooms[room] for room in rooms}
    floors = _floors(graph)
    return {
        "rooms": sorted(graph), "arrows": sorted((a, b) for a in graph for b in graph[a]),
        "floors": floors, "up": [(a, b) for a in graph for b in graph[a] if floors[b] >= floors[a]],
        "room_cycles": _cycles(graph), "module_cycles": _cycles(modules),
        "modules": len(paths), "long_modules": sorted(long_modules, reverse=True),
        "long_functions": sorted(long_functions, reverse=True), "private": private,
    }


def _print(found, listing):
    floors = found["floors"]
    print(f"rooms {len(found['rooms'])}, floors {max(floors.values()) + 1}, "
          f"arrows {len(found['arrows'])}, arrows back up {len(found['up'])}, "
          f"room cycles {len(found['room_cycles'])}, module cycles {len(found['module_cycles'])}")
    print(f"modules {found['modules']}, over {MAX_MODULE_LINES} lines "
          f"{len(found['long_modules'])}, functions over {MAX_FUNCTION_LINES} lines "
          f"{len(found['long_functions'])}, cross-room private imports {len(found['private'])}")
    for level in range(max(floors.values()), -1, -1):
        print(f"  floor {level}: " + ", ".join(sorted(r for r in floors if floors[r] == level)))
    for cycle in found["room_cycles"] + found["module_cycles"]:
        print("  cycle: " + " <-> ".join(cycle))
    if listing:
        for a, b in found["arrows"]:
            print(f"  arrow {a} -> {b}")
        for lines, module in found["long_modules"]:
            print(f"  long module {module}: {lines} lines")
        for lines, where in found["long_functions"]:
            print(f"  long function {where}: {lines} lines")
        for line in found["private"]:
            print(f"  private import: {line}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=Path(__file__).resolve().parents[1],
                        help="the checkout to survey (default: this one)")
    parser.add_argument("--list", action="store_true",
                        help="also list every arrow, long module and long function")
    args = parser.parse_args(argv)
    found = survey(args.root)
    _print(found, args.list)
    broken = (found["long_modules"] or found["long_functions"] or found["private"]
              or found["room_cycles"] or found["module_cycles"])
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
