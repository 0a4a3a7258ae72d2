"""Tests of linkage accuracy and reconstruction label accuracy."""

import importlib.util
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.neighbors import KNeighborsClassifier

from skdc.metrics import (
    identity_linkage_accuracy,
    linkage_accuracy,
    reconstruction_label_accuracy,
)


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


def test_reconstruction_label_accuracy():
    X, y, rng = _pool()
    clf = KNeighborsClassifier(3).fit(X, y)
    assert reconstruction_label_accuracy(X, y, clf) == 1.0
    assert reconstruction_label_accuracy(rng.rand(*X.shape) * 10, y, clf) < 0.5
    with pytest.raises(NotFittedError):
        reconstruction_label_accuracy(X, y, KNeighborsClassifier())


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


# -- identity linkage (the face protocol) ------------------------------------------------
class _RecordingAuditor:
    """A fitted embedding that records what it is asked to embed."""

    def __init__(self, embed=np.asarray):
        self.seen = []
        self._embed = embed

    def transform(self, X):
        self.seen.append(np.array(X))
        return self._embed(np.asarray(X))


def _face_args(faces):
    return faces.references, faces.reference_identity


def test_identity_lineups_follow_the_protocol(lfw_identities):
    """One query per identity, ten lineups of ten: one reserved image of the query's identity
    (never the query's own image) and nine distinct reserved images of other identities."""
    f = lfw_identities
    acc = identity_linkage_accuracy(f.X_protocol, f.identity_protocol, *_face_args(f))
    ids = f.identity_protocol
    assert acc.n_queries == np.unique(ids).size == 100
    assert_array_equal(ids[acc.queries], np.unique(ids))  # one per identity, in order
    assert acc.lineups.shape == (100, 10, 10) and acc.ranks.shape == (100, 10)
    assert acc.chance == pytest.approx(0.1)
    ref_ids = f.reference_identity
    for k, q in enumerate(acc.queries):
        for line in acc.lineups[k]:
            assert np.unique(line).size == 10
            assert (ref_ids[line] == ids[q]).sum() == 1
    # reserved references are never uploaded: no candidate is a protocol image
    assert not (f.split.reference & f.split.protocol).any()
    # the lineups are fixed by random_state, whatever the reconstructions
    noise = np.random.RandomState(0).rand(*f.X_protocol.shape)
    other = identity_linkage_accuracy(noise, ids, *_face_args(f))
    assert_array_equal(other.lineups, acc.lineups)
    moved = identity_linkage_accuracy(noise, ids, *_face_args(f), random_state=1)
    assert not np.array_equal(moved.lineups, acc.lineups)
    assert identity_linkage_accuracy(noise, ids, *_face_args(f), one_per_identity=False,
                                     n_lineups=2).ranks.shape == (len(ids), 2)


def test_identity_linkage_on_lfw_faces(lfw_identities):
    """Clean faces link to another image of their identity far above chance; unrelated images
    link at chance (1000 episodes: 4 standard errors)."""
    f = lfw_identities
    clean = identity_linkage_accuracy(f.X_protocol, f.identity_protocol, *_face_args(f))
    assert float(clean) > 0.4
    assert float(clean) == np.mean(clean.ranks == 1)
    rng = np.random.RandomState(0)
    noise = identity_linkage_accuracy(rng.rand(*f.X_protocol.shape), f.identity_protocol,
                                      *_face_args(f))
    assert abs(float(noise) - 0.1) < 4 * np.sqrt(0.09 / 1000)
    # the 'pca' auditor is frozen on the clean references, never fitted on reconstructions
    pca = PCA(32, random_state=0).fit(f.references)
    Xh = f.X_protocol + 0.3 * rng.randn(*f.X_protocol.shape)
    assert float(identity_linkage_accuracy(Xh, f.identity_protocol, *_face_args(f))) == float(
        identity_linkage_accuracy(Xh, f.identity_protocol, *_face_args(f), auditor=pca))


