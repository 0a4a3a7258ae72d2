"""Tests of the command line: ``demo``, ``reproduce`` and ``sweep`` (skdc.experiments._cli)."""

import inspect
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from threadpoolctl import threadpool_limits

from skdc.__main__ import main
from skdc.experiments._sweep_config import _steps_toml
from tests._fuzz import CASES
from tests._help_pages import option_helps

from .conftest import run_cli as _run

try:
    import tomllib
except ImportError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")


@pytest.fixture(autouse=True)
def _one_blas_thread():
    # the tests share two cores with other jobs; nested BLAS threads only add contention
    with threadpool_limits(limits=1):
        yield


@pytest.mark.parametrize("command, words", [
    ("demo", "--draws"), ("reproduce", "mnist-equivalence"), ("sweep", "--example")])
def test_help(command, words, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert words in capsys.readouterr().out


@pytest.mark.parametrize("command", ["demo", "reproduce", "sweep", "bound"])
def test_every_flag_shows_its_default(command, capsys):
    helps = option_helps(_help_page(command, capsys))
    assert len(helps) >= 4
    lacking = [flag for flag, text in helps.items()
               if "(default:" not in text and flag not in ("-h", "--data", "--perp")]
    assert not lacking, lacking


def _help_page(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def test_demo_help_says_how_many_draws_run(capsys):
    from skdc._demo import run_demo_sweeps

    page = _help_page("demo", capsys)
    defaults = inspect.signature(run_demo_sweeps).parameters
    levels, draws = defaults["n_levels"].default, defaults["n_draws"].default
    assert f"{levels} x {draws} = {levels * draws} fits per sweep" in " ".join(page.split())
    helps = option_helps(page)
    assert f"(default: {levels})" in helps["--levels"]
    assert f"(default: {draws})" in helps["--draws"]


_CHECK_IMPORTS = """
import sys
from skdc.__main__ import main
try:
    main({argv!r})
except SystemExit:
    pass
heavy = sorted({{m.split(".")[0] for m in sys.modules}} & {{"sklearn", "scipy", "pandas",
                                                          "torch", "matplotlib"}})
print("HEAVY", ",".join(heavy))
"""


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"], ["reproduce", "--help"],
                                  ["sweep", "--help"], ["bound", "--help"], ["audit", "--help"],
                                  ["anchor", "make", "--help"],
                                  ["participant", "upload", "--help"],
                                  ["analyst", "fit", "--help"]])
def test_help_imports_no_heavy_library(argv):
    # a fresh interpreter: these modules are already loaded in the test process
    out = subprocess.run([sys.executable, "-c", _CHECK_IMPORTS.format(argv=argv)],
                         capture_output=True, text=True, check=True).stdout
    assert "HEAVY \n" in out, out


