"""Analyst (skdc/protocol/_analyst.py): what it refuses and warns about, and that no secret
reaches what it holds."""

import os
import pickle

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge

from skdc.alignment import GOPPAligner
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import CGDP
from skdc.protocol import Analyst, Participant, UploadError, load_uploads

from .conftest import API_D as D
from .conftest import P, api_data


def _float_windows(blob):
    """Every float64 readable at every byte offset of ``blob``."""
    out = set()
    for off in range(8):
        n = (len(blob) - off) // 8
        out.update(np.frombuffer(blob, dtype="<f8", count=n, offset=off).tolist())
    return out


def test_secrets_stay_home(deployment):
    """No participant secret, raw anchor or raw row appears in what the analyst holds."""
    dep = deployment
    sim = dep["pipe"]["gdp"]
    blobs = [pickle.dumps(dep["analyst"]), pickle.dumps(dep["analyst"].aligner_)]
    blobs += [open(p, "rb").read() for p in dep["paths"]]
    model_dir = os.path.join(dep["tmp"], "model")
    blobs += [open(os.path.join(model_dir, f), "rb").read() for f in os.listdir(model_dir)]
    seen = set().union(*(_float_windows(b) for b in blobs))
    secret_values = {
        "rotations": sim.rotations_, "translations": sim.translations_,
        "raw anchor": dep["A"], "raw rows": dep["X"],
    }
    for what, values in secret_values.items():
        leaked = set(np.ravel(values).tolist()) & seen - {0.0}
        assert not leaked, f"{what} found in the analyst's files: {sorted(leaked)[:3]}"
    # the test can fail: a pickled mechanism does contain them
    assert set(sim.rotations_.ravel().tolist()) <= _float_windows(pickle.dumps(sim))
    # and the secret file, which stays home, holds its own participant's secret
    secret = open(os.path.join(dep["tmp"], "secret_0.npz"), "rb").read()
    assert set(sim.rotations_[0].ravel().tolist()) <= _float_windows(secret)


def test_analyst_refuses_bad_setups(deployment):
    paths = deployment["paths"]
    with pytest.raises(ValueError, match=r"GOPPAligner\(v=0.1\) would add anchor noise"):
        Analyst(GOPPAligner(v=0.1)).fit(paths)
    with pytest.raises(TypeError, match="aligner must be a GOPPAligner"):
        Analyst(LogisticRegression()).fit(paths)
    loaded = load_uploads(paths)
    with pytest.raises(ValueError, match="carry no labels"):
        Analyst().fit(loaded._replace(y=None))
    with pytest.raises(UploadError, match="missing"):
        Analyst().fit(paths[1:])
    with pytest.raises(ValueError, match=r"participant_id must be in 0 .. 2"):
        deployment["analyst"].alignment_map(5)


def test_analyst_warns_on_shared_secrets(tmp_path):
    X, y, ids, *_ = api_data(2)
    A = orthonormal_anchor(4 * D, D, random_state=2)
    paths = []
    for i in range(P):
        # participants 0 and 1 wrongly share one common secret (C-GDP with one seed); the
        # anchor noise, drawn per participant, is too small to hide it
        mech = CGDP(P, anchor="orthonormal", random_state=5 if i < 2 else 6)
        me = Participant(i, mech.set_params(noise_random_state=7), v=1e-12)
        up = me.upload(X[ids == i], y[ids == i], anchor=A)
        paths.append(me.save_upload(tmp_path / f"u{i}.npz", up))
    with pytest.warns(UserWarning, match=r"participants \[\(0, 1\)\] have nearly identical"):
        analyst = Analyst(model=Ridge()).fit(paths)
    assert analyst.near_duplicates_ == [(0, 1)]


