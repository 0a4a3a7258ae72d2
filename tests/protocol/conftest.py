"""Shared by the protocol's tests: a guard against hanging readers (tests/_fuzz.py), the command
line run in process, and a small deployment made through it; a deployment made through the
Python API (Participant, Analyst) beside the simulation it reproduces."""

import os

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from skdc.__main__ import main
from skdc.alignment import GOPPAligner
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import Analyst, Participant, save_simulated_uploads
from tests._fuzz import deadline

__all__ = ["API_D", "D", "P", "api_data", "api_deploy", "deadline", "deploy", "deployment",
           "run_cli", "simulated_uploads", "upload_argv", "upload_files"]

P, D = 3, 4  # participants and features of the command-line deployments


def run_cli(argv, capsys, *, seed_warning=False):
    """``skdc ARGV`` in process, under the deadline: ``(status, stdout, stderr)``.

    The test deployments upload with chosen seeds (bit-for-bit tests), about which the analyst
    warns; that warning's line is left out of ``stderr`` unless ``seed_warning``.
    """
    with deadline():
        status = main([str(a) for a in argv])
    out = capsys.readouterr()
    err = out.err
    if not seed_warning:
        err = "".join(ln for ln in err.splitlines(keepends=True) if CHOSEN_SEED not in ln)
    return status, out.out, err


#: What the analyst's warning about an upload made with a chosen seed says.
CHOSEN_SEED = "made with a chosen seed"


def upload_argv(site, i, **over):
    """``participant upload`` of participant ``i`` of the deployment in the folder ``site``.

    ``over`` (``**{"--out": path}``) replaces a flag's value, adds a flag, or drops one
    (``None``).
    """
    args = {"--id": i, "--n-participants": P, "--data": site / f"X{i}.npy",
            "--labels": site / f"y{i}.npy", "--anchor": site / "anchor.npy",
            "--anchor-noise": 0.05, "--secret-out": site / f"secret{i}.npz",
            "--out": site / "uploads" / f"upload_{i}.npz"}
    args.update(over)
    argv = ["participant", "upload"]
    for k, v in args.items():
        if v is not None:
            argv += [k, v]
    return argv


def deploy(site, *, n_rows=20, labels=None, seeds=None):
    """A deployment made by the command line in the folder ``site``; the upload paths.

    Each participant ``i`` gets ``n_rows`` random rows ``X{i}.npy`` and their labels
    ``y{i}.npy`` (random, or ``labels(X)``); then ``X_test.npy``, the shared ``anchor.npy`` and
    each participant's ``secret{i}.npz`` and ``uploads/upload_{i}.npz`` (secret seed
    ``seeds[i]`` when given).
    """
    rng = np.random.RandomState(0)
    for i in range(P):
        X = rng.rand(n_rows, D)
        np.save(site / f"X{i}.npy", X)
        np.save(site / f"y{i}.npy", rng.randint(2, size=n_rows) if labels is None else labels(X))
    np.save(site / "X_test.npy", rng.rand(5, D))
    assert main(["anchor", "make", "--n-features", str(D), "--seed", "1",
                 "--out", str(site / "anchor.npy")]) == 0
    (site / "uploads").mkdir()
    for i in range(P):
        seed = ({} if seeds is None else
                {"--seed": seeds[i], "--noise-seed": seeds[i] + 1000})
        assert main([str(a) for a in upload_argv(site, i, **seed)]) == 0
    return [str(site / "uploads" / f"upload_{i}.npz") for i in range(P)]


# -- a deployment through the Python API -------------------------------------------------------
API_D, N_EACH = 5, 30  # features, and rows of each of the P participants, of that deployment


def api_data(seed):
    """``(X, y, ids, X_test, ids_test)``: rows grouped by participant, in id order."""
    rng = np.random.RandomState(seed)
    X = rng.rand(P * N_EACH, API_D)
    y = rng.randint(3, size=P * N_EACH)
    ids = np.repeat(np.arange(P), N_EACH)  # rows grouped by participant, in id order
    X_test = rng.rand(P * 8, API_D)
    ids_test = np.repeat(np.arange(P), 8)
    return X, y, ids, X_test, ids_test


def api_deploy(tmp, X, y, ids, A, *, s0, s, v, mechanism=IGDP, aligner=None, model=None):
    """Each participant uploads (secret seed ``s0``, noise seed ``s``) into ``tmp``; the analyst
    fits and exports to ``tmp/model``. Returns the upload paths and the analyst."""
    os.makedirs(tmp, exist_ok=True)
    paths = []
    for i in range(P):
        me = Participant(i, mechanism(P, random_state=s0, noise_random_state=s), v=v)
        up = me.upload(X[ids == i], y[ids == i], anchor=A)
        paths.append(me.save_upload(os.path.join(tmp, f"upload_{i}.npz"), up))
        me.save_secret(os.path.join(tmp, f"secret_{i}.npz"))
    analyst = Analyst(aligner, model).fit(paths)
    analyst.export(os.path.join(tmp, "model"))
    return paths, analyst


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    """An I-GDP + GOPP deployment through the Python API and the pipeline it reproduces."""
    tmp = str(tmp_path_factory.mktemp("deploy"))
    X, y, ids, X_test, ids_test = api_data(0)
    A = orthonormal_anchor(4 * API_D, API_D, random_state=1)
    paths, analyst = api_deploy(tmp, X, y, ids, A, s0=11, s=22, v=0.05,
                                aligner=GOPPAligner(v=0),
                                model=LogisticRegression(max_iter=500))
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([
            ("gdp", IGDP(P, anchor=A, random_state=11, noise_random_state=22)),
            ("align", GOPPAligner(v=0.05)),
            ("clf", LogisticRegression(max_iter=500)),
        ]).fit(X, y, participant=ids)
    return dict(tmp=tmp, X=X, y=y, ids=ids, X_test=X_test, ids_test=ids_test, A=A,
                paths=paths, analyst=analyst, pipe=pipe)


# -- a simulated collaboration's upload files --------------------------------------------------
def simulated_uploads(seed=0, p=3, n=30, d=4, **kw):
    """``(mechanism, Y, y, ids)``: an I-GDP mechanism's output over ``p`` participants."""
    rng = np.random.RandomState(seed)
    X, y = rng.rand(n, d), rng.randint(3, size=n)
    ids = np.arange(n) % p
    mech = IGDP(n_participants=p, random_state=seed, **kw)
    return mech, mech.fit_transform(X, participant=ids), y, ids


@pytest.fixture
def upload_files(tmp_path):
    """``(paths, Y, y, ids, mechanism)``: three participants' upload files ``u<i>.npz``."""
    mech, Y, y, ids = simulated_uploads()
    paths = save_simulated_uploads([tmp_path / f"u{i}.npz" for i in range(3)], Y, labels=y,
                                   mechanism=mech, v=0.1)
    return paths, Y, y, ids, mech