def test_each_room_adds_the_commands_it_is_listed_with():
    """``COMMAND_ROOMS`` of skdc.__main__ names the sub-commands each room's door adds, in the
    order ``skdc --help`` lists them."""
    import argparse

    from skdc.__main__ import COMMAND_ROOMS, build_parser

    listed = []
    for names, door in COMMAND_ROOMS:
        sub = argparse.ArgumentParser(prog="skdc").add_subparsers()
        door(sub)
        assert tuple(sub.choices) == names
        listed += names
    root = build_parser()
    sub = next(a for a in root._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == listed


@pytest.mark.parametrize("argv, module", [(["bound", "--help"], "skdc.privacy._cli"),
                                          (["demo", "--help"], "skdc._demo"),
                                          (["analyst", "fit", "--help"], "skdc.protocol._cli")])
def test_a_command_imports_its_rooms_door_alone(argv, module):
    code = _CHECK_IMPORTS.format(argv=argv) + (
        "print(sorted(m for m in sys.modules if m.endswith(('._cli', '._demo'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines()[-1] == str([module]), out


@pytest.mark.parametrize("argv", [["demo"], ["reproduce", "kti"]])
def test_participants_is_the_deprecated_spelling_of_n_participants(argv, capsys):
    """``--participants`` parses as ``--n-participants`` (the same arguments, so the same
    run), after one warning line."""
    from skdc.__main__ import build_parser

    new = build_parser(argv[0]).parse_args([*argv, "--n-participants", "4"])
    assert capsys.readouterr().err == ""
    old = build_parser(argv[0]).parse_args([*argv, "--participants", "4"])
    assert vars(old) == vars(new) and new.n_participants == 4
    assert capsys.readouterr().err == (
        f"skdc {argv[0]}: warning: --participants is deprecated and will be removed in skdc "
        "0.3; use --n-participants instead.\n")


def test_lazy_package_keeps_its_names():
    out = subprocess.run([sys.executable, "-c", (
        "import sys, skdc, skdc.alignment as a\n"
        "print('sklearn' in sys.modules, 'GOPPAligner' in dir(a), 'IGDP' in dir(skdc))\n"
        "from skdc import IGDP, Uploads\n"
        "from skdc.alignment import *\n"
        "print(IGDP.__module__, KTIAligner.__name__, sorted(skdc.__all__))")],
        capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0] == "False True True"
    assert out[1] == ("skdc.mechanisms._gdp KTIAligner ['CGDP', 'GDP', 'GOPPAligner', 'IGDP', "
                      "'ReferenceAligner', 'Uploads', '__version__', 'participant_fit_params']")


def test_unknown_attribute_is_an_attribute_error():
    import skdc.metrics

    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        skdc.metrics.nope  # noqa: B018


def test_reproduce_mnist_equivalence(mnist_dir, tmp_path, capsys):
    status, out, _ = _run(["reproduce", "mnist-equivalence", "--data-dir", str(mnist_dir),
                           "--out-dir", str(tmp_path / "eq")], capsys)
    assert status == 0
    disc = float(out.split("analyst matrices: ")[1].split()[0])
    assert disc < 1e-10  # Prop 2.12: the same analyst matrix
    assert "C-GDP" in out and "I-GDP" in out
    table = pd.read_csv(tmp_path / "eq" / "mnist-equivalence.csv")
    assert table["method"].tolist() == ["C-GDP", "AA-I-GDP", "I-GDP"]
    printed = {ln.split()[0]: float(ln.split()[1]) for ln in out.splitlines()
               if ln.split() and ln.split()[0] in ("C-GDP", "AA-I-GDP", "I-GDP")}
    assert table.set_index("method")["balanced_accuracy"].to_dict() == pytest.approx(
        printed, abs=5e-5)
    assert (tmp_path / "eq" / "mnist-equivalence.png").stat().st_size > 0


# the pipeline tables written as `skdc sweep --example` writes its own
_CONFIG = """
[data]
dataset = "digits"
test_size = 0.3

""" + _steps_toml([
    ("gdp", "IGDP", {"n_participants": 3, "random_state": 0}),
    ("align", "GOPPAligner", {"max_iter": 100}),
    ("clf", "sklearn.linear_model.LogisticRegression", {"max_iter": 300}),
]) + """
[sweep]
param = "align__v"
values = [0.0, 0.1]
seed = 0
"""


def test_sweep_example_is_valid_toml(capsys):
    status, out, _ = _run(["sweep", "--example"], capsys)
    assert status == 0
    config = tomllib.loads(out)
    assert config["sweep"]["param"] == "align__v"
    assert [s["class"] for s in config["pipeline"]["steps"]][:2] == ["IGDP", "GOPPAligner"]


def test_sweep_from_toml(tmp_path, capsys):
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(_CONFIG)
    csv, png = tmp_path / "out.csv", tmp_path / "out.png"
    status, out, _ = _run(["sweep", str(cfg), "--csv", str(csv), "--plot", str(png)], capsys)
    assert status == 0
    table = pd.read_csv(csv)
    assert table["value"].tolist() == [0.0, 0.1]
    assert table["balanced_accuracy"].between(0.5, 1).all()
    assert png.stat().st_size > 0
    assert "wrote" in out


def test_sweep_png_has_a_title_and_human_axis_labels(tmp_path, capsys, monkeypatch):
    import matplotlib.figure

    saved = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig",
                        lambda fig, *a, **k: saved.append(fig))
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(_CONFIG)
    status, _, _ = _run(["sweep", str(cfg), "--plot", str(tmp_path / "s.png")], capsys)
    assert status == 0
    (ax,) = saved[0].axes  # no attacks in this config: the utility axis only
    assert saved[0]._suptitle.get_text().startswith("digits: anchor noise v")
    assert ax.get_xlabel() == "anchor noise v" and "align__v" not in ax.get_xlabel()


def test_sweep_prints_draws_sorted_one_format_per_column(tmp_path, capsys):
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(_CONFIG.replace("values = [0.0, 0.1]", "values = [0.1, 0.0, 0.05]"))
    status, out, _ = _run(["sweep", str(cfg)], capsys)
    assert status == 0
    lines = out.splitlines()
    header = lines[0].split()
    rows = [dict(zip(header, ln.split())) for ln in lines[1:4]]
    assert [r["draw"] for r in rows] == ["1", "2", "0"]  # sorted by the swept value
    assert [r["value"] for r in rows] == ["0.0000", "0.0500", "0.1000"]
    for col in ("balanced_accuracy", "seconds"):
        assert all(re.fullmatch(r"\d\.\d{4}", r[col]) for r in rows), [r[col] for r in rows]


def test_sweep_from_yaml_equals_toml(tmp_path, capsys):
    yaml = pytest.importorskip("yaml")
    config = tomllib.loads(_CONFIG)
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(config))
    (tmp_path / "b.toml").write_text(_CONFIG)
    for name in ("a.yaml", "b.toml"):
        assert main(["sweep", str(tmp_path / name), "--csv", str(tmp_path / f"{name}.csv")]) == 0
    a = pd.read_csv(tmp_path / "a.yaml.csv").drop(columns="seconds")
    b = pd.read_csv(tmp_path / "b.toml.csv").drop(columns="seconds")
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("edit, match", [
    (("align__v", "align__vv"), "no parameter 'align__vv'"),
    (("seed = 0", "seed = 0\nrepeats = 3"), r"\[sweep\] has unknown keys \['repeats'\]"),
    (('class = "GOPPAligner"', 'class = "NoSuchAligner"'), "No class 'NoSuchAligner'"),
    (('class = "GOPPAligner"', 'class = "os.system"'), "sklearn, skdc or imblearn"),
    (("values = [0.0, 0.1]", ""), "exactly one of values"),
    (('dataset = "digits"', 'dataset = "mnist"'), "must be 'digits', 'npz', 'csv' or 'parquet'"),
    (("[sweep]", "[sweeps]"), r"unknown sections \['sweeps'\]"),
    (("test_size = 0.3", "test_size = [0.3"), "not valid TOML"),
])
def test_sweep_bad_config_one_line(edit, match, tmp_path, capsys):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(_CONFIG.replace(*edit))
    status, _, err = _run(["sweep", str(cfg)], capsys)
    assert status == 2
    assert err.count("\n") == 1
    assert re.search(match, err), err


