"""Tests of exact-source linkage accuracy (skdc/metrics/_linkage.py)."""

import importlib.util
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError

from skdc.metrics import linkage_accuracy


def _pool(seed=0, n=200, d=16, n_classes=4):
    rng = np.random.RandomState(seed)
    y = np.arange(n) % n_classes
    X = rng.rand(n, d) + y[:, None]
    return X, y, rng


class _CountingAuditor:
    """Identity embedding that counts transform calls."""

    def __init__(self):
        self.n_calls = 0

    def transform(self, X):
        self.n_calls += 1
        return np.asarray(X)


def test_exact_reconstructions_are_all_linked():
    X, y, _ = _pool()
    acc = linkage_accuracy(X, X, y, auditor="pca", random_state=0)
    assert float(acc) == 1.0
    assert acc.chance == pytest.approx(0.1)
    assert acc.n_queries == len(X)


def test_random_reconstructions_link_at_chance():
    X, y, rng = _pool(n=2000)
    X_hat = rng.rand(*X.shape) + y[:, None]  # right label, unrelated record
    acc = linkage_accuracy(X, X_hat, y, auditor=_CountingAuditor(), random_state=0)
    assert abs(float(acc) - 0.1) < 4 * np.sqrt(0.09 / len(X))


def test_each_record_embedded_once_and_ranks():
    X, y, rng = _pool()
    auditor = _CountingAuditor()
    acc = linkage_accuracy(X, X + 0.5 * rng.randn(*X.shape), y, auditor=auditor,
                           random_state=0)
    assert auditor.n_calls == 2
    assert acc.ranks.min() >= 1 and acc.ranks.max() <= 10
    assert float(acc) == np.mean(acc.ranks == 1)


def test_small_classes_shrink_gallery_and_chance():
    X, _, _ = _pool(n=12)
    y = np.array([0] * 4 + [1] * 8)
    acc = linkage_accuracy(X, X, y, auditor="pca", random_state=0)
    assert acc.chance == pytest.approx((4 / 4 + 8 / 8) / 12)
    acc = linkage_accuracy(X, X, None, auditor="pca", n_candidates=5, random_state=0)
    assert acc.chance == pytest.approx(0.2)


def test_explicit_fitted_transformer_and_unfitted_error():
    X, y, rng = _pool()
    acc = linkage_accuracy(X, X + 0.01 * rng.randn(*X.shape), y,
                           auditor=PCA(5).fit(X), random_state=0)
    assert float(acc) > 0.9
    with pytest.raises(NotFittedError):
        linkage_accuracy(X, X, y, auditor=PCA(5))
    with pytest.raises(ValueError, match="one label per record"):
        linkage_accuracy(X, X, y[:-1], auditor="pca")


@pytest.mark.skipif(importlib.util.find_spec("skdc.nn") is not None,
                    reason="skdc.nn present: the default is the CNN auditor")
def test_default_auditor_falls_back_to_pca():
    X, y, rng = _pool()
    X_hat = X + 0.3 * rng.randn(*X.shape)
    assert float(linkage_accuracy(X, X_hat, y, random_state=0)) == float(
        linkage_accuracy(X, X_hat, y, auditor="pca", random_state=0))


# -- the attacker's matchers ----------------------------------------------------------------
def _brute_force_linked(X_true, X_hat, galleries, distance):
    """Count, query by query and member by member, the queries whose true source (gallery
    column 0) is strictly closest; ``distance(q, c)`` is smaller when closer."""
    linked = 0
    for k in range(len(X_hat)):
        d_true = distance(X_hat[k], X_true[galleries[k][0]])
        beaten = False
        for j in galleries[k][1:]:
            if j >= 0 and distance(X_hat[k], X_true[j]) <= d_true:
                beaten = True
        linked += not beaten
    return linked


def _distances(name, X_true, sample):
    if name == "euclidean":
        return lambda q, c: float(np.sqrt(np.sum((q - c) ** 2)))
    if name == "cosine":
        return lambda q, c: -float(q @ c) / (np.linalg.norm(q) * np.linalg.norm(c))
    if name == "pca":
        pca = PCA(n_components=min(32, *X_true.shape), random_state=0).fit(X_true)

        def embedded(q, c):
            eq, ec = pca.transform(q[None])[0], pca.transform(c[None])[0]
            return -float(eq @ ec) / (np.linalg.norm(eq) * np.linalg.norm(ec))
        return embedded
    # mahalanobis: the sample covariance, as in any statistics textbook
    n, d = sample.shape
    mean = sample.sum(axis=0) / n
    S = sum(np.outer(r - mean, r - mean) for r in sample) / (n - 1)
    S_inv = np.linalg.inv(S)
    return lambda q, c: float((q - c) @ S_inv @ (q - c))


