"""The audit command's inputs (skdc/audit/_inputs.py): ``--data`` and ``--labels`` as a ``.npy``
(kept as saved) or a table, ``--partition`` checked against ``--data``, and the column
``--sensitive`` names; every refusal one line naming the file and the flag."""

from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc.audit._inputs import _read_inputs, _sensitive_index

X = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 1, 1]])  # integers: kept as saved
Y = np.array([0, 1, 0, 1])


@pytest.fixture
def files(tmp_path):
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", Y)
    (tmp_path / "t.csv").write_text("age,income,label\n30,1.5,a\n40,2.5,b\n50,3.5,a\n")
    return tmp_path


def _args(files, data="X.npy", labels="y.npy", partition=None, sensitive=None):
    return SimpleNamespace(data=str(files / data), labels=labels and str(files / labels),
                           partition=partition and str(files / partition),
                           sensitive=sensitive)


def test_the_sensitive_column_is_a_name_or_a_0_based_index():
    assert _sensitive_index(None, ["a"], 1) is None
    assert _sensitive_index("income", ["age", "income"], 2) == 1
    assert _sensitive_index("0", ["age", "income"], 2) == 0
    assert _sensitive_index("2", None, 3) == 2
    assert _sensitive_index("1", ["1", "0"], 2) == 0  # a column's name before an index


@pytest.mark.parametrize("sensitive, names, match", [
    ("3", None, r"^--sensitive 3: --data has columns 0 to 2\.$"),
    ("-1", None, r"^--sensitive -1: --data has columns 0 to 2\.$"),
    ("height", ["a", "b", "c"], r"^--sensitive height: no column of --data is named "
                                r"'height'\.$"),
    ("age", None, r"^--sensitive age: a \.npy array has no column names; give the column's "
                  r"0-based index\.$"),
])
def test_a_column_that_is_not_there_is_refused(sensitive, names, match):
    with pytest.raises(ValueError, match=match):
        _sensitive_index(sensitive, names, 3)


def test_a_npy_is_read_as_saved_with_its_partition(files):
    np.save(files / "p.npy", np.array([0, 1, 1, 0], dtype=np.uint8))  # unsigned ids too
    args = _args(files, partition="p.npy", sensitive="2")
    Xr, yr, partition = _read_inputs(args)
    assert Xr.dtype == X.dtype
    assert_array_equal(Xr, X)
    assert_array_equal(yr, Y)
    assert_array_equal(partition, [0, 1, 1, 0])
    assert args.sensitive_index == 2 and args.columns is None
    assert _read_inputs(_args(files))[2] is None  # no --partition


def test_a_table_names_its_columns_and_its_label_column(files):
    args = SimpleNamespace(data=str(files / "t.csv"), labels="label", partition=None,
                           sensitive="income")  # --labels: a column of the table
    Xr, yr, partition = _read_inputs(args)
    assert Xr.dtype == np.float64
    assert_array_equal(Xr, [[30.0, 1.5], [40.0, 2.5], [50.0, 3.5]])
    assert list(yr) == ["a", "b", "a"] and partition is None
    assert args.columns == ["age", "income"] and args.sensitive_index == 1


@pytest.mark.parametrize("ids", [np.array([0, 1, 1]), np.array([0.0, 1.0, 1.0, 0.0]),
                                 np.zeros((4, 1), dtype=int)])
def test_a_partition_must_be_one_integer_id_per_row(files, ids):
    np.save(files / "p.npy", ids)
    with pytest.raises(ValueError) as info:
        _read_inputs(_args(files, partition="p.npy"))
    assert str(info.value) == (
        f"--partition {files / 'p.npy'}: must hold one integer party id per row of --data "
        f"(4); got shape {ids.shape}, dtype {ids.dtype}.")


@pytest.mark.parametrize("flag, kwargs", [
    ("--data", {"data": "missing.npy"}), ("--labels", {"labels": "missing.npy"}),
    ("--partition", {"partition": "missing.npy"}), ("--data", {"data": "y.npy"}),
])
def test_a_file_that_cannot_be_read_is_one_line_naming_it_and_its_flag(files, flag, kwargs):
    with pytest.raises(ValueError) as info:
        _read_inputs(_args(files, **kwargs))
    message = str(info.value)
    assert "\n" not in message and flag in message
    named = files / next(iter(kwargs.values()))
    assert str(named) in message or named.name in message