def test_sweep_missing_config(tmp_path, capsys):
    status, _, err = _run(["sweep", str(tmp_path / "none.toml")], capsys)
    assert status == 2 and "--example" in err


def test_demo_writes_the_frontier(tmp_path, capsys):
    png = tmp_path / "frontier.png"
    status, out, _ = _run(["demo", "--n-participants", "3", "--levels", "1", "--draws", "2",
                           "--n-jobs", "1", "--out", str(png)], capsys)
    assert status in (0, None)
    assert "I-GDP + reference" in out  # the accuracy table
    # two sweeps of 1 level x 2 draws, one summary row per level
    assert "privacy-utility sweeps: 2 sweeps x 1 noise levels x 2 draws = 4 fits" in out
    rows = [ln.split() for ln in out.splitlines() if ln.startswith(("C-GDP +", "I-GDP + GOPP ("))]
    assert len(rows) == 2
    for row in rows:
        level, acc, rel_err, link = (float(v) for v in row if re.fullmatch(r"\d+\.\d+", v))
        assert level > 0 and 0 <= acc <= 1 and rel_err > 0 and 0 <= link <= 1
    assert png.stat().st_size > 0


@pytest.mark.parametrize("flag", ["--draws", "--levels"])
def test_demo_bad_counts(flag, capsys):
    status, _, err = _run(["demo", flag, "0"], capsys)
    assert status == 2 and f"{flag} must be at least 1; got 0" in err


