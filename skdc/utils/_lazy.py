"""Lazy public names of a package (PEP 562): import a submodule on first attribute access.

``import skdc`` and a command's ``python -m skdc COMMAND --help`` then load neither
scikit-learn nor SciPy until a name that needs them is used;
``from skdc.alignment import GOPPAligner``, ``dir()`` and ``__all__`` behave as with eager
imports.
"""

# Licence: BSD 3 clause

import importlib
import sys

__all__ = ["lazy_exports"]


def lazy_exports(package, exports, submodules=()):
    """The ``__getattr__``, ``__dir__`` and ``__all__`` of a package with lazy public names.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    exports : dict of str to list of str
        Relative module name (``"._gopp"``, ``"..privacy"``) to the public names it defines, in
        the order of ``__all__``.
    submodules : iterable of str, default=()
        Subpackages reachable as attributes (``skdc.alignment``), imported on first access and
        not listed in ``__all__``.

    Returns
    -------
    getattr : callable
        The module-level ``__getattr__``; a name is imported once, then cached on the package.
    dir : callable
        The module-level ``__dir__``: the package's globals and every public name.
    all : list of str
        The package's ``__all__``.

    Examples
    --------
    >>> import skdc.alignment as alignment
    >>> "GOPPAligner" in dir(alignment) and "GOPPAligner" in alignment.__all__
    True
    """
    where = {name: module for module, names in exports.items() for name in names}
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

    return __getattr__, __dir__, list(where)
