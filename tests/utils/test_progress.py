"""Progress bars (skdc/utils/_progress.py): shown when asked or when someone watches a terminal,
never in a pipe or a log, and a missing tqdm is an error only when a bar was asked for. The
stages of a run (an audit, a comparison): their planned draws, one line per stage, per setting
decided and per minute of draws where standard error is no terminal, a bar with the planned
total on one, one estimate of the whole run, a plan that shrinks as settings are decided
early; nothing when progress is off."""

import re
import sys

import pytest

from skdc.utils import _progress
from skdc.utils._progress import progress_bar, run_progress, stage_progress

LINE = re.compile(r"^skdc \[(\d+:)?\d+:\d\d\] (.*)$")


def _lines(err):
    """The run's lines of ``err`` without their ``skdc [elapsed]`` opening."""
    return [m.group(2) for m in map(LINE.match, err.splitlines()) if m]


def _one(lines, pattern):
    found = [x for x in lines if re.search(pattern, x)]
    assert len(found) == 1, (pattern, lines)
    return found[0]


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


def test_no_progress_no_output(capsys):
    capsys.readouterr()
    with run_progress([("one", 2)], False) as run:
        with run.step("a"):
            assert stage_progress("one", 2, "auto") is None  # the run's setting wins
    assert stage_progress("one", 2, False) is None
    assert capsys.readouterr().err == ""


def test_stage_lines_minute_lines_resumed_draws_and_a_plan_that_shrinks(monkeypatch, capsys):
    monkeypatch.setattr(_progress._Stage, "interval", 0.0)  # a line per update
    capsys.readouterr()
    with run_progress([("a: one", 6), ("b: two", 3)], "auto", advice="fewer") as run:
        with run.step("a"):
            st = stage_progress("one", None, "auto", early=True)  # the plan gives 6
            st.update(2, resumed=True)
            st.begin_batch()
            st.update(1)
            st.update(1)
            st.end_batch()
            st.decided("x = 1 passed")
            st.close()
        assert run.plan == [("a: one", 4), ("b: two", 3)]  # decided early: 2 not needed
        with run.step("b"):
            st = stage_progress("two", 3, "auto")
            st.begin_batch()
            st.update(3)
            st.end_batch()
            st.close()
    lines = _lines(capsys.readouterr().err)
    assert lines[0] == "started: at most 9 draws planned in 2 stages (a: one 6, b: two 3)"
    assert lines[1].startswith("a: one: started, 6 draws planned (at most")
    assert lines[2].startswith("a: one: 2 of at most 6 draws, ")  # resumed: no pace yet
    assert lines[3].startswith("a: one: 3 of at most 6 draws, ")
    assert "; run 3 of at most 9 draws" in lines[3]
    assert _one(lines, "^estimate: ").startswith("estimate: the first 2 draws took ")
    assert _one(lines, "^estimate: ").endswith(". To shorten it: fewer.")
    assert _one(lines, "^a: one: x = 1 passed; 4 of at most 6 draws")
    assert _one(lines, "^a: one: done").startswith("a: one: done: 4 of at most 6 draws in ")
    assert "(decided early: 2 planned draws not needed); 2 read back from the checkpoint" in \
        _one(lines, "^a: one: done")
    assert _one(lines, "^a: done in ").endswith("run 4 of at most 7 draws") or \
        "run 4 of at most 7 draws, " in _one(lines, "^a: done in ")
    assert _one(lines, "^b: two: done").startswith("b: two: done: 3 draws in ")
    assert lines[-1].startswith("finished: 7 draws in ")


def test_a_terminal_gets_a_bar_with_the_planned_total(capsys):
    pytest.importorskip("tqdm")
    capsys.readouterr()
    with run_progress([("one", 5)], True):
        st = stage_progress("one", None, True, early=True)
        st.begin_batch()
        st.update(2)
        st.end_batch()
        st.decided("v = 1 failed")
        st.close()
    err = capsys.readouterr().err
    assert "one (may stop early)" in err and "2/5" in err and "v = 1 failed" in err
    assert "decided early: 3 planned draws not needed" in err
