"""Issue 31, section 2: no deployment command's output destroys an input or a secret.

An output is never one of the command's inputs (by device and inode), never an skdc file of
another kind (told by its bytes), not even with --force; an existing output of its own kind is
replaced only with --force; ``analyst fit --out`` refuses an earlier run's folder unless
--force, and then removes exactly that run's stale maps and says which.
"""

import os
import shutil

import numpy as np
import pytest

from skdc.__main__ import main
from skdc.utils._outputs import written_kind
from tests._fuzz import CASES

from .conftest import P, deploy, run_cli, upload_argv

pytestmark = pytest.mark.xdist_group("protocol-cli")


@pytest.fixture()
def site(tmp_path):
    ups = deploy(tmp_path)
    assert main(["analyst", "fit", *ups, "--out", str(tmp_path / "run")]) == 0
    return tmp_path


def _snapshot(site):
    """Every file of the deployment, by path, with its bytes."""
    return {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}


def _predict(site, *extra):
    return ["participant", "predict", "--secret", site / "secret1.npz", "--map",
            site / "run" / "map_1.npz", "--model", site / "run" / "model.npz", "--data",
            site / "X1.npy", *extra]


def _refused(argv, capsys, site, *words):
    """The command fails in one line naming ``words``, and no file of ``site`` changed."""
    before = _snapshot(site)
    status, out, err = run_cli(argv, capsys)
    assert status == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    assert _snapshot(site) == before
    CASES["output onto an input or a secret"] += 1
    return err


def test_the_kinds_are_told_by_their_bytes(site):
    kinds = {"secret0.npz": "skdc-secret", "anchor.npy": "skdc-anchor",
             "uploads/upload_0.npz": "skdc-upload", "run/map_0.npz": "skdc-map",
             "run/model.npz": "skdc-model", "X0.npy": None, "run/summary.json": None}
    for name, kind in kinds.items():
        assert written_kind(site / name) == kind, name
    # a renamed secret is still a secret; a .npz of numpy's is nothing of skdc's
    shutil.copy(site / "secret0.npz", site / "renamed.npy")
    np.savez(site / "plain.npz", a=np.ones(3))
    assert written_kind(site / "renamed.npy") == "skdc-secret"
    assert written_kind(site / "plain.npz") is None
    # the anchor is still a plain .npy to numpy
    assert np.load(site / "anchor.npy").shape[1] == 4


@pytest.mark.parametrize("flag", ["--out", "--transform-out"])
@pytest.mark.parametrize("target, words", [
    ("secret1.npz", ["one of this command's inputs (--secret)"]),
    ("run/map_1.npz", ["one of this command's inputs (--map)"]),
    ("run/model.npz", ["one of this command's inputs (--model)"]),
    ("X1.npy", ["one of this command's inputs (--data)"]),
    ("secret0.npz", ["participant's secret", "skdc-secret"]),
    ("anchor.npy", ["shared anchor", "skdc-anchor"]),
    ("uploads/upload_2.npz", ["participant's upload", "skdc-upload"]),
    ("run/map_0.npz", ["alignment map", "skdc-map"]),
])
@pytest.mark.parametrize("force", [False, True])
def test_predict_never_writes_onto_an_input_or_another_kind(site, capsys, flag, target, words,
                                                            force):
    argv = _predict(site, flag, site / target) + (["--force"] if force else [])
    err = _refused(argv, capsys, site, f"{site / target}: {flag}", *words)
    assert "even with --force" in err


def test_predict_replaces_its_own_earlier_output_only_with_force(site, capsys):
    assert run_cli(_predict(site, "--out", site / "p.npy"), capsys)[0] == 0
    first = (site / "p.npy").read_bytes()
    err = _refused(_predict(site, "--out", site / "p.npy"), capsys, site,
                   "p.npy: --out already exists", "Pass --force")
    assert "even with" not in err
    assert run_cli(_predict(site, "--out", site / "p.npy", "--force"), capsys)[0] == 0
    assert (site / "p.npy").read_bytes() == first


def test_a_link_to_an_input_is_refused(site, capsys):
    os.symlink(site / "X1.npy", site / "link.npy")
    _refused(_predict(site, "--out", site / "link.npy", "--force"), capsys, site,
             "one of this command's inputs (--data")
    # a hard link is the same file too
    os.link(site / "secret1.npz", site / "hard.npz")
    _refused(_predict(site, "--transform-out", site / "hard.npz", "--force"), capsys, site,
             "one of this command's inputs (--secret")


