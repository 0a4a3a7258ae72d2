"""Tests of the sample-axes attack: exact cases, the signed-permutation choice by brute force,
the anchor-noise estimate and its advantage over Procrustes at high anchor noise; the scale
``v`` it shares with the joint-likelihood attack (``anchor_noise``, deprecated)."""

import dataclasses
import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from skdc.alignment import GOPPAligner
from skdc.attacks import (
    JointLikelihoodAttack,
    KnownAnchorAttack,
    SampleAxesAttack,
    collusion_view,
    make_attack,
)
from skdc.mechanisms import IGDP
from skdc.metrics import linkage_accuracy
from skdc.utils._sklearn_compat import InvalidParameterError

SCALES = np.array([4.0, 2.0, 1.0, 0.5])  # distinct variances


def _view(v, seed=0, n=300, scales=SCALES, participants=2):
    X = np.random.RandomState(seed).randn(n, len(scales)) * scales + 1.0
    steps = [("gdp", IGDP(participants, random_state=seed))]
    if v is not None:
        steps.append(("align", GOPPAligner(v=v)))
    return collusion_view(Pipeline(steps).fit(X), X)


def _log_likelihood(view, O, v):
    """The joint log-likelihood written from its definition: the anchor's Gaussian term
    ``-||Bbar - Abar O||^2 / (2 v^2)`` (up to a constant) and the profile Gaussian term of the
    pooled rows, ``-(N / 2) log det`` of their scatter."""
    Abar = view.anchor - view.anchor.mean(axis=0)
    Bbar = view.B - view.B.mean(axis=0)
    anchor = -np.sum((Bbar - Abar @ O) ** 2) / (2 * v**2) + np.sum(Abar**2) / (2 * v**2)
    Xc = view.colluder_X - view.colluder_X.mean(axis=0)
    Zc = (view.Y - view.Y.mean(axis=0)) @ O.T  # the target's de-rotated rows
    pooled = np.vstack([Xc, Zc])
    return anchor - len(pooled) / 2 * np.linalg.slogdet(pooled.T @ pooled)[1]


