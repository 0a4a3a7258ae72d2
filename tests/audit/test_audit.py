"""``python -m skdc audit`` on digits: a self-contained report whose verdict comes first and
whose tables agree with each other and with their CSVs; hostile settings and folders are
refused in one line."""

import base64
import csv
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import load_digits

from skdc.__main__ import main
from skdc.audit._report import SECTIONS
from tests._fuzz import CASES, npy_declaring

# the error target alone decides these audits (any linkage passes); the linkage target has its
# own tests below
SMALL = ["--n-participants", "3", "--attack", "procrustes", "--target-error", "0.3",
         "--max-linkage", "1",
         "--confidence", "0.75", "--range", "0", "0.1", "--draws", "3", "--grid", "4",
         "--grid-draws", "1", "--model", "ridge", "--seed", "0", "--images"]


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


def _audit(data_files, out, *extra):
    return main(["audit", "--data", str(data_files / "X.npy"), "--labels",
                 str(data_files / "y.npy"), *SMALL, *extra, "--out", str(out)])


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
    assert _audit(data_files, out) == 0
    return out


def test_report_parses_and_holds_every_section(report_dir):
    page = _parse(report_dir / "report.html")
    assert set(SECTIONS) <= page.ids
    titles = [t for t, _ in page.tags if t == "h2"]
    assert len(titles) == len(SECTIONS)
    text = (report_dir / "report.html").read_text()
    for phrase in ("colludes with participant 0", "binding attack", "v_PT",
                   "not differential privacy", "SHA-256 of the inputs", "--target-error 0.3",
                   "anchor noise v", "order-statistic rule", "not standardized"):
        assert phrase in text, phrase
    assert "align__v =" not in text.split("<section")[0]  # the verdict speaks words


def test_the_verdict_comes_first(report_dir):
    text = (report_dir / "report.html").read_text()
    first = text.index("<p class='verdict")
    assert first < text.index("<section") and first < text.index("<img")
    sentence = text[first:text.index("</p>", first)]
    assert "<b>Collaborate</b>: at anchor noise v = " in sentence and "Yes" not in sentence
    assert "simulated deployments met it" in sentence and "without noise" in sentence


def test_report_embeds_its_figures_and_links_nothing(report_dir):
    page = _parse(report_dir / "report.html")
    assert len(page.images) == 4  # reconstructions, noise curves, frontier, calibration
    for src in page.images:
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [t for t, _ in page.tags if t in ("script", "link", "iframe", "object", "a")]
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


@pytest.mark.parametrize("name", ["attacks", "decisions", "diagnostics", "summary"])
def test_csvs_match_the_report(report_dir, name):
    page = _parse(report_dir / "report.html")
    shown = page.tables[name]
    stored = _csv(report_dir / f"{name}.csv")
    assert shown[0] == stored[0]  # the header
    assert len(shown) == len(stored)
    for row_shown, row_stored in zip(shown[1:], stored[1:]):
        assert all(_same(c, v) for c, v in zip(row_shown, row_stored)), (row_shown, row_stored)
    assert not any("n/a" in c for row in shown for c in row)


def test_every_table_agrees_with_the_draws(report_dir):
    """The headline numbers recomputed from draws.csv (an independent reading), and every
    count on the page the same count."""
    import pandas as pd

    draws = pd.read_csv(report_dir / "draws.csv")
    decisions = pd.read_csv(report_dir / "decisions.csv")
    attacks = pd.read_csv(report_dir / "attacks.csv")
    summary = pd.read_csv(report_dir / "summary.csv").set_index("quantity")["value"]
    value = float(summary["recommended noise"])
    cal = draws[draws["stage"] == "calibration"]
    at = cal[cal["value"] == value]
    assert int(summary["calibration draws"]) == len(cal) == decisions["n_draws"].sum()
    assert int(summary["draws run (all)"]) == len(draws)
    assert int(summary["grid draws"]) == (draws["stage"] == "grid").sum() == 4
    row = decisions[decisions["value"] == value].iloc[0]
    assert row["passes"] and row["n_draws"] == len(at) == 3
    rec = attacks[attacks["where"] == "recommended noise"].iloc[0]
    assert rec["draws"] == len(at) and rec["below_target"] == (at["procrustes"] < 0.3).sum()
    assert_allclose(float(summary[f"binding column (mean) at {value:.4g}"]),
                    at["procrustes"].mean(), rtol=1e-12)
    assert_allclose(float(summary[f"balanced accuracy (mean) at {value:.4g}"]),
                    at["balanced_accuracy"].mean(), rtol=1e-12)
    assert_allclose(rec["lower_bound"], at["procrustes"].min(), rtol=1e-12)
    # the binding attack is the one that fails at the bracket's failing end
    low = float(summary["bracket low (fails)"])
    fail = attacks[attacks["where"] == "bracket low end (fails)"].iloc[0]
    assert fail["noise"] == low and fail["below_target"] > 0 and fail["binding"]
    assert summary["binding attack"] == "procrustes"
    assert not decisions[decisions["value"] == low]["passes"].iloc[0]