def test_reproduce_mnist_equivalence_cnn(mnist_dir, tmp_path, capsys):
    pytest.importorskip("skorch")
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the OpenMP pool left by earlier tests otherwise oversubscribes
    try:
        status, out, _ = _run(["reproduce", "mnist-equivalence", "--data-dir", str(mnist_dir),
                               "--model", "cnn", "--out-dir", str(tmp_path)], capsys)
    finally:
        torch.set_num_threads(threads)
    assert status == 0
    assert float(out.split("analyst matrices: ")[1].split()[0]) < 1e-10
    accs = {ln.split()[0]: float(ln.split()[1]) for ln in out.splitlines()
            if ln.split() and ln.split()[0] in ("C-GDP", "AA-I-GDP", "I-GDP")}
    assert set(accs) == {"C-GDP", "AA-I-GDP", "I-GDP"}
    assert all(0 <= a <= 1 for a in accs.values())


def test_reproduce_mnist_sweep(mnist_dir, tmp_path, capsys):
    # seed 9 draws one small anchor noise (v ~ 0.005, far below v_PT(10, 100, 400) ~ 0.1), so
    # GOPP converges in a few iterations and the run takes about a second
    status, out, _ = _run(["reproduce", "mnist-sweep", "--data-dir", str(mnist_dir), "--draws",
                           "1", "--seed", "9", "--n-jobs", "1", "--auditor", "pca",
                           "--out-dir", str(tmp_path)], capsys)
    assert status == 0
    assert "MNIST sweep: 150 train / 60 test rows, 1 draws per noisy protocol" in out
    assert "wrote" in out and "C-GDP (private noise)" in out
    table = pd.read_csv(tmp_path / "mnist-sweep.csv").set_index("method")
    cg, aa = table.loc["C-GDP (private noise)"], table.loc["AA-I-GDP (anchor noise)"]
    assert cg["param"] == "gdp__noise" and aa["param"] == "align__v"
    assert 0 <= aa["value"] <= 0.5 and cg["value"] >= 0
    assert table["balanced_accuracy"].between(0, 1).all()
    assert np.isfinite(cg["known_secret"]) and np.isnan(cg["mp"])
    attacks = aa[["mp", "procrustes", "alignment_map"]].astype(float)
    assert np.isnan(aa["known_secret"]) and np.isfinite(attacks).all()
    # almost noiseless anchors: all three attacks recover the projected rows, so they leave
    # the same error (that of the public 784 -> 100 projection)
    assert np.ptp(attacks) < 0.01 * attacks.mean()
    # the paper's metric beside it: linkage privacy of each attack, and the strongest of each
    linkage = aa[["mp_linkage", "procrustes_linkage", "alignment_map_linkage"]].astype(float)
    assert linkage.between(0, 1).all() and 0 <= cg["known_secret_linkage"] <= 1
    assert aa["strongest_linkage"] == pytest.approx(linkage.min(), rel=0, abs=0)
    assert aa["strongest"] == pytest.approx(attacks.min(), rel=0, abs=0)
    assert (tmp_path / "mnist-sweep.png").stat().st_size > 0


