"""Tests of the joint-likelihood attack: exact at a noiseless anchor, near the truth when the
sample is the target's own rows, never below its starts in its own objective."""

import dataclasses

import numpy as np
import pytest
from numpy.testing import assert_allclose
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
from skdc.metrics import make_attack_scorer
from skdc.utils._sklearn_compat import InvalidParameterError

SCALES = np.array([4.0, 2.0, 1.0, 0.5, 0.3])


def _pipe(v, seed, participants=2):
    steps = [("gdp", IGDP(participants, random_state=seed))]
    if v is not None:
        steps.append(("align", GOPPAligner(v=v)))
    return Pipeline(steps)


def _view(v, seed=0, n=300, participants=2):
    X = np.random.RandomState(seed).randn(n, len(SCALES)) * SCALES - 0.5
    return collusion_view(_pipe(v, seed, participants).fit(X), X)


def _log_likelihood(view, O, v):
    """``-||Bbar - Abar O||^2 / (2 v^2) - (N / 2) log det(pooled scatter)``, up to a
    constant, written from its definition (not from the attack's code)."""
    Abar = view.anchor - view.anchor.mean(axis=0)
    Bbar = view.B - view.B.mean(axis=0)
    Xc = view.colluder_X - view.colluder_X.mean(axis=0)
    Zc = (view.Y - view.Y.mean(axis=0)) @ O.T
    pooled = np.vstack([Xc, Zc])
    return (-np.sum((Bbar - Abar @ O) ** 2) / (2 * v**2)
            - len(pooled) / 2 * np.linalg.slogdet(pooled.T @ pooled)[1])


@pytest.mark.parametrize("v", [None, 0.0], ids=["no-aligner", "gopp-v0"])
def test_noiseless_anchor_recovers_exactly(v):
    view = _view(v)
    rec = JointLikelihoodAttack().reconstruct(view)
    assert_allclose(rec.rotation, view.truth.rotation, rtol=0, atol=1e-10)
    assert_allclose(rec.X, view.truth.X, rtol=0, atol=1e-9)


def test_own_rows_as_the_sample_stay_near_the_truth():
    """With the target's own rows as the sample the data term peaks at the true rotation
    (Fiedler's inequality: the pooled scatter's determinant is smallest with the axes aligned
    in order); the anchor term pulls off it by a little. The estimate is much closer to the
    truth than the anchor's."""
    view = _view(0.3, n=400)
    view = dataclasses.replace(view, colluder_X=view.truth.X_mechanism)
    O = JointLikelihoodAttack().reconstruct(view).rotation
    O_op = KnownAnchorAttack("procrustes").reconstruct(view).rotation
    err = np.linalg.norm(O - view.truth.rotation)
    assert err < 0.1 and err < np.linalg.norm(O_op - view.truth.rotation) / 5


def _breast_cancer():
    X, _ = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X)


@pytest.mark.parametrize("participants, v, seed",
                         [(2, 0.165, 0), (2, 0.5, 1), (5, 0.165, 2), (5, 0.5, 0)])
def test_never_below_its_starts_in_its_objective(participants, v, seed):
    """On standardized breast cancer the result's log-likelihood (computed here from the
    definition) is at least that of the Procrustes and the sample-axes estimates."""
    X = _breast_cancer()
    view = collusion_view(_pipe(v, seed, participants).fit(X), X)
    starts = [KnownAnchorAttack("procrustes"), SampleAxesAttack()]
    start = max(_log_likelihood(view, a.reconstruct(view).rotation, v) for a in starts)
    for max_iter in (0, 5, 200):
        O = JointLikelihoodAttack(max_iter=max_iter).reconstruct(view).rotation
        assert_allclose(O.T @ O, np.eye(X.shape[1]), rtol=0, atol=1e-10)
        got = _log_likelihood(view, O, v)
        assert got >= start - 1e-9 * abs(start)
    assert got > start  # and it climbs


def test_max_iter_zero_returns_the_better_start():
    view = _view(0.4, seed=3)
    starts = [a.reconstruct(view).rotation
              for a in (KnownAnchorAttack("procrustes"), SampleAxesAttack())]
    better = max(starts, key=lambda O: _log_likelihood(view, O, 0.4))
    rec = JointLikelihoodAttack(max_iter=0).reconstruct(view)
    assert_allclose(rec.rotation, better, rtol=0, atol=1e-12)


def test_registered_scored_and_refusals():
    assert isinstance(make_attack("joint_likelihood"), JointLikelihoodAttack)
    X = np.random.RandomState(0).randn(300, len(SCALES)) * SCALES
    pipe = _pipe(0.3, 0).fit(X)
    scorer = make_attack_scorer("joint_likelihood", "linkage",
                                metric_params={"matcher": "best", "random_state": 0})
    assert 0.0 <= scorer(pipe, X) < 0.9  # links above chance
    view = collusion_view(pipe, X)
    with pytest.raises(InvalidParameterError, match="max_iter"):
        JointLikelihoodAttack(max_iter=-1).reconstruct(view)
    with pytest.raises(ValueError, match="the collusion view lacks anchor, B"):
        JointLikelihoodAttack().reconstruct(dataclasses.replace(view, anchor=None, B=None))