def test_reconstruction_picture_repeats_a_calibration_draw(report_dir):
    """The picture refits the first draw at the recommended noise (the same deployment): its
    error is that draw's error in draws.csv."""
    import pandas as pd

    text = (report_dir / "report.html").read_text()
    shown = float(re.search(r"one simulated deployment, relative error ([0-9]+\.[0-9]+)",
                            text).group(1))
    draws = pd.read_csv(report_dir / "draws.csv")
    value = float(pd.read_csv(report_dir / "summary.csv").set_index("quantity")["value"][
        "recommended noise"])
    rows = draws[(draws["stage"] == "calibration") & (draws["value"] == value)]
    row = rows.sort_values("draw").iloc[0]
    assert_allclose(shown, row["procrustes"], rtol=2e-3)


def test_resumed_audit_equals_uninterrupted_and_says_so(report_dir, data_files, tmp_path,
                                                        capsys):
    out = tmp_path / "resumed"
    shutil.copytree(report_dir / "checkpoint", out / "checkpoint")
    for name, keep in (("calibration.jsonl", 4), ("grid.jsonl", 2)):
        path = out / "checkpoint" / name
        lines = path.read_text().splitlines()
        path.write_text("\n".join(lines[:keep]) + "\n" + lines[keep][:20])  # cut mid-line
    capsys.readouterr()
    assert _audit(data_files, out) == 0
    err = capsys.readouterr().err
    assert "resumed from" in err and "4 draws read back" in err
    for name in ("attacks", "diagnostics", "decisions", "calibration"):
        assert _csv(out / f"{name}.csv") == _csv(report_dir / f"{name}.csv"), name
    a, b = _csv(out / "summary.csv"), _csv(report_dir / "summary.csv")
    assert [r for r in a if "checkpoint" not in r[0]] == [r for r in b
                                                          if "checkpoint" not in r[0]]
    assert ["draws read back from a checkpoint", "4"] in a
    a, b = _csv(out / "draws.csv"), _csv(report_dir / "draws.csv")
    keep = [k for k, col in enumerate(a[0]) if col != "seconds"]
    assert [[r[k] for k in keep] for r in a] == [[r[k] for k in keep] for r in b]
    # the same page, up to the --out folder it prints and the lines saying it resumed
    page = (out / "report.html").read_text().replace(str(out), "OUT")
    n_all = len(_csv(report_dir / "draws.csv")) - 1
    assert f"This audit resumed from its checkpoint: 4 of its {n_all} draws" in page
    page = re.sub(r"<p id='resumed'>.*?</p>", "", page)
    page = re.sub(r"<tr><td[^>]*>draws read back from a checkpoint</td><td>\d+</td></tr>", "", page)
    ref = (report_dir / "report.html").read_text().replace(str(report_dir), "OUT")
    ref = re.sub(r"<tr><td[^>]*>draws read back from a checkpoint</td><td>\d+</td></tr>", "", ref)
    assert page == ref


def test_config_file_equals_flags(report_dir, data_files, tmp_path):
    # the same settings from TOML; the checkpoint then holds every draw, so nothing reruns
    shutil.copytree(report_dir / "checkpoint", tmp_path / "out" / "checkpoint")
    (tmp_path / "audit.toml").write_text(f"""
[audit]
data = "{data_files / 'X.npy'}"
labels = "{data_files / 'y.npy'}"
n_participants = 3
attack = ["procrustes"]
target_error = 0.3
max_linkage = 1
confidence = 0.75
criterion = "order"
range = [0, 0.1]
draws = 3
grid = 4
grid_draws = 1
model = "ridge"
target = 1
out = "out"
""")
    assert main(["audit", "--config", str(tmp_path / "audit.toml")]) == 0
    a, b = _csv(tmp_path / "out" / "summary.csv"), _csv(report_dir / "summary.csv")
    assert [r for r in a if "checkpoint" not in r[0]] == [r for r in b
                                                          if "checkpoint" not in r[0]]


