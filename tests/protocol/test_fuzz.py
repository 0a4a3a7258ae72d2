"""Hostile and broken input, measured: every public entry point of a deployment either
succeeds with the right result or raises its documented exception with a useful message.

Documented exceptions: :class:`~skdc.protocol.UploadError` (a ``ValueError``) for every file
reader; ``ValueError`` or ``TypeError`` for estimators and roles. Anything else (a crash, a
hang, ``NaN`` results, code execution) fails. The number of cases tried is printed in the
test summary (``skdc protocol fuzz: N hostile cases tried``).
"""

import collections
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
    save_upload,
)

CASES = collections.Counter()
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
    paths = [save_upload(os.path.join(tmp, f"u{i}.npz"), Y, i, labels=y, mechanism=mech,
                         anchor_noise=0.1) for i in range(3)]
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
        try:
            got = load_uploads(paths)
        except UploadError as exc:
            _useful(exc)
            return
        # a flip in bytes that carry no content (zip timestamps) must leave it unchanged
        _same_upload(got, originals["loaded"])


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

    from skdc.protocol._format import _write_container

    with tempfile.TemporaryDirectory() as tmp:
        src = _write(tmp, "src.npz", originals["raw"]["u1.npz"])
        with np.load(src, allow_pickle=False) as z:
            header = json.loads(z["header"].tobytes())
            arrays = {k: z[k] for k in z.files if k not in ("header", "checksum")}
        header.update(edits)
        kind = header.pop("format")
        paths = [_write(tmp, n, originals["raw"][n]) for n in ("u0.npz", "u2.npz")]
        try:
            paths.append(_write_container(os.path.join(tmp, "u1.npz"), kind, header, arrays))
        except (TypeError, ValueError):
            return  # not JSON-serialisable: such a header cannot be written
        try:
            got = load_uploads(paths)
        except UploadError as exc:
            _useful(exc)
            return
        _same_upload(got, originals["loaded"])


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
        me = Participant(1, IGDP(2, random_state=seed), anchor_noise=0.1)
        _check_outcome(lambda: me.upload(bad, anchor=A))
    elif step == "participant transform":
        me = Participant(1, IGDP(2, random_state=seed), anchor_noise=0.1)
        me.upload(good, anchor=A)
        _check_outcome(lambda: me.transform(bad, AlignmentMap(1, "identity")))
    else:
        me = Participant(0, IGDP(2, random_state=seed), anchor_noise=0.1)
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
    if out is not None:
        R = out[0]
        np.testing.assert_allclose(np.swapaxes(R, 1, 2) @ R,
                                   np.broadcast_to(np.eye(R.shape[-1]), R.shape),
                                   rtol=0, atol=1e-10)
