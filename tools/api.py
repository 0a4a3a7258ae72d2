"""skdc's public surface, one line per name, to compare two checkouts.

Every name a room's ``__init__.pyi`` stub lists (and ``skdc``'s own), with its call signature
and, for a class, its public methods' signatures and fitted attributes documented under
"Attributes". Run it in two checkouts and diff the outputs: a removed line is a break unless
the new surface still accepts it (a deprecated alias)::

    python tools/api.py > after.txt
    (cd OTHER && python /path/to/tools/api.py) > before.txt
    diff before.txt after.txt

Run it from the checkout's root: it imports the ``skdc`` found there.
"""

import importlib
import inspect
import re
import sys
from pathlib import Path


def _stub_names(stub):
    return re.findall(r"^from \S+ import \w+ as (\w+)$", stub.read_text(encoding="utf-8"), re.M)


def _signature(obj):
    try:
        text = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"
    return re.sub(r" at 0x[0-9a-f]+", "", text)  # a default's address changes every run


def _attributes(cls):
    doc = inspect.getdoc(cls) or ""
    section = re.search(r"^Attributes\n-+\n(.*?)(?:\n\S[^\n]*\n-+\n|\Z)", doc, re.S | re.M)
    return re.findall(r"^(\w+) :", section.group(1), re.M) if section else []


def surface(root):
    """The lines of the public surface of the skdc at ``root``."""
    package = Path(root).resolve() / "skdc"
    sys.path.insert(0, str(package.parent))
    lines = []
    for stub in sorted(package.rglob("__init__.pyi")):
        room = ".".join(stub.parent.relative_to(package.parent).parts)
        module = importlib.import_module(room)
        for name in sorted(_stub_names(stub)):
            obj = getattr(module, name)
            if inspect.isclass(obj):
                lines.append(f"{room}.{name}{_signature(obj)}")
                for method, member in sorted(vars(obj).items()):
                    if not method.startswith("_") and callable(member):
                        lines.append(f"{room}.{name}.{method}{_signature(member)}")
                lines += [f"{room}.{name}.{a}" for a in _attributes(obj)]
            elif callable(obj):
                lines.append(f"{room}.{name}{_signature(obj)}")
            else:
                lines.append(f"{room}.{name}")
    return lines


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    print("\n".join(surface(root)))
