"""Hostile and broken input, measured: every public entry point of a deployment either
succeeds with the right result or raises its documented exception with a useful message.

Documented exceptions: :class:`~skdc.protocol.UploadError` (a ``ValueError``) for every file
reader; ``ValueError`` or ``TypeError`` for estimators and roles. Anything else (a crash, a
hang, ``NaN`` results, code execution) fails. The number of cases tried is printed in the
test summary (``skdc fuzz: N hostile cases tried``).
"""

import hashlib
import io
import os
import pickle
import tempfile
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal
from sklearn.linear_model import LogisticRegression

from skdc import Uploads
from skdc.__main__ import main
from skdc.alignment import GOPPAligner, ReferenceAligner
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import (
    AlignmentMap,
    Analyst,
    Participant,
    UploadError,
    load_anchor,
    load_model,
    load_uploads,
    save_simulated_uploads,
)
from tests._fuzz import CASES  # counted per reader, reported by the root conftest

from .conftest import deadline

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def _useful(exc):
    msg = str(exc)
    assert len(msg) >= 25, f"unhelpful message: {msg!r}"
    return msg


@pytest.fixture(scope="module")
def originals():
    """Three valid uploads, a map and a model, as bytes, with their loaded content."""
    tmp = tempfile.mkdtemp()
    rng = np.random.RandomState(0)
    X, y = rng.rand(24, 3), rng.randint(2, size=24)
    ids = np.arange(24) % 3
    mech = IGDP(n_participants=3, random_state=0)
    Y = mech.fit_transform(X, participant=ids)
    paths = save_simulated_uploads([os.path.join(tmp, f"u{i}.npz") for i in range(3)], Y,
                                   labels=y, mechanism=mech, v=0.1)
    analyst = Analyst(ReferenceAligner(), LogisticRegression()).fit(paths)
    extra = analyst.export(os.path.join(tmp, "out"))
    raw = {os.path.basename(p): open(p, "rb").read() for p in paths + extra}
    return dict(raw=raw, loaded=load_uploads(paths), tmp=tmp)


def _write(tmp, name, blob):
    path = os.path.join(tmp, name)
    with open(path, "wb") as fh:
        fh.write(blob)
    return path


def _same_upload(a, b):
    assert_array_equal(np.asarray(a.uploads), np.asarray(b.uploads))
    assert_array_equal(a.y, b.y)
    for x, z in zip(a.uploads.anchors, b.uploads.anchors):
        assert_array_equal(x, z)


def _refused_or_unchanged(paths, originals):
    """``load_uploads(paths)`` refuses with a useful message, or loads the original uploads."""
    try:
        got = load_uploads(paths)
    except UploadError as exc:
        _useful(exc)
        return
    _same_upload(got, originals["loaded"])


# -- corrupted files ------------------------------------------------------------------------
@FUZZ
@given(which=st.sampled_from(["u0.npz", "u1.npz", "u2.npz"]),
       flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 7)),
                      min_size=1, max_size=3))
def test_bit_flipped_uploads(originals, which, flips):
    CASES["bit-flipped upload"] += 1
    blob = bytearray(originals["raw"][which])
    for where, bit in flips:
        blob[int(where * len(blob))] ^= 1 << bit
    with tempfile.TemporaryDirectory() as tmp:
        paths = [_write(tmp, n, bytes(blob) if n == which else originals["raw"][n])
                 for n in ("u0.npz", "u1.npz", "u2.npz")]
        # a flip in bytes that carry no content (zip timestamps) must leave it unchanged
        _refused_or_unchanged(paths, originals)


@FUZZ
@given(which=st.sampled_from(["u1.npz", "map_1.npz", "model.npz"]),
       keep=st.floats(0, 1, exclude_max=True))
def test_truncated_files(originals, which, keep):
    CASES["truncated file"] += 1
    blob = originals["raw"][which]
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, which, blob[: int(keep * len(blob))])
        reader = {"u1.npz": load_uploads, "map_1.npz": AlignmentMap.load,
                  "model.npz": load_model}[which]
        with pytest.raises(UploadError) as info:
            reader(path)
        _useful(info.value)


@FUZZ
@given(blob=st.binary(min_size=0, max_size=400),
       reader=st.sampled_from(["uploads", "map", "model", "secret", "anchor"]))
