"""The codebook release of App. G.6 of Bourne and Allison (arXiv:2610.13768): balanced cells,
charged and realised leakage (the binary symmetric channel below one bit), the conditional-mean
decoder, and the slack chain rho* <= rho_blk <= rho_cb of Table 8."""

import math

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.datasets import load_digits

from skdc.mechanisms import CodebookRelease
from skdc.metrics import bound_slack_score
from skdc.privacy import (
    BlockEntropyLowerBound,
    ReconstructionBound,
    binary_symmetric_leakage,
)


def _clusters(rng, n_clusters, per_cluster, dim=3, spread=0.05):
    centres = 10 * rng.standard_normal((n_clusters, dim))
    return np.concatenate([c + spread * rng.standard_normal((per_cluster, dim)) for c in centres])


@pytest.fixture(scope="module")
def digits_chain():
    """Disjoint D_perp (100), D_est (800), D_shadow (797), targets (100); a small entropy fit."""
    X, _ = load_digits(return_X_y=True)
    X = X[np.random.RandomState(0).permutation(X.shape[0])].astype(np.float64)
    X_perp, X_est, X_shadow, X_target = X[:100], X[100:900], X[900:-100], X[-100:]
    ent = BlockEntropyLowerBound(block_sizes=[8], nu2=(1.6,), device="cpu", random_state=0)
    return ent.fit(X_est, X_perp=X_perp), X_est, X_shadow, X_target


@pytest.mark.parametrize("n_bits", [1, 2, 3])
def test_balanced_data_charges_r_bits_and_realises_them(n_bits):
    rng = np.random.RandomState(n_bits)
    M = 2**n_bits
    X_est, X_shadow = _clusters(rng, M, 50), _clusters(rng, M, 40)
    cb = CodebookRelease(n_bits, random_state=0).fit(X_est, X_shadow=X_shadow)
    assert cb.leakage_bits_ == n_bits
    assert cb.entropy_bits_ <= n_bits + 1e-12
    assert cb.entropy_bits_ == pytest.approx(n_bits, abs=0.01)
    assert_array_equal(np.bincount(cb.labels_, minlength=M), np.full(M, 50))
    assert cb.codewords_.shape == cb.cell_means_.shape == (M, 3)


def test_balanced_assignment_caps_every_cell():
    rng = np.random.RandomState(0)
    # unbalanced source: one big cluster and two small ones, four cells
    X = np.concatenate([rng.standard_normal((300, 2)), 8 + rng.standard_normal((50, 2)),
                        -8 + rng.standard_normal((51, 2))])
    cb = CodebookRelease(2, random_state=0).fit(X)
    sizes = np.bincount(cb.labels_, minlength=4)
    assert sizes.sum() == X.shape[0] and sizes.max() <= math.ceil(X.shape[0] / 4)
    # codewords are the balanced cells' means
    for c in range(4):
        assert_allclose(cb.codewords_[c], X[cb.labels_ == c].mean(axis=0), rtol=1e-12)
    # the decoder is the mean of the estimation rows released as each cell
    Q = cb.release(X)
    for c in np.unique(Q):
        assert_allclose(cb.cell_means_[c], X[Q == c].mean(axis=0), rtol=1e-12)
    assert_allclose(cb.release_frequencies_, np.bincount(Q, minlength=4) / X.shape[0], rtol=1e-12)
    # the release indexes the nearest codeword
    d = ((X[:, None, :] - cb.codewords_[None]) ** 2).sum(-1)
    assert_array_equal(Q, d.argmin(axis=1))
    # seeded: same seed, same codebook
    assert_array_equal(CodebookRelease(2, random_state=0).fit(X).labels_, cb.labels_)


def test_binary_symmetric_channel_leakage():
    rng = np.random.RandomState(0)
    X = _clusters(rng, 2, 200)
    cb = CodebookRelease(keep_prob=0.9, random_state=0).fit(X)
    assert_array_equal(cb.release_frequencies_, [0.5, 0.5])
    assert cb.leakage_bits_ == pytest.approx(0.531004, abs=1e-6)
    assert cb.leakage_bits_ == binary_symmetric_leakage(0.5, 0.9)
    # the channel keeps the index with probability 0.9
    X_big = _clusters(np.random.RandomState(0), 2, 2000)
    Q = cb.release(X_big)
    kept = Q == CodebookRelease(random_state=0).fit(X).release(X_big)
    assert kept.mean() == pytest.approx(0.9, abs=0.02)
    assert_array_equal(cb.release(X_big), Q)  # reproducible
    # p = 1/2 releases nothing
    assert CodebookRelease(keep_prob=0.5, random_state=0).fit(X).leakage_bits_ == pytest.approx(
        0.0, abs=1e-12)


def test_decoder_is_the_conditional_mean():
    rng = np.random.RandomState(2)
    X = rng.standard_normal((300, 4))
    det = CodebookRelease(random_state=0).fit(X)
    Q = det.release(X[:50])
    assert_allclose(det.attack(Q), det.cell_means_[Q], rtol=0)
    # channel: posterior f_c p^[c = Q] (1 - p)^[c != Q], normalised
    p = 0.8
    bsc = CodebookRelease(keep_prob=p, random_state=0).fit(X)
    Y = bsc.release(X[:50])
    f = bsc.release_frequencies_
    for y, row in zip(Y, bsc.posterior(Y)):
        w = np.array([f[0] * (p if y == 0 else 1 - p), f[1] * (p if y == 1 else 1 - p)])
        assert_allclose(row, w / w.sum(), rtol=1e-12)
    assert_allclose(bsc.attack(Y), bsc.posterior(Y) @ bsc.cell_means_, rtol=1e-12)
    # p = 1/2: the release says nothing, the decoder returns the estimation mean
    half = CodebookRelease(keep_prob=0.5, random_state=0).fit(X)
    assert_allclose(half.release_and_attack(X[:5]), np.tile(X.mean(axis=0), (5, 1)), rtol=0,
                    atol=1e-12)


