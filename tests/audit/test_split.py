"""The one train/held-out split (skdc/audit/_split.py): rows partitioned without overlap, the
held-out share, stratification, the participants carried with their rows, the same split for
the same seed, and the refusals of a calibration's ``test_data``."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skdc.audit._split import HeldOut, _split_parties, _split_rows
from skdc.mechanisms import IGDP

N = 40


def _rows(n=N):
    """Rows whose first column is the row's index, labels 0/1 in a 3:1 ratio, party ids
    0, 1, 2, 3 in turn."""
    X = np.column_stack([np.arange(n, dtype=np.float64), np.linspace(-1.0, 1.0, n)])
    y = (np.arange(n) % 4 == 0).astype(int)
    return X, y, np.arange(n) % 4


def _seed(random_state):
    """The seed the split draws from an ``np.random.RandomState(random_state)``."""
    return np.random.RandomState(random_state).randint(2**31 - 1)


def _assert_partitioned(held, X):
    train, test = held.X_train[:, 0].astype(int), held.X_test[:, 0].astype(int)
    assert not set(train) & set(test)
    assert_array_equal(np.sort(np.concatenate([train, test])), np.arange(X.shape[0]))


# ----------------------------------------------------------------------------- the audit's split


def test_the_users_parties_stratify_and_travel_with_their_rows():
    X, y, parties = _rows()
    held = _split_parties(X, y, parties, 0.25, np.random.RandomState(3), pipe=None)
    _assert_partitioned(held, X)
    assert (held.X_train.shape[0], held.X_test.shape[0]) == (30, 10)  # ceil(0.25 * 40)
    # every row keeps its own label and party (both are functions of its index)
    for rows, labels, ids in ((held.X_train, held.y_train, held.participant_train),
                              (held.X_test, held.y_test, held.participant_test)):
        index = rows[:, 0].astype(int)
        assert_array_equal(labels, y[index])
        assert_array_equal(ids, parties[index])
    # stratified on the parties: 10 rows each, a quarter of them (2 or 3) held out
    counts = np.bincount(held.participant_test, minlength=4)
    assert counts.sum() == 10 and set(counts) <= {2, 3}


def test_the_parties_split_is_sklearns_under_the_drawn_seed():
    X, y, parties = _rows()
    held = _split_parties(X, y, parties, 0.3, np.random.RandomState(7), pipe=None)
    X_tr, X_te = train_test_split(X, test_size=0.3, stratify=parties, random_state=_seed(7))
    assert_array_equal(held.X_train, X_tr)
    assert_array_equal(held.X_test, X_te)


def test_without_parties_the_labels_stratify_and_the_mechanism_assigns_the_rows():
    X, y, _ = _rows()
    pipe = Pipeline([("gdp", IGDP(3, random_state=0)), ("clf", RidgeClassifier())])
    held = _split_parties(X, y, None, 0.25, np.random.RandomState(0), pipe)
    _assert_partitioned(held, X)
    # stratified on the labels: of 10 positives a quarter (2 or 3) among the 10 held out
    assert held.y_test.size == 10 and np.sum(held.y_test) in (2, 3)
    X_te = train_test_split(X, test_size=0.25, stratify=y, random_state=_seed(0))[1]
    assert_array_equal(held.X_test, X_te)
    # the parties: the mechanism's keyed hash, fitted on the training rows
    mech = IGDP(3, random_state=0).fit(held.X_train)
    assert_array_equal(held.participant_train, mech.transform(held.X_train).participant)
    assert_array_equal(held.participant_test, mech.transform(held.X_test).participant)


def test_without_parties_or_a_mechanism_no_row_has_a_party():
    X, y, _ = _rows()
    held = _split_parties(X, y, None, 0.25, np.random.RandomState(0),
                          Pipeline([("clf", RidgeClassifier())]))
    assert held.participant_train is None and held.participant_test is None


def test_the_same_seed_gives_the_same_split_and_another_seed_another():
    X, y, parties = _rows()
    a = _split_parties(X, y, parties, 0.25, np.random.RandomState(1), pipe=None)
    b = _split_parties(X, y, parties, 0.25, np.random.RandomState(1), pipe=None)
    c = _split_parties(X, y, parties, 0.25, np.random.RandomState(2), pipe=None)
    assert_array_equal(a.X_test, b.X_test)
    assert not np.array_equal(a.X_test[:, 0], c.X_test[:, 0])


def test_the_split_draws_one_seed_from_the_callers_stream():
    X, y, parties = _rows()
    rng = np.random.RandomState(5)
    _split_parties(X, y, parties, 0.25, rng, pipe=None)
    reference = np.random.RandomState(5)
    reference.randint(2**31 - 1)
    assert rng.randint(2**31 - 1) == reference.randint(2**31 - 1)


# ----------------------------------------------------------------------------- a calibration's


def test_given_test_data_is_taken_as_it_is():
    X, y, parties = _rows()
    X_te, y_te = X[:5] + 100.0, y[:5]
    held = _split_rows(X, y, None, 0.3, (X_te, y_te), np.random.RandomState(0))
    assert isinstance(held, HeldOut)
    assert held.X_train is X and held.y_train is y and held.participant_train is None
    assert held.X_test is X_te and held.y_test is y_te and held.participant_test is None
    held = _split_rows(X, y, parties, 0.3, (X_te, y_te, parties[:5]), np.random.RandomState(0))
    assert held.participant_train is parties
    assert_array_equal(held.participant_test, parties[:5])


@pytest.mark.parametrize("test_data", [(np.zeros((2, 2)),),
                                       (np.zeros((2, 2)), np.zeros(2), np.zeros(2), 0)])
def test_test_data_of_another_length_is_refused(test_data):
    X, y, _ = _rows()
    with pytest.raises(ValueError, match=f"got a tuple of {len(test_data)}"):
        _split_rows(X, y, None, 0.3, test_data, np.random.RandomState(0))


def test_training_ids_without_held_out_ids_are_refused():
    X, y, parties = _rows()
    with pytest.raises(ValueError, match=r"test_data=\(X_test, y_test, participant_test\)"):
        _split_rows(X, y, parties, 0.3, (X[:5], y[:5]), np.random.RandomState(0))


def test_a_drawn_split_carries_labels_and_ids_and_stratifies_classes():
    X, y, parties = _rows()
    held = _split_rows(X, y, parties, 0.25, None, np.random.RandomState(4))
    _assert_partitioned(held, X)
    expected = train_test_split(X, test_size=0.25, stratify=y, random_state=_seed(4))
    assert_array_equal(held.X_train, expected[0])
    assert_array_equal(held.X_test, expected[1])
    for rows, labels, ids in ((held.X_train, held.y_train, held.participant_train),
                              (held.X_test, held.y_test, held.participant_test)):
        index = rows[:, 0].astype(int)
        assert_array_equal(labels, y[index])
        assert_array_equal(ids, parties[index])


def test_a_regression_target_is_not_stratified_and_no_target_splits_the_rows_alone():
    X, _, _ = _rows()
    y = np.linspace(0.0, 1.0, N)  # one "class" per row: stratifying would be refused
    held = _split_rows(X, y, None, 0.25, None, np.random.RandomState(4))
    expected = train_test_split(X, test_size=0.25, random_state=_seed(4))
    assert_array_equal(held.X_test, expected[1])
    assert_array_equal(held.y_test, y[held.X_test[:, 0].astype(int)])
    assert held.participant_train is None and held.participant_test is None
    held = _split_rows(X, None, None, 0.25, None, np.random.RandomState(4))
    assert_array_equal(held.X_test, expected[1])
    assert held.y_train is None and held.y_test is None
