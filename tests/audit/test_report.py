"""The audit's page (skdc/audit/_report.py) on a hand-built calibration (conftest.py): numbers
formatted as promised, user strings escaped, the verdict sentence opening with the decision
and its counts, the advice in the caller's words, and one page rendered whole."""

import base64
import math
from dataclasses import replace
from html.parser import HTMLParser
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skdc.audit._report import (  # noqa: E402
    SECTIONS,
    _allowance,
    _bounds_section,
    _cell,
    _fmt,
    _helps,
    _img,
    _learns_nothing_warning,
    _limits,
    _model_words,
    _page,
    _phase_warning,
    _rows_table,
    _scale_paragraph,
    _sensitive_paragraph,
    _table,
    render,
    verdict_sentence,
)
from skdc.audit._tables import _tables  # noqa: E402


def _with_tables(hand_audit, passes=True, **changes):
    cal, draws, s = hand_audit(passes, **changes)
    return s, cal, draws, _tables(cal, draws, s)


# ----------------------------------------------------------------------------- cells


@pytest.mark.parametrize("value, shown", [
    (True, "yes"), (np.bool_(False), "no"), (3, "3"), (np.int64(7), "7"),
    (0.123456, "0.1235"), (np.float32(2.5), "2.5"), (12345.678, "1.235e+04"),
    (math.nan, "n/a"), (math.inf, "inf"), ("<b> & 'x'", "&lt;b&gt; &amp; &#x27;x&#x27;"),
])
def test_a_value_is_shown_in_four_digits_and_words(value, shown):
    assert _fmt(value) == shown


def test_minus_infinity_keeps_its_sign():
    assert _fmt(-math.inf) == "-inf"


def test_cells_and_tables_escape_and_align_text():
    assert _cell(0.5) == "<td>0.5</td>"
    assert _cell("a<b") == "<td class='text'>a&lt;b</td>"
    assert _cell("x" * 41) == f"<td class='text long'>{'x' * 41}</td>"
    df = pd.DataFrame({"col<1>": ["x&y"], "n": [2]})
    assert _table(df, "t") == (
        '<div class="scroll"><table id="t" data-csv="t.csv"><thead><tr><th>col&lt;1&gt;</th>'
        "<th>n</th></tr></thead><tbody><tr><td class='text'>x&amp;y</td><td>2</td></tr>"
        "</tbody></table></div>")
    assert _img("QUJD", 'a "b"') == ('<img alt="a &quot;b&quot;" '
                                     'src="data:image/png;base64,QUJD">')


# ----------------------------------------------------------------------------- the verdict


def test_the_verdict_opens_with_collaborate_and_its_counts(hand_audit):
    s, cal, _, tables = _with_tables(hand_audit)
    text = verdict_sentence(s, cal, tables)
    assert text.startswith("<p class='verdict' id='verdict-sentence'><b>Collaborate</b>: "
                           "at anchor noise v = 0.2, a fresh deployment keeps")
    assert "with probability at least 75% (4 of 4 simulated deployments met it)" in text
    # linkage at 0.2: 1 - (0.85, 0.9, 0.95, 0.8), median 0.125, shown in whole percent
    assert f"links a median {0.125:.0%} of your rows" in text
    # mean balanced accuracy at 0.2 and at no noise (the grid's 0.90 and 0.88)
    assert "Balanced accuracy there is 0.742, against 0.890 without noise." in text
    s["noise"] = "noise <v>"  # the user's words are escaped
    assert "at noise &lt;v&gt; = 0.2" in verdict_sentence(s, cal, tables)
    lowest = replace(cal, bracket=(0.2, 0.2))
    assert "already the lower end of the range" in verdict_sentence(s, lowest, tables)
    no_base = {**tables, "baseline": math.nan, "linkage": None}
    text = verdict_sentence(s, cal, no_base)
    assert "Balanced accuracy there is 0.742. This holds" in text and "links" not in text


def test_the_verdict_opens_with_do_not_collaborate_and_the_shortfall(hand_audit):
    s, cal, _, tables = _with_tables(hand_audit, passes=False)
    text = verdict_sentence(s, cal, tables)
    # at 0.2 Procrustes' errors are 0.8, 0.9, 0.45, 1.2: one of four under 0.5
    assert text.startswith("<p class='verdict no' id='verdict-sentence'><b>Do not "
                           "collaborate</b>: even at the largest anchor noise v tried, 0.2, "
                           "the procrustes attack stays below 0.5 in 1 of 4 draws (median "
                           "error 0.85), while none of 4 may fail.")
    assert "mechanism='cgdp', aligner='none'" in text  # the way out, in Python's words


