"""API-level refusals of a deployment: set-up limits, one-run files, nothing to align."""

import os

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import (
    AlignmentMap,
    Analyst,
    Participant,
    UploadError,
    load_anchor,
    load_model,
    make_anchor,
    save_model,
)

from .conftest import deadline


@pytest.fixture(scope="module")
def uploads(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("refusals")
    rng = np.random.RandomState(0)
    A = orthonormal_anchor(12, 3, random_state=0)
    paths = []
    for i in range(3):
        me = Participant(i, IGDP(3, random_state=1, noise_random_state=2 + i), v=0.1)
        up = me.upload(rng.rand(15, 3), rng.randint(2, size=15), anchor=A)
        paths.append(me.save_upload(tmp / f"u{i}.npz", up))
    return tmp, paths


def test_a_participant_of_a_huge_collaboration_draws_only_its_own_secret():
    # each participant's secret has its own stream: setting participant 123456 of a million up
    # draws one rotation (it drew all million before, 89 s, and was capped at 10,000)
    me = Participant(123_456, IGDP(10**6, random_state=5), v=0.1)
    up = me.upload(np.random.RandomState(0).rand(3, 2), anchor=orthonormal_anchor(8, 2,
                                                                                  random_state=0))
    assert me.mechanism_.rotations_.shape == (1, 2, 2)
    assert up.shape == (3, 2) and len(up.anchors) == 1
    with pytest.raises(ValueError, match=r"n_participants=9223372036854775808 is above"):
        Participant(0, IGDP(2**63), v=0.1).upload(np.ones((3, 2)))


def test_export_ties_maps_and_model_with_one_run_id(uploads, tmp_path):
    _, paths = uploads
    a = Analyst(model=LogisticRegression()).fit(paths)
    files = a.export(tmp_path / "a")
    ids = {AlignmentMap.load(p).run_id for p in files[:-1]}
    from skdc.protocol._model import read_model

    _, model_id = read_model(files[-1])
    assert ids == {model_id} and len(model_id) == 64
    # the same fit exported twice: the same fingerprint; another model: another one
    assert AlignmentMap.load(a.export(tmp_path / "b")[0]).run_id == model_id
    b = Analyst(model=LogisticRegression(C=0.01)).fit(paths)
    assert AlignmentMap.load(b.export(tmp_path / "c")[0]).run_id != model_id
    with pytest.raises(UploadError, match="field 'run_id' must be a 64-digit hex"):
        save_model(tmp_path / "m.npz", a.model_, run_id="abc")
    assert load_model(save_model(tmp_path / "m.npz", a.model_, run_id=None)).n_features_in_ == 3


def test_one_upload_warns_that_there_is_nothing_to_align(uploads):
    _, paths = uploads
    with pytest.warns(UserWarning, match="only 1 participant's upload: there is nothing to"):
        Analyst(model=LogisticRegression()).fit(paths[:1])


def test_make_anchor_replaces_a_pipe_instead_of_blocking_on_it(tmp_path):
    path = tmp_path / "anchor.npy"
    os.mkfifo(path)
    with deadline():
        make_anchor(path, 3, random_state=0)
    assert load_anchor(path).shape == (12, 3)


def test_writers_name_the_missing_folder_not_a_temporary_file(uploads, tmp_path):
    _, paths = uploads
    a = Analyst(model=LogisticRegression()).fit(paths)
    with pytest.raises(ValueError, match=r"nope/m.npz: cannot write the model: the folder "
                                         r".*nope does not exist"):
        save_model(tmp_path / "nope" / "m.npz", a.model_)
    with pytest.raises(ValueError, match="the model is an existing folder"):
        save_model(tmp_path, a.model_)
    assert os.listdir(tmp_path) == []