@pytest.mark.parametrize("matcher", ["euclidean", "cosine", "pca", "mahalanobis"])
def test_each_matcher_against_a_brute_force_count(matcher):
    """The matcher's count equals an explicit loop over queries and gallery members, on the
    galleries it reports; with galleries of every record (n_candidates = n) the loop needs
    nothing from the code under test."""
    rng = np.random.RandomState(0)
    n, d = 60, 5
    scales = np.array([3.0, 1.0, 0.5, 0.2, 2.0])
    X = rng.randn(n, d) * scales + 1.0
    X_hat = X + 0.6 * rng.randn(n, d) * scales[::-1]
    y = np.arange(n) % 2
    sample = rng.randn(40, d) * scales + 1.0
    dist = _distances(matcher, X, sample)
    acc = linkage_accuracy(X, X_hat, y, matcher=matcher, sample=sample, random_state=0)
    assert acc.matcher == matcher and acc.matcher_scores is None
    assert acc.galleries.shape == (n, 10)
    for k, g in enumerate(acc.galleries):  # the gallery protocol: source first, same label
        assert g[0] == k and np.unique(g).size == 10 and (y[g] == y[k]).all()
    expected = _brute_force_linked(X, X_hat, acc.galleries, dist)
    assert 0 < expected < n
    assert float(acc) == expected / n
    full = linkage_accuracy(X, X_hat, matcher=matcher, sample=sample, n_candidates=n)
    everyone = [[k] + [j for j in range(n) if j != k] for k in range(n)]
    assert float(full) == _brute_force_linked(X, X_hat, everyone, dist) / n


@pytest.mark.parametrize("matcher", ["embedding", "euclidean", "cosine", "pca", "mahalanobis"])
def test_ties_count_against_the_query(matcher):
    """Two identical records tie for each other's query under every matcher: neither links."""
    rng = np.random.RandomState(1)
    X = rng.randn(12, 4)
    X[1] = X[0]
    acc = linkage_accuracy(X, X, auditor="pca", matcher=matcher, sample=rng.randn(30, 4),
                           n_candidates=12)
    assert float(acc) == 10 / 12
    assert acc.ranks[0] == acc.ranks[1] == 2


def test_singular_colluder_covariance_is_regularized():
    """Fewer sample rows than features (and a constant feature): the covariance is singular,
    so a ridge of 1e-3 times its average variance is added; the count matches a brute force
    with that ridge and stays finite."""
    rng = np.random.RandomState(2)
    n, d = 50, 6
    X = rng.randn(n, d)
    X_hat = X + 0.8 * rng.randn(n, d)
    sample = rng.randn(4, d)
    sample[:, 5] = 3.0  # constant: no variance along it
    centred = sample - sample.mean(axis=0)
    S = centred.T @ centred / 3
    assert np.linalg.matrix_rank(S) < d
    S_reg_inv = np.linalg.inv(S + 1e-3 * np.trace(S) / d * np.eye(d))
    acc = linkage_accuracy(X, X_hat, matcher="mahalanobis", sample=sample, random_state=0)
    expected = _brute_force_linked(
        X, X_hat, acc.galleries, lambda q, c: float((q - c) @ S_reg_inv @ (q - c)))
    assert float(acc) == expected / n
    # a zero covariance (every sample row the same) falls back to the Euclidean distance
    flat = linkage_accuracy(X, X_hat, matcher="mahalanobis", sample=np.ones((5, d)),
                            random_state=0)
    euclid = linkage_accuracy(X, X_hat, matcher="euclidean", random_state=0)
    assert_array_equal(flat.ranks, euclid.ranks)