def test_identity_linkage_breaks_ties_by_argmax(lfw_identities):
    """A constant embedding ties every candidate: argmax picks the first lineup position, so a
    query is linked exactly when its identity's image stands first (about 1 in 10); the
    exact-source rule, which counts ties against, would link none."""
    f = lfw_identities
    flat = _RecordingAuditor(lambda X: np.ones((len(X), 3)))
    acc = identity_linkage_accuracy(f.X_protocol, f.identity_protocol, *_face_args(f),
                                    auditor=flat)
    first = f.reference_identity[acc.lineups[:, :, 0]] == f.identity_protocol[acc.queries, None]
    assert float(acc) == np.mean(first) > 0
    assert abs(float(acc) - 0.1) < 4 * np.sqrt(0.09 / 1000)
    assert float(linkage_accuracy(f.X_protocol, f.X_protocol, auditor=flat)) == 0.0


def test_identity_linkage_clamps_reconstructions(lfw_identities):
    f = lfw_identities
    X_out = 3.0 * f.X_protocol - 1.0  # leaves [0, 1]
    auditor = _RecordingAuditor()
    a = identity_linkage_accuracy(X_out, f.identity_protocol, *_face_args(f), auditor=auditor)
    queries = auditor.seen[1]
    assert queries.min() >= 0.0 and queries.max() <= 1.0 and queries.min() < queries.max()
    b = identity_linkage_accuracy(np.clip(X_out, 0, 1), f.identity_protocol, *_face_args(f),
                                  auditor=auditor, clip=None)
    assert float(a) == float(b)
    auditor.seen.clear()
    identity_linkage_accuracy(X_out, f.identity_protocol, *_face_args(f), auditor=auditor,
                              clip=None)
    assert auditor.seen[1].min() < 0.0  # unclamped on request
    X_inf = X_out.copy()
    X_inf[0, 0] = np.inf  # clamped to 1: still a valid image
    identity_linkage_accuracy(X_inf, f.identity_protocol, *_face_args(f))


def test_identity_linkage_errors(lfw_identities):
    f = lfw_identities
    X, ids = f.X_protocol, f.identity_protocol
    refs, ref_ids = _face_args(f)
    with pytest.raises(ValueError, match="no reserved reference image"):
        identity_linkage_accuracy(X, ids, refs[1:], ref_ids[1:])
    with pytest.raises(ValueError, match="one entry per reconstruction"):
        identity_linkage_accuracy(X, ids[:-1], refs, ref_ids)
    with pytest.raises(ValueError, match="one entry per reference"):
        identity_linkage_accuracy(X, ids, refs, ref_ids[:-1])
    with pytest.raises(ValueError, match="images of the same size"):
        identity_linkage_accuracy(X[:, :-1], ids, refs, ref_ids)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        identity_linkage_accuracy(X_nan, ids, refs, ref_ids)
    with pytest.raises(ValueError, match="low < high"):
        identity_linkage_accuracy(X, ids, refs, ref_ids, clip=(1.0, 0.0))
    with pytest.raises(ValueError, match="at least two identities"):
        mine = ref_ids == ids[0]
        identity_linkage_accuracy(X[:1], ids[:1], refs[mine], ref_ids[mine])
    with pytest.raises(NotFittedError):
        identity_linkage_accuracy(X, ids, refs, ref_ids, auditor=PCA(5))


def test_linkage_score_pickles_lineups(lfw_identities):
    import pickle

    f = lfw_identities
    acc = identity_linkage_accuracy(f.X_protocol, f.identity_protocol, *_face_args(f),
                                    n_lineups=2)
    back = pickle.loads(pickle.dumps(acc))
    assert float(back) == float(acc) and back.chance == acc.chance
    assert_array_equal(back.lineups, acc.lineups)
    assert_array_equal(back.queries, acc.queries)