def test_random_bytes(blob, reader):
    CASES["random bytes"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, "f.npz", blob)
        call = {"uploads": load_uploads, "map": AlignmentMap.load, "model": load_model,
                "secret": Participant.load_secret, "anchor": load_anchor}[reader]
        with pytest.raises(UploadError) as info:
            call(path)
        _useful(info.value)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=5,
)
_FIELDS = ["format", "version", "participant_id", "n_samples", "n_components", "n_anchors",
           "has_labels", "mechanism", "anchor_id", "anchor_noise"]


@FUZZ
@given(edits=st.dictionaries(st.sampled_from(_FIELDS), _JSON, min_size=1, max_size=3))
def test_hostile_headers_with_valid_checksums(originals, edits):
    CASES["hostile header"] += 1
    import json

    from skdc.protocol._container import write_container

    with tempfile.TemporaryDirectory() as tmp:
        src = _write(tmp, "src.npz", originals["raw"]["u1.npz"])
        with np.load(src, allow_pickle=False) as z:
            header = json.loads(z["header"].tobytes())
            arrays = {k: z[k] for k in z.files if k not in ("header", "checksum")}
        header.update(edits)
        kind = header.pop("format")
        paths = [_write(tmp, n, originals["raw"][n]) for n in ("u0.npz", "u2.npz")]
        try:
            paths.append(write_container(os.path.join(tmp, "u1.npz"), kind, header, arrays,
                                         header_digests=True))
        except (TypeError, ValueError):
            return  # not JSON-serialisable: such a header cannot be written
        _refused_or_unchanged(paths, originals)


class _Boom:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


@FUZZ
@given(member=st.sampled_from(["header", "data", "anchor_upload", "labels", "checksum"]),
       as_file=st.booleans())
