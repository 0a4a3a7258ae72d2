"""Tests of cross-image identity linkage, the face protocol (skdc/metrics/_identity_linkage.py)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError

from skdc.metrics import identity_linkage_accuracy, linkage_accuracy


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
