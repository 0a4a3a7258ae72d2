"""Secret, upload and map tied by digests: a map fitted on another upload never predicts."""

import hashlib
import io
import json
import os
import shutil
import zipfile

import numpy as np
import pytest

from skdc.__main__ import main
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import AlignmentMap, Participant, UploadError, load_uploads
from skdc.protocol._container import write_container
from tests._fuzz import CASES

from .conftest import D, P, deploy, run_cli, upload_argv


def _predict(site, secret, run, i=1):
    return ["participant", "predict", "--secret", secret, "--map", site / run / f"map_{i}.npz",
            "--model", site / run / "model.npz", "--data", site / "X_test.npy",
            "--out", site / "p.npy", "--force"]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Run A; then participant 1 re-sends its upload with a new secret, and run B fits it."""
    tmp = tmp_path_factory.mktemp("digests")
    ups = deploy(tmp, n_rows=30, labels=lambda X: (X[:, 0] + X[:, 1] > 1).astype(int),
                 seeds=[10 + i for i in range(P)])
    assert main(["analyst", "fit", *ups, "--out", str(tmp / "runA")]) == 0
    shutil.copy(tmp / "secret1.npz", tmp / "old_secret1.npz")
    # a new secret, a new upload
    assert main([str(a) for a in upload_argv(tmp, 1, **{"--seed": 99}) + ["--force"]]) == 0
    assert main(["analyst", "fit", *ups, "--out", str(tmp / "runB")]) == 0
    return tmp


def test_an_old_secret_never_predicts_with_a_map_of_its_replacement(site, capsys):
    status, _, err = run_cli(_predict(site, site / "old_secret1.npz", "runB"), capsys)
    assert status == 2 and err.count("\n") == 1, err
    assert f"--map {site / 'runB' / 'map_1.npz'}: field 'upload_digest'" in err
    assert str(site / "old_secret1.npz") in err and "another upload" in err
    CASES["map of another upload"] += 1
    # the new secret with run B, the old one with run A (fitted on its upload): both predict
    assert run_cli(_predict(site, site / "secret1.npz", "runB"), capsys)[0] == 0
    assert run_cli(_predict(site, site / "old_secret1.npz", "runA"), capsys)[0] == 0
    status, _, err = run_cli(_predict(site, site / "secret1.npz", "runA"), capsys)
    assert status == 2 and "field 'upload_digest'" in err
    CASES["map of another upload"] += 1
    # the other participants' uploads did not change: their maps of either run serve
    assert run_cli(_predict(site, site / "secret0.npz", "runA", 0), capsys)[0] == 0


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {i.filename[:-4]: zf.read(i) for i in zf.infolist()}


def test_the_digest_chain_links_header_upload_secret_and_map(site):
    upload = site / "uploads" / "upload_1.npz"
    members = _members(upload)
    header = json.loads(np.lib.format.read_array(io.BytesIO(members["header"])).tobytes())
    # the header lists each array's digest: SHA-256 of its .npy bytes
    arrays = sorted(k for k in members if k not in ("header", "checksum"))
    assert header["digests"] == {k: hashlib.sha256(members[k]).hexdigest() for k in arrays}
    # the file's digest: SHA-256 over each member's name, length and digest, header first
    h = hashlib.sha256(b"skdc-container-2\0")
    for k in ["header"] + arrays:
        h.update(k.encode() + b"\0" + len(members[k]).to_bytes(8, "little")
                 + hashlib.sha256(members[k]).digest())
    digest = h.hexdigest()
    assert load_uploads([site / "uploads" / f"upload_{i}.npz" for i in range(P)]).digests[1] \
        == digest
    me = Participant.load_secret(site / "secret1.npz")
    assert me.upload_digest_ == digest
    assert me.anchor_upload_digest_ == header["digests"]["anchor_upload"]
    m = AlignmentMap.load(site / "runB" / "map_1.npz")
    assert (m.upload_digest, m.anchor_upload_digest) == (digest, me.anchor_upload_digest_)


def _edit(src, dst, header=None, header_digests=True, **arrays):
    with np.load(src, allow_pickle=False) as z:
        h = json.loads(z["header"].tobytes())
        arr = {k: z[k] for k in z.files if k not in ("header", "checksum")}
    h.update(header or {})
    arr.update(arrays)
    kind = h.pop("format")
    return write_container(dst, kind, h, arr, mode=0o600, header_digests=header_digests)


_LIES = [
    ("upload", {"header_digests": False, "data": np.zeros((30, D))},
     "field 'digests' lists"),
    ("upload", {"header_digests": False, "header": {"digests": {"data": "0" * 64}}},
     "field 'digests' must list the digest of each array"),
    ("upload", {"header_digests": False, "header": {"digests": None}}, "field 'digests'"),
    ("upload", {"header_digests": False, "header": {"digests": {
        "anchor_upload": "x" * 64, "data": "0" * 64, "labels": "0" * 64}}},
     "field 'digests': field 'anchor_upload' must be a 64-digit hex digest"),
    ("upload", {"header": {"version": 1}}, "field 'version' is 1; this skdc reads version 2"),
    ("secret", {"header": {"upload_digest": None}}, "field 'upload_digest' must be the digest"),
    ("secret", {"header": {"upload_digest": "ABC"}}, "field 'upload_digest' must be a 64-digit"),
    ("secret", {"header": {"anchor_upload_digest": 5}}, "field 'anchor_upload_digest'"),
    ("map", {"header": {"upload_digest": ["a"]}}, "field 'upload_digest' must be a 64-digit"),
    ("map", {"header": {"upload_digest": None}}, "field 'upload_digest' is null"),
]


@pytest.mark.parametrize("kind, edits, words", _LIES)
def test_digest_fields_that_lie_are_refused(site, tmp_path, kind, edits, words):
    src = {"upload": site / "uploads" / "upload_1.npz", "secret": site / "secret1.npz",
           "map": site / "runB" / "map_1.npz"}[kind]
    path = _edit(src, tmp_path / f"{kind}.npz", **edits)
    with pytest.raises(UploadError) as info:
        if kind == "upload":
            load_uploads([site / "uploads" / "upload_0.npz", path,
                          site / "uploads" / "upload_2.npz"])
        elif kind == "secret":
            Participant.load_secret(path)
        else:
            Participant.load_secret(site / "secret1.npz").predict(
                np.load(site / "X_test.npy"), path, site / "runB" / "model.npz")
    msg = str(info.value)
    assert str(path) in msg and words in msg and "\n" not in msg, msg
    CASES[f"digest ({kind})"] += 1


def test_a_participant_writes_only_its_own_upload_and_secret(tmp_path):
    rng = np.random.RandomState(0)
    A = orthonormal_anchor(16, D, random_state=0)
    me = Participant(0, IGDP(P, random_state=1), v=0.05)
    with pytest.raises(ValueError, match="has made no upload: call upload"):
        me.save_secret(tmp_path / "s.npz")
    up = me.upload(rng.rand(10, D), anchor=A)
    other = Participant(0, IGDP(P, random_state=2), v=0.05).upload(
        rng.rand(10, D), anchor=A)
    with pytest.raises(ValueError, match="not the ones participant 0's upload"):
        me.save_upload(tmp_path / "u.npz", other)
    with pytest.raises(ValueError, match="go to different files"):
        me.save(tmp_path / "x.npz", tmp_path / "x.npz", up)
    assert os.listdir(tmp_path) == []
    me.save_secret(tmp_path / "s.npz")  # before or after the upload: the same digest
    me.save_upload(tmp_path / "u.npz", up)
    assert Participant.load_secret(tmp_path / "s.npz").upload_digest_ == me.upload_digest_
