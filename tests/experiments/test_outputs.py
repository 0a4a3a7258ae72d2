"""Issue 31: the experiments' outputs never destroy an input or a file outside their folder.

A sweep config's ``[output]`` files stay inside the config's folder (or ``--out-dir``); the
audit never writes its report over its own ``--data``; an empty list in a config is refused
rather than read as a default. No command replaces an existing output without ``--force``
(the sweep's table and figure, a reproduction's files); the audit resumes and replaces its own
report, but refuses an ``--out`` holding another audit's, which ``--force`` clears.
"""

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from skdc.__main__ import main
from skdc.experiments._sweep_config import _steps_toml
from tests._fuzz import CASES

_CONFIG = """
[data]
dataset = "npz"
path = "data.npz"
test_size = 0.3

""" + _steps_toml([
    ("gdp", "IGDP", {"n_participants": 2, "random_state": 0}),
    ("align", "GOPPAligner", {"max_iter": 50}),
    ("clf", "sklearn.linear_model.LogisticRegression", {"max_iter": 200}),
]) + """
[sweep]
param = "align__v"
values = [0.0]
n_draws = 1
seed = 0
"""


def _run(argv, capsys):
    status = main([str(a) for a in argv])
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture()
def folder(tmp_path):
    rng = np.random.RandomState(0)
    X = rng.randn(60, 4)
    np.savez(tmp_path / "data.npz", X=X, y=(X[:, 0] > 0).astype(int))
    return tmp_path


def _config(folder, output):
    cfg = folder / "sweep.toml"
    cfg.write_text(_CONFIG + "\n[output]\n" + output + "\n")
    return cfg


def _refused_before_the_sweep(argv, capsys, *words):
    status, out, err = _run(argv, capsys)
    assert status == 2 and out == "", (out, err)  # refused before the sweep ran
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    CASES["config output outside its folder"] += 1


@pytest.mark.parametrize("key", ["csv", "plot"])
def test_a_config_output_never_leaves_its_folder(folder, tmp_path_factory, capsys, key):
    victim = tmp_path_factory.mktemp("elsewhere") / "victim.txt"
    victim.write_text("keep me")
    cfg = _config(folder, f'{key} = "{victim}"')
    _refused_before_the_sweep(["sweep", cfg], capsys, f"[output] {key} is the absolute path "
                              f"{victim}", "stay inside the config's folder", f"--{key}")
    rel = os.path.relpath(victim, folder)
    cfg = _config(folder, f'{key} = "{rel}"')
    _refused_before_the_sweep(["sweep", cfg], capsys, "climbs out of the config's folder")
    # a link inside the folder that leads out of it
    os.symlink(victim.parent, folder / "out")
    cfg = _config(folder, f'{key} = "out/victim.txt"')
    _refused_before_the_sweep(["sweep", cfg], capsys, "leads out of the config's folder")
    assert victim.read_text() == "keep me"


def test_a_config_output_never_replaces_its_data_or_config(folder, capsys):
    before = (folder / "data.npz").read_bytes()
    _refused_before_the_sweep(["sweep", _config(folder, 'csv = "data.npz"')], capsys,
                              "data.npz: [output] csv is one of this command's inputs")
    _refused_before_the_sweep(["sweep", _config(folder, 'csv = "sweep.toml"')], capsys,
                              "sweep.toml: [output] csv is one of this command's inputs "
                              "(the config)")
    assert (folder / "data.npz").read_bytes() == before


def test_a_config_output_never_replaces_a_secret(folder, capsys):
    shutil.copy(_a_secret(folder), folder / "secret_0.npz")
    capsys.readouterr()
    before = (folder / "secret_0.npz").read_bytes()
    _refused_before_the_sweep(["sweep", _config(folder, 'csv = "secret_0.npz"')], capsys,
                              "would replace a participant's secret")
    assert (folder / "secret_0.npz").read_bytes() == before


def _a_secret(folder):
    site = folder / "site"
    site.mkdir()
    rng = np.random.RandomState(1)
    np.save(site / "X.npy", rng.randn(10, 4))
    assert main(["participant", "upload", "--id", "0", "--data", str(site / "X.npy"),
                 "--secret-out", str(site / "s.npz"), "--out", str(site / "u.npz")]) == 0
    return site / "s.npz"


