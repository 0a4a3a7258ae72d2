"""Upload files: round trip, what the header holds, and every refusal of a bad file."""

import json
import os
import pickle
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
from skdc.protocol._container import write_container
from tests._fuzz import CASES


def _uploads(seed=0, p=3, n=30, d=4, **kw):
    rng = np.random.RandomState(seed)
    X, y = rng.rand(n, d), rng.randint(3, size=n)
    ids = np.arange(n) % p
    mech = IGDP(n_participants=p, random_state=seed, **kw)
    return mech, mech.fit_transform(X, participant=ids), y, ids


@pytest.fixture
def files(tmp_path):
    mech, Y, y, ids = _uploads()
    paths = save_simulated_uploads([tmp_path / f"u{i}.npz" for i in range(3)], Y, labels=y,
                                   mechanism=mech, anchor_noise=0.1)
    return paths, Y, y, ids, mech


def _own_upload(seed=0, n=10, d=4):
    """Participant 0's own upload, as Participant.upload makes it, with its labels."""
    rng = np.random.RandomState(seed)
    me = Participant(0, IGDP(n_participants=3, random_state=seed), anchor_noise=0.1)
    A = orthonormal_anchor(16, d, random_state=seed)
    return me.upload(rng.rand(n, d), anchor=A), rng.randint(3, size=n)


def _header(path):
    with np.load(path, allow_pickle=False) as z:
        return json.loads(z["header"].tobytes())


def _rewrite(path, header_update=None, arrays_update=None, drop=()):
    """Re-write an upload with a valid checksum but edited header or arrays."""
    with np.load(path, allow_pickle=False) as z:
        header = json.loads(z["header"].tobytes())
        arrays = {k: z[k] for k in z.files if k not in ("header", "checksum")}
    header.update(header_update or {})
    arrays.update(arrays_update or {})
    for k in drop:
        arrays.pop(k)
    kind = header.pop("format")
    # the boundary never writes one kind of skdc file over another: remove the upload first
    os.unlink(path)
    # as a participant running skdc would: the header lists the arrays' digests
    write_container(path, kind, header, arrays, header_digests=kind == "skdc-upload")


def test_round_trip_stacks_in_participant_order(files):
    paths, Y, y, ids, _ = files
    loaded = load_uploads(paths[::-1])
    order = np.argsort(ids, kind="stable")
    assert_array_equal(np.asarray(loaded.uploads), np.asarray(Y)[order])
    assert_array_equal(loaded.uploads.participant, ids[order])
    assert_array_equal(loaded.y, y[order])
    # the declared anchor noise was added before writing: B_i + 0.1 W_i left, nothing cleaner
    for a, b, w in zip(loaded.uploads.anchors, Y.anchors, Y.unit_anchor_noise):
        assert_array_equal(a, b + 0.1 * w)


def test_header_is_public_only(files):
    paths, *_, mech = files
    h = load_uploads(paths).headers[1]
    assert h["version"] == FORMAT_VERSION and h["participant_id"] == 1
    assert h["mechanism"]["kind"] == "IGDP" and h["anchor_noise"] == 0.1
    assert h["n_components"] == 4 and h["n_anchors"] == 16 and len(h["anchor_id"]) == 64
    assert "random_state" not in json.dumps(h) and "seed" not in json.dumps(h)


def test_files_open_with_numpy_without_pickle(files):
    with np.load(files[0][0], allow_pickle=False) as z:
        assert set(z.files) == {"header", "data", "anchor_upload", "labels", "checksum"}
    with zipfile.ZipFile(files[0][0]) as zf:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())


def test_uploads_without_labels_or_anchor(tmp_path):
    mech, Y, y, ids = _uploads(anchor=None)
    paths = save_simulated_uploads(tmp_path, Y, anchor_noise=0.0)
    loaded = load_uploads(paths)
    assert loaded.y is None and loaded.uploads.anchors is None


def test_checksum_detects_a_changed_value(files):
    path = files[0][0]
    raw = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("data.npy")
    # flip a bit inside the data, then fix the zip CRC so only the checksum can notice
    pos = info.header_offset + 30 + len(info.filename) + len(info.extra) + 200
    raw[pos] ^= 0x10
    open(path, "wb").write(raw)
    with pytest.raises(UploadError, match="u0.npz.*(checksum|CRC|corrupted)"):
        load_uploads(files[0])