def test_best_matcher_keeps_the_strongest_on_the_same_galleries():
    rng = np.random.RandomState(3)
    n, d = 80, 6
    scales = np.array([5.0, 2.0, 1.0, 0.5, 0.2, 0.1])
    X = rng.randn(n, d) * scales
    X_hat = X + 0.3 * rng.randn(n, d)  # isotropic error: the small-scale axes are drowned
    y = np.arange(n) % 3
    sample = rng.randn(60, d) * scales
    best = linkage_accuracy(X, X_hat, y, auditor="pca", matcher="best", sample=sample,
                            random_state=0)
    assert list(best.matcher_scores) == ["pca", "euclidean", "cosine", "mahalanobis"]
    for m, score in best.matcher_scores.items():
        alone = linkage_accuracy(X, X_hat, y, matcher=m, sample=sample, random_state=0)
        assert float(alone) == score
        assert_array_equal(alone.galleries, best.galleries)
    assert float(best) == max(best.matcher_scores.values())
    assert best.matcher_scores[best.matcher] == float(best)
    alone = linkage_accuracy(X, X_hat, y, matcher=best.matcher, sample=sample, random_state=0)
    assert_array_equal(best.ranks, alone.ranks)
    # picklable, with what it carries
    again = pickle.loads(pickle.dumps(best))
    assert float(again) == float(best) and again.matcher == best.matcher
    assert again.matcher_scores == best.matcher_scores
    assert_array_equal(again.galleries, best.galleries)
    # without a sample the Mahalanobis matcher is not tried; an auditor adds 'embedding'
    no_sample = linkage_accuracy(X, X_hat, y, auditor=PCA(2).fit(X), matcher="best",
                                 random_state=0)
    assert list(no_sample.matcher_scores) == ["embedding", "pca", "euclidean", "cosine"]


def test_default_matcher_is_the_embedding_cosine():
    """The default is unchanged: the auditor's embedding, here 'pca' (the same as the 'pca'
    matcher)."""
    X, y, rng = _pool()
    X_hat = X + 0.5 * rng.randn(*X.shape)
    default = linkage_accuracy(X, X_hat, y, auditor="pca", random_state=0)
    assert default.matcher == "embedding"
    assert_array_equal(default.ranks,
                       linkage_accuracy(X, X_hat, y, matcher="pca", random_state=0).ranks)


def _linked_over_every_gallery(D, y, m):
    """Brute force: over every set of m same-label distractors, whether the true source is
    strictly closest (D: distances, queries by records)."""
    import itertools

    out = []
    for k in range(len(y)):
        others = [j for j in range(len(y)) if y[j] == y[k] and j != k]
        hits = [all(D[k, k] < D[k, j] for j in g)
                for g in itertools.combinations(others, min(m, len(others)))]
        out.append(np.mean(hits))
    return np.array(out)


@pytest.mark.parametrize("matcher", ["euclidean", "cosine"])
def test_all_galleries_is_the_mean_over_every_gallery(matcher):
    """galleries='all' against a brute-force count over every gallery, with ties (two equal
    records) counting against the query, and a label too small for a full gallery."""
    from scipy.spatial.distance import cdist

    rng = np.random.RandomState(3)
    X = rng.rand(23, 4)
    X[5] = X[6]  # a tie
    y = np.r_[np.zeros(13, int), np.ones(8, int), 2, 2]
    X_hat = X + 0.4 * rng.randn(*X.shape)
    got = linkage_accuracy(X, X_hat, y, matcher=matcher, n_candidates=4, galleries="all")
    if matcher == "euclidean":
        D = cdist(X_hat, X, "sqeuclidean")
    else:
        D = -(X_hat / np.linalg.norm(X_hat, axis=1, keepdims=True)) @ (
            X / np.linalg.norm(X, axis=1, keepdims=True)).T
    expected = _linked_over_every_gallery(D, y, 3)
    assert_allclose(float(got), expected.mean(), rtol=1e-12)
    assert_allclose(got.chance, np.mean([1 / 4] * 21 + [1 / 2] * 2), rtol=1e-12)
    assert got.galleries is None and got.n_queries == 23
    # the mean over many drawn galleries comes close (a check of the sampling, not exact)
    drawn = np.mean([linkage_accuracy(X, X_hat, y, matcher=matcher, n_candidates=4,
                                      random_state=s) for s in range(200)])
    assert abs(drawn - float(got)) < 0.05


def test_all_galleries_with_the_best_matcher_keeps_the_strongest():
    X, y, rng = _pool(n=60, d=6)
    X_hat = X + 0.8 * rng.randn(*X.shape)
    best = linkage_accuracy(X, X_hat, y, matcher="best", auditor="pca", sample=X[:30],
                            galleries="all")
    assert float(best) == max(best.matcher_scores.values())
    for m, acc in best.matcher_scores.items():
        assert_allclose(acc, float(linkage_accuracy(X, X_hat, y, matcher=m, sample=X[:30],
                                                    galleries="all")), rtol=1e-12)


