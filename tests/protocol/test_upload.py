"""The upload file as written (skdc/protocol/_upload.py): what its header holds, the file's
layout, the one writer of a participant's own upload and the simulation's writer."""

import json
import os
import zipfile

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc import Uploads
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import (
    FORMAT_VERSION,
    Participant,
    UploadError,
    load_uploads,
    save_simulated_uploads,
    save_upload,
)
from tests._fuzz import CASES

from .conftest import simulated_uploads


def _own_upload(seed=0, n=10, d=4):
    """Participant 0's own upload, as Participant.upload makes it, with its labels."""
    rng = np.random.RandomState(seed)
    me = Participant(0, IGDP(n_participants=3, random_state=seed), v=0.1)
    A = orthonormal_anchor(16, d, random_state=seed)
    return me.upload(rng.rand(n, d), anchor=A), rng.randint(3, size=n)


def _header(path):
    with np.load(path, allow_pickle=False) as z:
        return json.loads(z["header"].tobytes())


def test_header_is_public_only(upload_files):
    paths, *_, mech = upload_files
    h = load_uploads(paths).headers[1]
    assert h["version"] == FORMAT_VERSION and h["participant_id"] == 1
    assert h["mechanism"]["kind"] == "IGDP" and h["anchor_noise"] == 0.1
    assert h["n_components"] == 4 and h["n_anchors"] == 16 and len(h["anchor_id"]) == 64
    assert "random_state" not in json.dumps(h) and "seed" not in json.dumps(h)


def test_files_open_with_numpy_without_pickle(upload_files):
    with np.load(upload_files[0][0], allow_pickle=False) as z:
        assert set(z.files) == {"header", "data", "anchor_upload", "labels", "checksum"}
    with zipfile.ZipFile(upload_files[0][0]) as zf:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())


def test_save_upload_refuses_bad_input(tmp_path):
    up, y = _own_upload()
    with pytest.raises(TypeError, match="expects the skdc.Uploads returned by Participant"):
        save_upload(tmp_path / "u.npz", np.asarray(up), 0)
    with pytest.raises(ValueError, match="no rows of participant 7"):
        save_upload(tmp_path / "u.npz", up[:0], 7)
    with pytest.raises(ValueError, match="labels must have one entry per uploaded row"):
        save_upload(tmp_path / "u.npz", up, 0, labels=y[:5])
    with pytest.raises(TypeError, match="never hold pickles"):
        save_upload(tmp_path / "u.npz", up, 0, labels=np.array([object()] * 10))
    assert not os.path.exists(tmp_path / "u.npz")


def test_save_upload_writes_only_an_own_noisy_upload(tmp_path):
    # the one writer adds no noise: input still carrying the unit draws W_i (clean anchor
    # uploads) is refused with what to call instead, and so are several participants' rows
    mech, Y, y, _ = simulated_uploads()
    with pytest.raises(ValueError, match=r"still carry unit anchor noise draws W_i.*"
                       r"Participant\(0, mechanism, v=v\)\.upload.*"
                       r"save_simulated_uploads\(folder, uploads, v=v\)"):
        save_upload(tmp_path / "u.npz", Y, 0, v=0.1)
    one = IGDP(n_participants=3, random_state=0).fit_one(1, 4).transform(
        np.eye(4), participant=np.ones(4, dtype=int))
    assert one.n_participants == 1  # a mechanism's own output for one participant: clean too
    with pytest.raises(ValueError, match="still carry unit anchor noise draws"):
        save_upload(tmp_path / "u.npz", one, 1, v=0.1)
    noisy = Uploads(np.asarray(Y), Y.participant, anchors=Y.noisy_anchors(0.1))
    with pytest.raises(ValueError, match=r"hold 3 participants \(rows of \[0, 1, 2\]\).*"
                       r"save_simulated_uploads"):
        save_upload(tmp_path / "u.npz", noisy, 0, v=0.1)
    assert not os.path.exists(tmp_path / "u.npz")
    # an own upload is written as it is: its anchor upload bit for bit, the noise declared
    up, labels = _own_upload()
    loaded = load_uploads(save_upload(tmp_path / "u.npz", up, 0, labels=labels,
                                      v=0.1))
    assert_array_equal(loaded.uploads.anchors[0], up.anchors[0])
    assert_array_equal(np.asarray(loaded.uploads), np.asarray(up))
    assert loaded.headers[0]["anchor_noise"] == 0.1 and loaded.headers[0]["participant_id"] == 0


