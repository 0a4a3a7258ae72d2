"""Lazy public names of a package (PEP 562), listed once in its ``__init__.pyi`` stub.

Each subpackage lists its public names in a stub beside its ``__init__.py``, one a line::

    from ._gopp import GOPPAligner as GOPPAligner
    from . import alignment as alignment        # a subpackage reachable as an attribute
    __version__: str                            # a name the __init__.py itself defines

Type checkers and editors read the stub, so ``from skdc.alignment import GOPPAligner``
resolves to its class; at run time :func:`lazy_exports` reads the same stub and imports a
submodule on first attribute access, so ``import skdc`` and ``python -m skdc COMMAND --help``
load neither scikit-learn nor SciPy. This is SPEC 1 (scientific Python's lazy loading), as
scikit-image does it with ``lazy_loader.attach_stub``; skdc keeps its own few lines, without
the dependency, so that an unknown name reads "module ... has no attribute ...".
"""

# Licence: BSD 3 clause

import ast
import importlib
import os
import sys

__all__ = ["lazy_exports", "read_stub"]


def _is_docstring(node):
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _stub_error(path, node, what):
    return ValueError(
        f"{path}, line {node.lineno}: {what}. A package stub holds only a docstring, "
        "comments, 'from .module import name as name' lines (public names), "
        "'from . import sub as sub' lines (subpackages) and 'name: type' lines (names its "
        "__init__.py defines)."
    )


def read_stub(path):
    """The public names a package stub lists.

    Parameters
    ----------
    path : str
        The stub, ``<package>/__init__.pyi``.

    Returns
    -------
    exports : dict of str to str
        Public name to the relative module that defines it (``"._gopp"``, ``".alignment"``), in
        the stub's order.
    submodules : list of str
        Subpackages reachable as attributes (not in ``__all__``).
    own : list of str
        Names annotated in the stub (``__version__: str``), defined by the ``__init__.py``.
    """
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    exports, submodules, own = {}, [], []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            for alias in node.names:
                if alias.name == "*" or alias.asname not in (None, alias.name):
                    raise _stub_error(path, node, f"'{alias.name}' is starred or renamed")
                if alias.name in exports or alias.name in submodules:
                    raise _stub_error(path, node, f"'{alias.name}' is listed twice")
                if node.module is None and node.level == 1:
                    submodules.append(alias.name)
                elif node.module is not None:
                    exports[alias.name] = "." * node.level + node.module
                else:
                    raise _stub_error(path, node, "a sibling package is not a subpackage")
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.append(node.target.id)
        elif not _is_docstring(node):
            raise _stub_error(path, node, f"a statement of type {type(node).__name__}")
    return exports, submodules, own


def lazy_exports(package, init_file):
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of a package, read from its stub.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    init_file : str
        The package's ``__file__``; the names are read from ``__init__.pyi`` beside it.

    Returns
    -------
    getattr : callable
        The module-level ``__getattr__``; a name is imported once, then cached on the package.
    dir : callable
        The module-level ``__dir__``: the package's globals, every public name and subpackage.
    all : list of str
        The package's ``__all__``: the stub's public names, then its annotated names.

    Examples
    --------
    >>> import skdc.alignment as alignment
    >>> "GOPPAligner" in dir(alignment) and "GOPPAligner" in alignment.__all__
    True
    """
    stub = os.path.splitext(init_file)[0] + ".pyi"
    where, submodules, own = read_stub(stub)
    submodules = frozenset(submodules)

    def __getattr__(name):
        if name in where:
            value = getattr(importlib.import_module(where[name], package), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{name}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(where) | submodules)

    return __getattr__, __dir__, [*where, *own]
