"""Tests for skdc.alignment.KernelEighCache, the explicit cache of KTIAligner(solver="eigh")."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from skdc import Uploads
from skdc.alignment import KernelEighCache, KTIAligner, _eigh_cache, kernel_eigh_cache


def _value(n):
    return np.ones(n), np.eye(n)


def test_get_computes_once_and_counts_bytes():
    cache = KernelEighCache(max_bytes=2**20)
    calls = []

    def compute():
        calls.append(1)
        return _value(4)

    first = cache.get("a", compute)
    assert cache.get("a", compute) is first
    assert len(calls) == 1
    assert len(cache) == 1 and cache.nbytes == 4 * 8 + 16 * 8


def test_none_key_is_never_stored():
    cache = KernelEighCache()
    cache.get(None, lambda: _value(2))
    assert len(cache) == 0 and cache.nbytes == 0


def test_bound_drops_least_recently_used_first():
    one = sum(a.nbytes for a in _value(4))
    cache = KernelEighCache(max_bytes=2 * one)
    cache.get("a", lambda: _value(4))
    cache.get("b", lambda: _value(4))
    cache.get("a", lambda: _value(4))  # "a" used last: "b" is the oldest
    cache.get("c", lambda: _value(4))
    assert len(cache) == 2 and cache.nbytes == 2 * one
    recomputed = []
    cache.get("b", lambda: recomputed.append(1) or _value(4))
    assert recomputed == [1]


def test_zero_bound_switches_the_cache_off_and_clear_empties_it():
    cache = KernelEighCache(max_bytes=0)
    cache.get("a", lambda: _value(3))
    assert len(cache) == 0
    cache.max_bytes = 2**20
    cache.get("a", lambda: _value(3))
    assert len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


def test_negative_bound_is_refused():
    with pytest.raises(ValueError, match="max_bytes"):
        KernelEighCache(max_bytes=-1)


def test_aligners_share_the_public_cache_and_fit_the_same_without_it(monkeypatch):
    cache = KernelEighCache()
    monkeypatch.setattr(_eigh_cache, "kernel_eigh_cache", cache)
    rng = np.random.RandomState(0)
    anchors = [rng.uniform(-1, 1, (30, 3)) for _ in range(3)]
    Y = Uploads(np.vstack(anchors), participant=np.repeat(np.arange(3), 30), anchors=anchors)
    cached = KTIAligner(alpha=0.3, solver="eigh").fit(Y).target_matrix_
    assert len(cache) == 3  # one decomposition per participant
    cache.max_bytes = 0
    cache.clear()
    uncached = KTIAligner(alpha=0.3, solver="eigh").fit(Y).target_matrix_
    assert len(cache) == 0
    assert_allclose(cached, uncached, rtol=0, atol=1e-12)


def test_shared_instance_is_the_documented_one():
    from skdc.alignment import _eigh_cache as module

    assert module.kernel_eigh_cache is kernel_eigh_cache
    assert isinstance(kernel_eigh_cache, KernelEighCache)
    assert kernel_eigh_cache.max_bytes == 256 * 2**20
