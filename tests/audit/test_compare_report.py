"""The comparison's figure and page (skdc/audit/_compare_report.py) on hand-built options
(conftest.py): the table's numbers as the page formats them, each option's costs and
judgement in words, the deployment's settings escaped, the figure's two panels, and one page
rendered whole with the verdict first."""

import base64
import math
from dataclasses import replace
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from skdc.audit._compare_report import (  # noqa: E402
    SECTIONS,
    _attack_words,
    _below_baseline,
    _costs_section,
    _deployment_section,
    _display_table,
    _judged_section,
    _num,
    _panels,
    _signed,
    _verdict_html,
    render_comparison,
)
from skdc.audit._figures import _FAILS, _MEETS  # noqa: E402

_INFERENCE = "label inference (majority-label baseline; no risk: labels are shared)"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_attacks_and_numbers_in_words():
    assert _attack_words(None) == "none applies"
    assert _attack_words("pinv") == "anchor regression (PINV)"
    assert _attack_words("procrustes unlinked") == "Procrustes (linkage)"
    assert (_num(None), _num(math.nan), _num(0.12345), _num(2.0, 1)) == ("n/a", "n/a",
                                                                         "0.123", "2.0")
    assert (_signed(0.1), _signed(-0.05), _signed(math.nan)) == ("+0.100", "-0.050", "-")


def test_the_verdict_opens_with_the_decision_in_bold_and_escapes_the_rest():
    text = _verdict_html({"decision": "collaborate", "sentence": "Collaborate: I-GDP <b>",
                          "warnings": ["a & b"]})
    assert text == ("<p class='verdict' id='verdict-sentence'><b>Collaborate</b>: I-GDP "
                    "&lt;b&gt;</p><p class='verdict warn'>a &amp; b</p>")
    text = _verdict_html({"decision": "do not collaborate", "warnings": [],
                          "sentence": "Do not collaborate: Local does better."})
    assert text == ("<p class='verdict no' id='verdict-sentence'><b>Do not collaborate</b>: "
                    "Local does better.</p>")


def test_the_table_shows_each_number_with_its_interval_and_baseline(hand_comparison):
    options, table, _ = hand_comparison()
    shown = _display_table(options, table, s_col=3).set_index("option")
    local, central = shown.loc["Local (each alone)"], shown.loc["Central (raw rows pooled)"]
    igdp, gauss = shown.loc["I-GDP + GOPP"], shown.loc["GaussMix, epsilon = 1"]
    assert local["balanced accuracy"] == "0.700 [0.650, 0.750]"
    assert (local["setting"], local["strongest attack"]) == ("-", "none applies")
    assert local["attack error (bound / median)"] == "not measured"
    assert (igdp["vs Local"], igdp["vs Central"]) == ("+0.100", "-0.100")  # 0.80 - 0.70, 0.90
    assert igdp["strongest attack"] == "Procrustes"
    assert igdp["attack error (bound / median)"] == "0.550 / 0.850"
    assert central["exact-source linkage (chance)"] == "1.00 (0.10)"
    assert central[_INFERENCE] == "0.95 (baseline 0.60)"
    assert igdp[_INFERENCE] == "0.55 (baseline 0.60, below it)"
    assert (igdp["gain on column 3"], gauss["gain on column 3"]) == ("0.25", "-")
    assert (gauss["epsilon"], igdp["epsilon"]) == ("0.98", "-")
    assert list(shown["meets the targets"]) == ["nothing shared", "no", "yes", "not measured"]
    assert not any(c.startswith("gain") for c in _display_table(options, table).columns)


def test_inference_below_its_baseline_is_said_in_words(hand_comparison):
    options, _, _ = hand_comparison()
    words = _below_baseline(options)
    assert "(I-GDP + GOPP 0.55 against 0.60)" in words
    assert "always guessing the target's commonest label would be right more often" in words
    options["igdp"] = replace(options["igdp"], inference=0.6)  # at its baseline: not below
    assert _below_baseline(options) == ""


def test_each_option_costs_or_gains_against_the_references(hand_comparison):
    options, _, _ = hand_comparison()
    text = _costs_section({}, options)
    assert ("<li><b>I-GDP + GOPP</b> at anchor noise v = 0.2: balanced accuracy 0.800; gains "
            "0.100 against Local (0.700); costs 0.100 against Central (0.900); meets the "
            "targets.</li>") in text
    assert "a formal guarantee (epsilon = 0.98); its attack error is not measured" in text
    refs = {k: options[k] for k in ("local", "central")}
    assert text.count("<li>") == 2
    assert "Only the references were compared." in _costs_section({}, refs)
    odd = {"x": replace(options["igdp"], label="<i>mine</i>", meets=False)}
    assert "<b>&lt;i&gt;mine&lt;/i&gt;</b>" in _costs_section({}, odd)
    assert "does not meet the targets" in _costs_section({}, odd)


def test_the_deployment_says_why_nothing_is_deployed(hand_comparison):
    options, _, _ = hand_comparison()
    verdict = {"best": None, "decision": "do not collaborate"}
    assert "No option meets the targets" in _deployment_section({}, options, verdict, None)
    verdict = {"best": "igdp", "decision": "do not collaborate"}
    assert "The decision is not to collaborate" in _deployment_section({}, options, verdict,
                                                                       None)
    verdict = {"best": "gaussmix@1", "decision": "collaborate"}
    text = _deployment_section({}, options, verdict, None)
    assert "GaussMix, epsilon = 1, is not one `skdc participant upload` runs" in text


