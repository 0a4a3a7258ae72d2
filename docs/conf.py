"""Sphinx configuration of the skdc documentation.

Build: ``python -m sphinx -W -b html docs docs/_build/html`` from the repository root (the
gallery runs every ``examples/plot_*.py``; add ``-D plot_gallery=0`` to skip running them).
"""

import inspect
import os
import sys
import warnings

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, ROOT)

import skdc

project = "skdc"
author = "the skdc developers"
copyright = "the skdc developers, BSD 3-Clause"
version = release = skdc.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "sphinxcontrib.bibtex",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.zip", "**/*.codeobj.json"]
default_role = "literal"

# -- autodoc / autosummary / numpydoc -----------------------------------------------------
autosummary_generate = True
# The class template asks for members, inherited ones included, so that a class's page lists the
# methods it inherits from skdc's own bases; _skip_foreign_member drops those inherited from
# scikit-learn, torch or skorch (documented by those projects, and written for their own sites).
autodoc_default_options = {}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# -- bibliography --------------------------------------------------------------------------
bibtex_bibfiles = ["references.bib"]
bibtex_default_style = "plain"

# -- gallery -------------------------------------------------------------------------------
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")
sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "doc_module": ("skdc",),
    "backreferences_dir": os.path.join("generated", "backreferences"),
    "reference_url": {"skdc": None},
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
}

# -- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skdc {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_prev_next": False,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": [], "install": [], "quickstart": []}


# -- docstring fix-ups ----------------------------------------------------------------------
# Some docstrings cite the module's references ("[1]_") without repeating them, and shapes such
# as "(n_features_in_,)" end with an underscore, which reStructuredText reads as a link. Both
# are fine in the terminal; for the site, unresolved citations become plain text and
# underscore-final names inside "shape (...)" become literals.
import re

_CITE = re.compile(r"\[(\w+)\]_")
_SHAPE = re.compile(r"shape \(([^()]*)\)")
_TRAILING = re.compile(r"(?<![`\w])([A-Za-z]\w*_)(?![`\w])")


def _fix_docstring(app, what, name, obj, options, lines):
    text = "\n".join(lines)
    defined = set(re.findall(r"^\s*\.\. \[(\w+)\]", text, flags=re.M))
    text = _CITE.sub(lambda m: m.group(0) if m.group(1) in defined else f"[{m.group(1)}]", text)
    text = _SHAPE.sub(lambda m: "shape (" + _TRAILING.sub(r"``\1``", m.group(1)) + ")", text)
    lines[:] = text.split("\n")


def _skip_foreign_member(app, what, name, obj, skip, options):
    if what != "class":
        return None
    if str(getattr(obj, "__doc__", None)).startswith("Alias for field number"):
        return True  # named-tuple fields: the class's Attributes section documents them
    target = obj.fget if isinstance(obj, property) else getattr(obj, "__func__", obj)
    owner = getattr(target, "__objclass__", None)  # C-level descriptors (numpy.ndarray's)
    module = getattr(owner if owner is not None else target, "__module__", None)
    if isinstance(module, str) and not module.split(".")[0] == "skdc":
        return True
    if module is None and inspect.isbuiltin(target):  # e.g. float.fromhex on a float subclass
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _fix_docstring, priority=400)
    app.connect("autodoc-skip-member", _skip_foreign_member)
