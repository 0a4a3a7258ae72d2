"""The secret file (skdc/protocol/_secret.py): owner-only, round trip, the seeds it holds, the
fields it refuses, and the pair it makes with its upload."""

import os
import stat

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc.protocol import Participant, UploadError
from skdc.protocol._container import Container
from skdc.protocol._secret import check_seed, read_secret, write_pair, write_secret

from .conftest import API_D as D


def test_secret_file_is_owner_only_and_round_trips(deployment):
    path = os.path.join(deployment["tmp"], "secret_1.npz")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    me = Participant.load_secret(path)
    sim = deployment["pipe"]["gdp"]
    # the participant drew its own secret only: the simulation's participant-1 secret
    assert me.mechanism_.rotations_.shape == (1, D, D)
    assert_array_equal(me.mechanism_.rotations_[0], sim.rotations_[1])
    assert_array_equal(me.mechanism_.translations_[0], sim.translations_[1])
    assert me.seed_ == 11 and me.noise_seed_ == 22


def test_a_seed_is_a_plain_int_or_drawn_from_the_operating_system():
    assert 2**128 <= check_seed(None, "seed") < 2**129
    assert check_seed(np.int64(7), "seed") == 7 and type(check_seed(np.int64(7), "seed")) is int
    for bad in (True, -1, 2**129, 1.5, "7", np.random.RandomState(0)):
        with pytest.raises(TypeError, match=r"seed must be an int in \[0, 2\*\*129\)"):
            check_seed(bad, "seed")


def _edited(path, out, header_update=None, arrays_update=None):
    """The secret at ``path`` written to ``out`` with its header or arrays edited."""
    header, arrays = read_secret(path)
    header = {k: v for k, v in header.items() if k not in ("format", "version")}
    write_secret(out, {**header, **(header_update or {})}, {**arrays, **(arrays_update or {})})
    return out


@pytest.mark.parametrize("header, arrays, match", [
    ({"mechanism": "PCA"}, None, "field 'mechanism' must be one of"),
    ({"params": {"n_participants": 3}}, None, "field 'params' must be an object with exactly"),
    ({"participant_id": 3}, None, r"field 'participant_id' must be an int in 0 \.\. 2"),
    ({"upload_digest": None}, None, "field 'upload_digest' must be the digest of the upload"),
    ({"feature_names": ["a", "a", "b", "c", "d"]}, None, "field 'feature_names' must be null"),
    (None, {"rotation": np.eye(D - 1)}, "field 'rotation' has shape"),
    (None, {"translation": np.zeros(D, np.float32)}, "field 'translation' has dtype float32"),
])
def test_a_secret_whose_fields_do_not_fit_is_refused(deployment, tmp_path, header, arrays,
                                                       match):
    good = os.path.join(deployment["tmp"], "secret_0.npz")
    bad = _edited(good, tmp_path / "bad.npz", header, arrays)
    with pytest.raises(UploadError, match=f"bad.npz: {match}"):
        read_secret(bad)
    with pytest.raises(UploadError, match=match):
        Participant.load_secret(bad)
    h, a = read_secret(_edited(good, tmp_path / "same.npz"))  # the check passes a fair copy
    assert h["participant_id"] == 0 and set(a) == {"rotation", "translation", "anchor"}


def test_a_pair_is_written_whole_and_never_over_another(tmp_path):
    upload = ({"participant_id": 0}, {"data": np.ones((2, 3))})
    secret = ({"upload_digest": None}, {"rotation": np.eye(3)})
    u, s = tmp_path / "u.npz", tmp_path / "s.npz"
    write_pair(u, upload, s, secret)
    assert stat.S_IMODE(os.stat(s).st_mode) == 0o600
    with Container(u, "skdc-upload") as c:
        c.read()
        assert c.header["digests"] == c.member_digests  # the upload lists its arrays' digests
    with Container(s, "skdc-secret") as c:
        assert_array_equal(c.read()["rotation"], np.eye(3))
    before = u.read_bytes(), s.read_bytes()
    other = ({"participant_id": 1}, {"data": np.zeros((2, 3))})
    with pytest.raises(UploadError, match="u.npz: the upload already exists"):
        write_pair(u, other, tmp_path / "s2.npz", secret)
    with pytest.raises(UploadError, match="s.npz: the secret already exists"):
        write_pair(tmp_path / "u2.npz", other, s, secret)
    assert (u.read_bytes(), s.read_bytes()) == before
    assert sorted(os.listdir(tmp_path)) == ["s.npz", "u.npz"]  # nothing left half-written
    write_pair(u, other, s, secret, overwrite=True)
    with Container(u, "skdc-upload") as c:
        assert c.header["participant_id"] == 1