def _one_line_error(capsys, argv, flag, tmp_path):
    assert main(["audit", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert flag in err, err
    return err


@pytest.mark.parametrize("argv, flag", [
    (["--data", "missing.npy", "--labels", "y.npy"], "--data"),
    (["--labels", "y.npy"], "--data"),
    (["--data", "X.npy", "--labels", "short.npy"], "--labels"),
    (["--data", "X.npy", "--labels", "y.npy", "--attack", "known_secret"], "--attack"),
    (["--data", "X.npy", "--labels", "y.npy", "--backend", "dask"], "--scheduler"),
    (["--data", "X.npy", "--labels", "y.npy", "--confidence", "2"], "--confidence"),
    (["--data", "X.npy", "--labels", "y.npy", "--range", "0.3", "0.1"], "--range"),
    (["--data", "X.npy", "--labels", "y.npy", "--range", "-1", "0.1"], "--range"),
    (["--data", "X.npy", "--labels", "y.npy", "--range", "0", "inf"], "--range"),
    (["--data", "X.npy", "--labels", "y.npy", "--target-error", "-1"], "--target-error"),
    (["--data", "X.npy", "--labels", "y.npy", "--target-error", "nan"], "--target-error"),
    (["--data", "X.npy", "--labels", "y.npy", "--seed", str(2**40)], "--seed"),
    (["--data", "X.npy", "--labels", "y.npy", "--draws", str(10**12)], "--draws"),
    (["--data", "X.npy", "--labels", "y.npy", "--draws", "5"], "--draws"),
    (["--data", "X.npy", "--labels", "y.npy", "--grid", str(10**10)], "--grid"),
    (["--data", "X.npy", "--labels", "y.npy", "--criterion", "mean"], "--criterion"),
    (["--data", "X.npy", "--labels", "y.npy", "--n-jobs", "0"], "--n-jobs"),
    (["--data", "y.npy", "--labels", "y.npy"], "--data"),
    (["--data", "fifo.npy", "--labels", "y.npy"], "--data"),
    (["--config", "bad.toml"], "--config"),
    (["--data", "X.npy", "--labels", "y.npy", "--n-participants", "3", "--colluder", "5"],
     "--colluder"),
    (["--data", "X.npy", "--labels", "y.npy", "--n-participants", "3", "--target", "0"],
     "--target"),
    (["--data", "X.npy", "--labels", "y.npy", "--n-participants", "3", "--target", "3"],
     "--target"),
])
def test_cli_errors_are_one_line_naming_the_flag(data_files, tmp_path, capsys, argv, flag,
                                                 monkeypatch):
    CASES["audit settings"] += 1
    monkeypatch.chdir(tmp_path)
    for name in ("X.npy", "y.npy"):
        shutil.copy(data_files / name, tmp_path / name)
    np.save(tmp_path / "short.npy", np.arange(5))
    os.mkfifo(tmp_path / "fifo.npy")
    (tmp_path / "bad.toml").write_text("[audit\n")
    _one_line_error(capsys, [*argv, "--out", str(tmp_path / "o")], flag, tmp_path)


@pytest.mark.parametrize("line, flag", [
    ("attack = [1, 2]", "[audit] attack (--attack) must be a list of attack names"),
    ('range = ["a", "b"]', "[audit] range (--range) must be [LOW, HIGH]"),
    ("range = [0.1]", "[audit] range (--range) must be [LOW, HIGH]"),
    ("range = [-1, 0.1]", "--range"),
    (f"seed = {2**40}", "--seed must be an integer from 0 to 4294967295"),
    ("draws = 1e12", "[audit] draws (--draws) must be an integer; got 1000000000000.0"),
    (f"draws = {10**12}", "--draws must be an integer from 2 to 100000"),
    ("grid = 1e10", "[audit] grid (--grid) must be an integer"),
    ("n_participants = true", "[audit] n_participants (--n-participants) must be an integer"),
    ("target_error = -0.5", "--target-error must be a finite error >= 0"),
    ('target_error = "0.5"', "[audit] target_error (--target-error) must be a number"),
    ("participant = 1", "unknown keys ['participant']"),
    ("[audit.nested]\nx = 1", "unknown keys ['nested']"),
])
def test_hostile_config_values_are_one_line(data_files, tmp_path, capsys, line, flag):
    CASES["config (audit)"] += 1
    config = tmp_path / "audit.toml"
    config.write_text(f'[audit]\ndata = "{data_files / "X.npy"}"\n'
                      f'labels = "{data_files / "y.npy"}"\n{line}\n')
    err = _one_line_error(capsys, ["--config", str(config), "--out", str(tmp_path / "o")],
                          flag, tmp_path)
    assert str(config) in err or flag.startswith("--")


def test_fresh_removes_only_what_skdc_wrote(report_dir, data_files, tmp_path, capsys):
    out = tmp_path / "out"
    shutil.copytree(report_dir / "checkpoint", out / "checkpoint")
    (out / "checkpoint" / "w.pt").write_bytes(b"a user's weights")
    CASES["audit folders"] += 1
    err = _one_line_error(capsys, ["--data", str(data_files / "X.npy"), "--labels",
                                   str(data_files / "y.npy"), *SMALL, "--out", str(out),
                                   "--fresh"], "w.pt", tmp_path)
    assert "which skdc did not write" in err
    assert sorted(os.listdir(out / "checkpoint")) == ["calibration.jsonl", "grid.jsonl",
                                                      "w.pt"]
    # a file of ours by name that skdc did not write (no checkpoint header) is refused too
    (out / "checkpoint" / "w.pt").unlink()
    (out / "checkpoint" / "grid.jsonl").write_text("my notes\n")
    CASES["audit folders"] += 1
    _one_line_error(capsys, ["--data", str(data_files / "X.npy"), "--labels",
                             str(data_files / "y.npy"), *SMALL, "--out", str(out), "--fresh"],
                    "grid.jsonl", tmp_path)
    assert (out / "checkpoint" / "grid.jsonl").read_text() == "my notes\n"
    # skdc's own files are removed, and the audit starts afresh
    (out / "checkpoint" / "grid.jsonl").unlink()
    assert _audit(data_files, out, "--fresh") == 0
    assert "resumed" not in capsys.readouterr().err
    assert _csv(out / "decisions.csv") == _csv(report_dir / "decisions.csv")


@pytest.mark.parametrize("kind", ["file", "link", "dangling link"])
def test_checkpoint_that_is_not_a_folder_is_refused(data_files, tmp_path, capsys, kind):
    CASES["audit folders"] += 1
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    if kind == "file":
        (out / "checkpoint").write_text("not a folder")
    else:
        (out / "checkpoint").symlink_to(elsewhere if kind == "link" else tmp_path / "none")
    for fresh in ([], ["--fresh"]):
        err = _one_line_error(capsys, ["--data", str(data_files / "X.npy"), "--labels",
                                       str(data_files / "y.npy"), *SMALL, "--out", str(out),
                                       *fresh], "checkpoint", tmp_path)
        assert ("is a link" if "link" in kind else "is a file") in err
    assert (elsewhere / "keep.txt").read_text() == "keep"


def test_out_under_a_file_is_refused(data_files, tmp_path, capsys):
    CASES["audit folders"] += 1
    (tmp_path / "f").write_text("a file")
    err = _one_line_error(capsys, ["--data", str(data_files / "X.npy"), "--labels",
                                   str(data_files / "y.npy"), *SMALL, "--out",
                                   str(tmp_path / "f" / "sub")], "--out", tmp_path)
    assert "a file, not a folder" in err


def test_a_link_at_the_report_is_replaced_never_written_through(report_dir, data_files,
                                                                tmp_path):
    CASES["audit outputs"] += 1
    out = tmp_path / "out"
    shutil.copytree(report_dir / "checkpoint", out / "checkpoint")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (out / "report.html").symlink_to(victim)
    (out / "draws.csv").symlink_to(victim)
    assert _audit(data_files, out) == 2  # entries no run record describes: only with --force
    assert _audit(data_files, out, "--force") == 0
    assert victim.read_text() == "precious"
    assert not (out / "report.html").is_symlink() and (out / "report.html").is_file()
    assert not (out / "draws.csv").is_symlink()
    mode = (out / "report.html").stat().st_mode & 0o777
    assert mode & 0o600 == 0o600 and not mode & 0o022


def test_cli_warnings_speak_flags_in_one_line(data_files, tmp_path, capsys):
    # nothing in range meets a target of 50: the audit warns and still writes its report
    argv = [a if a != "0.3" else "50" for a in SMALL]
    assert _audit(data_files, tmp_path / "o", *argv) == 0
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    warns = [x for x in lines if x.startswith("skdc audit: warning:")]
    assert warns and "Widen --range, lower --target-error or lower --confidence" in warns[0]
    assert not [x for x in lines if "warnings.warn" in x or x.startswith("  ")], err
    assert "bounds=" not in err and "min_error" not in err and "target_error=" not in err
    assert any(x.startswith("do not collaborate: no anchor noise v") for x in lines)


def test_example_config_runs_through_the_parser(capsys):
    assert main(["audit", "--example"]) == 0
    import tomllib

    config = tomllib.loads(capsys.readouterr().out)
    assert config["audit"]["max_linkage"] == 0.15 and "target_error" not in config["audit"]
    assert config["audit"]["criterion"] == "order"


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


# ----------------------------------------------------------------------------- Python API


def test_partition_reaches_every_draw_and_cgdp(monkeypatch):
    from skdc.audit import audit
    from skdc.mechanisms import IGDP

    X, y = load_digits(return_X_y=True)
    X, y = X[:300] / 16.0, y[:300]
    part = np.random.RandomState(0).choice([10, 11, 12, 13], size=300, p=[0.4, 0.3, 0.2, 0.1])
    seen = []
    fit = IGDP.fit

    def spy(self, X, y=None, participant=None):
        seen.append(participant)
        return fit(self, X, y, participant=participant)

    monkeypatch.setattr(IGDP, "fit", spy)
    rep = audit(X, y, participant=part, attacks=["procrustes"], max_linkage=None,
                bounds=(0.0, 0.1),
                target_error=0.3, confidence=0.75, n_grid=2, grid_draws=1, model="ridge",
                progress=False)
    assert rep.setting["n_participants"] == 4 and rep.setting["partition"]
    assert "partition file" in rep.html
    # every fit, of the calibration and of the grid, saw the user's partition
    assert len(seen) == len(rep.draws) + 1  # + the reconstruction picture's refit
    assert all(p is not None for p in seen)
    assert all(np.array_equal(p, seen[0]) for p in seen)
    assert len(seen[0]) == rep.setting["n_train"] and set(seen[0]) == {0, 1, 2, 3}
    assert rep.calibration.bracket[0] < rep.calibration.value <= 0.1
    monkeypatch.undo()
    # C-GDP: the private-data noise is calibrated against the known-secret inversion
    rep = audit(X, y, n_participants=3, mechanism="cgdp", aligner="none", max_linkage=None,
                target_error=0.3,
                confidence=0.75, n_grid=2, grid_draws=1, model="ridge", progress=False)
    assert rep.calibration.param == "gdp__noise"
    assert "private-data noise sigma" in rep.html
    assert set(rep.attacks["attack"]) == {"known_secret"}
    # a Gaussian release: the bounds section gives its leakage, as in diagnostics.csv
    diag = rep.diagnostics.set_index("quantity")["value"]
    bits = diag["leakage bound (bits per record)"]
    assert 0 < bits < np.inf and f"{bits:.4g} bits" in rep.html
    with pytest.raises(ValueError, match="not audited"):
        audit(X, y, mechanism="cgdp", aligner="gopp")


def test_partition_is_the_deprecated_spelling_of_participant():
    from skdc.audit import audit

    X, y = load_digits(return_X_y=True)
    X, y, ids = X[:150] / 16.0, y[:150], np.arange(150) % 3
    kwargs = dict(attacks=["procrustes"], max_linkage=None, target_error=0.3,
                  bounds=(0.0, 0.1), confidence=0.75, n_grid=1, grid_draws=1, model="ridge",
                  progress=False)
    new = audit(X, y, participant=ids, **kwargs)
    with pytest.warns(FutureWarning, match="partition= is deprecated .* use participant=") \
            as caught:
        old = audit(X, y, partition=ids, **kwargs)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert old.setting["partition"] and old.html == new.html
    assert old.summary.equals(new.summary)
    assert old.draws.drop(columns="seconds").equals(new.draws.drop(columns="seconds"))
    with pytest.raises(TypeError, match="pass participant= only"):
        audit(X, y, participant=ids, partition=ids, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    (dict(target_error=-0.5), "target_error must be a finite error >= 0"),
    (dict(bounds=(-1, 0.2)), "a noise scale is not negative"),
    (dict(target=0), "colluder and target must be different"),
    (dict(random_state=2**40), "random_state must be an int in 0 .. 2\\*\\*32 - 1"),
    (dict(n_grid=10**10), "n_grid"),
    (dict(attacks=[1, 2]), "attacks must be attack names"),
    (dict(max_linkage=1.5), "max_linkage"),
    (dict(max_linkage=None), "Nothing is judged"),
])
def test_audit_refuses_bad_settings(kwargs, match):
    from skdc.audit import audit

    X, y = load_digits(return_X_y=True)
    with pytest.raises((ValueError, TypeError), match=match):
        audit(X[:100], y[:100], **kwargs)


def test_failed_audit_still_says_what_it_costs_and_where_it_fails(tmp_path):
    from sklearn.datasets import make_classification

    from skdc.audit import audit

    X, y = make_classification(n_samples=240, n_features=6, random_state=0)
    with pytest.warns(UserWarning, match=r"No value of anchor noise v .* lower target_error="):
        rep = audit(X, y, n_participants=3, attacks=["procrustes"], target_error=50.0,
                    max_linkage=None, bounds=(0.0, 0.2), confidence=0.75, n_grid=2,
                    grid_draws=1, model="ridge", progress=False)
    assert np.isnan(rep.calibration.value) and rep.decision == "do not collaborate"
    text = rep.html
    first = text.index("<p class='verdict")
    sentence = text[first:text.index("</p>", first)]
    assert "<b>Do not collaborate</b>: even at the largest anchor noise v tried, 0.2" \
        in sentence
    assert "the procrustes attack stays below 50 in 1 of 1" in sentence
    assert "What would help: private-data noise" in sentence
    assert "while none of 3 may fail" in sentence
    assert re.search(r"Balanced accuracy there is 0\.\d{3} \(0\.\d{3} without noise\)",
                     sentence)
    assert "n/a" not in text
    assert set(rep.attacks["where"]) == {"largest noise tried"}
    assert "look standardized" not in text  # make_classification's columns are not
    rep.save(tmp_path)
    page = _parse(tmp_path / "report.html")
    assert set(SECTIONS) <= page.ids
    assert len(page.images) == 3  # no reconstruction picture: the rows are not images


@pytest.mark.parametrize("flag", ["--data", "--labels"])
def test_a_npy_declaring_more_than_it_holds_is_one_line(data_files, tmp_path, capsys, flag):
    """The header's shape is checked against the file before numpy allocates it (a hundred
    bytes declaring 10**13 floats raised MemoryError, a traceback)."""
    CASES["npy header"] += 1
    (tmp_path / "bad.npy").write_bytes(npy_declaring((10**7, 10**6), bytes(64)))
    files = {"--data": data_files / "X.npy", "--labels": data_files / "y.npy",
             flag: tmp_path / "bad.npy"}
    err = _one_line_error(capsys, ["--data", str(files["--data"]), "--labels",
                                   str(files["--labels"]), "--out", str(tmp_path / "o")],
                          flag, tmp_path)
    assert "declares shape (10000000, 1000000)" in err


# ----------------------------------------------------------------------------- the linkage target


def test_one_class_labels_are_refused():
    from skdc.audit import audit, compare_options

    X = np.random.RandomState(0).rand(60, 4)
    for run in (audit, compare_options):
        with pytest.raises(ValueError, match="y holds one class"):
            run(X, np.ones(60, dtype=int), progress=False)


def test_cli_refuses_bad_linkage_settings_in_one_line(data_files, tmp_path, capsys):
    for extra, flag in ((["--max-linkage", "2"], "--max-linkage"),
                        (["--max-sensitive-gain", "0.5"], "--max-sensitive-gain"),
                        (["--sensitive", "99"], "--sensitive"),
                        (["--sensitive", "age"], "--sensitive"),
                        (["--attack", "nope"], "--attack")):
        _one_line_error(capsys, ["--data", str(data_files / "X.npy"), "--labels",
                                 str(data_files / "y.npy"), *extra, "--out",
                                 str(tmp_path / "o")], flag, tmp_path)


def test_linkage_out_of_reach_says_so_and_what_would_help(data_files, tmp_path, capsys):
    """Digits, 3 participants, anchor noise up to 0.1: the Procrustes attack keeps linking
    far above 0.15, so the verdict says "Do not collaborate", with the linkage it keeps at
    the largest noise (the median over the calibration's draws there) and what would help."""
    argv = list(SMALL)
    for flag in ("--max-linkage", "--target-error"):
        k = argv.index(flag)
        del argv[k:k + 2]
    assert main(["audit", "--data", str(data_files / "X.npy"), "--labels",
                 str(data_files / "y.npy"), *argv, "--sensitive", "30", "--out",
                 str(tmp_path / "o")]) == 0
    out = capsys.readouterr()
    assert "do not collaborate: no anchor noise v" in out.err
    text = (tmp_path / "o" / "report.html").read_text()
    first = text.index("<p class='verdict")
    sentence = text[first:text.index("</p>", first)]
    assert sentence.startswith("<p class='verdict no' id='verdict-sentence'><b>Do not "
                               "collaborate</b>: no anchor noise v in [0, 0.1] brings "
                               "linkage under 0.15.")
    import pandas as pd

    draws = pd.read_csv(tmp_path / "o" / "draws.csv")
    at = draws[(draws["stage"] == "calibration") & (draws["value"] == 0.1)]
    median = 1.0 - float(np.median(at["procrustes unlinked"]))
    assert f"still links a median <b>{median:.0%}</b> of your rows" in sentence
    assert "What would help: private-data noise" in sentence and "GaussMix" in sentence
    # the sensitive column is measured in every draw (a ratio: 0 exact .. above 1 worse)
    assert (draws["procrustes sensitive"] >= 0).all()
    assert "Column 30 is sensitive" in text and "no risk measure" in text


# ----------------------------------------------------------------------------- issue 33: a table
# of 9 columns with an imbalanced label (25% positive) at three sites, through the command line

TABLE_ARGS = ["--attack", "procrustes", "--max-linkage", "1", "--target-error", "0.3",
              "--confidence", "0.75", "--range", "0", "0.1", "--draws", "3", "--grid", "2",
              "--grid-draws", "1", "--seed", "0", "--n-anchors", "40"]
COLUMNS = ["age", "income", "educ", "health", "visits", "bmi", "chronic", "mental", "female"]


@pytest.fixture(scope="module")
def table_files(tmp_path_factory):
    import pandas as pd

    root = tmp_path_factory.mktemp("audit-table")
    rng = np.random.RandomState(0)
    X = rng.normal(size=(600, 9))
    logit = -1.2 + 0.5 * X[:, 1] - 0.4 * X[:, 2]
    y = (rng.uniform(size=600) < 1 / (1 + np.exp(-logit))).astype(int)
    table = pd.DataFrame(X, columns=COLUMNS).assign(outcome=y)
    table.to_csv(root / "table.csv", index=False)
    np.save(root / "sites.npy", rng.randint(3, size=600).astype(np.int64))
    return root


def _table_audit(table_files, out, *extra):
    return main(["audit", "--data", str(table_files / "table.csv"), "--labels", "outcome",
                 "--partition", str(table_files / "sites.npy"), *TABLE_ARGS, *extra,
                 "--out", str(out)])


@pytest.fixture(scope="module")
def table_reports(table_files):
    """The same audit with the default weighting (balanced: the label is imbalanced) and
    with it turned off (--model-param class_weight=null), and what each printed."""
    import contextlib
    import io

    runs = {}
    for name, extra in (("balanced", []), ("unweighted", ["--model-param",
                                                           "class_weight=null"])):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert _table_audit(table_files, table_files / name, *extra) == 0
        runs[name] = (table_files / name, out.getvalue() + err.getvalue())
    return runs


def _no_noise_accuracy(folder):
    import pandas as pd

    draws = pd.read_csv(folder / "draws.csv")
    return float(draws[draws["value"] == 0]["balanced_accuracy"].mean())


def test_an_imbalanced_label_gets_balanced_weights_and_the_report_says_so(table_reports):
    balanced, printed = table_reports["balanced"]
    unweighted, printed_off = table_reports["unweighted"]
    # unweighted, the model predicts the commonest label: chance; weighted, it learns
    assert _no_noise_accuracy(unweighted) < 0.55 < _no_noise_accuracy(balanced)
    text = (balanced / "report.html").read_text()
    assert "with balanced class weights: your labels are imbalanced (the smallest class " \
           "holds 24% of the rows" in text
    assert "<code>--model-param class_weight=null</code> trains it unweighted" in text
    assert "learns-nothing" not in text and "learns almost nothing" not in printed
    # the model that learns nothing: a warning in the verdict and one line on stderr
    off = (unweighted / "report.html").read_text()
    warning = off[off.index("id='learns-nothing'"):].split("</p>")[0]
    assert off.index("id='verdict-sentence'") < off.index("id='learns-nothing'") \
        < off.index("<section")
    assert "An audit of a model that learns nothing decides nothing" in warning
    assert "--model-param class_weight=balanced" in warning
    lines = [x for x in printed_off.splitlines() if "learns almost nothing" in x]
    assert len(lines) == 1 and lines[0].startswith("skdc audit: warning: The model learns")
    assert "balanced class weights" not in off
    assert "--model-param class_weight=null" in off.split("Command: <code>")[1]


def test_model_param_is_analyst_fits_parser_and_refused_in_one_line(table_files, tmp_path,
                                                                    capsys):
    argv = ["--data", str(table_files / "table.csv"), "--labels", "outcome", *TABLE_ARGS,
            "--out", str(tmp_path / "o")]
    err = _one_line_error(capsys, [*argv, "--model-param", "oops"], "--model-param",
                          tmp_path)
    assert "takes key=value; got 'oops'" in err
    err = _one_line_error(capsys, [*argv, "--model-param", "colour=1"], "--model-param",
                          tmp_path)
    assert "colour" in err and "model_params" not in err


def test_table_rows_are_a_table_with_the_columns_names_not_pictures(table_reports):
    folder, _ = table_reports["balanced"]
    page = _parse(folder / "report.html")
    assert len(page.images) == 3  # curves, frontier, calibration: no 3 x 3 tiles
    rows = page.tables["reconstructed-rows"]
    assert rows[0] == ["row", "", *COLUMNS, "row error"]
    truth = np.loadtxt(folder.parent / "table.csv", delimiter=",", skiprows=1)[:, :9]
    yours = [r for r in rows[1:] if "yours" in r]
    assert len(yours) == 4 and len(rows) == 9  # each row above its reconstruction
    for r in yours:  # a row of the table, as shown (3 significant digits)
        shown = np.array([float(v) for v in r[2:11]])
        assert np.any(np.all(np.isclose(truth, shown, rtol=6e-3, atol=1e-3), axis=1))


def test_images_are_drawn_only_when_the_user_says_so(table_files, tmp_path, capsys):
    from skdc.audit import audit

    X, y = load_digits(return_X_y=True)
    with pytest.raises(ValueError, match="images=True draws square images, but the rows "
                                         "have 10 columns"):
        audit(X[:60, :10], y[:60], images=True, progress=False)
    err = _one_line_error(capsys, ["--data", str(table_files / "table.csv"), "--labels",
                                   "outcome", "--compare", "local", "--images", "--out",
                                   str(tmp_path / "o")], "--images", tmp_path)
    assert "single audit" in err


def test_the_reproduce_line_and_printed_lines_speak_flags(table_reports):
    from skdc.alignment import v_phase_transition
    from skdc.audit import register_commands
    from skdc.utils._help import ArgumentParser

    folder, printed = table_reports["balanced"]
    text = (folder / "report.html").read_text()
    command = text.split("Command: <code>")[1].split("</code>")[0]
    assert "--partition" in command and "--n-participants" not in command
    assert "--n-anchors 40" in command and "--nonlinear" not in command
    for leak in ("align__v", "gdp__noise", "target_error=", "max_linkage=", "bounds=",
                 "n_anchors=", "model_params=", " unlinked"):
        assert leak not in printed, (leak, printed)
        assert leak not in text.split("<section id=\"attacks\">")[0], leak
    # every flag the audit names in what it prints and in its report is one of its own
    sub = ArgumentParser(prog="skdc").add_subparsers()
    register_commands(sub)
    own = {o for a in sub.choices["audit"]._actions for o in a.option_strings}
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", printed + text))
    assert named <= own, named - own
    # --n-anchors reaches the deployment: v_PT of 3 participants, 9 features, 40 anchor rows
    diag = dict(_csv(folder / "diagnostics.csv")[1:])
    assert_allclose(float(diag["v_PT (phase transition)"]), v_phase_transition(3, 9, 40),
                    rtol=1e-9)