def test_pickled_payloads_never_run(originals, member, as_file):
    CASES["pickled payload"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        marker = os.path.join(tmp, "executed")
        payload = np.empty(3, dtype=object)
        payload[:] = [_Boom(marker)] * 3
        path = os.path.join(tmp, "u0.npz")
        if as_file:
            _write(tmp, "u0.npz", pickle.dumps(_Boom(marker)))
        else:
            src = _write(tmp, "src.npz", originals["raw"]["u0.npz"])
            with np.load(src, allow_pickle=False) as z:
                members = {k: z[k] for k in z.files}
            with zipfile.ZipFile(path, "w") as zf:
                for k, v in members.items():
                    with zf.open(k + ".npy", "w") as fh:
                        np.lib.format.write_array(fh, payload if k == member else v,
                                                  allow_pickle=True)
        for call in (load_uploads, AlignmentMap.load, load_model, Participant.load_secret,
                     load_anchor):
            with pytest.raises(UploadError) as info:
                call(path)
            _useful(info.value)
        assert not os.path.exists(marker)


# -- hostile arrays into estimators and roles -----------------------------------------------------
_BAD = {
    "nan": lambda rng: np.where(rng.rand(8, 3) < 0.2, np.nan, rng.rand(8, 3)),
    "inf": lambda rng: np.where(rng.rand(8, 3) < 0.2, -np.inf, rng.rand(8, 3)),
    "empty rows": lambda rng: np.zeros((0, 3)),
    "empty columns": lambda rng: np.zeros((8, 0)),
    "1-D": lambda rng: rng.rand(8),
    "3-D": lambda rng: rng.rand(8, 3, 2),
    "object strings": lambda rng: np.array([["a", 1, 2.0]] * 8, dtype=object),
    "complex": lambda rng: rng.rand(8, 3) + 1j,
    "huge": lambda rng: rng.rand(8, 3) * 1.5e308,
    "wrong width": lambda rng: rng.rand(8, 5),
    "scalar": lambda rng: np.float64(3.0),
    "list of str": lambda rng: [["x"] * 3] * 8,
}


def _check_outcome(call):
    """Success must give finite numbers; failure must be a documented, useful error."""
    try:
        out = call()
    except (ValueError, TypeError) as exc:
        _useful(exc)
        return None
    arrays = out if isinstance(out, (list, tuple)) else [out]
    for a in arrays:
        a = np.asarray(a)
        assert a.dtype.kind != "f" or np.isfinite(a).all(), "silent non-finite result"
    return out


@pytest.mark.parametrize("step", ["mechanism fit", "mechanism transform", "participant upload",
                                  "participant transform", "anchor"])
@settings(FUZZ, max_examples=15)
@given(kind=st.sampled_from(sorted(_BAD)), seed=st.integers(0, 1000))
def test_hostile_arrays(step, kind, seed):
    CASES[f"hostile array ({step})"] += 1
    rng = np.random.RandomState(seed)
    bad = _BAD[kind](rng)
    good = rng.rand(12, 3)
    A = orthonormal_anchor(12, 3, random_state=seed)
    if step == "mechanism fit":
        _check_outcome(lambda: IGDP(2, random_state=seed).fit_transform(bad))
    elif step == "mechanism transform":
        mech = IGDP(2, random_state=seed).fit(good)
        _check_outcome(lambda: mech.transform(bad))
    elif step == "participant upload":
        me = Participant(1, IGDP(2, random_state=seed), v=0.1)
        _check_outcome(lambda: me.upload(bad, anchor=A))
    elif step == "participant transform":
        me = Participant(1, IGDP(2, random_state=seed), v=0.1)
        me.upload(good, anchor=A)
        own = AlignmentMap(1, "identity", upload_digest=me.upload_digest_)
        _check_outcome(lambda: me.transform(bad, own))
    else:
        me = Participant(0, IGDP(2, random_state=seed), v=0.1)
        _check_outcome(lambda: me.upload(good, anchor=bad))


@FUZZ
@given(case=st.sampled_from(["duplicate participant", "missing participant", "nan anchor",
                             "huge anchor", "mismatched widths", "plain array",
                             "empty", "labels short", "constant anchor"]),
       seed=st.integers(0, 1000), aligner=st.sampled_from(["gopp", "reference"]))
def test_hostile_uploads_into_the_analyst(case, seed, aligner):
    CASES["hostile uploads (analyst)"] += 1
    rng = np.random.RandomState(seed)
    Y = IGDP(3, random_state=seed).fit_transform(rng.rand(30, 3),
                                                  participant=np.arange(30) % 3)
    y = rng.randint(2, size=30)
    data, part, anchors = np.asarray(Y), Y.participant.copy(), list(Y.anchors)
    if case == "duplicate participant":
        anchors[2] = anchors[1]
    elif case == "missing participant":
        part[part == 1] = 0
    elif case == "nan anchor":
        anchors[0] = anchors[0].copy()
        anchors[0][0, 0] = np.nan
    elif case == "huge anchor":
        anchors[1] = anchors[1] * 1e200
    elif case == "mismatched widths":
        anchors[1] = anchors[1][:, :2]
    elif case == "constant anchor":
        anchors[2] = np.ones_like(anchors[2])
    elif case == "empty":
        data, part, y = data[:0], part[:0], y[:0]
    elif case == "labels short":
        y = y[:5]
    align = GOPPAligner() if aligner == "gopp" else ReferenceAligner()

    def call():
        up = np.asarray(data) if case == "plain array" else Uploads(data, part, anchors=anchors)
        analyst = Analyst(align, LogisticRegression()).fit(up, y)
        return [analyst.aligner_.rotations_, analyst.model_.coef_]

    out = _check_outcome(call)
    if case in ("nan anchor", "huge anchor", "constant anchor"):
        # one participant's unusable anchor upload, beside healthy ones, is refused
        assert out is None, f"{case} was accepted"
    if out is not None:
        R = out[0]
        np.testing.assert_allclose(np.swapaxes(R, 1, 2) @ R,
                                   np.broadcast_to(np.eye(R.shape[-1]), R.shape),
                                   rtol=0, atol=1e-10)


# -- files that are not files, runs that do not match, headers that lie ---------------------------
@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """Three participants (with secrets) and two analyst runs on the same uploads."""
    tmp = str(tmp_path_factory.mktemp("fuzz-deploy"))
    rng = np.random.RandomState(1)
    A = orthonormal_anchor(12, 3, random_state=1)
    paths, X_test = [], rng.rand(6, 3)
    for i in range(3):
        me = Participant(i, IGDP(3, random_state=3, noise_random_state=4 + i), v=0.1)
        up = me.upload(rng.rand(20, 3), rng.randint(2, size=20), anchor=A)
        paths.append(me.save_upload(os.path.join(tmp, f"u{i}.npz"), up))
        me.save_secret(os.path.join(tmp, f"secret{i}.npz"))
    for run, C in (("runA", 1.0), ("runB", 0.01)):
        Analyst(GOPPAligner(v=0), LogisticRegression(C=C)).fit(paths).export(
            os.path.join(tmp, run))
    return dict(tmp=tmp, paths=paths, X_test=X_test)


_NOT_FILES = {
    "named pipe": lambda tmp: os.mkfifo(os.path.join(tmp, "f")),
    "link to a named pipe": lambda tmp: (os.mkfifo(os.path.join(tmp, "p")),
                                         os.symlink(os.path.join(tmp, "p"),
                                                    os.path.join(tmp, "f"))),
    "link to /dev/zero": lambda tmp: os.symlink("/dev/zero", os.path.join(tmp, "f")),
    "link to /dev/urandom": lambda tmp: os.symlink("/dev/urandom", os.path.join(tmp, "f")),
    "/dev/zero itself": None,
    "directory": lambda tmp: os.mkdir(os.path.join(tmp, "f")),
    "link to a directory": lambda tmp: os.symlink(tmp, os.path.join(tmp, "f")),
}
_READERS = ["upload", "map", "model", "secret", "anchor", "data"]


def test_non_regular_files_are_refused_by_every_reader(deployment, capsys, record_property):
    """Every reader x every kind of non-file: a one-line refusal, never a hang or a read."""
    dep = deployment
    tried = 0
    for kind, make in _NOT_FILES.items():
        for reader in _READERS:
            with tempfile.TemporaryDirectory() as tmp:
                path = "/dev/zero" if make is None else os.path.join(tmp, "f")
                if make is not None:
                    make(tmp)
                with deadline():
                    if reader == "data":
                        status = main(["participant", "predict", "--secret",
                                       os.path.join(dep["tmp"], "secret0.npz"), "--map",
                                       os.path.join(dep["tmp"], "runA", "map_0.npz"),
                                       "--model", os.path.join(dep["tmp"], "runA", "model.npz"),
                                       "--data", path, "--out", os.path.join(tmp, "p.npy")])
                        err = capsys.readouterr().err
                        assert status == 2 and err.count("\n") == 1, err
                        msg = err
                    else:
                        call = {"upload": load_uploads, "map": AlignmentMap.load,
                                "model": load_model, "secret": Participant.load_secret,
                                "anchor": load_anchor}[reader]
                        with pytest.raises(UploadError) as info:
                            call(path)
                        msg = _useful(info.value)
                assert path in msg and "not a regular file" in msg, (kind, reader, msg)
                assert "\n" not in msg.strip(), (kind, reader, msg)
            tried += 1
            CASES[f"non-regular file ({reader})"] += 1
    record_property("hostile_cases", tried)
    print(f"non-regular files: {tried} cases")
    assert tried == len(_NOT_FILES) * len(_READERS) == 42


def test_map_and_model_of_different_runs_never_predict(deployment, record_property):
    dep = deployment
    tmp = dep["tmp"]
    tried = 0
    for i in range(3):
        me = Participant.load_secret(os.path.join(tmp, f"secret{i}.npz"))
        for map_run, model_run in (("runA", "runB"), ("runB", "runA")):
            with pytest.raises(UploadError, match=rf"map_{i}.npz: field 'run_id'.*different "):
                me.predict(dep["X_test"], os.path.join(tmp, map_run, f"map_{i}.npz"),
                           os.path.join(tmp, model_run, "model.npz"))
            tried += 1
        for run in ("runA", "runB"):  # the files of one run predict
            pred = me.predict(dep["X_test"], os.path.join(tmp, run, f"map_{i}.npz"),
                              os.path.join(tmp, run, "model.npz"))
            assert pred.shape == (6,)
        with pytest.raises(ValueError, match="Use the map file with your id"):
            me.predict(dep["X_test"], os.path.join(tmp, "runA", f"map_{(i + 1) % 3}.npz"),
                       os.path.join(tmp, "runA", "model.npz"))
        tried += 1
    CASES["mismatched run"] += tried
    record_property("hostile_cases", tried)
    assert tried == 9


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {i.filename[:-4]: zf.read(i) for i in zf.infolist()}


def _craft(path, members, *, comment=b"", prefix=b""):
    """Write members (raw .npy bytes) as an skdc archive with a checksum that matches them.

    The file digest of format 2: SHA-256 over each member's name, length and own SHA-256,
    the header first, then the arrays by name.
    """
    hasher = hashlib.sha256(b"skdc-container-2\0")
    names = ["header"] + sorted(n for n in members if n not in ("header", "checksum"))
    for name in names:
        hasher.update(name.encode() + b"\0" + len(members[name]).to_bytes(8, "little")
                      + hashlib.sha256(members[name]).digest())
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.frombuffer(hasher.hexdigest().encode(), np.uint8))
    with open(path, "wb") as fh:
        fh.write(prefix)
        with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as zf:
            for name in names:
                zf.writestr(name + ".npy", members[name])
            zf.writestr("checksum.npy", buf.getvalue())
            zf.comment = comment
    return path


