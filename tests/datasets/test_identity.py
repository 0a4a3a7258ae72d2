"""Tests of identity-level splits and the public pool (skdc/datasets/_identity.py)."""

import numpy as np
import pytest

from skdc.datasets import identity_split, public_reduction_pool


def _identities(rng, n_ids=80, low=2, high=7):
    return np.repeat(np.arange(n_ids), rng.randint(low, high + 1, size=n_ids))


def test_public_pool(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    identity = _identities(rng)
    pool = public_reduction_pool(identity, 50, random_state=global_random_seed)
    assert pool.mask.sum() == 50
    assert set(identity[pool.mask]) == set(pool.identities)
    np.testing.assert_array_equal(pool.excluded, np.isin(identity, pool.identities))
    assert (pool.mask <= pool.excluded).all()


def test_identity_split_invariants(global_random_seed):
    rng = np.random.RandomState(global_random_seed)
    identity = _identities(rng)
    pool = public_reduction_pool(identity, 40, random_state=global_random_seed)
    s = identity_split(identity, 3, identities_per_participant=10, exclude=pool.excluded,
                       random_state=global_random_seed)
    held = s.participant >= 0
    # public and participant identities are disjoint
    assert not set(identity[held]) & set(pool.identities)
    for ident in np.unique(identity[held]):
        rows = identity == ident
        # every image of an identity has one participant and one split
        assert len(set(s.participant[rows])) == 1 and len(set(s.split[rows])) == 1
        assert s.reference[rows].sum() == 1  # one reserved clean reference
    for i in range(3):
        ids = np.unique(identity[s.participant == i])
        assert ids.size == 10
        per_split = [np.unique(identity[(s.participant == i) & (s.split == j)]).size
                     for j in range(3)]
        assert per_split == [7, 2, 1]
        assert set(ids) == set(s.identities[i])
    np.testing.assert_array_equal(s.protocol, held & ~s.reference)
    assert (s.split[~held] == -1).all()
    assert s.split_names == ("train", "val", "test")


def test_identity_split_reproducible():
    identity = _identities(np.random.RandomState(0))
    a = identity_split(identity, 2, identities_per_participant=10, random_state=0)
    b = identity_split(identity, 2, identities_per_participant=10, random_state=0)
    c = identity_split(identity, 2, identities_per_participant=10, random_state=1)
    np.testing.assert_array_equal(a.participant, b.participant)
    np.testing.assert_array_equal(a.reference, b.reference)
    assert not np.array_equal(a.participant, c.participant)


def test_balance_evens_image_counts_and_prevalence():
    """Greedy allocation keeps buckets' image counts and positive rates close."""
    rng = np.random.RandomState(0)
    identity = _identities(rng, n_ids=200, low=2, high=12)
    smiling = (rng.rand(identity.size) < np.repeat(rng.rand(200), np.bincount(identity)))
    s = identity_split(identity, 4, identities_per_participant=40, balance=smiling,
                       random_state=0)
    train = [(s.participant == i) & (s.split == 0) for i in range(4)]
    sizes = np.array([m.sum() for m in train])
    rates = np.array([smiling[m].mean() for m in train])
    assert sizes.max() - sizes.min() <= 12  # at most about one identity apart
    assert rates.max() - rates.min() < 0.05


def test_identity_split_errors():
    identity = np.repeat(np.arange(10), 2)
    with pytest.raises(ValueError, match="need 20 eligible identities"):
        identity_split(identity, 2, identities_per_participant=10)
    with pytest.raises(ValueError, match="three non-negative shares"):
        identity_split(identity, 1, identities_per_participant=2, split_sizes=(0.5, 0.5))
    with pytest.raises(ValueError, match="one entry per image"):
        identity_split(identity, 1, identities_per_participant=2, balance=[1, 0])
    with pytest.raises(ValueError, match="pool needs 30 images"):
        public_reduction_pool(identity, 30)
    with pytest.raises(ValueError, match="non-empty 1-D"):
        public_reduction_pool(np.zeros((2, 2)), 1)