def test_checksum_mismatch_message(files, tmp_path):
    path = files[0][0]
    with np.load(path, allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    members["data"] = members["data"] + 1.0
    with zipfile.ZipFile(path, "w") as zf:
        for k, v in members.items():
            with zf.open(k + ".npy", "w") as fh:
                np.lib.format.write_array(fh, v, allow_pickle=False)
    with pytest.raises(UploadError, match="field 'checksum' does not match"):
        load_uploads(files[0])


@pytest.mark.parametrize("cut", [0.3, 0.9, 0.999])
def test_truncated_file(files, cut):
    path = files[0][0]
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[: int(len(raw) * cut)])
    with pytest.raises(UploadError, match="u0.npz"):
        load_uploads(files[0])


@pytest.mark.parametrize(
    "update, match",
    [
        ({"version": 99}, "field 'version' is 99"),
        ({"format": "skdc-model"}, "field 'format' is 'skdc-model'"),
        ({"participant_id": -1}, "field 'participant_id' must be a non-negative integer"),
        ({"participant_id": True}, "field 'participant_id'"),
        ({"n_samples": 11}, "field 'data' has shape"),
        ({"anchor_noise": -0.5}, "field 'anchor_noise'"),
        ({"has_labels": "yes"}, "field 'has_labels'"),
    ],
)
def test_bad_header_fields(files, update, match):
    paths = files[0]
    _rewrite(paths[1], update)
    with pytest.raises(UploadError, match=match):
        load_uploads(paths)


def test_wrong_dtypes_and_shapes(files):
    paths = files[0]
    _rewrite(paths[0], arrays_update={"data": np.zeros((10, 4), np.float32)})
    with pytest.raises(UploadError, match="u0.npz: field 'data' has dtype float32"):
        load_uploads(paths)
    _rewrite(paths[0], arrays_update={"data": np.zeros((10, 4)), "labels": np.zeros(9)})
    with pytest.raises(UploadError, match="field 'labels' has shape"):
        load_uploads(paths)
    _rewrite(paths[0], arrays_update={"labels": np.zeros(10, complex)})
    with pytest.raises(UploadError, match="field 'labels' has unsupported dtype"):
        load_uploads(paths)


def test_non_finite_data(files):
    paths = files[0]
    data = np.zeros((10, 4))
    data[3, 1] = np.nan
    _rewrite(paths[2], arrays_update={"data": data})
    with pytest.raises(UploadError, match="u2.npz: field 'data' contains NaN.*row 3"):
        load_uploads(paths)
    _rewrite(paths[2], arrays_update={"data": np.zeros((10, 4)),
                                      "labels": np.full(10, np.inf)})
    with pytest.raises(UploadError, match="field 'labels' contains NaN"):
        load_uploads(paths)


def test_duplicate_and_missing_participants(files):
    paths = files[0]
    with pytest.raises(UploadError, match="already used by"):
        load_uploads([paths[0], paths[1], paths[0]])
    with pytest.raises(UploadError, match=r"missing \[1\]"):
        load_uploads([paths[0], paths[2]])
    with pytest.raises(UploadError, match="got no files"):
        load_uploads([])


def test_same_upload_under_two_ids(files, tmp_path):
    paths = files[0]
    _rewrite(paths[2], arrays_update={"anchor_upload": np.load(paths[1])["anchor_upload"]})
    with pytest.raises(UploadError, match="identical to that of .*u1.npz"):
        load_uploads(paths)


def test_inconsistent_anchors_across_files(files, tmp_path):
    paths = files[0]
    _rewrite(paths[1], {"anchor_id": "0" * 64})
    with pytest.raises(UploadError, match="field 'anchor_id'.*share one anchor"):
        load_uploads(paths)
    _, Y2, y2, _ = _uploads(n_anchors=10)
    other = save_simulated_uploads(
        [tmp_path / "o0.npz", tmp_path / "other.npz", tmp_path / "o2.npz"], Y2,
        anchor_noise=0.1, labels=y2)[1]
    with pytest.raises(UploadError, match="field 'n_anchors'"):
        load_uploads([paths[0], other, paths[2]])


def test_width_mismatch_is_refused(files):
    paths = files[0]
    _rewrite(paths[1], {"n_components": 5},
             {"data": np.zeros((10, 5)), "anchor_upload": np.ones((16, 5))})
    with pytest.raises(UploadError, match="field .n_components. is 5.*different widths"):
        load_uploads(paths)


def test_mixed_labels_and_no_labels(files):
    paths = files[0]
    _rewrite(paths[1], {"has_labels": False}, drop=["labels"])
    with pytest.raises(UploadError, match="field 'has_labels'"):
        load_uploads(paths)