def test_out_dir_holds_a_configs_outputs(folder, tmp_path_factory, capsys):
    cfg = _config(folder, 'csv = "sweep.csv"')
    out_dir = tmp_path_factory.mktemp("results") / "new"
    status, out, err = _run(["sweep", cfg, "--out-dir", out_dir], capsys)
    assert status == 0, err
    assert (out_dir / "sweep.csv").is_file() and not (folder / "sweep.csv").exists()
    # without --out-dir: beside the config, whatever the working directory
    status, out, err = _run(["sweep", cfg], capsys)
    assert status == 0, err
    assert f"wrote {folder / 'sweep.csv'}" in out


@pytest.mark.parametrize("key", ["attack", "compare", "epsilon"])
def test_an_empty_list_in_an_audit_config_is_refused(tmp_path, capsys, key):
    cfg = tmp_path / "audit.toml"
    cfg.write_text(f'[audit]\ndata = "X.npy"\nlabels = "y.npy"\n{key} = []\n')
    status, out, err = _run(["audit", "--config", cfg], capsys)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert f"gives audit.{key} an empty list" in err and "drop the key" in err
    CASES["empty list in a config"] += 1


def test_an_empty_attack_list_in_a_sweep_config_is_refused(folder, capsys):
    cfg = folder / "sweep.toml"
    cfg.write_text(_CONFIG.replace("seed = 0", "seed = 0\nattacks = []"))
    status, out, err = _run(["sweep", cfg], capsys)
    assert status == 2 and out == "" and "gives sweep.attacks an empty list" in err, err
    CASES["empty list in a config"] += 1


