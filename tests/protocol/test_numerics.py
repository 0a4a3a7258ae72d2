"""Numerics of a deployment: degenerate anchors and sizes give errors or warnings that say
what to change (the GOPP solver's own exit paths are tested in tests/alignment/
test_gopp_solver.py)."""

import warnings

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_allclose
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge

from skdc.alignment import GOPPAligner, ReferenceAligner
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import Analyst, Participant
from skdc.utils import haar_orthogonal


def _assert_orthogonal(R):
    d = R.shape[-1]
    assert np.isfinite(R).all()
    assert_allclose(np.swapaxes(R, -1, -2) @ R, np.broadcast_to(np.eye(d), R.shape),
                    rtol=0, atol=1e-10)


def _planted(p, r, d, v, seed):
    rng = np.random.RandomState(seed)
    A = orthonormal_anchor(r, d, random_state=rng)
    O = np.stack([haar_orthogonal(d, random_state=rng) for _ in range(p)])
    B = A @ O + v * rng.standard_normal((p, r, d))
    return B - B.mean(axis=1, keepdims=True), O


# -- anchor uploads out of range ----------------------------------------------------------
@pytest.mark.parametrize("scale", [1e80, 1e200, 1e-80, 0.0])
def test_out_of_range_anchor_uploads_say_rescale(scale):
    X = np.random.RandomState(0).rand(20, 3)
    Y = IGDP(2, random_state=0).fit_transform(X)
    Y.anchors = [b * scale for b in Y.anchors]
    for aligner in (GOPPAligner(), ReferenceAligner()):
        match = ("participant 0's centered anchor upload "
                 + ("is constant" if scale == 0 else "has entries up to .* outside the range "
                    "float64 alignment") + ".*Rescale")
        with pytest.raises(ValueError, match=match):
            aligner.fit(Y)


@pytest.mark.parametrize("bad", ["constant", "1e-300", "1e+300", "1e-80"])
@pytest.mark.parametrize("who", [0, 2])
def test_one_participants_out_of_range_anchor_upload_is_named(bad, who):
    # the others are healthy: a check over all participants at once let these through
    X = np.random.RandomState(0).rand(30, 3)
    Y = IGDP(3, random_state=0).fit_transform(X, participant=np.arange(30) % 3)
    b = Y.anchors[who]
    Y.anchors[who] = np.full_like(b, 7.0) if bad == "constant" else b * float(bad)
    what = "is constant" if bad == "constant" else "has entries up to"
    for aligner in (GOPPAligner(), ReferenceAligner(reference=1)):
        with pytest.raises(ValueError, match=f"participant {who}'s centered anchor upload {what}"):
            aligner.fit(Y)


# -- anchors ----------------------------------------------------------------------------------
def test_rank_deficient_anchor_is_refused_with_a_remedy():
    A = orthonormal_anchor(12, 3, random_state=0)
    A[:, 2] = A[:, 0]  # centered columns dependent
    X = np.random.RandomState(0).rand(5, 3)
    with pytest.raises(ValueError, match="rank-deficient.*`skdc anchor make`"):
        Participant(0, IGDP(2, random_state=0), v=0.1).upload(X, anchor=A)
    with pytest.raises(ValueError, match="rank-deficient.*Use anchor='orthonormal'"):
        IGDP(2, anchor=A, random_state=0).fit(X)


def test_ill_conditioned_anchor_warns_with_a_remedy():
    A = orthonormal_anchor(12, 3, random_state=0) * np.array([1.0, 1.0, 1e-9])
    with pytest.warns(UserWarning, match="ill-conditioned.*orthonormal"):
        Participant(0, IGDP(2, random_state=0), v=0.1).upload(
            np.random.RandomState(0).rand(5, 3), anchor=A)


def test_too_few_anchor_rows_says_how_many():
    X = np.random.RandomState(0).rand(5, 4)
    with pytest.raises(ValueError, match="needs at least n_features \\+ 1 = 5"):
        Participant(0, IGDP(2, random_state=0), v=0.1).upload(X, anchor=np.eye(4))
    with pytest.raises(ValueError, match="needs n_anchors >= n_features \\+ 1 = 5"):
        IGDP(2, n_anchors=4, random_state=0).fit(X)


# -- sizes --------------------------------------------------------------------------------------
def _analyst_on(p, d, r, v, seed=0, n_each=2):
    rng = np.random.RandomState(seed)
    X = rng.rand(p * n_each, d)
    y = rng.rand(p * n_each)
    ids = np.repeat(np.arange(p), n_each)
    A = orthonormal_anchor(r, d, random_state=seed)
    mech = IGDP(p, anchor=A, random_state=seed)
    with sklearn.config_context(enable_metadata_routing=True):
        Y = mech.fit_transform(X, participant=ids)
    Y.anchors = [b + v * rng.standard_normal(b.shape) for b in Y.anchors]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        analyst = Analyst(GOPPAligner(), Ridge()).fit(Y, y)
    return analyst, mech, X, ids


@pytest.mark.parametrize("p, d, r", [(2, 3, 4), (500, 2, 3), (4, 1, 2), (5, 6, 7)])
def test_sizes_align_exactly_at_zero_noise(p, d, r):
    # p = 2 and p = 500 participants, d = 1, and the minimum r = d + 1 anchor rows
    analyst, mech, X, ids = _analyst_on(p, d, r, v=0.0)
    R = analyst.aligner_.rotations_
    _assert_orthogonal(R)
    # exact alignment: O_i Rhat_i is one common rotation (the GOPP gauge)
    Q = mech.rotations_ @ R
    assert_allclose(Q, np.broadcast_to(Q[0], Q.shape), rtol=0, atol=1e-9)


def test_noise_above_the_phase_transition_warns_with_a_remedy():
    rng = np.random.RandomState(0)
    B, _ = _planted(8, 5, 4, 5.0, seed=1)
    from skdc import Uploads

    Y = Uploads(rng.rand(8, 4), np.arange(8), anchors=list(B))
    with pytest.warns(ConvergenceWarning, match="Lower v, add anchor rows, or raise max_iter"):
        GOPPAligner(v=0.0, max_iter=2, acceleration=None).fit(Y)


def test_near_duplicate_participants_still_align():
    analyst, mech, X, ids = _analyst_on(3, 3, 8, v=0.0)
    # a participant nearly duplicating another (secret shared, tiny anchor noise) is flagged
    rng = np.random.RandomState(1)
    B = [b.copy() for b in analyst.aligner_.anchor_uploads_]
    B[2] = B[1] + 1e-13 * rng.standard_normal(B[1].shape)
    from skdc import Uploads

    up = Uploads(rng.rand(6, 3), np.repeat(np.arange(3), 2), anchors=B)
    with pytest.warns(UserWarning, match=r"participants \[\(1, 2\)\] have nearly identical"):
        a = Analyst(GOPPAligner(), Ridge()).fit(up, rng.rand(6))
    _assert_orthogonal(a.aligner_.rotations_)
