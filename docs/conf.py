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
    # the execution-times pages load jQuery and DataTables from CDNs: the site stays offline
    "write_computation_times": False,
}

# -- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skdc {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]  # a content column wide enough for 100-column code

# -- math, offline -------------------------------------------------------------------------
# The site must render math without a network: MathJax 3 comes from the django-static-mathjax
# package (the "docs" extra; it needs no Django) and _copy_mathjax puts the parts the pages
# use into _static/mathjax of the built site, so no page loads a script from elsewhere.
# SVG output draws the glyphs as paths: no web fonts to fetch (browsers restrict fonts on file://).
mathjax_path = "mathjax/tex-svg.js"
_MATHJAX_PARTS = ["tex-svg.js", "input", "output/svg", "ui", "a11y", "adaptors"]


def _mathjax_dir():
    import importlib.util

    spec = importlib.util.find_spec("mathjax")
    for base in (spec.submodule_search_locations or []) if spec else []:
        path = os.path.join(base, "static", "mathjax", "es5")
        if os.path.isfile(os.path.join(path, "tex-svg.js")):
            return path
    raise RuntimeError(
        "The docs render math offline with a local MathJax, and none was found. Install the "
        "docs extra (pip install -e \".[docs]\"), or just: pip install django-static-mathjax"
    )


def _copy_mathjax(app, exception):
    import shutil

    if exception is not None or app.builder.format != "html":
        return
    src, dst = _mathjax_dir(), os.path.join(app.outdir, "_static", "mathjax")
    for part in _MATHJAX_PARTS:
        if os.path.isdir(os.path.join(src, part)):
            shutil.copytree(os.path.join(src, part), os.path.join(dst, part), dirs_exist_ok=True)
        else:
            os.makedirs(dst, exist_ok=True)
            shutil.copy2(os.path.join(src, part), os.path.join(dst, part))

html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_prev_next": False,
    # the page contents beside the top pages, the user guide and the API lists; the class and
    # function pages (generated/) and the gallery give that width to code (_static/custom.css)
    "secondary_sidebar_items": {"*": ["page-toc"], "user_guide/*": ["page-toc"],
                                "api/*": ["page-toc"]},
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


# -- source pages (viewcode) ----------------------------------------------------------------
# Sphinx's source analysis (sphinx.pycode, 9.0) fails on a decorator whose argument is a dict
# built with ``**`` (``@validate_params({**_SHARED, "y": [...]})``): its unparser zips the
# dict's keys, less the None of the unpacking, against all its values. viewcode then drops the
# module: its classes get no [source] link, and _modules/index.html still links the page that
# was never written. Such modules get their tags from Sphinx's own definition finder, which
# reads tokens and unparses nothing (tests/test_docs_links.py checks every module).
def _viewcode_source(app, modname):
    from sphinx.errors import PycodeError
    from sphinx.pycode import ModuleAnalyzer
    from sphinx.pycode.parser import DefinitionFinder

    try:
        analyzer = ModuleAnalyzer.for_module(modname)
    except PycodeError:
        return None  # no source: viewcode skips the module, and links no page
    try:
        return analyzer.code, analyzer.find_tags()
    except PycodeError:
        finder = DefinitionFinder(analyzer.code.splitlines(True))
        finder.parse()
        return analyzer.code, finder.definitions


def setup(app):
    _mathjax_dir()  # fail early, with the install command, when MathJax is missing
    app.connect("viewcode-find-source", _viewcode_source)
    app.connect("build-finished", _copy_mathjax)
    app.connect("autodoc-process-docstring", _fix_docstring, priority=400)
    app.connect("autodoc-skip-member", _skip_foreign_member)
