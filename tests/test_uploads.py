import pickle

import numpy as np
import pytest
from sklearn.utils import _safe_indexing

from skdc import Uploads


def _uploads():
    rng = np.random.RandomState(0)
    return Uploads(
        rng.rand(6, 2),
        participant=[0, 1, 2, 0, 1, 2],
        anchors=[rng.rand(4, 2) for _ in range(3)],
        anchor_y=np.arange(4),
    )


def test_row_slicing_keeps_matching_participants():
    Y = _uploads()
    assert Y[1:3].participant.tolist() == [1, 2]
    assert Y[[5, 0]].participant.tolist() == [2, 0]
    assert Y[Y.participant == 1].participant.tolist() == [1, 1]
    assert Y[2:4, :1].participant.tolist() == [2, 0]
    assert _safe_indexing(Y, [4, 1]).participant.tolist() == [1, 1]
    assert Y[1:3].anchors is Y.anchors


def test_operations_changing_rows_drop_to_plain_arrays():
    Y = _uploads()
    assert type(Y.sum(axis=0)) is np.ndarray
    assert type(Y[0]) is np.ndarray
    assert type(np.vstack([Y, Y])) is np.ndarray
    assert type(np.asarray(Y)) is np.ndarray


def test_pickle_round_trip_keeps_metadata():
    Y = _uploads()
    Z = pickle.loads(pickle.dumps(Y))
    np.testing.assert_array_equal(Z, Y)
    np.testing.assert_array_equal(Z.participant, Y.participant)
    np.testing.assert_array_equal(Z.anchor_y, Y.anchor_y)
    assert len(Z.anchors) == 3


def test_concatenate_and_properties():
    Y = _uploads()
    both = Uploads.concatenate([Y[:2], Y[4:]])
    assert both.participant.tolist() == [0, 1, 1, 2]
    assert Y.n_participants == 3 and Y.widths == [2, 2, 2]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"data": np.ones(3), "participant": [0, 0, 0]}, "2-D array"),
        ({"data": np.ones((3, 2)), "participant": [0, 1]}, "one id per row"),
        ({"data": np.ones((3, 2)), "participant": [0, -1, 0]}, "non-negative"),
        ({"data": np.ones((2, 2)), "participant": [0.5, 1]}, "whole numbers"),
        ({"data": np.ones((2, 2)), "participant": ["a", "b"]}, "must be integers"),
        ({"data": np.ones((2, 2)), "participant": [0, 2], "anchors": [np.ones((3, 2))] * 2},
         "anchor uploads for only 2"),
        ({"data": np.ones((2, 2)), "participant": [0, 1],
          "anchors": [np.ones((3, 2)), np.ones((4, 2))]}, "same number of anchor rows"),
        ({"data": np.ones((2, 2)), "participant": [0, 1],
          "anchors": [np.ones((3, 3)), np.ones((3, 2))]}, "wider than"),
        ({"data": np.ones((2, 2)), "participant": [0, 1],
          "anchors": [np.full((3, 2), np.nan)] * 2}, "NaN"),
        ({"data": np.ones((2, 2)), "participant": [0, 1], "anchors": [np.ones((3, 2))] * 2,
          "anchor_y": [1, 2]}, "one target per anchor row"),
    ],
)
def test_bad_uploads_are_refused(kwargs, match):
    data = kwargs.pop("data")
    with pytest.raises(ValueError, match=match):
        Uploads(data, **kwargs)
