"""``python -m skdc audit`` on digits: a self-contained report whose tables match its CSVs."""

import base64
import csv
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import load_digits

from skdc.__main__ import main
from skdc.experiments._audit import SECTIONS

SMALL = ["--participants", "3", "--attack", "procrustes", "--target-error", "0.3",
         "--range", "0", "0.2", "--draws", "3", "--grid", "4", "--grid-draws", "1",
         "--model", "ridge", "--seed", "0"]


class _Page(HTMLParser):
    """Tags, attributes and table cells of a page (standard-library parser only)."""

    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.images, self.tables = [], set(), [], {}
        self._table, self._row, self._cell = None, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "img":
            self.images.append(attrs.get("src", ""))
        if tag == "table":
            self._table = attrs.get("id")
            self.tables[self._table] = []
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._row is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append(self._row)
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _parse(path):
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("audit-data")
    X, y = load_digits(return_X_y=True)
    np.save(root / "X.npy", X[:360] / 16.0)
    np.save(root / "y.npy", y[:360])
    return root


@pytest.fixture(scope="module")
def report_dir(data_files):
    out = data_files / "report"
    rc = main(["audit", "--data", str(data_files / "X.npy"), "--labels",
               str(data_files / "y.npy"), *SMALL, "--out", str(out)])
    assert rc == 0
    return out


def test_report_parses_and_holds_every_section(report_dir):
    page = _parse(report_dir / "report.html")
    assert set(SECTIONS) <= page.ids
    titles = [t for t, _ in page.tags if t == "h2"]
    assert len(titles) == len(SECTIONS)
    text = (report_dir / "report.html").read_text()
    for phrase in ("colludes with participant 0", "binding attack", "v_PT",
                   "not differential privacy", "SHA-256 of the inputs", "--target-error 0.3"):
        assert phrase in text, phrase


def test_report_embeds_its_figures_and_links_nothing(report_dir):
    page = _parse(report_dir / "report.html")
    assert len(page.images) == 3  # reconstructions, noise curves, frontier
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [t for t, _ in page.tags if t in ("script", "link", "iframe", "object")]
    for _, attrs in page.tags:
        for key in ("href", "src", "action"):
            value = attrs.get(key) or ""
            assert not value or value.startswith("data:"), (key, value[:60])
    text = (report_dir / "report.html").read_text()
    assert "http://" not in text and "https://" not in text and "url(" not in text