def _npy(arr):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.asarray(arr), allow_pickle=False)
    return buf.getvalue()


def _edit(src, dst, header=None, arrays=None):
    """Copy an skdc file with header fields or arrays replaced, under a valid checksum."""
    import json

    from skdc.protocol._container import write_container

    with np.load(src, allow_pickle=False) as z:
        h = json.loads(z["header"].tobytes())
        arr = {k: z[k] for k in z.files if k not in ("header", "checksum")}
    h.update(header or {})
    for k, v in (arrays or {}).items():
        if v is None:
            arr.pop(k)
        else:
            arr[k] = v(arr) if callable(v) else v
    kind = h.pop("format")
    return write_container(dst, kind, h, arr, header_digests=kind == "skdc-upload")


_R = np.eye(3)
# (file, edits, the words the refusal must contain): each lied with a valid checksum
_MALFORMED = [
    ("map", {"header": {"kind": ["gopp"]}}, "field 'kind'"),
    ("map", {"header": {"kind": 5}}, "field 'kind'"),
    ("map", {"header": {"participant_id": "1"}}, "field 'participant_id'"),
    ("map", {"header": {"run_id": 5}}, "field 'run_id'"),
    ("map", {"arrays": {"rotation": lambda a: a["rotation"] * (1 + 4e-6)}},
     "field 'rotation' is not orthogonal"),
    ("map", {"arrays": {"offset_in": lambda a: a["offset_in"] + 0j}},
     "field 'offset_in' has dtype complex128"),
    ("map", {"arrays": {"offset_in": np.ones(3, bool)}}, "field 'offset_in' has dtype bool"),
    ("map", {"arrays": {"offset_in": np.zeros(3, "datetime64[s]")}},
     "field 'offset_in' has dtype datetime64"),
    ("map", {"arrays": {"rotation": np.zeros((3, 3, 3))}}, "field 'rotation' must be square"),
    ("map", {"arrays": {"offset_in": np.array([0.0, np.nan, 0.0])}},
     "field 'offset_in' contains NaN"),
    ("model", {"header": {"scalars": 5}}, "field 'scalars'"),
    ("model", {"header": {"scalars": ["bogus_"]}}, "field 'scalars'"),
    ("model", {"arrays": {"coef_": np.zeros((1, 3, 2))}}, "field 'coef_' has shape (1, 3, 2)"),
    ("model", {"header": {"estimator": ["LogisticRegression"]}}, "field 'estimator'"),
    ("model", {"header": {"n_features_in": 3.7}}, "field 'n_features_in'"),
    ("model", {"header": {"n_features_in": "3"}}, "field 'n_features_in'"),
    ("model", {"arrays": {"classes_": np.zeros(2, "V8")}}, "field 'classes_' has dtype"),
    ("model", {"arrays": {"classes_": np.array([0, 1j])}}, "field 'classes_' has dtype"),
    ("model", {"arrays": {"classes_": np.array([0.0, np.nan])}}, "field 'classes_' contains"),
    ("model", {"arrays": {"intercept_": np.zeros(1, int)}}, "field 'intercept_' has dtype"),
    ("model", {"header": {"params": 5}}, "field 'params'"),
    ("secret", {"header": {"params": {"n_participants": 2**63, "noise": 0.0,
                                      "translation_scale": 1.0, "n_anchors": None}}},
     "field 'params.n_participants'"),
    ("secret", {"header": {"n_features_in": 3.7}}, "field 'n_features_in'"),
    ("secret", {"header": {"n_features_in": "3"}}, "field 'n_features_in'"),
    ("secret", {"header": {"n_features_in": 4}}, "field 'anchor' has shape (12, 3)"),
    ("secret", {"header": {"participant_id": 2**70}}, "field 'participant_id'"),
    ("secret", {"header": {"mechanism": ["IGDP"]}}, "field 'mechanism'"),
    ("upload", {"header": {"participant_id": 2**70}}, "field 'participant_id' is 1180591620"),
    ("upload", {"arrays": {"labels": np.array(["a"] * 20)}}, "field 'labels' has dtype <U1"),
    ("upload", {"arrays": {"anchor_y": np.array([np.nan] * 12)}},
     "field 'anchor_y' contains NaN"),
    ("upload", {"header": {"mechanism": {"kind": "IGDP", "n_features_in": 3.7}}},
     "field 'mechanism.n_features_in'"),
]
_BYTES = ["trailing bytes in the header member", "bytes before the archive", "zip comment",
          "oversized .npy header", "CSV as anchor", "trailing bytes after the anchor .npy"]


