"""Tests of linkage accuracy and reconstruction label accuracy."""

import importlib.util

import numpy as np
import pytest
from numpy.testing import assert_array_equal
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
    _, first = np.unique(ids, return_index=True)
    assert_array_equal(acc.queries, np.sort(first))
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