@pytest.mark.parametrize("force", [False, True])
def test_anchor_make_never_replaces_a_secret(site, capsys, force):
    argv = ["anchor", "make", "--n-features", 4, "--out", site / "secret0.npz"]
    _refused(argv + (["--force"] if force else []), capsys, site,
             "secret0.npz: --out would replace a participant's secret", "even with --force")


def test_anchor_make_replaces_an_anchor_only_with_force(site, capsys):
    argv = ["anchor", "make", "--n-features", 4, "--out", site / "anchor.npy"]
    _refused(argv, capsys, site, "anchor.npy: --out already exists", "Pass --force")
    assert run_cli(argv + ["--force"], capsys)[0] == 0
    assert written_kind(site / "anchor.npy") == "skdc-anchor"


@pytest.mark.parametrize("flag, target, words", [
    ("--out", "X0.npy", "one of this command's inputs (--data)"),
    ("--out", "y0.npy", "one of this command's inputs (--labels)"),
    ("--secret-out", "anchor.npy", "one of this command's inputs (--anchor)"),
    ("--secret-out", "X0.npy", "one of this command's inputs (--data)"),
    ("--out", "secret1.npz", "would replace a participant's secret"),
    ("--secret-out", "uploads/upload_1.npz", "would replace a participant's upload"),
    ("--out", "run/model.npz", "would replace an analyst's model"),
])
def test_upload_force_never_writes_onto_an_input_or_another_kind(site, capsys, flag, target,
                                                                 words):
    argv = upload_argv(site, 0, **{flag: site / target}) + ["--force"]
    _refused(argv, capsys, site, f"{site / target}: {flag}", words, "even with --force")


def test_analyst_fit_refuses_an_earlier_run_unless_force_then_removes_its_stale_maps(
        site, capsys):
    ups = [site / "uploads" / f"upload_{i}.npz" for i in range(P)]
    run = site / "run"
    (run / "notes.txt").write_text("mine")
    _refused(["analyst", "fit", *ups[:2], "--out", run], capsys, site,
             f"{run}: --out holds an earlier run's files (map_0.npz, map_1.npz, map_2.npz, "
             "model.npz)", "Pass --force")
    status, out, err = run_cli(["analyst", "fit", *ups[:2], "--out", run, "--force"], capsys)
    assert status == 0, err
    assert f"removed map_2.npz of an earlier run in {run}" in out
    assert sorted(os.listdir(run)) == ["map_0.npz", "map_1.npz", "model.npz", "notes.txt",
                                       "summary.json"]
    assert (run / "notes.txt").read_text() == "mine"  # not skdc's: left alone
    CASES["output onto an input or a secret"] += 1


def test_analyst_fit_never_writes_onto_an_upload_or_another_kind(site, capsys):
    ups = [site / "uploads" / f"upload_{i}.npz" for i in range(P)]
    out = site / "fresh"
    out.mkdir()
    shutil.copy(site / "secret0.npz", out / "model.npz")
    _refused(["analyst", "fit", *ups, "--out", out, "--force"], capsys, site,
             "model.npz: --out's model.npz would replace a participant's secret")
    # an upload the analyst reads, named like a map, inside --out
    os.unlink(out / "model.npz")
    shutil.copy(ups[0], out / "map_0.npz")
    _refused(["analyst", "fit", out / "map_0.npz", *ups[1:], "--out", out, "--force"], capsys,
             site, "map_0.npz: --out's map_0.npz is one of this command's inputs")


@pytest.mark.parametrize("umask", [0o000, 0o022])
def test_the_model_folder_is_owner_only_whatever_the_umask(site, umask):
    ups = [str(site / "uploads" / f"upload_{i}.npz") for i in range(P)]
    old = os.umask(umask)
    try:
        assert main(["analyst", "fit", *ups, "--out", str(site / "deep" / "model")]) == 0
    finally:
        os.umask(old)
    assert os.stat(site / "deep" / "model").st_mode & 0o777 == 0o700
    assert os.stat(site / "deep").st_mode & 0o777 == 0o777 & ~umask  # parents as usual
    # the same from Python: Analyst.export
    from skdc.protocol import Analyst

    old = os.umask(umask)
    try:
        Analyst().fit(ups).export(site / "deep" / "exported")
    finally:
        os.umask(old)
    assert os.stat(site / "deep" / "exported").st_mode & 0o777 == 0o700
