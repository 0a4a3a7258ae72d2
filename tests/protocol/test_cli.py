"""Three participants and the analyst as separate processes, through ``python -m skdc``."""

import os
import subprocess
import sys

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_array_equal
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from skdc.__main__ import main
from skdc.alignment import GOPPAligner
from skdc.mechanisms import IGDP

from .conftest import deploy, run_cli, upload_argv

# the processes of cli_run take about 15 s: the module's tests share one pytest-xdist worker,
# so the run is made once
pytestmark = pytest.mark.xdist_group("protocol-cli")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
P, D = 3, 4
S0, S, V = 11, 22, 0.05


def _skdc(*args, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-m", "skdc", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait(procs):
    out = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=120)
        out.append((proc.returncode, stdout, stderr))
    return out


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli")
    rng = np.random.RandomState(0)
    X = rng.rand(P * 25, D)
    y = rng.randint(2, size=P * 25)
    ids = np.repeat(np.arange(P), 25)
    X_test = rng.rand(P * 6, D)
    ids_test = np.repeat(np.arange(P), 6)
    for i in range(P):
        site = tmp / f"site{i}"
        site.mkdir()
        np.save(site / "X.npy", X[ids == i])
        np.save(site / "y.npy", y[ids == i])
        np.save(site / "X_test.npy", X_test[ids_test == i])
    assert main(["anchor", "make", "--n-features", str(D), "--seed", "5",
                 "--out", str(tmp / "anchor.npy")]) == 0
    (tmp / "uploads").mkdir()
    uploads = _wait([
        _skdc("participant", "upload", "--id", i, "--n-participants", P, "--data", "X.npy",
              "--labels", "y.npy", "--anchor", "../anchor.npy", "--anchor-noise", V,
              "--seed", S0, "--noise-seed", S, "--secret-out", "secret.npz",
              "--out", f"../uploads/upload_{i}.npz", cwd=tmp / f"site{i}")
        for i in range(P)
    ])
    assert all(rc == 0 for rc, _, _ in uploads), uploads
    ((rc, out, err),) = _wait([_skdc(
        "analyst", "fit", *sorted(os.listdir(tmp / "uploads")), "--aligner", "gopp",
        "--model", "logistic", "--model-param", "max_iter=500", "--out", "../model",
        cwd=tmp / "uploads")])
    assert rc == 0, err
    predictions = _wait([
        _skdc("participant", "predict", "--secret", "secret.npz", "--map",
              f"../model/map_{i}.npz", "--model", "../model/model.npz", "--data",
              "X_test.npy", "--out", "pred.npy", "--transform-out", "Z.npy",
              cwd=tmp / f"site{i}")
        for i in range(P)
    ])
    assert all(rc == 0 for rc, _, _ in predictions), predictions
    return dict(tmp=tmp, X=X, y=y, ids=ids, X_test=X_test, ids_test=ids_test, analyst_out=out)


def test_cli_matches_in_memory_pipeline_exactly(cli_run):
    tmp = cli_run["tmp"]
    A = np.load(tmp / "anchor.npy")
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("gdp", IGDP(P, anchor=A, random_state=S0, noise_random_state=S)),
                         ("align", GOPPAligner(V)),
                         ("clf", LogisticRegression(max_iter=500))])
        pipe.fit(cli_run["X"], cli_run["y"], participant=cli_run["ids"])
        for i in range(P):
            rows = cli_run["ids_test"] == i
            X_i, ids_i = cli_run["X_test"][rows], cli_run["ids_test"][rows]
            assert_array_equal(np.load(tmp / f"site{i}" / "Z.npy"),
                               pipe[:-1].transform(X_i, participant=ids_i))
            assert_array_equal(np.load(tmp / f"site{i}" / "pred.npy"),
                               pipe.predict(X_i, participant=ids_i))


def test_cli_files_and_permissions(cli_run):
    tmp = cli_run["tmp"]
    assert sorted(os.listdir(tmp / "model")) == [
        "map_0.npz", "map_1.npz", "map_2.npz", "model.npz", "summary.json"]
    for i in range(P):
        assert os.stat(tmp / f"site{i}" / "secret.npz").st_mode & 0o077 == 0
    assert "3 participants aligned" in cli_run["analyst_out"]


def test_cli_errors_are_one_line(cli_run, capsys, monkeypatch):
    monkeypatch.chdir(cli_run["tmp"])
    calls = [
        (["analyst", "fit", "uploads/upload_0.npz", "uploads/upload_0.npz", "--out", "m2"],
         "already used by"),
        (["participant", "predict", "--secret", "site1/secret.npz", "--map", "model/map_0.npz",
          "--model", "model/model.npz", "--data", "site1/X.npy", "--out", "p.npy"],
         "map is participant 0's; this is participant 1"),
        (["participant", "upload", "--id", "0", "--data", "missing.npy", "--secret-out",
          "s.npz", "--out", "u.npz"], "missing.npy: no such file (--data)"),
        (["participant", "predict", "--secret", "site1/X.npy", "--map", "model/map_1.npz",
          "--model", "model/model.npz", "--data", "site1/X.npy", "--out", "p.npy"],
         "--secret site1/X.npy: not a readable skdc .npz"),
        (["analyst", "fit", "uploads/upload_0.npz", "--model-param", "C", "--out", "m3"],
         "--model-param takes key=value"),
        (["anchor", "make", "--n-features", "3", "--n-anchors", "3", "--out", "a.npy"],
         "needs n_anchors >= n_features + 1 = 4"),
    ]
    for argv, match in calls:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert match in err and err.count("\n") == 1, err


def test_anchor_noise_seed_is_the_deprecated_spelling_of_noise_seed(tmp_path, capsys):
    """``--anchor-noise-seed`` (it seeds the private-data noise too) uploads what
    ``--noise-seed`` uploads, bit for bit, after one warning line."""
    deploy(tmp_path)
    uploads, warned = {}, {}
    for flag in ("--noise-seed", "--anchor-noise-seed"):
        out = tmp_path / f"upload{flag}.npz"
        status, _, err = run_cli(upload_argv(tmp_path, 0, **{
            "--seed": 5, flag: 7, "--noise": 0.1, "--out": out,
            "--secret-out": tmp_path / f"secret{flag}.npz"}), capsys)
        assert status == 0, err
        uploads[flag] = np.load(out, allow_pickle=False)
        warned[flag] = [ln for ln in err.splitlines() if "deprecated" in ln]
    assert warned == {"--noise-seed": [], "--anchor-noise-seed": [
        "skdc participant upload: warning: --anchor-noise-seed is deprecated and will be removed "
        "in skdc 0.3; use --noise-seed instead."]}
    new, old = uploads["--noise-seed"], uploads["--anchor-noise-seed"]
    assert sorted(new.files) == sorted(old.files)
    for name in new.files:
        assert_array_equal(new[name], old[name])