# -- the reference code's lineup protocol, rule by rule, on small fixed inputs --------------
def _small_faces(seed=0, n_ids=12, d=6):
    """n_ids identities, one reference each, and three protocol rows per identity."""
    rng = np.random.RandomState(seed)
    centres = rng.rand(n_ids, d)
    ref_ids = np.arange(n_ids) * 10  # identities need not be 0..n-1
    ids = np.repeat(ref_ids, 3)
    X = np.repeat(centres, 3, axis=0) + 0.05 * rng.rand(3 * n_ids, d)
    return X, ids, centres, ref_ids


def test_queries_one_per_identity_within_each_split_by_seeded_order():
    """Queries: one row per (split, identity), ordered by split then identity, drawn at random
    (any row of the group can be the query, not the first in row order); fixed by the seed."""
    X, ids, refs, ref_ids = _small_faces()
    split = np.tile([1, 0, 0], ids.size // 3)  # each identity: one row in split 1, two in 0
    groups = sorted({(s, i) for s, i in zip(split, ids)})
    seen = set()
    for seed in range(30):
        acc = identity_linkage_accuracy(X, ids, refs, ref_ids, split=split, n_lineups=1,
                                        n_bootstrap=0, random_state=seed)
        assert [(split[q], ids[q]) for q in acc.queries] == groups
        seen.update(acc.queries.tolist())
    assert seen == set(range(ids.size))  # both rows of every split-0 group were drawn
    again = identity_linkage_accuracy(X, ids, refs, ref_ids, split=split, n_lineups=1,
                                      n_bootstrap=0, random_state=29)
    assert_array_equal(again.queries, acc.queries)
    one = identity_linkage_accuracy(X, ids, refs, ref_ids, n_lineups=1, n_bootstrap=0)
    assert_array_equal(ids[one.queries], ref_ids)  # no split: one per identity
    with pytest.raises(ValueError, match="split must have one entry per reconstruction"):
        identity_linkage_accuracy(X, ids, refs, ref_ids, split=split[:-1])


def test_lineups_draw_impostor_identities_one_reference_each():
    """Lineups: the query's reference plus 9 references of distinct impostor identities, drawn
    uniformly without replacement from all other identities; never one identity twice."""
    X, ids, refs, ref_ids = _small_faces(n_ids=15)
    acc = identity_linkage_accuracy(X, ids, refs, ref_ids, n_lineups=200, n_bootstrap=0)
    counts = np.zeros(15)
    for k, q in enumerate(acc.queries):
        for line in acc.lineups[k]:
            shown = ref_ids[line]
            assert np.unique(shown).size == 10 and (shown == ids[q]).sum() == 1
            counts[line] += 1
    # each of the 14 other identities is in a lineup with probability 9/14; each identity is
    # the genuine one in 200 lineups and an impostor candidate in 14 x 200
    expected = 200 + 14 * 200 * 9 / 14
    sd = np.sqrt(14 * 200 * (9 / 14) * (5 / 14))
    assert np.all(np.abs(counts - expected) < 5 * sd)
    # the true candidate's position is uniform over the ten places
    pos = np.array([[np.flatnonzero(ref_ids[line] == ids[q])[0] for line in acc.lineups[k]]
                    for k, q in enumerate(acc.queries)]).ravel()
    assert np.all(np.abs(np.bincount(pos, minlength=10) - 300) < 5 * np.sqrt(270))
    two = np.r_[refs, refs[:1]], np.r_[ref_ids, ref_ids[:1]]
    with pytest.raises(ValueError, match="one reserved reference per identity.*identity 0 "
                                         "has 2 references"):
        identity_linkage_accuracy(X, ids, *two)


def test_ranks_top3_and_mrr_follow_their_definitions():
    """Each rank is the place of the true reference when the lineup is sorted by decreasing
    cosine similarity, ties kept in lineup order; top-3 and MRR are read off the ranks."""
    X, ids, refs, ref_ids = _small_faces(n_ids=12, d=4)
    Xh = X + 0.4 * np.random.RandomState(1).randn(*X.shape)
    auditor = _RecordingAuditor()
    acc = identity_linkage_accuracy(Xh, ids, refs, ref_ids, auditor=auditor, clip=None,
                                    n_bootstrap=0)

    def unit(v):
        return v / np.linalg.norm(v)

    want = []
    for k, q in enumerate(acc.queries):
        row = []
        for line in acc.lineups[k]:
            sims = [unit(Xh[q]) @ unit(refs[c]) for c in line]
            order = sorted(range(10), key=lambda c: -sims[c])  # stable: ties by position
            row.append(1 + order.index(int(np.flatnonzero(ref_ids[line] == ids[q])[0])))
        want.append(row)
    want = np.array(want)
    assert_array_equal(acc.ranks, want)
    assert float(acc) == np.mean(want == 1)
    assert acc.top3 == np.mean(want <= 3) and acc.mrr == np.mean(1.0 / want)
    assert acc.mean_rank == np.mean(want)
    assert 0 < float(acc) < acc.top3 < 1


def test_bootstrap_interval_is_over_identities():
    """ci95 resamples identities: every identity linked in every lineup gives (1, 1); on mixed
    results it matches the normal interval of the per-identity rates (not of the episodes)."""
    X, ids, refs, ref_ids = _small_faces(n_ids=60, d=8)
    exact = np.repeat(refs, 3, axis=0)
    acc = identity_linkage_accuracy(exact, ids, refs, ref_ids, clip=None)
    assert float(acc) == 1.0 and acc.ci95 == (1.0, 1.0)
    # half the identities reconstructed exactly (always linked), half as noise (rarely)
    rng = np.random.RandomState(2)
    Xh = np.where(np.isin(ids, ref_ids[::2])[:, None], exact, rng.rand(*exact.shape))
    acc = identity_linkage_accuracy(Xh, ids, refs, ref_ids, clip=None, random_state=3)
    per = (acc.ranks == 1).mean(axis=1)  # one query per identity: its rate over 10 lineups
    half = 1.96 * per.std() / np.sqrt(per.size)
    assert_allclose(acc.ci95, [per.mean() - half, per.mean() + half], rtol=0, atol=0.02)
    episodes = 1.96 * (acc.ranks == 1).std() / np.sqrt(acc.ranks.size)
    assert acc.ci95[1] - acc.ci95[0] > 2.5 * 2 * episodes  # clustered: far wider
    assert identity_linkage_accuracy(Xh, ids, refs, ref_ids, n_bootstrap=0).ci95 is None


def test_references_decoded_through_the_public_reduction():
    """The primary condition: each reference is projected by the public basis, decoded and
    clamped, as the reconstructions are; without a decoder the raw references are embedded."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.preprocessing import FunctionTransformer

    X, ids, refs, ref_ids = _small_faces(n_ids=12, d=6)
    public = np.random.RandomState(4).rand(40, 6)
    svd = TruncatedSVD(3, random_state=0).fit(public)
    auditor = _RecordingAuditor()
    identity_linkage_accuracy(X, ids, 1.5 * refs, ref_ids, auditor=auditor,
                              reference_decoder=svd, n_bootstrap=0)
    V = svd.components_  # orthonormal rows: uncentered projection X V^T V
    assert_allclose(V @ V.T, np.eye(3), rtol=0, atol=1e-12)
    want = np.clip(1.5 * refs @ V.T @ V, 0.0, 1.0)
    assert 0 < (want == 1.0).sum() < want.size  # the clamp acts on some pixels
    assert_allclose(auditor.seen[0], want, rtol=1e-12, atol=1e-12)
    auditor.seen.clear()
    identity_linkage_accuracy(X, ids, 1.5 * refs, ref_ids, auditor=auditor, n_bootstrap=0)
    assert_allclose(auditor.seen[0], 1.5 * refs, rtol=0)  # raw: unclamped references
    with pytest.raises(ValueError, match="reference_decoder must map the references back"):
        crop = FunctionTransformer(inverse_func=lambda Z: Z[:, :3]).fit(public)
        identity_linkage_accuracy(X, ids, refs, ref_ids, reference_decoder=crop)


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