def test_member_set_and_compression(files):
    paths = files[0]
    _rewrite(paths[0], arrays_update={"extra": np.zeros(3)})
    with pytest.raises(UploadError, match=r"unexpected \['extra'\]"):
        load_uploads(paths)
    with np.load(paths[1], allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    np.savez_compressed(paths[1], **members)
    with pytest.raises(UploadError, match=r"u1.npz: member '\w+.npy' is compressed"):
        load_uploads(paths[1:2])


def test_size_limits(files):
    paths = files[0]
    with pytest.raises(UploadError, match="above the limit max_bytes=100"):
        load_uploads(paths, max_bytes=100)
    with pytest.raises(UploadError, match="above max_total_bytes"):
        load_uploads(paths, max_total_bytes=1000)


class _Marker:
    """Unpickling this creates a file: proof of code execution."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickled_payload_is_never_executed(files, tmp_path):
    paths = files[0]
    marker = tmp_path / "pwned"
    payload = np.empty(10, dtype=object)
    payload[:] = [_Marker(str(marker))] * 10
    with np.load(paths[0], allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    with zipfile.ZipFile(paths[0], "w") as zf:
        for k, v in members.items():
            with zf.open(k + ".npy", "w") as fh:
                np.lib.format.write_array(fh, payload if k == "labels" else v,
                                          allow_pickle=True)
    with pytest.raises(UploadError, match="labels.*never hold pickled objects"):
        load_uploads(paths)
    open(paths[1], "wb").write(pickle.dumps(_Marker(str(marker))))
    with pytest.raises(UploadError, match="u1.npz: not a readable skdc .npz"):
        load_uploads(paths[1:])
    assert not marker.exists()


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
    mech, Y, y, _ = _uploads()
    with pytest.raises(ValueError, match=r"still carry unit anchor noise draws W_i.*"
                       r"Participant\(0, mechanism, anchor_noise=v\)\.upload.*"
                       r"save_simulated_uploads\(folder, uploads, anchor_noise=v\)"):
        save_upload(tmp_path / "u.npz", Y, 0, anchor_noise=0.1)
    one = IGDP(n_participants=3, random_state=0).fit_one(1, 4).transform(
        np.eye(4), participant=np.ones(4, dtype=int))
    assert one.n_participants == 1  # a mechanism's own output for one participant: clean too
    with pytest.raises(ValueError, match="still carry unit anchor noise draws"):
        save_upload(tmp_path / "u.npz", one, 1, anchor_noise=0.1)
    noisy = Uploads(np.asarray(Y), Y.participant, anchors=Y.noisy_anchors(0.1))
    with pytest.raises(ValueError, match=r"hold 3 participants \(rows of \[0, 1, 2\]\).*"
                       r"save_simulated_uploads"):
        save_upload(tmp_path / "u.npz", noisy, 0, anchor_noise=0.1)
    assert not os.path.exists(tmp_path / "u.npz")
    # an own upload is written as it is: its anchor upload bit for bit, the noise declared
    up, labels = _own_upload()
    loaded = load_uploads(save_upload(tmp_path / "u.npz", up, 0, labels=labels,
                                      anchor_noise=0.1))
    assert_array_equal(loaded.uploads.anchors[0], up.anchors[0])
    assert_array_equal(np.asarray(loaded.uploads), np.asarray(up))
    assert loaded.headers[0]["anchor_noise"] == 0.1 and loaded.headers[0]["participant_id"] == 0


def test_simulated_files_hold_what_each_participant_uploads(tmp_path):
    # the simulation's route writes the bits the old single writer wrote (each participant's
    # rows, B_i + v W_i, its labels) and the bits each deployed participant writes at home
    rng = np.random.RandomState(3)
    X, y = rng.rand(36, 4), rng.randint(3, size=36)
    ids = np.repeat(np.arange(3), 12)
    A = orthonormal_anchor(16, 4, random_state=3)
    mech = IGDP(3, anchor=A, noise=0.1, random_state=11, noise_random_state=22)
    Y = mech.fit_transform(X, participant=ids)
    sim = save_simulated_uploads(tmp_path / "sim", Y, anchor_noise=0.05, labels=y,
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
                         anchor_noise=0.05)
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
    mech, Y, y, _ = _uploads()
    out = tmp_path / "out"
    with pytest.raises(TypeError, match="expects the skdc.Uploads returned by a mechanism"):
        save_simulated_uploads(out, np.asarray(Y), anchor_noise=0.1)
    with pytest.raises(ValueError, match=r"one entry per row of the uploads, shape \(30,\)"):
        save_simulated_uploads(out, Y, anchor_noise=0.1, labels=y[:10])
    with pytest.raises(ValueError, match="got 2 path.*3 participants"):
        save_simulated_uploads([out / "a.npz", out / "b.npz"], Y, anchor_noise=0.1)
    with pytest.raises(ValueError, match="same path for two participants"):
        save_simulated_uploads([out / "a.npz", out / "b.npz", out / "a.npz"], Y,
                               anchor_noise=0.1)
    noisy = Uploads(np.asarray(Y), Y.participant, anchors=Y.noisy_anchors(0.1))
    for v in (0.1, 0.0):  # already noisy: declaring any v for them would be false
        with pytest.raises(ValueError, match="carry no unit anchor noise .uploads already "
                           "noisy"):
            save_simulated_uploads(out, noisy, anchor_noise=v)
    # one participant without rows, or non-finite rows of the last one: nothing is written
    X4 = np.random.RandomState(0).rand(40, 4)
    wide = IGDP(n_participants=4, random_state=0).fit(X4, participant=np.arange(40) % 4)
    Y4 = wide.transform(X4[:30], participant=np.arange(30) % 3)  # participant 3 sits out
    with pytest.raises(ValueError, match="no rows of participant 3"):
        save_simulated_uploads(out, Y4, anchor_noise=0.1)
    bad = Y.copy()
    bad[2, 0] = np.nan  # row 2 is participant 2's
    with pytest.raises(ValueError, match="NaN or infinity"):
        save_simulated_uploads(out, bad, anchor_noise=0.1)
    assert not out.exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(UploadError, match="a file, not a folder"):
        save_simulated_uploads(tmp_path / "file" / "sub", Y, anchor_noise=0.1)
    # a link where a file goes is replaced, never written through
    victim = tmp_path / "victim"
    victim.write_text("keep")
    out.mkdir()
    os.symlink(victim, out / "upload_1.npz")
    paths = save_simulated_uploads(out, Y, anchor_noise=0.1)
    assert victim.read_text() == "keep" and not os.path.islink(paths[1])
    CASES["upload (simulation)"] += 10  # the refusals above and the link


def test_label_types_across_files(files):
    paths = files[0]
    _rewrite(paths[1], arrays_update={"labels": np.arange(10, dtype=np.int16)})
    assert load_uploads(paths).y.dtype == np.int64
    _rewrite(paths[1], arrays_update={"labels": np.array(["a"] * 10)})
    with pytest.raises(UploadError, match=r"u1.npz: field .labels. has dtype <U1 but "
                       r".*u0.npz has int64: the labels mix strings and numbers"):
        load_uploads(paths)


@pytest.mark.parametrize("call, param", [
    (lambda p, Y: load_uploads(3.5), "paths"),
    (lambda p, Y: load_uploads(p, max_bytes=-1), "max_bytes"),
    (lambda p, Y: load_uploads(p, max_total_bytes="1 GB"), "max_total_bytes"),
    (lambda p, Y: load_uploads(p, allow_different_widths="yes"), "allow_different_widths"),
    (lambda p, Y: save_upload(None, Y, 0), "path"),
    (lambda p, Y: save_upload(p, Y, -1), "participant_id"),
    (lambda p, Y: save_upload(p, Y, 0, anchor_noise=-0.1), "anchor_noise"),
    (lambda p, Y: save_upload(p, Y, 0, mechanism="IGDP"), "mechanism"),
    (lambda p, Y: save_upload(p, Y, 0, anchor_id=7), "anchor_id"),
    (lambda p, Y: save_simulated_uploads(3.5, Y, anchor_noise=0.1), "folder_or_paths"),
    (lambda p, Y: save_simulated_uploads(p, Y, anchor_noise=-0.1), "anchor_noise"),
    (lambda p, Y: save_simulated_uploads(p, Y, anchor_noise=None), "anchor_noise"),
    (lambda p, Y: save_simulated_uploads(p, Y, anchor_noise=0.1, mechanism="IGDP"),
     "mechanism"),
])
def test_upload_functions_validate_their_parameters(tmp_path, call, param):
    _, Y, _, _ = _uploads()
    # InvalidParameterError: a ValueError and a TypeError, so the command line's one line
    with pytest.raises((ValueError, TypeError), match=f"'{param}' parameter of"):
        call(tmp_path / "u.npz", Y)
    assert not os.path.exists(tmp_path / "u.npz")