def test_the_audit_never_writes_its_report_over_its_data(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    rng = np.random.RandomState(0)
    X = rng.randn(60, 3)
    table = pd.DataFrame(X, columns=["a", "b", "c"]).assign(label=(X[:, 0] > 0).astype(int))
    table.to_csv(out / "draws.csv", index=False)
    before = (out / "draws.csv").read_bytes()
    status, stdout, err = _run(["audit", "--data", out / "draws.csv", "--labels", "label",
                                "--compare", "igdp", "--out", out], capsys)
    assert status == 2 and stdout == "" and err.count("\n") == 1, err
    assert f"{out / 'draws.csv'}: --out's draws.csv is one of this command's inputs " \
           "(--data)" in err
    assert (out / "draws.csv").read_bytes() == before
    CASES["output onto an input or a secret"] += 1


# ----------------------------------------------------------------------------- --force
def _refused_existing(argv, capsys, path, flag="--force"):
    """``argv`` is refused before any work, in one line naming ``path`` and ``flag``."""
    status, out, err = _run(argv, capsys)
    assert status == 2 and out == "", (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{path}: " in err and "already exists" in err and f"Pass {flag}" in err, err
    CASES["existing output without --force"] += 1
    return err


@pytest.mark.parametrize("where", ["--csv", "--plot", "[output] csv", "[output] plot"])
def test_the_sweep_replaces_an_existing_output_only_with_force(folder, capsys, where):
    key = where.split("-")[-1].split()[-1]
    name = f"earlier.{'csv' if key == 'csv' else 'png'}"
    earlier = folder / name
    earlier.write_text("an earlier run's output")
    if where.startswith("--"):
        cfg = _config(folder, "")
        argv = ["sweep", cfg, where, earlier]
    else:
        cfg = _config(folder, f'{key} = "{name}"')
        argv = ["sweep", cfg]
    err = _refused_existing(argv, capsys, earlier)
    assert where in err
    assert earlier.read_text() == "an earlier run's output"
    status, out, err = _run([*argv, "--force"], capsys)
    assert status == 0 and f"wrote {earlier}" in out, err
    assert earlier.read_bytes() != b"an earlier run's output"


@pytest.mark.parametrize("name", ["kti.csv", "kti-trials.csv", "kti.png"])
def test_reproduce_refuses_its_earlier_outputs_before_any_work(tmp_path, capsys, name):
    (tmp_path / name).write_text("an earlier run's table")
    err = _refused_existing(["reproduce", "kti", "--dataset", "digits", "--trials", "1",
                             "--out-dir", tmp_path], capsys, tmp_path / name)
    assert f"--out-dir's {name}" in err
    assert (tmp_path / name).read_text() == "an earlier run's table"
    # a file of another experiment is no output of this one
    (tmp_path / name).rename(tmp_path / name.replace("kti", "mnist-sweep"))
    status, _, err = _run(["reproduce", "kti", "--dataset", "digits", "--trials", "0",
                           "--out-dir", tmp_path], capsys)
    assert status == 2 and "--trials" in err  # past the output check, refused on its counts


# the audit's smallest run: 150 digits, three parties, one attack, few draws
_AUDIT = ["--n-participants", "3", "--attack", "procrustes", "--target-error", "0.3",
          "--max-linkage", "1", "--confidence", "0.75", "--range", "0", "0.1", "--draws", "3",
          "--grid", "2", "--grid-draws", "1", "--model", "ridge", "--seed", "0"]


@pytest.fixture()
def audit_data(tmp_path):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    np.save(tmp_path / "X.npy", X[:150] / 16.0)
    np.save(tmp_path / "y.npy", y[:150])
    return ["audit", "--data", tmp_path / "X.npy", "--labels", tmp_path / "y.npy"]


def test_the_audit_resumes_its_own_report_and_replaces_another_only_with_force(
        audit_data, tmp_path, capsys):
    out = tmp_path / "o"
    argv = [*audit_data, *_AUDIT, "--out", out]
    status, _, err = _run(argv, capsys)
    assert status == 0, err
    record = json.loads((out / "skdc-run.json").read_text())
    assert "report.html" in record["files"] and record["run"]["seed"] == 0
    # the same audit again: resumed from its checkpoints, its report replaced, no --force
    status, _, err = _run(argv, capsys)
    assert status == 0 and "resumed from" in err, err
    before = {n: (out / n).read_bytes() for n in record["files"]}
    # another audit (another target; the draws fit) is refused before any work ...
    other = [*audit_data, *_AUDIT, "--max-linkage", "0.9", "--out", out]
    status, stdout, err = _run(other, capsys)
    assert status == 2 and stdout == "" and err.count("\n") == 1, err
    assert f"{out}: --out holds another run's files" in err and "differs in max_linkage" in err
    assert "report.html" in err and "Pass --force" in err
    # ... and so is a comparison, whatever the folder's files
    status, _, err = _run([*audit_data, "--compare", "local", "--out", out], capsys)
    assert status == 2 and "differs in" in err and "compare" in err, err
    assert {n: (out / n).read_bytes() for n in record["files"]} == before
    CASES["existing output without --force"] += 2
    # with --force exactly that audit's files are removed (and named), the user's kept
    (out / "notes.txt").write_text("mine")
    status, _, err = _run([*other, "--force"], capsys)
    assert status == 0, err
    removed = err.split("removed another run's files from ")[1].splitlines()[0]
    assert removed == f"{out}: " + ", ".join(sorted(record["files"]))
    assert (out / "notes.txt").read_text() == "mine"
    assert json.loads((out / "skdc-run.json").read_text())["run"]["max_linkage"] == 0.9


def test_the_audit_refuses_report_files_no_record_describes(audit_data, tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "report.html").write_text("<p>my own report</p>")
    status, stdout, err = _run([*audit_data, *_AUDIT, "--out", out], capsys)
    assert status == 2 and stdout == "" and err.count("\n") == 1, err
    assert "no skdc skdc-run.json there says which run wrote them): report.html" in err
    assert "Pass --force" in err
    assert (out / "report.html").read_text() == "<p>my own report</p>"
    assert not (out / "checkpoint").exists()  # refused before any work
    CASES["existing output without --force"] += 1


def test_force_never_clears_an_input(tmp_path, capsys):
    """A recorded run's file that is now the audit's --data is refused, even with --force."""
    out = tmp_path / "o"
    out.mkdir()
    rng = np.random.RandomState(0)
    X = rng.randn(90, 4)
    table = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(label=(X[:, 0] > 0) * 1)
    table.to_csv(out / "attacks.csv", index=False)
    before = (out / "attacks.csv").read_bytes()  # a recorded name, holding the data
    (out / "skdc-run.json").write_text(json.dumps(
        {"format": "skdc-run", "run": {"seed": 5}, "files": ["attacks.csv"]}))
    argv = ["audit", "--data", out / "attacks.csv", "--labels", "label", *_AUDIT, "--out", out,
            "--force"]
    status, stdout, err = _run(argv, capsys)
    assert status == 2 and stdout == "" and err.count("\n") == 1, err
    assert "--out's attacks.csv is one of this command's inputs (--data)" in err
    assert (out / "attacks.csv").read_bytes() == before
    CASES["output onto an input or a secret"] += 1