def test_a_linkage_out_of_reach_is_said_with_its_median_and_largest(hand_audit):
    s, cal, _, tables = _with_tables(hand_audit, passes=False, max_linkage=0.1)
    text = verdict_sentence(s, cal, tables)
    assert ("no anchor noise v in [0, 0.2] brings linkage under 0.1. At the largest, 0.2, the "
            "strongest attack, Procrustes, still links a median <b>12%</b> of your rows to "
            "their own row (up to 20%; chance 10%) over the 4 simulated deployments run "
            "there: anchor noise cannot hide what the uploaded rows themselves carry.") in text
    s["mechanism"] = "cgdp"
    assert "the noise in this range is too small" in verdict_sentence(s, cal, tables)


def test_what_the_rule_allows_in_words(hand_audit):
    cal, _, _ = hand_audit()
    assert _allowance(cal) == "while none of 4 may fail"
    two = replace(cal, decisions=cal.decisions.assign(allowed_failures=2))
    assert _allowance(two) == "while at most 2 of 4 may fail"
    assert "Gaussian bound" in _allowance(replace(cal, criterion="normal"))


def test_advice_names_a_flag_of_the_command_or_a_parameter_of_the_function():
    cal = SimpleNamespace(value=0.3, v_phase_transition=0.2)
    s = {"n_features": 9, "n_anchors": None, "mechanism": "cgdp"}
    assert "<code>--n-anchors</code>, now 36, 4 per feature" in _phase_warning(
        {**s, "cli": True}, cal)
    assert "<code>n_anchors=</code>" in _phase_warning(s, cal)
    assert "<code>--range</code>" in _helps({**s, "cli": True}) and "bounds=" in _helps(s)
    assert "<code>--data</code> with fewer columns" in _helps({**s, "cli": True})


def test_the_phase_warning_only_above_v_pt():
    s = {"n_features": 9, "n_anchors": 40}
    above = _phase_warning(s, SimpleNamespace(value=0.3, v_phase_transition=0.2))
    assert "v_PT = 0.2 (1.50 x)" in above and "now 40)" in above
    assert _phase_warning(s, SimpleNamespace(value=0.2, v_phase_transition=0.2)) == ""
    assert _phase_warning(s, SimpleNamespace(value=math.nan, v_phase_transition=0.2)) == ""


# ----------------------------------------------------------------------------- the setting


def test_the_warnings_escape_the_text_and_say_nothing_without_cause():
    assert _learns_nothing_warning({}) == ""
    assert _learns_nothing_warning({"learns_nothing": "a < b"}) == (
        "<p class='verdict warn' id='learns-nothing'>a &lt; b</p>")


def test_unstandardized_rows_are_said_with_their_spread():
    s = {"scale": {"standardized": False, "scale_spread": 123.456, "largest_column": 2,
                   "largest_rms": 45.678}, "cli": True}
    text = _scale_paragraph(s)
    assert ("differ by a factor of 123 (column 2 has RMS 45.7)" in text
            and "<code>--data</code>" in text)
    assert "look standardized" in _scale_paragraph({"scale": {"standardized": True}})


def test_the_model_is_said_with_its_parameters_and_its_weights():
    s = {"model": "logistic", "model_params": {"C": 0.5, "class_weight": "balanced"},
         "balanced": True, "smallest_share": 0.2, "n_classes": 2, "cli": False}
    text = _model_words(s)
    assert text.startswith("The analyst trains a logistic classifier with C = 0.5 and "
                           "balanced class weights: your labels are imbalanced (the smallest "
                           "class holds 20% of the rows, below 80% of an even share of 50%)")
    assert "<code>model_params={&#x27;class_weight&#x27;: None}</code>" in text
    own = _model_words({"model": "My<Model>", "model_params": {"tol": "1e-3"}})
    assert own == "The analyst trains a My&lt;Model&gt; classifier with tol = &#x27;1e-3&#x27;."