def test_reproduce_mnist_sweep_levels():
    # the grid that --levels gives (the sweep then draws --draws times at each level)
    from skdc.__main__ import build_parser
    from skdc.experiments._reproduce import _noise_values

    args = build_parser("reproduce").parse_args(["reproduce", "mnist-sweep", "--levels", "4"])
    assert_allclose(_noise_values(args.levels, 0.5), [0.125, 0.25, 0.375, 0.5], rtol=1e-12)
    args = build_parser("reproduce").parse_args(["reproduce", "mnist-sweep"])
    paper = _noise_values(args.levels, 0.5)  # the paper's v ~ U[0, 0.5]
    assert paper.support() == (0.0, 0.5)


def test_reproduce_kti_on_digits(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # as on a terminal: a progress bar
    status, out, err = _run(["reproduce", "kti", "--dataset", "digits", "--trials", "2",
                             "--n-participants", "4", "--out-dir", str(tmp_path)], capsys)
    assert status == 0
    # the sweep of Fig. 3 up to --n-participants: K = 2 and 4, two trials, seven methods each
    assert "kti: 100%" in err and "28/28" in err and "setting" in err
    assert "K = 2, 4, 2 trial(s) (paper: 100), n(k)=100" in out
    methods = ("Central", "Local", "MPP", "GEP", "ODC", "LTI", "KTI")
    rows = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines()
            if ln.split() and ln.split()[0] in methods}
    assert list(rows) == list(methods)
    trials = pd.read_csv(tmp_path / "kti-trials.csv")
    summary = pd.read_csv(tmp_path / "kti.csv").set_index(["method", "K"])
    assert len(trials) == 28 and set(trials["trial"]) == {0, 1} and set(trials["K"]) == {2, 4}
    means = trials.groupby(["method", "K"])["accuracy"].mean()
    assert_allclose(summary.loc[means.index, "mean"], means, rtol=1e-12)
    assert (summary["high"] >= summary["low"]).all() and (summary["n_trials"] == 2).all()
    for method, cells in rows.items():
        # "mean +-ci" per K, as in the CSV
        printed = [float(c) for c in cells if not c.startswith("+-")]
        assert_allclose(printed, summary.loc[method, "mean"].to_numpy(), rtol=0, atol=5e-4)
        assert all(0.2 < v <= 1 for v in printed), (method, printed)  # above chance (0.1)
    assert (tmp_path / "kti.png").stat().st_size > 0


@pytest.mark.parametrize("argv, match", [
    (["reproduce", "kti", "--dataset", "digits", "--trials", "0"],
     r"--draws, --trials and --n-participants must be at least 1; got --trials 0"),
    (["reproduce", "kti", "--dataset", "digits", "--n-participants", "0"],
     r"must be at least 1; got --n-participants 0"),
    (["reproduce", "kti", "--dataset", "digits", "--n-participants", "12"],
     r"--n-participants 12 needs 12 x 100 training rows .* has 1200\. Lower --n-participants"),
    (["reproduce", "mnist-sweep", "--draws", "0"], r"must be at least 1; got --draws 0"),
])
def test_reproduce_bad_options_one_line(argv, match, capsys):
    status, _, err = _run(argv, capsys)
    assert status == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.search(match, err), err


def test_reproduce_mnist_sweep_with_the_frozen_cnn_auditor(mnist_dir, tmp_path, capsys,
                                                           monkeypatch):
    """--auditor auto trains the paper's CNN auditor once on the clean training images and
    hands that fitted, frozen auditor to every linkage scorer."""
    pytest.importorskip("skorch")
    torch = pytest.importorskip("torch")
    import skdc.experiments._reproduce as cli
    from skdc.nn import LinkageAuditor

    seen = []
    real = cli._attack_scorers

    def spy(names, auditor):
        seen.append(auditor)
        return real(names, auditor)

    monkeypatch.setattr(cli, "_attack_scorers", spy)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        status, out, _ = _run(["reproduce", "mnist-sweep", "--data-dir", str(mnist_dir),
                               "--draws", "1", "--seed", "9", "--out-dir", str(tmp_path)],
                              capsys)
    finally:
        torch.set_num_threads(threads)
    assert status == 0
    assert "linkage auditor: the paper's CNN (Table 3), trained on the 150 clean" in out
    assert len(seen) == 2 and seen[0] is seen[1] and isinstance(seen[0], LinkageAuditor)
    assert seen[0].n_features_in_ == 784  # it embeds decoded images, not uploads
    assert "headline (paper: at 12.4% exact-source linkage" in out