def _csv(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def _same(cell, value):
    if value in ("True", "False"):
        return cell == ("yes" if value == "True" else "no")
    try:
        v = float(value)
    except ValueError:
        return cell == value
    if np.isnan(v):
        return cell == "n/a"
    return np.isclose(float(cell), v, rtol=1e-3, atol=0)  # the page shows 4 digits


@pytest.mark.parametrize("name", ["attacks", "diagnostics", "summary"])
def test_csvs_match_the_report(report_dir, name):
    page = _parse(report_dir / "report.html")
    shown = page.tables[name]
    stored = _csv(report_dir / f"{name}.csv")
    assert shown[0] == stored[0]  # the header
    assert len(shown) == len(stored)
    for row_shown, row_stored in zip(shown[1:], stored[1:]):
        assert all(_same(c, v) for c, v in zip(row_shown, row_stored)), (row_shown, row_stored)


def test_tables_agree_with_the_draws(report_dir):
    """The headline numbers recomputed from draws.csv (an independent reading)."""
    import pandas as pd

    draws = pd.read_csv(report_dir / "draws.csv")
    summary = pd.read_csv(report_dir / "summary.csv").set_index("quantity")["value"]
    value = summary["recommended noise"]
    at = draws[(draws["stage"] == "calibration") & (draws["value"] == value)]
    assert len(at) == 3
    assert_allclose(summary["binding attack error (mean)"], at["procrustes"].mean(), rtol=1e-12)
    assert_allclose(summary["balanced accuracy (mean)"], at["balanced_accuracy"].mean(),
                    rtol=1e-12)
    assert summary["binding attack lower bound"] >= 0.3
    assert summary["draws run"] == len(draws)
    assert set(draws["stage"]) == {"calibration", "grid"}


def test_reconstruction_picture_repeats_a_calibration_draw(report_dir):
    """The picture refits draw 0 at the recommended noise through the sweep's seed: its error
    is that draw's error in draws.csv."""
    import re

    import pandas as pd

    text = (report_dir / "report.html").read_text()
    shown = float(re.search(r"one draw, relative error ([0-9]+\.[0-9]+)", text).group(1))
    draws = pd.read_csv(report_dir / "draws.csv")
    value = pd.read_csv(report_dir / "summary.csv").set_index("quantity")["value"][
        "recommended noise"]
    row = draws[(draws["stage"] == "calibration") & (draws["value"] == value)
                & (draws["draw"] == 0)]
    assert_allclose(shown, row["procrustes"].iloc[0], rtol=2e-3)


def test_resumed_audit_equals_uninterrupted(report_dir, data_files, tmp_path):
    out = tmp_path / "resumed"
    shutil.copytree(report_dir / "checkpoint", out / "checkpoint")
    for name, keep in (("calibration.jsonl", 4), ("grid.jsonl", 2)):
        path = out / "checkpoint" / name
        lines = path.read_text().splitlines()
        path.write_text("\n".join(lines[:keep]) + "\n" + lines[keep][:20])  # cut mid-line
    rc = main(["audit", "--data", str(data_files / "X.npy"), "--labels",
               str(data_files / "y.npy"), *SMALL, "--out", str(out)])
    assert rc == 0
    for name in ("attacks", "diagnostics", "summary", "calibration"):
        assert _csv(out / f"{name}.csv") == _csv(report_dir / f"{name}.csv"), name
    a, b = _csv(out / "draws.csv"), _csv(report_dir / "draws.csv")
    keep = [k for k, col in enumerate(a[0]) if col != "seconds"]
    assert [[r[k] for k in keep] for r in a] == [[r[k] for k in keep] for r in b]
    # the same page, up to the --out folder in the command line it prints
    page = (out / "report.html").read_text().replace(str(out), "OUT")
    assert page == (report_dir / "report.html").read_text().replace(str(report_dir), "OUT")


def test_config_file_equals_flags(report_dir, data_files, tmp_path):
    # the same settings from TOML; the checkpoint then holds every draw, so nothing reruns
    shutil.copytree(report_dir / "checkpoint", tmp_path / "out" / "checkpoint")
    (tmp_path / "audit.toml").write_text(f"""
[audit]
data = "{data_files / 'X.npy'}"
labels = "{data_files / 'y.npy'}"
participants = 3
attack = ["procrustes"]
target_error = 0.3
range = [0, 0.2]
draws = 3
grid = 4
grid_draws = 1
model = "ridge"
out = "out"
""")
    assert main(["audit", "--config", str(tmp_path / "audit.toml")]) == 0
    assert _csv(tmp_path / "out" / "summary.csv") == _csv(report_dir / "summary.csv")


@pytest.mark.parametrize("argv, flag", [
    (["--data", "missing.npy", "--labels", "y.npy"], "--data"),
    (["--labels", "y.npy"], "--data"),
    (["--data", "X.npy", "--labels", "short.npy"], "--labels"),
    (["--data", "X.npy", "--labels", "y.npy", "--attack", "known_secret"], "--attack"),
    (["--data", "X.npy", "--labels", "y.npy", "--backend", "dask"], "--scheduler"),
    (["--data", "X.npy", "--labels", "y.npy", "--confidence", "2"], "--confidence"),
    (["--data", "X.npy", "--labels", "y.npy", "--range", "0.3", "0.1"], "--range"),
    (["--data", "y.npy", "--labels", "y.npy"], "--data"),
    (["--config", "bad.toml"], "--config"),
    (["--data", "X.npy", "--labels", "y.npy", "--participants", "3", "--colluder", "5"],
     "--colluder"),
])
def test_cli_errors_are_one_line_naming_the_flag(data_files, tmp_path, capsys, argv, flag,
                                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("X.npy", "y.npy"):
        shutil.copy(data_files / name, tmp_path / name)
    np.save(tmp_path / "short.npy", np.arange(5))
    (tmp_path / "bad.toml").write_text("[audit\n")
    assert main(["audit", *argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert flag in err, err


def test_example_config_runs_through_the_parser(capsys):
    assert main(["audit", "--example"]) == 0
    import tomllib

    config = tomllib.loads(capsys.readouterr().out)
    assert config["audit"]["target_error"] == 0.5


def _chromium():
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


@pytest.mark.skipif(_chromium() is None, reason="headless Chromium is not installed")
def test_report_renders_in_a_browser(report_dir, tmp_path):
    from matplotlib.image import imread

    shot = tmp_path / "page.png"
    subprocess.run([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                    f"--screenshot={shot}", "--window-size=1200,2400",
                    (report_dir / "report.html").as_uri()], check=True, timeout=120,
                   capture_output=True)
    img = imread(shot)
    assert img.std() > 0.01  # not a blank page


def test_audit_on_a_partition_and_cgdp():
    from skdc.experiments import audit

    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16.0, y[:300]
    part = np.random.RandomState(0).choice([0, 1, 2, 3], size=300, p=[0.4, 0.3, 0.2, 0.1])
    rep = audit(X, y, partition=part, attacks=["procrustes"], bounds=(0.0, 0.2),
                target_error=0.3, n_draws=3, n_grid=2, grid_draws=1, model="ridge",
                progress=False)
    assert rep.setting["n_participants"] == 4 and rep.setting["partition"]
    assert "partition file" in rep.html
    assert rep.calibration.bracket[0] < rep.calibration.value <= 0.2
    # C-GDP: the private-data noise is calibrated against the known-secret inversion
    rep = audit(X, y, n_participants=3, mechanism="cgdp", aligner="none", target_error=0.3,
                n_draws=3, n_grid=2, grid_draws=1, model="ridge", progress=False)
    assert rep.calibration.param == "gdp__noise"
    assert list(rep.attacks["attack"]) == ["known_secret"]
    # a Gaussian release: the bounds section gives its leakage, as in diagnostics.csv
    diag = rep.diagnostics.set_index("quantity")["value"]
    bits = diag["leakage bound (bits per record)"]
    assert 0 < bits < np.inf and f"{bits:.4g} bits" in rep.html
    with pytest.raises(ValueError, match="not audited"):
        audit(X, y, mechanism="cgdp", aligner="gopp")


def test_report_says_when_no_noise_meets_the_target(tmp_path):
    from sklearn.datasets import make_classification

    from skdc.experiments import audit

    X, y = make_classification(n_samples=240, n_features=6, random_state=0)
    with pytest.warns(UserWarning, match="No value of align__v"):
        rep = audit(X, y, n_participants=3, attacks=["procrustes"], target_error=50.0,
                    bounds=(0.0, 0.2), n_draws=3, n_grid=2, grid_draws=1, model="ridge",
                    progress=False)
    assert np.isnan(rep.calibration.value)
    assert "No noise in [0, 0.2] meets the target error 50" in rep.html
    rep.save(tmp_path)
    page = _parse(tmp_path / "report.html")
    assert set(SECTIONS) <= page.ids
    assert len(page.images) == 2  # no reconstruction picture: neither images nor an answer
