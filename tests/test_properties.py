"""Property-based checks of algebraic identities on small shapes (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from skdc import IGDP, GOPPAligner, ReferenceAligner
from skdc.utils import haar_orthogonal, polar

SETTINGS = settings(max_examples=50, deadline=None, derandomize=True)


@SETTINGS
@given(d=st.integers(1, 7), seed=st.integers(0, 2**31 - 1))
def test_haar_is_orthogonal(d, seed):
    O = haar_orthogonal(d, random_state=seed)
    np.testing.assert_allclose(O.T @ O, np.eye(d), rtol=0, atol=1e-12)


@SETTINGS
@given(
    n=st.integers(8, 40),
    d=st.integers(1, 5),
    p=st.integers(1, 4),
    seed=st.integers(0, 1000),
)
def test_uploads_shapes_and_participants(n, d, p, seed):
    X = np.random.RandomState(seed).randn(n, d)
    ids = np.arange(n) % p
    mech = IGDP(p, random_state=seed)
    Y = mech.fit_transform(X, participant=ids)
    assert Y.shape == (n, d)
    np.testing.assert_array_equal(Y.participant, ids)
    assert len(Y.anchors) == p and all(b.shape == (4 * d, d) for b in Y.anchors)
    sub = mech.transform(X[::2], participant=ids[::2])
    np.testing.assert_array_equal(sub, Y[::2])


@SETTINGS
@given(d=st.integers(1, 5), p=st.integers(2, 4), seed=st.integers(0, 1000))
def test_alignment_undoes_any_extra_rotation(d, p, seed):
    """Aligning uploads rotated by one more orthogonal R gives Z up to one rotation."""
    rng = np.random.RandomState(seed)
    X = rng.randn(30, d)
    ids = np.arange(30) % p
    Y = IGDP(p, random_state=seed).fit_transform(X, participant=ids)
    R = haar_orthogonal(d, rng)
    Y_rot = type(Y)(np.asarray(Y) @ R, participant=Y.participant,
                    anchors=[b @ R for b in Y.anchors])
    for aligner in (ReferenceAligner(), GOPPAligner()):
        Z = aligner.fit_transform(Y)
        Z_rot = aligner.fit_transform(Y_rot)
        Zc, Zrc = Z - Z.mean(0), Z_rot - Z_rot.mean(0)
        Q = polar(Zrc.T @ Zc)
        np.testing.assert_allclose(Zrc @ Q, Zc, rtol=0, atol=1e-8)