def _refusal(dep, kind, path):
    """Read ``path`` as ``kind`` (an upload is read with the other two participants')."""
    tmp = dep["tmp"]
    if kind == "upload":
        return load_uploads([dep["paths"][0], path, dep["paths"][2]])
    if kind == "map":
        me = Participant.load_secret(os.path.join(tmp, "secret1.npz"))
        return me.predict(dep["X_test"], path, os.path.join(tmp, "runA", "model.npz"))
    if kind == "model":
        return load_model(path)
    if kind == "secret":
        return Participant.load_secret(path)
    return load_anchor(path)


def test_malformed_headers_and_members_name_the_field(deployment, record_property):
    dep = deployment
    src = {"map": os.path.join(dep["tmp"], "runA", "map_1.npz"),
           "model": os.path.join(dep["tmp"], "runA", "model.npz"),
           "secret": os.path.join(dep["tmp"], "secret1.npz"), "upload": dep["paths"][1]}
    tried = 0
    with tempfile.TemporaryDirectory() as tmp:
        for kind, edits, words in _MALFORMED:
            path = _edit(src[kind], os.path.join(tmp, f"{kind}.npz"), **edits)
            with pytest.raises(UploadError) as info:
                _refusal(dep, kind, path)
            msg = _useful(info.value)
            assert path in msg and words in msg and "\n" not in msg, (edits, msg)
            tried += 1
        for case in _BYTES:
            members = _members(src["upload"])
            kind, path = "upload", os.path.join(tmp, "u1.npz")
            if case == "trailing bytes in the header member":  # bytes riding in a valid file
                _craft(path, {**members, "header": members["header"] + b"\0" * (1 << 19)})
                words = "field 'header' declares"
            elif case == "bytes before the archive":
                _craft(path, members, prefix=b"\0" * 4096)
                words = "stray bytes before member"
            elif case == "zip comment":
                _craft(path, members, comment=b"x" * 60000)
                words = "comment"
            elif case == "oversized .npy header":
                big = b"\x93NUMPY\x02\x00" + (20000).to_bytes(4, "little") + b" " * 20000
                _craft(path, {**members, "labels": big})
                words = "field 'labels': the .npy header declares 20000 bytes"
            elif case == "CSV as anchor":
                kind, path = "anchor", os.path.join(tmp, "anchor.csv")
                np.savetxt(path, orthonormal_anchor(12, 3, random_state=0), delimiter=",")
                words = "is not a .npy file (it looks like text: a CSV?"
            else:
                kind, path = "anchor", os.path.join(tmp, "anchor.npy")
                with open(path, "wb") as fh:
                    fh.write(_npy(orthonormal_anchor(12, 3, random_state=0)) + b"\0" * 64)
                words = "trailing bytes"
            with pytest.raises(UploadError) as info:
                _refusal(dep, kind, path)
            msg = _useful(info.value)
            assert path in msg and words in msg and "\n" not in msg, (case, msg)
            tried += 1
    CASES["malformed header or member"] += tried
    record_property("hostile_cases", tried)
    print(f"malformed headers and members: {tried} cases")
    assert tried == len(_MALFORMED) + len(_BYTES) == 37
