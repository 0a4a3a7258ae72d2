"""Issue 31: the experiments' outputs never destroy an input or a file outside their folder.

A sweep config's ``[output]`` files stay inside the config's folder (or ``--out-dir``); the
audit never writes its report over its own ``--data``; an empty list in a config is refused
rather than read as a default.
"""

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
