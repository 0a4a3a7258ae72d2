"""What the deployment writes: pairs that belong together, never through a link, stated modes."""

import os
import subprocess
import sys

import numpy as np
import pytest

import skdc.protocol._secret as _secret
from skdc.__main__ import main
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import Participant, UploadError
from skdc.protocol._container import Container
from tests._fuzz import CASES

from .conftest import D, P, deploy, run_cli, upload_argv

# the racing processes share the CLI tests' pytest-xdist worker
pytestmark = pytest.mark.xdist_group("protocol-cli")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("outputs")
    ups = deploy(tmp)
    assert main(["analyst", "fit", *ups, "--out", str(tmp / "run")]) == 0
    return tmp


def _pair_matches(secret, upload):
    """The surviving secret records the digest of the surviving upload."""
    with Container(upload, "skdc-upload") as c:
        c.read()
    return Participant.load_secret(secret).upload_digest_ == c.digest


# -- 1. racing uploads ------------------------------------------------------------------------
def test_racing_uploads_leave_a_pair_that_belongs_together(site, tmp_path):
    n = 3
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    procs = {}
    for mode in ("exclusive", "force"):
        pair = (tmp_path / f"secret_{mode}.npz", tmp_path / f"upload_{mode}.npz")
        for k in range(n):  # different seeds: each run makes a different pair
            argv = upload_argv(site, 1, **{"--secret-out": pair[0], "--out": pair[1],
                                           "--seed": 100 + k})
            argv += ["--force"] if mode == "force" else []
            procs[mode, k] = subprocess.Popen(
                [sys.executable, "-m", "skdc", *map(str, argv)], env=env, text=True,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    done = {}
    for key, proc in procs.items():
        err = proc.communicate(timeout=120)[1]
        done[key] = (proc.returncode, err)
    ok = [k for k in range(n) if done["exclusive", k][0] == 0]
    assert len(ok) == 1, done  # one run wrote the pair; the others refused
    for k in range(n):
        if k not in ok:
            status, err = done["exclusive", k]
            assert status == 2 and err.count("\n") == 1 and "already exists" in err, err
    assert all(done["force", k][0] == 0 for k in range(n)), done
    for mode in ("exclusive", "force"):
        assert _pair_matches(tmp_path / f"secret_{mode}.npz", tmp_path / f"upload_{mode}.npz")
    assert sorted(os.listdir(tmp_path)) == sorted(
        f"{kind}_{mode}.npz" for kind in ("secret", "upload") for mode in ("exclusive", "force"))
    CASES["racing upload"] += 2 * n


def test_a_secret_whose_upload_was_taken_meanwhile_is_removed(site, tmp_path, monkeypatch):
    rng = np.random.RandomState(0)
    me = Participant(0, IGDP(P, random_state=1), v=0.05)
    up = me.upload(rng.rand(10, D), anchor=orthonormal_anchor(16, D, random_state=0))
    upload, secret = tmp_path / "u.npz", tmp_path / "s.npz"
    write_members = _secret.write_members

    def intruder(fh, kind, *args, **kwargs):
        if kind == "skdc-secret":  # another writer claims the upload's name meanwhile
            upload.write_bytes(b"theirs")
        return write_members(fh, kind, *args, **kwargs)

    monkeypatch.setattr(_secret, "write_members", intruder)
    with pytest.raises(UploadError, match="u.npz: the upload already exists"):
        me.save(upload, secret, up)
    # the upload is the intruder's, and no secret of ours is left without its upload
    assert upload.read_bytes() == b"theirs" and not secret.exists()
    assert sorted(os.listdir(tmp_path)) == ["u.npz"]
    CASES["racing upload"] += 1
    monkeypatch.setattr(_secret, "write_members", write_members)
    me.save(tmp_path / "u2.npz", tmp_path / "s2.npz", up)
    assert _pair_matches(tmp_path / "s2.npz", tmp_path / "u2.npz")
    with pytest.raises(UploadError, match="s2.npz: the secret already exists"):
        me.save(tmp_path / "u3.npz", tmp_path / "s2.npz", up)
    assert not (tmp_path / "u3.npz").exists()


# -- 2. no output follows a link -----------------------------------------------------------------
def _link(tmp_path, name):
    victim = tmp_path / f"victim_{name}"
    victim.write_bytes(b"keep me")
    os.symlink(victim, tmp_path / name)
    return tmp_path / name, victim


def _predict_argv(site, out_flag, out):
    return ["participant", "predict", "--secret", site / "secret1.npz", "--map",
            site / "run" / "map_1.npz", "--model", site / "run" / "model.npz",
            "--data", site / "X_test.npy", out_flag, out]


@pytest.mark.parametrize("command", ["predict --out", "predict --transform-out",
                                     "upload --force", "anchor make", "analyst map",
                                     "analyst summary"])
def test_no_output_is_written_through_a_link(site, tmp_path, capsys, command):
    name = {"analyst map": "map_0.npz", "analyst summary": "summary.json",
            "predict --out": "o.npy"}.get(command, "o.npz")  # predictions by their suffix
    link, victim = _link(tmp_path, name)
    if command.startswith("predict"):
        argv = _predict_argv(site, command.split()[1], link)
    elif command == "upload --force":
        argv = upload_argv(site, 1, **{"--secret-out": tmp_path / "s.npz", "--out": link,
                                       "--seed": 3})
    elif command == "anchor make":
        argv = ["anchor", "make", "--n-features", D, "--out", link]
    else:
        argv = ["analyst", "fit", *[site / "uploads" / f"upload_{i}.npz" for i in range(P)],
                "--out", tmp_path]
    # a link at an output is an existing entry: replaced (never followed) only with --force
    status, _, err = run_cli(argv + ["--force"], capsys)
    assert status == 0, err
    assert victim.read_bytes() == b"keep me"  # the link's target is untouched
    assert not link.is_symlink() and link.is_file()  # the link was replaced by the output
    CASES["output link"] += 1


def test_an_exclusive_output_refuses_a_link_even_dangling(site, tmp_path, capsys):
    os.symlink(tmp_path / "nowhere", tmp_path / "u.npz")
    status, _, err = run_cli(upload_argv(site, 1, **{"--secret-out": tmp_path / "s.npz",
                                                     "--out": tmp_path / "u.npz"}), capsys)
    assert status == 2 and err.count("\n") == 1, err
    assert "u.npz: --out already exists (as a link)" in err and "--force" in err
    assert not (tmp_path / "s.npz").exists() and not (tmp_path / "nowhere").exists()
    CASES["output link"] += 1


# -- 5. modes ------------------------------------------------------------------------------------
@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077])
def test_secret_files_are_owner_only_whatever_the_umask(site, tmp_path, umask):
    old = os.umask(umask)
    try:
        assert main([str(a) for a in ["anchor", "make", "--n-features", D, "--out",
                                      tmp_path / "anchor.npy"]]) == 0
        upload = upload_argv(site, 0, **{"--secret-out": tmp_path / "s.npz",
                                         "--out": tmp_path / "u.npz", "--seed": 5})
        assert main([str(a) for a in upload]) == 0
        ups = [tmp_path / "u.npz"] + [site / "uploads" / f"upload_{i}.npz" for i in (1, 2)]
        assert main([str(a) for a in ["analyst", "fit", *ups, "--out", tmp_path / "m"]]) == 0
        argv = _predict_argv(site, "--out", tmp_path / "p.npy")
        argv[3], argv[5] = tmp_path / "s.npz", tmp_path / "m" / "map_0.npz"
        argv[7] = tmp_path / "m" / "model.npz"
        assert main([str(a) for a in argv + ["--transform-out", tmp_path / "Z.npy"]]) == 0
    finally:
        os.umask(old)

    def mode(*parts):
        return os.stat(tmp_path.joinpath(*parts)).st_mode & 0o777

    for secret in (("s.npz",), ("anchor.npy",), ("m", "map_0.npz"), ("m", "map_1.npz"),
                   ("m", "model.npz"), ("Z.npy",)):
        assert mode(*secret) == 0o600, (secret, oct(mode(*secret)))
    for shared in (("u.npz",), ("p.npy",), ("m", "summary.json")):
        assert mode(*shared) == 0o644 & ~umask, (shared, oct(mode(*shared)))


def test_predictions_and_aligned_rows_go_to_different_files(site, tmp_path, capsys):
    argv = _predict_argv(site, "--out", tmp_path / "p.npy") + ["--transform-out",
                                                                tmp_path / "p.npy"]
    status, _, err = run_cli(argv, capsys)
    assert status == 2 and err.count("\n") == 1, err
    assert "--out and --transform-out are the same file" in err
    assert not (tmp_path / "p.npy").exists()