def test_simulated_files_hold_what_each_participantsimulated_uploads(tmp_path):
    # the simulation's route writes the bits the old single writer wrote (each participant's
    # rows, B_i + v W_i, its labels) and the bits each deployed participant writes at home
    rng = np.random.RandomState(3)
    X, y = rng.rand(36, 4), rng.randint(3, size=36)
    ids = np.repeat(np.arange(3), 12)
    A = orthonormal_anchor(16, 4, random_state=3)
    mech = IGDP(3, anchor=A, noise=0.1, random_state=11, noise_random_state=22)
    Y = mech.fit_transform(X, participant=ids)
    sim = save_simulated_uploads(tmp_path / "sim", Y, v=0.05, labels=y,
                                 mechanism=mech)
    assert [os.path.basename(p) for p in sim] == ["upload_0.npz", "upload_1.npz", "upload_2.npz"]
    for i, path in enumerate(sim):
        rows = ids == i
        with np.load(path, allow_pickle=False) as z:
            assert_array_equal(z["data"], np.asarray(Y)[rows])
            # independent arithmetic, the same expression: B_i + v W_i
            assert_array_equal(z["anchor_upload"], Y.anchors[i] + 0.05 * Y.unit_anchor_noise[i])
            assert_array_equal(z["labels"], y[rows])
        me = Participant(i, IGDP(3, noise=0.1, random_state=11, noise_random_state=22),
                         v=0.05)
        up = me.upload(X[rows], y[rows], anchor=A)
        home = me.save_upload(tmp_path / f"home_{i}.npz", up)
        h_sim, h_home = (_header(p) for p in (path, home))
        assert h_sim["digests"] == h_home["digests"]  # every array, to the bit
        assert h_sim["anchor_noise"] == h_home["anchor_noise"] == 0.05
        assert h_sim["anchor_id"] == h_home["anchor_id"]
    analyst = load_uploads(sim)
    assert_array_equal(np.asarray(analyst.uploads), np.asarray(Y))
    assert_array_equal(analyst.y, y)


def test_save_simulated_uploads_refuses_bad_input(tmp_path):
    mech, Y, y, _ = simulated_uploads()
    out = tmp_path / "out"
    with pytest.raises(TypeError, match="expects the skdc.Uploads returned by a mechanism"):
        save_simulated_uploads(out, np.asarray(Y), v=0.1)
    with pytest.raises(ValueError, match=r"one entry per row of the uploads, shape \(30,\)"):
        save_simulated_uploads(out, Y, v=0.1, labels=y[:10])
    with pytest.raises(ValueError, match="got 2 path.*3 participants"):
        save_simulated_uploads([out / "a.npz", out / "b.npz"], Y, v=0.1)
    with pytest.raises(ValueError, match="same path for two participants"):
        save_simulated_uploads([out / "a.npz", out / "b.npz", out / "a.npz"], Y,
                               v=0.1)
    noisy = Uploads(np.asarray(Y), Y.participant, anchors=Y.noisy_anchors(0.1))
    for v in (0.1, 0.0):  # already noisy: declaring any v for them would be false
        with pytest.raises(ValueError, match="carry no unit anchor noise .uploads already "
                           "noisy"):
            save_simulated_uploads(out, noisy, v=v)
    # one participant without rows, or non-finite rows of the last one: nothing is written
    X4 = np.random.RandomState(0).rand(40, 4)
    wide = IGDP(n_participants=4, random_state=0).fit(X4, participant=np.arange(40) % 4)
    Y4 = wide.transform(X4[:30], participant=np.arange(30) % 3)  # participant 3 sits out
    with pytest.raises(ValueError, match="no rows of participant 3"):
        save_simulated_uploads(out, Y4, v=0.1)
    bad = Y.copy()
    bad[2, 0] = np.nan  # row 2 is participant 2's
    with pytest.raises(ValueError, match="NaN or infinity"):
        save_simulated_uploads(out, bad, v=0.1)
    assert not out.exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(UploadError, match="a file, not a folder"):
        save_simulated_uploads(tmp_path / "file" / "sub", Y, v=0.1)
    # a link where a file goes is replaced, never written through
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out.mkdir()
    os.symlink(victim, out / "upload_1.npz")
    paths = save_simulated_uploads(out, Y, v=0.1)
    assert victim.read_text() == "keep" and not os.path.islink(paths[1])
    CASES["upload (simulation)"] += 10  # the refusals above and the link


