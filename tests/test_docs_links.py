"""The documentation links only pages that exist.

Two checks. Always: the docs' source-page hook (``docs/conf.py``) finds the source and the
definitions of every skdc module, so viewcode writes a page for each module it lists and gives
each class its [source] link (Sphinx's own analysis fails on some of our decorators). When a
built site is present (``python -m sphinx -b html docs docs/_build/html -D plot_gallery=0``):
every internal link and asset of every page resolves to a file of the site.
"""

import importlib.util
import inspect
import pkgutil
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

import skdc

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "docs" / "_build" / "html"


@pytest.fixture(scope="module")
def conf():
    pytest.importorskip("sphinx")
    spec = importlib.util.spec_from_file_location("skdc_docs_conf", ROOT / "docs" / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _modules():
    return sorted(m.name for m in pkgutil.walk_packages(skdc.__path__, "skdc."))


def test_every_module_has_its_source_page_and_tags(conf):
    for name in _modules():
        found = conf._viewcode_source(None, name)
        assert found is not None, f"viewcode would write no page for {name}"
        code, tags = found
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            # classes the module's code defines (not those it makes at run time, such as
            # make_dpsgd_net's registered subclasses)
            defined = re.search(rf"^class {attr}\b", code, flags=re.M)
            if inspect.isclass(obj) and obj.__module__ == name and not attr.startswith("_") \
                    and defined:
                assert attr in tags, f"{name}.{attr} would get no [source] link"


def test_modules_sphinx_cannot_parse_are_among_them(conf):
    # the case the hook exists for: a decorator taking a dict built with ``**``
    from sphinx.errors import PycodeError
    from sphinx.pycode import ModuleAnalyzer

    failing = []
    for name in _modules():
        try:
            ModuleAnalyzer.for_module(name).find_tags()
        except PycodeError:
            failing.append(name)
    for name in failing:
        assert conf._viewcode_source(None, name)[1], name


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.links.append(value)


def _internal_targets(page):
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8", errors="replace"))
    for link in parser.links:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or link.startswith(("#", "mailto:", "javascript:")):
            continue
        if not parts.path:
            continue
        yield link, (page.parent / unquote(parts.path)).resolve()


@pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="the docs are not built")
def test_built_site_has_no_broken_internal_link():
    broken = []
    for page in SITE.rglob("*.html"):
        if page.relative_to(SITE).parts[0] == "_static":
            continue  # the theme's templates, not pages
        for link, target in _internal_targets(page):
            if not (target.is_file() or (target / "index.html").is_file()):
                broken.append(f"{page.relative_to(SITE)} -> {link}")
    assert not broken, f"{len(broken)} broken link(s), e.g. {broken[:10]}"


@pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="the docs are not built")
def test_built_api_pages_link_their_source():
    for name in ("skdc.alignment.GOPPAligner", "skdc.experiments.plot_frontier",
                 "skdc.audit.audit", "skdc.datasets.load_table"):
        page = SITE / "generated" / f"{name}.html"
        if not page.is_file():
            pytest.skip(f"the built site predates {name}; rebuild the docs")
        assert "viewcode-link" in page.read_text(encoding="utf-8"), f"{name} has no [source]"
    modules = (SITE / "_modules" / "index.html").read_text(encoding="utf-8")
    for module in ("skdc/alignment/_gopp", "skdc/experiments/_plot"):
        assert f"{module}.html" in modules and (SITE / "_modules" / f"{module}.html").is_file()


def test_api_pages_give_code_a_wide_column(conf):
    css = (ROOT / "docs" / "_static" / "custom.css").read_text(encoding="utf-8")
    assert ".bd-article-container {\n  max-width: 100%;" in css  # not the theme's 60em
    # the page-contents sidebar takes no width from the article below 1600 px
    assert "@media (min-width: 1200px) and (max-width: 1599.98px)" in css
    assert "custom.css" in conf.html_css_files
    from sphinx.util.matching import patmatch

    sidebars = conf.html_theme_options["secondary_sidebar_items"]
    # an API page matches no pattern: no right-hand sidebar; a user-guide page keeps its own
    assert not any(patmatch("generated/skdc.alignment.GOPPAligner", p) for p in sidebars)
    assert any(patmatch("user_guide/nonlinear", p) for p in sidebars)
