"""Upload files as the analyst reads them (skdc/protocol/_upload_set.py): the round trip, and
every refusal of a bad file or of files that do not belong together."""

import json
import os
import pickle
import zipfile

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc.protocol import UploadError, load_uploads, save_simulated_uploads
from skdc.protocol._container import write_container

from .conftest import simulated_uploads


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


def test_round_trip_stacks_in_participant_order(upload_files):
    paths, Y, y, ids, _ = upload_files
    loaded = load_uploads(paths[::-1])
    order = np.argsort(ids, kind="stable")
    assert_array_equal(np.asarray(loaded.uploads), np.asarray(Y)[order])
    assert_array_equal(loaded.uploads.participant, ids[order])
    assert_array_equal(loaded.y, y[order])
    # the declared anchor noise was added before writing: B_i + 0.1 W_i left, nothing cleaner
    for a, b, w in zip(loaded.uploads.anchors, Y.anchors, Y.unit_anchor_noise):
        assert_array_equal(a, b + 0.1 * w)


def test_uploads_without_labels_or_anchor(tmp_path):
    mech, Y, y, ids = simulated_uploads(anchor=None)
    paths = save_simulated_uploads(tmp_path, Y, v=0.0)
    loaded = load_uploads(paths)
    assert loaded.y is None and loaded.uploads.anchors is None


def test_checksum_detects_a_changed_value(upload_files):
    path = upload_files[0][0]
    raw = bytearray(open(path, "rb").read())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("data.npy")
    # flip a bit inside the data, then fix the zip CRC so only the checksum can notice
    pos = info.header_offset + 30 + len(info.filename) + len(info.extra) + 200
    raw[pos] ^= 0x10
    open(path, "wb").write(raw)
    with pytest.raises(UploadError, match="u0.npz.*(checksum|CRC|corrupted)"):
        load_uploads(upload_files[0])


def test_checksum_mismatch_message(upload_files, tmp_path):
    path = upload_files[0][0]
    with np.load(path, allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    members["data"] = members["data"] + 1.0
    with zipfile.ZipFile(path, "w") as zf:
        for k, v in members.items():
            with zf.open(k + ".npy", "w") as fh:
                np.lib.format.write_array(fh, v, allow_pickle=False)
    with pytest.raises(UploadError, match="field 'checksum' does not match"):
        load_uploads(upload_files[0])


@pytest.mark.parametrize("cut", [0.3, 0.9, 0.999])
def test_truncated_file(upload_files, cut):
    path = upload_files[0][0]
    raw = open(path, "rb").read()
    open(path, "wb").write(raw[: int(len(raw) * cut)])
    with pytest.raises(UploadError, match="u0.npz"):
        load_uploads(upload_files[0])


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
def test_bad_header_fields(upload_files, update, match):
    paths = upload_files[0]
    _rewrite(paths[1], update)
    with pytest.raises(UploadError, match=match):
        load_uploads(paths)


def test_wrong_dtypes_and_shapes(upload_files):
    paths = upload_files[0]
    _rewrite(paths[0], arrays_update={"data": np.zeros((10, 4), np.float32)})
    with pytest.raises(UploadError, match="u0.npz: field 'data' has dtype float32"):
        load_uploads(paths)
    _rewrite(paths[0], arrays_update={"data": np.zeros((10, 4)), "labels": np.zeros(9)})
    with pytest.raises(UploadError, match="field 'labels' has shape"):
        load_uploads(paths)
    _rewrite(paths[0], arrays_update={"labels": np.zeros(10, complex)})
    with pytest.raises(UploadError, match="field 'labels' has unsupported dtype"):
        load_uploads(paths)


def test_non_finite_data(upload_files):
    paths = upload_files[0]
    data = np.zeros((10, 4))
    data[3, 1] = np.nan
    _rewrite(paths[2], arrays_update={"data": data})
    with pytest.raises(UploadError, match="u2.npz: field 'data' contains NaN.*row 3"):
        load_uploads(paths)
    _rewrite(paths[2], arrays_update={"data": np.zeros((10, 4)),
                                      "labels": np.full(10, np.inf)})
    with pytest.raises(UploadError, match="field 'labels' contains NaN"):
        load_uploads(paths)


def test_duplicate_and_missing_participants(upload_files):
    paths = upload_files[0]
    with pytest.raises(UploadError, match="already used by"):
        load_uploads([paths[0], paths[1], paths[0]])
    with pytest.raises(UploadError, match=r"missing \[1\]"):
        load_uploads([paths[0], paths[2]])
    with pytest.raises(UploadError, match="got no files"):
        load_uploads([])


def test_same_upload_under_two_ids(upload_files, tmp_path):
    paths = upload_files[0]
    _rewrite(paths[2], arrays_update={"anchor_upload": np.load(paths[1])["anchor_upload"]})
    with pytest.raises(UploadError, match="identical to that of .*u1.npz"):
        load_uploads(paths)


def test_inconsistent_anchors_across_files(upload_files, tmp_path):
    paths = upload_files[0]
    _rewrite(paths[1], {"anchor_id": "0" * 64})
    with pytest.raises(UploadError, match="field 'anchor_id'.*share one anchor"):
        load_uploads(paths)
    _, Y2, y2, _ = simulated_uploads(n_anchors=10)
    other = save_simulated_uploads(
        [tmp_path / "o0.npz", tmp_path / "other.npz", tmp_path / "o2.npz"], Y2,
        v=0.1, labels=y2)[1]
    with pytest.raises(UploadError, match="field 'n_anchors'"):
        load_uploads([paths[0], other, paths[2]])


def test_width_mismatch_is_refused(upload_files):
    paths = upload_files[0]
    _rewrite(paths[1], {"n_components": 5},
             {"data": np.zeros((10, 5)), "anchor_upload": np.ones((16, 5))})
    with pytest.raises(UploadError, match="field .n_components. is 5.*different widths"):
        load_uploads(paths)


def test_mixed_labels_and_no_labels(upload_files):
    paths = upload_files[0]
    _rewrite(paths[1], {"has_labels": False}, drop=["labels"])
    with pytest.raises(UploadError, match="field 'has_labels'"):
        load_uploads(paths)


def test_member_set_and_compression(upload_files):
    paths = upload_files[0]
    _rewrite(paths[0], arrays_update={"extra": np.zeros(3)})
    with pytest.raises(UploadError, match=r"unexpected \['extra'\]"):
        load_uploads(paths)
    with np.load(paths[1], allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    np.savez_compressed(paths[1], **members)
    with pytest.raises(UploadError, match=r"u1.npz: member '\w+.npy' is compressed"):
        load_uploads(paths[1:2])


def test_size_limits(upload_files):
    paths = upload_files[0]
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


def test_pickled_payload_is_never_executed(upload_files, tmp_path):
    paths = upload_files[0]
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


def test_label_types_across_files(upload_files):
    paths = upload_files[0]
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
])
def test_load_uploads_validates_its_parameters(tmp_path, call, param):
    _, Y, _, _ = simulated_uploads()
    # InvalidParameterError: a ValueError and a TypeError, so the command line's one line
    with pytest.raises((ValueError, TypeError), match=f"'{param}' parameter of"):
        call(tmp_path / "u.npz", Y)