@pytest.mark.parametrize("call, param", [
    (lambda p, Y: save_upload(None, Y, 0), "path"),
    (lambda p, Y: save_upload(p, Y, -1), "participant_id"),
    (lambda p, Y: save_upload(p, Y, 0, v=-0.1), "v"),
    (lambda p, Y: save_upload(p, Y, 0, anchor_noise=-0.1), "anchor_noise"),
    (lambda p, Y: save_upload(p, Y, 0, mechanism="IGDP"), "mechanism"),
    (lambda p, Y: save_upload(p, Y, 0, anchor_id=7), "anchor_id"),
    (lambda p, Y: save_simulated_uploads(3.5, Y, v=0.1), "folder_or_paths"),
    (lambda p, Y: save_simulated_uploads(p, Y, v=-0.1), "v"),
    (lambda p, Y: save_simulated_uploads(p, Y, anchor_noise=-0.1), "anchor_noise"),
    (lambda p, Y: save_simulated_uploads(p, Y, v=0.1, mechanism="IGDP"), "mechanism"),
])
def test_upload_functions_validate_their_parameters(tmp_path, call, param):
    _, Y, _, _ = simulated_uploads()
    # InvalidParameterError: a ValueError and a TypeError, so the command line's one line
    with pytest.raises((ValueError, TypeError), match=f"'{param}' parameter of"):
        call(tmp_path / "u.npz", Y)
    assert not os.path.exists(tmp_path / "u.npz")


def test_save_simulated_uploads_requires_v(tmp_path):
    _, Y, _, _ = simulated_uploads()
    for kwargs in ({}, {"v": None}):
        with pytest.raises(TypeError, match="missing required keyword argument: 'v'"):
            save_simulated_uploads(tmp_path, Y, **kwargs)
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize("writer", ["save_upload", "save_simulated_uploads"])
def test_anchor_noise_is_a_deprecated_spelling_of_v(tmp_path, writer):
    if writer == "save_upload":
        up = _own_upload()[0]  # one draw of its noise, written twice
        def write(path, **v):
            return save_upload(path, up, 0, **v)
    else:
        Y = simulated_uploads()[1]
        def write(path, **v):
            return save_simulated_uploads(path, Y, **v)[0]
    new = write(tmp_path / "new.npz", v=0.1)
    with pytest.warns(FutureWarning, match="anchor_noise= is deprecated.*use v= instead") \
            as caught:
        old = write(tmp_path / "old.npz", anchor_noise=0.1)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert _header(old)["anchor_noise"] == 0.1
    assert _header(old) == _header(new)  # its digests: the same arrays, to the bit
    with pytest.raises(TypeError, match="pass v= only"):
        write(tmp_path / "both.npz", v=0.1, anchor_noise=0.1)
