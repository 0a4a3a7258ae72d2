"""Progress bars (skdc/utils/_progress.py): shown when asked or when someone watches a terminal,
never in a pipe or a log, and a missing tqdm is an error only when a bar was asked for."""

import sys

import pytest

from skdc.utils._progress import progress_bar


def test_no_bar_returns_the_iterable_itself():
    items = [1, 2, 3]
    assert progress_bar(items, progress=False) is items


def test_auto_shows_a_bar_only_on_a_terminal(monkeypatch):
    pytest.importorskip("tqdm")
    items = [1, 2, 3]
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    assert progress_bar(items) is items
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    bar = progress_bar(items, total=3, disable=False)
    assert bar is not items and list(bar) == items


def test_asking_for_a_bar_without_tqdm_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # "import tqdm" now raises ImportError
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    items = [1, 2]
    assert progress_bar(items, progress="auto") is items
    with pytest.raises(ImportError, match=r"progress=True needs tqdm: pip install"):
        progress_bar(items, progress=True)