# -- every output crosses the file boundary: a link is replaced, a path under a file refused --
def _link_to_victim(tmp_path, name):
    """``tmp_path/name``: a link to a file that must survive the command untouched."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    os.symlink(victim, tmp_path / name)
    return victim, tmp_path / name


@pytest.mark.parametrize("flag, name", [("--csv", "out.csv"), ("--plot", "out.png")])
def test_sweep_output_link_is_replaced(flag, name, tmp_path, capsys):
    CASES["output link"] += 1
    cfg = tmp_path / "sweep.toml"
    cfg.write_text(_CONFIG.replace("values = [0.0, 0.1]", "values = [0.0]"))
    victim, link = _link_to_victim(tmp_path, name)
    # an existing entry: refused without --force, replaced (never written through) with it
    status, out, err = _run(["sweep", str(cfg), flag, str(link)], capsys)
    assert status == 2 and out == "" and "Pass --force to replace it" in err
    status, out, _ = _run(["sweep", str(cfg), flag, str(link), "--force"], capsys)
    assert status == 0 and f"wrote {link}" in out
    assert victim.read_bytes() == b"keep me"
    assert not link.is_symlink() and link.stat().st_size > 0


@pytest.mark.parametrize("where", ["--csv", "--plot", "[output] csv", "[output] plot"])
def test_sweep_output_under_a_file_is_one_line_before_the_sweep(where, tmp_path, capsys):
    CASES["output under a file"] += 1
    (tmp_path / "file").write_text("x")
    target = tmp_path / "file" / "out"
    cfg = tmp_path / "sweep.toml"
    argv = ["sweep", str(cfg)]
    if where.startswith("--"):
        cfg.write_text(_CONFIG)
        argv += [where, str(target)]
    else:  # a config's output lies inside its folder
        key = where.split()[1]
        cfg.write_text(_CONFIG.replace("[sweep]", f'[output]\n{key} = "file/out"\n\n[sweep]'))
    status, out, err = _run(argv, capsys)
    assert status == 2 and out == ""  # refused before the sweep ran
    assert err.count("\n") == 1 and f"cannot write {where}" in err and str(target) in err
    assert (tmp_path / "file").read_text() == "x"


def test_reproduce_out_dir_under_a_file_is_one_line(tmp_path, capsys):
    CASES["output under a file"] += 1
    (tmp_path / "file").write_text("x")
    status, out, err = _run(["reproduce", "kti", "--dataset", "digits", "--out-dir",
                             str(tmp_path / "file" / "results")], capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "--out-dir" in err and "a file, not a folder" in err


@pytest.mark.parametrize("name", ["mnist-equivalence.csv", "mnist-equivalence.png"])
def test_reproduce_output_link_is_replaced(name, mnist_dir, tmp_path, capsys):
    CASES["output link"] += 1
    victim, link = _link_to_victim(tmp_path, name)
    status, out, _ = _run(["reproduce", "mnist-equivalence", "--data-dir", str(mnist_dir),
                           "--out-dir", str(tmp_path), "--force"], capsys)
    assert status == 0 and f"wrote {link}" in out
    assert victim.read_bytes() == b"keep me"
    assert not link.is_symlink() and link.stat().st_size > 0


def test_demo_out_under_a_file_is_one_line_before_any_work(tmp_path, capsys):
    CASES["output under a file"] += 1
    (tmp_path / "file").write_text("x")
    status, out, err = _run(["demo", "--out", str(tmp_path / "file" / "frontier.png")], capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "cannot write --out" in err