def test_the_rows_table_shows_the_first_rows_and_columns_with_each_rows_error():
    truth = np.arange(1.0, 15.0 * 6 + 1).reshape(6, 15)
    rec = truth + 1.0
    picture = {"truth": truth, "reconstruction": rec, "attack": "procrustes", "value": 0.2,
               "error": 0.05}
    names = [f"c<{j}>" for j in range(15)]
    text = _rows_table({"noise": "anchor noise v", "columns": names}, picture)
    assert "Below: 4 of your rows (the first 12 of its 15 columns)" in text
    assert "<th>c&lt;11&gt;</th><th>row error</th>" in text and "c&lt;12&gt;" not in text
    assert text.count("<td class='text'>yours</td>") == 4
    # row 1's error: ||1||_2 over 15 columns / ||row 1||
    error = np.sqrt(15) / np.linalg.norm(truth[0])
    assert f"<td rowspan='2'>{error:.3f}</td>" in text
    assert "<th>column 0</th>" in _rows_table({"noise": "v"}, picture)


def test_the_sensitive_column_and_its_target_are_said():
    assert _sensitive_paragraph({}) == ""
    text = _sensitive_paragraph({"sensitive": 3, "max_sensitive_gain": 0.25})
    assert text.startswith("<p>Column 3 is sensitive") and "a gain of at most 0.25" in text


def test_the_bounds_and_the_limits_say_what_holds():
    cal = SimpleNamespace(value=0.5)
    assert "each record leaks at most <b>1.234 bits</b>" in _bounds_section({}, cal, 1.23449)
    assert _bounds_section({}, cal, None).startswith("<p>No provable bound applies")
    assert "heavy tails included" in _limits({"criterion": "order"})
    assert "assumes Gaussian attack errors" in _limits({"criterion": "normal"})


def test_a_page_holds_its_sections_in_order():
    page = _page("t<", "H", "<p>first</p>", {"b": "B", "a": "A"}, ("a", "b"),
                 {"a": "Ta", "b": "Tb"}, css="x{}")
    assert page.startswith("<!DOCTYPE html><html lang='en'>")
    assert "<title>t<</title>" in page and "x{}</style>" in page
    assert page.index("<p>first</p>") < page.index('<section id="a"><h2>Ta</h2>A</section>') \
        < page.index('<section id="b"><h2>Tb</h2>B</section>')


# ----------------------------------------------------------------------------- the page


class _Page(HTMLParser):
    """A page's tags and ``id``s in order, its sections' ``id``s and its images."""

    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.sections, self.images = [], [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        self.ids += [attrs["id"]] if "id" in attrs else []
        self.sections += [attrs["id"]] if tag == "section" else []
        self.images += [(attrs["alt"], attrs["src"])] if tag == "img" else []


def test_the_page_opens_with_the_verdict_and_links_nothing(hand_audit, monkeypatch):
    from skdc.audit import _report

    s, cal, draws, tables = _with_tables(
        hand_audit, command_line="skdc audit --data '<script>x</script>.npy'")
    drawn = []

    def tiny_figures(*args):  # the figures' own tests draw them; here one inch each
        drawn.append(args)
        return {k: plt.figure(figsize=(1, 1)) for k in ("curves", "frontier", "calibration")}

    monkeypatch.setattr(_report, "figures", tiny_figures)
    text = render(s, cal, draws, tables, None)
    assert len(drawn) == 1 and drawn[0][0] is cal and drawn[0][3] is s
    page = _Page()
    page.feed(text)
    assert page.sections == list(SECTIONS)
    assert page.ids[0] == "verdict-sentence"  # the decision comes first
    assert text.index("<b>Collaborate</b>") < text.index('<section id="answer">')
    assert not {"script", "a", "link", "iframe"} & set(page.tags)
    assert "&lt;script&gt;x&lt;/script&gt;" in text and "<script>" not in text
    assert {"attacks", "decisions", "diagnostics", "summary", "versions"} <= set(page.ids)
    assert [alt for alt, _ in page.images] == [
        "attack errors and utility against the noise", "frontier",
        "the calibration's draws"]
    for _, src in page.images:
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # the recommended 0.2 lies above v_PT = 0.15: the page warns
    assert f"v_PT = 0.15 ({0.2 / 0.15:.2f} x)" in text