def test_bad_matcher_arguments_are_refused():
    X, y, _ = _pool(n=40, d=4)
    with pytest.raises(ValueError, match="'matcher' parameter of linkage_accuracy must be"):
        linkage_accuracy(X, X, y, matcher="manhattan")
    with pytest.raises(ValueError, match="pass them as sample="):
        linkage_accuracy(X, X, y, matcher="mahalanobis")
    with pytest.raises(ValueError, match="rows of the records' 4 features"):
        linkage_accuracy(X, X, y, matcher="mahalanobis", sample=X[:, :3])
    with pytest.raises(ValueError, match="at least 2 rows"):
        linkage_accuracy(X, X, y, matcher="best", sample=X[:1])
    with pytest.raises(ValueError, match="'galleries' parameter of linkage_accuracy must be"):
        linkage_accuracy(X, X, y, galleries="some")


@pytest.mark.parametrize("matcher", ["euclidean", "cosine"])
def test_all_galleries_with_max_queries_scores_the_drawn_queries(matcher, monkeypatch):
    """More records than max_queries: that many distinct queries, each linked with the
    brute-force probability over every gallery; no score block exceeds the block budget,
    whatever the records; the interval is Wilson's."""
    from scipy.spatial.distance import cdist
    from scipy.stats import binomtest

    import skdc.metrics._linkage as linkage

    rng = np.random.RandomState(4)
    X = rng.rand(23, 4)
    y = np.r_[np.zeros(13, int), np.ones(8, int), 2, 2]
    X_hat = X + 0.4 * rng.randn(*X.shape)
    blocks = []
    score_block = linkage._score_block

    def spy(T, Q, how):
        out = score_block(T, Q, how)
        blocks.append(out.shape)
        return out

    monkeypatch.setattr(linkage, "_score_block", spy)
    monkeypatch.setattr(linkage, "_SCORE_BLOCK", 60)  # at most 60 pairs: 2 queries of 23
    got = linkage_accuracy(X, X_hat, y, matcher=matcher, n_candidates=4, galleries="all",
                           max_queries=9, random_state=0)
    assert got.n_queries == 9 and got.n_records == 23
    q = got.queries
    assert q.shape == (9,) and np.unique(q).size == 9 and (np.diff(q) > 0).all()
    assert max(a * b for a, b in blocks) <= 60
    if matcher == "euclidean":
        D = cdist(X_hat, X, "sqeuclidean")
    else:
        D = -(X_hat / np.linalg.norm(X_hat, axis=1, keepdims=True)) @ (
            X / np.linalg.norm(X, axis=1, keepdims=True)).T
    expected = _linked_over_every_gallery(D, y, 3)[q]
    assert_allclose(float(got), expected.mean(), rtol=1e-12)
    full = linkage_accuracy(X, X_hat, y, matcher=matcher, n_candidates=4, galleries="all",
                            max_queries=None)
    assert_array_equal(got.ranks, full.ranks[q])
    assert full.queries is None and full.n_queries == 23
    # a drawn gallery's rate is a count: its interval is the Wilson interval of scipy
    drawn = linkage_accuracy(X, X_hat, y, matcher=matcher, n_candidates=4, max_queries=9,
                             random_state=0)
    ci = binomtest(int(np.sum(drawn.ranks == 1)), 9).proportion_ci(method="wilson")
    assert_allclose(drawn.ci95, [ci.low, ci.high], rtol=1e-10)


def test_drawn_galleries_with_max_queries():
    """Drawn galleries for the drawn queries only: each starts with its query, then distinct
    same-label records; the queries are the same as galleries='all' draws with the seed."""
    X, y, rng = _pool(n=300)
    X_hat = X + 0.3 * rng.randn(*X.shape)
    got = linkage_accuracy(X, X_hat, y, matcher="euclidean", max_queries=40, random_state=5)
    g = got.galleries
    assert g.shape == (40, 10) and got.n_queries == 40
    assert_array_equal(g[:, 0], got.queries)
    for row in g:
        assert np.unique(row).size == 10 and (y[row] == y[row[0]]).all()
    every = linkage_accuracy(X, X_hat, y, matcher="euclidean", galleries="all",
                             max_queries=40, random_state=5)
    assert_array_equal(every.queries, got.queries)
    # at most max_queries records: every record queries and no draw is spent on queries
    small = linkage_accuracy(X[:40], X_hat[:40], y[:40], matcher="euclidean",
                             max_queries=40, random_state=5)
    again = linkage_accuracy(X[:40], X_hat[:40], y[:40], matcher="euclidean",
                             max_queries=None, random_state=5)
    assert small.queries is None
    assert_array_equal(small.galleries, again.galleries)
    back = pickle.loads(pickle.dumps(got))
    assert back.n_records == 300 and back.ci95 == got.ci95