def test_the_deployment_shows_its_escaped_settings_and_commands(hand_comparison):
    options, _, _ = hand_comparison()
    deployment = {"option": "igdp", "settings": {"mechanism": "<IGDP>", "noise": 0.5},
                  "fingerprint": "f00d", "text": "skdc participant upload --data <X>\n"}
    verdict = {"best": "igdp", "decision": "collaborate"}
    text = _deployment_section({}, options, verdict, deployment)
    assert "<b>I-GDP + GOPP</b> at anchor noise v = 0.2" in text
    assert "<code id='fingerprint'>f00d</code>" in text
    assert "<tr><td>mechanism</td><td>&#x27;&lt;IGDP&gt;&#x27;</td></tr>" in text
    assert "<pre id='commands'>skdc participant upload --data &lt;X&gt;\n</pre>" in text
    assert "verdict no" not in text
    anyway = _deployment_section({}, options, {**verdict, "decision": "do not collaborate"},
                                 deployment)
    assert anyway.startswith("<p class='verdict no'>The verdict is not to collaborate")


def test_each_option_is_judged_in_its_own_words(hand_comparison):
    options, _, _ = hand_comparison()
    text = _judged_section({}, options)
    assert ("<h3>I-GDP + GOPP</h3><p>Calibrated: anchor noise v = 0.2; binding attack "
            "Procrustes; 8 simulated deployments.</p>") in text
    assert "<table id=\"decisions-igdp\"" in text
    assert "<th>value</th><th>n_draws</th><th>n_failed</th>" in text
    assert ("with k = 40 rows and noise sigma = 2 (the dimensionless scale gamma = 0.5, row "
            "bound C = 3, public and data-independent; 5% of the training rows") in text
    assert "gives epsilon = 0.98 at delta = 1e-05" in text and "Utility over 3 fresh" in text
    refs = {k: options[k] for k in ("local", "central")}
    assert _judged_section({}, refs) == "<p>No option was calibrated.</p>"


def _errorbars(ax):
    """``{label: (x, y, color, marker)}`` of each errorbar's data point."""
    out = {}
    for c in ax.containers:
        line = c.lines[0]
        x, y = (float(np.ravel(v)[0]) for v in line.get_data())
        out[c.get_label()] = (x, y, line.get_color(), line.get_marker())
    return out


def test_the_error_panel_places_each_option_at_its_bound(hand_comparison):
    options, _, s = hand_comparison()
    left, right = _panels(options, s)
    points = _errorbars(left)
    assert points["I-GDP + GOPP: anchor noise v = 0.2"] == (0.55, 0.80, _MEETS, "D")
    assert points["Central: the analyst holds the raw rows (error 0)"][:3] == (0.0, 0.9, "0.35")
    labels = [t.get_text() for t in left.get_legend().get_texts()]
    assert "Local, nothing shared: 0.700 (band: its interval)" in labels
    assert "target error 0.5" in labels
    # the axis runs to the largest of 1.3 x 0.5, 0.5 and 1.1 x each error (the median 0.85)
    assert_allclose(left.get_xlim(), (-0.02 * 0.935, 0.935 * 1.05), rtol=1e-12)
    assert left.get_xlabel().startswith("strongest attack's error a fresh deployment exceeds "
                                        "at 75%")
    options["igdp"] = replace(options["igdp"], meets=False)
    s["target_error"] = None  # reported, not judged: no target line
    left, _ = _panels(options, s)
    assert _errorbars(left)["I-GDP + GOPP: anchor noise v = 0.2"][2] == _FAILS
    assert not any(t.get_text().startswith("target")
                   for t in left.get_legend().get_texts())


def test_the_epsilon_panel_draws_gaussmix_against_epsilon(hand_comparison):
    options, _, s = hand_comparison()
    _, right = _panels(options, s)
    assert right.get_xscale() == "log"
    (x, y, _, _), = _errorbars(right).values()
    assert (x, y) == (0.98, 0.75)
    assert_allclose(right.get_xlim(), (0.49, 1.96), rtol=1e-12)
    assert "I-GDP + GOPP (no epsilon)" in [t.get_text() for t in right.texts]
    without = {k: o for k, o in options.items() if o.protection != "formal"}
    _, right = _panels(without, s)
    assert "GaussMix not compared" in [t.get_text() for t in right.texts]


class _Page(HTMLParser):
    """A page's tags in order, its sections' ``id``s and its images."""

    def __init__(self):
        super().__init__()
        self.tags, self.sections, self.images = [], [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        self.sections += [attrs["id"]] if tag == "section" else []
        self.images += [attrs["src"]] if tag == "img" else []


def test_the_page_opens_with_the_verdict_and_links_nothing(hand_comparison):
    options, table, s = hand_comparison(command_line="compare <script>", n_resumed=3)
    verdict = {"decision": "collaborate", "sentence": "Collaborate: I-GDP + GOPP.",
               "warnings": [], "best": "igdp"}
    regulator = pd.DataFrame({"risk": ["singling out"], "column": ["linkage"],
                              "the guidance asks": ["<who>"]})
    text = render_comparison(s, options, table, verdict, regulator, None)
    page = _Page()
    page.feed(text)
    assert page.sections == list(SECTIONS)
    assert text.index("id='verdict-sentence'") < text.index("<section")
    assert not {"script", "a", "link", "iframe"} & set(page.tags)
    assert "compare &lt;script&gt;" in text and "&lt;who&gt;" in text
    assert "<th>column</th>" not in text  # the regulator's table, less its column keys
    assert "<p id='resumed'>Resumed from the checkpoint: 3 of 11 draws" in text
    png, = page.images
    assert base64.b64decode(png.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