@pytest.mark.parametrize("v", [None, 0.0], ids=["no-aligner", "gopp-v0"])
def test_noiseless_anchor_recovers_exactly(v):
    """A noiseless anchor fixes the rotation: the Procrustes solution, exact (Prop 3.1 of the
    GDP paper)."""
    view = _view(v)
    rec = SampleAxesAttack().reconstruct(view)
    assert_allclose(rec.rotation, view.truth.rotation, rtol=0, atol=1e-10)
    assert_allclose(rec.translation, view.truth.translation, rtol=0, atol=1e-10)
    assert_allclose(rec.X, view.truth.X, rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_own_rows_as_the_sample_recover_the_rotation(seed):
    """When the 'sample' is the target's own rows (distinct variances), the principal axes
    match exactly and the noisy anchor only picks signs: the rotation is exact, so the
    reconstruction is exact up to the anchor's noisy translation (a shift of every row)."""
    view = _view(0.3, seed)
    view = dataclasses.replace(view, colluder_X=view.truth.X_mechanism)
    rec = SampleAxesAttack().reconstruct(view)
    assert_allclose(rec.rotation, view.truth.rotation, rtol=0, atol=1e-8)
    shift = rec.X - view.truth.X
    assert_allclose(shift, np.broadcast_to(shift.mean(axis=0), shift.shape), rtol=0, atol=1e-8)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_rotation_is_the_best_signed_permutation_of_the_axes(seed):
    """Among all 3! * 2^3 signed permutations D, ``U_x D U_y^T`` of the attack maximises the
    joint log-likelihood (counted here one by one); close variances let the anchor swap."""
    scales = np.array([2.0, 1.9, 0.6])
    view = _view(0.6, seed, n=120, scales=scales)
    v = 0.6
    Xc = view.colluder_X - view.colluder_X.mean(axis=0)
    Yc = view.Y - view.Y.mean(axis=0)
    Ux = np.linalg.eigh(Xc.T @ Xc)[1]
    Uy = np.linalg.eigh(Yc.T @ Yc)[1]
    best, best_value = None, -np.inf
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product([1.0, -1.0], repeat=3):
            D = np.zeros((3, 3))
            D[list(perm), range(3)] = signs
            O = Ux @ D @ Uy.T
            value = _log_likelihood(view, O, v)
            if value > best_value:
                best, best_value = O, value
    rec = SampleAxesAttack().reconstruct(view)
    assert_allclose(rec.rotation, best, rtol=0, atol=1e-10)


def test_anchor_noise_is_estimated_when_undeclared():
    """Without a declared v (no aligner: uploads that arrive noisy), v is estimated from the
    Procrustes residual over its degrees of freedom, (m - 1) d - d (d - 1) / 2."""
    view = _view(0.3, n=200)
    undeclared = dataclasses.replace(view, aligner=None)
    Abar = view.anchor - view.anchor.mean(axis=0)
    Bbar = view.B - view.B.mean(axis=0)
    u, _, vt = np.linalg.svd(Abar.T @ Bbar)
    (m, d) = Abar.shape
    v_hat = np.sqrt(np.sum((Bbar - Abar @ u @ vt) ** 2) / ((m - 1) * d - d * (d - 1) / 2))
    assert 0.2 < v_hat < 0.4
    got = SampleAxesAttack().reconstruct(undeclared)
    given = SampleAxesAttack(v=v_hat).reconstruct(view)
    assert_allclose(got.rotation, given.rotation, rtol=0, atol=1e-12)


def test_data_channel_beats_procrustes_at_high_anchor_noise():
    """Standardized breast cancer, I-GDP + GOPP at v = 0.5 with 2 participants: the sample's
    axes link far more of the target's rows than the Procrustes estimate (the issue measured
    88 % against 57 %)."""
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    gain = []
    for seed in range(3):
        pipe = Pipeline([("gdp", IGDP(2, random_state=seed)), ("align", GOPPAligner(0.5))])
        view = collusion_view(pipe.fit(X), X)
        yt = y[view.target_rows]
        link = [float(linkage_accuracy(view.truth.X, attack.reconstruct(view).X, yt,
                                       matcher="euclidean", random_state=0))
                for attack in (SampleAxesAttack(), KnownAnchorAttack("procrustes"))]
        gain.append(link[0] - link[1])
    assert np.mean(gain) > 0.2


def test_registered_and_refusals():
    assert isinstance(make_attack("sample_axes"), SampleAxesAttack)
    view = _view(0.3)
    for bad in ({"v": -1.0}, {"anchor_noise": -1.0}, {"anchor_noise": "none"}):
        with pytest.raises(InvalidParameterError, match=f"'{next(iter(bad))}' parameter"):
            SampleAxesAttack(**bad).reconstruct(view)
    with pytest.raises(ValueError, match="the collusion view lacks anchor, B"):
        SampleAxesAttack().reconstruct(dataclasses.replace(view, anchor=None, B=None))
    no_rows = dataclasses.replace(view, colluder_X=view.colluder_X[:1])
    with pytest.raises(ValueError, match="at least 2 colluder rows"):
        SampleAxesAttack().reconstruct(no_rows)


@pytest.mark.parametrize("Attack", [SampleAxesAttack, JointLikelihoodAttack])
def test_anchor_noise_is_a_deprecated_spelling_of_v(Attack):
    # both attacks read the scale through _sample_axes._Channels
    view = _view(0.3)
    new = Attack(v=0.2).reconstruct(view)
    assert Attack(0.2).v == 0.2  # positionally, the first parameter is v, as it was
    old_attack = clone(Attack(anchor_noise=0.2))  # no warning before it reconstructs
    assert old_attack.get_params()["anchor_noise"] == 0.2
    with pytest.warns(FutureWarning, match="anchor_noise= is deprecated.*use v= instead") \
            as caught:
        old = old_attack.reconstruct(view)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert_array_equal(old.rotation, new.rotation)
    assert_array_equal(old.X, new.X)
    with pytest.warns(FutureWarning, match="anchor_noise= is deprecated"):
        old = Attack(anchor_noise=None).reconstruct(view)  # the old default, spelled out
    assert_array_equal(old.rotation, Attack().reconstruct(view).rotation)
    with pytest.raises(TypeError, match="pass v= only"):
        Attack(v=0.2, anchor_noise=0.2).reconstruct(view)
