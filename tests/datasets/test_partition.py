import numpy as np
import pytest

from skdc.datasets import partition


def test_stratified_is_balanced_per_class(global_random_seed):
    y = np.random.RandomState(global_random_seed).randint(0, 4, size=203)
    ids = partition(y, 5, random_state=global_random_seed)
    counts = np.bincount(ids, minlength=5)
    assert counts.max() - counts.min() <= 1
    for k in range(4):
        per = np.bincount(ids[y == k], minlength=5)
        assert per.max() - per.min() <= 1


def test_dirichlet_label_skew_and_min_rows():
    y = np.repeat(np.arange(10), 30)
    ids = partition(y, 6, strategy="dirichlet", alpha=0.1, min_rows=5, random_state=0)
    assert np.bincount(ids, minlength=6).min() >= 5
    # strong skew: most participants miss some classes
    present = [(np.unique(y[ids == i]).size) for i in range(6)]
    assert min(present) < 10


def test_quantity_skew_sizes_differ_and_cover_rows():
    ids = partition(np.zeros(500), 4, strategy="quantity", alpha=0.3, random_state=1)
    counts = np.bincount(ids, minlength=4)
    assert counts.sum() == 500 and counts.max() > 2 * counts.min()


def test_reproducible():
    y = np.arange(40) % 3
    np.testing.assert_array_equal(partition(y, 4, random_state=7), partition(y, 4, random_state=7))


def test_errors():
    with pytest.raises(ValueError, match="cannot give each of the 5 participants"):
        partition(np.arange(4), 5)
    with pytest.raises(ValueError, match="1-D"):
        partition(np.ones((3, 2)), 2)