def test_slack_chain_rho_star_below_rho_blk_below_rho_cb(digits_chain):
    """rho* <= rho_blk <= rho_cb (Table 8), at one bit and at sub-bit rates."""
    ent, X_est, X_shadow, X_target = digits_chain
    bound = ReconstructionBound(ent)
    last_blk = 1.0
    for keep_prob in (0.8, 1.0):
        cb = CodebookRelease(1, keep_prob=keep_prob, random_state=0)
        cb.fit(X_est, X_shadow=X_shadow)
        rho_star = bound.rho_star(cb.leakage_bits_)[0]
        assert rho_star > 0.2  # a floor that can be violated
        rho_cb = cb.score(X_target, trace=ent.trace_)
        rho_blk = cb.per_block_bound(X_est, ent)
        assert bound_slack_score(rho_cb, rho_star) >= 0
        assert rho_star <= rho_blk
        assert rho_blk <= rho_cb + 0.03  # the second gap: estimation error only
        assert rho_blk <= last_blk  # more leakage, lower floor
        last_blk = rho_blk
    # two bits: the floor keeps falling, the attack keeps above it
    cb2 = CodebookRelease(2, random_state=0).fit(X_est, X_shadow=X_shadow)
    rho_blk2 = cb2.per_block_bound(X_est, ent)
    assert rho_blk2 < last_blk
    assert bound.rho_star(2.0)[0] <= rho_blk2 <= cb2.score(X_target, trace=ent.trace_) + 0.03


@pytest.mark.parametrize(
    "params, match",
    [
        ({"n_bits": 0}, "'n_bits' parameter"),
        ({"keep_prob": 0.4}, "'keep_prob' parameter"),
        ({"keep_prob": 1.2}, "'keep_prob' parameter"),
        ({"n_init": 0}, "'n_init' parameter"),
        ({"n_bits": 2, "keep_prob": 0.9}, "needs n_bits=1"),
        ({"n_bits": 5}, "at least 32 estimation rows"),
    ],
)
def test_bad_parameters_refused(params, match):
    X = np.random.RandomState(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match=match):
        CodebookRelease(**params).fit(X)


def test_bad_inputs_refused(digits_chain):
    rng = np.random.RandomState(0)
    X = rng.standard_normal((40, 3))
    with pytest.raises(ValueError, match="X_shadow has 4 features but X has 3"):
        CodebookRelease().fit(X, X_shadow=rng.standard_normal((10, 4)))
    with pytest.raises(ValueError, match="needs at least 4 shadow rows"):
        CodebookRelease(2).fit(X, X_shadow=rng.standard_normal((3, 3)))
    cb = CodebookRelease(random_state=0).fit(X)
    with pytest.raises(ValueError, match="X has 4 features"):
        cb.release(rng.standard_normal((2, 4)))
    with pytest.raises(ValueError, match=r"values in \[0, 2\)"):
        cb.attack(np.array([0, 2]))
    with pytest.raises(ValueError, match="1-D integer array"):
        cb.attack(np.array([0.5, 1.0]))
    ent, X_est, X_shadow, _ = digits_chain
    with pytest.raises(TypeError, match="fitted BlockEntropyLowerBound"):
        cb.per_block_bound(X, BlockEntropyLowerBound())
    with pytest.raises(ValueError, match="fitted on 64 features but the codebook has 3"):
        cb.per_block_bound(X, ent)
    small = CodebookRelease(3, random_state=0).fit(X_est[:100], X_shadow=X_shadow)
    with pytest.raises(ValueError, match=r"must hold >= 20 estimation rows"):
        small.per_block_bound(X_est[:100], ent)


def test_the_release_contract_is_shared_with_the_likelihood_attack():
    """The developer guide's release contract (section 9): ``fit`` on a shadow sample,
    ``release``, ``attack``, ``release_and_attack(X) == attack(release(X))`` and
    ``score(X, y=None, trace=None)``, the same for the codebook and the DP-SGD attack."""
    import inspect

    from skdc.attacks import PriorAwareLikelihoodAttack

    for name in ("release", "attack", "release_and_attack", "score"):
        # the released array keeps each paper's symbol (Q, Y); the positions agree
        params = [[p.kind for p in inspect.signature(getattr(cls, name)).parameters.values()]
                  for cls in (CodebookRelease, PriorAwareLikelihoodAttack)]
        assert params[0][:2] == params[1][:2], name
    assert list(inspect.signature(CodebookRelease.score).parameters) == [
        "self", "X", "y", "trace"]
    rng = np.random.RandomState(0)
    shadow, targets = rng.randn(200, 3), rng.randn(10, 3)
    for release in (CodebookRelease(2, random_state=0).fit(shadow),
                    PriorAwareLikelihoodAttack(0.5, random_state=0).fit(shadow)):
        X_hat = release.release_and_attack(targets)
        assert X_hat.shape == targets.shape
        assert_allclose(X_hat, release.attack(release.release(targets)), rtol=1e-12)
        assert math.isfinite(release.score(targets, trace=3.0))
