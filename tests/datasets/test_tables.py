"""``skdc.datasets.load_table``: CSV, TSV and Parquet with a header, ``.npy``; labels as a
column or a file; one-line refusals of what the mechanisms cannot take."""

import gzip
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skdc.datasets import load_table
from skdc.utils._files import FileError
from tests._fuzz import CASES

pd = pytest.importorskip("pandas")


def _frame(seed=0, n=12):
    rng = np.random.RandomState(seed)
    return pd.DataFrame({"age": rng.randint(20, 90, n), "bmi": rng.uniform(18, 40, n),
                         "smoker": rng.rand(n) < 0.3,
                         "diagnosis": rng.choice(["benign", "malignant"], n)})


def _expected(frame):
    return frame[["age", "bmi", "smoker"]].to_numpy(dtype=np.float64)


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".csv.gz", ".parquet"])
def test_reads_each_format_with_its_label_column(tmp_path, suffix):
    frame = _frame()
    path = tmp_path / f"clinic{suffix}"
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
        frame.to_parquet(path)
    elif suffix == ".csv.gz":
        with gzip.open(path, "wt") as fh:
            frame.to_csv(fh, index=False)
    else:
        frame.to_csv(path, index=False, sep="\t" if suffix == ".tsv" else ",")
    table = load_table(path, label="diagnosis")
    assert_allclose(table.data, _expected(frame), rtol=1e-12)
    assert table.data.dtype == np.float64
    assert_array_equal(table.target, frame["diagnosis"].to_numpy(dtype=str))
    assert table.target.dtype.kind == "U"  # never an object array
    assert table.feature_names.tolist() == ["age", "bmi", "smoker"]
    assert table.target_name == "diagnosis"
    X, y = load_table(path, label=-1, return_X_y=True)
    assert_allclose(X, table.data, rtol=0, atol=0)
    assert_array_equal(y, table.target)


@pytest.mark.parametrize("labels", ["y.npy", "y.csv"])
def test_labels_from_a_file(tmp_path, labels):
    frame = _frame()
    frame.drop(columns="diagnosis").to_csv(tmp_path / "X.csv", index=False)
    y = (frame["diagnosis"] == "malignant").to_numpy(dtype=int)
    if labels.endswith(".npy"):
        np.save(tmp_path / labels, y)
    else:
        pd.DataFrame({"malignant": y}).to_csv(tmp_path / labels, index=False)
    X, got = load_table(tmp_path / "X.csv", label=str(tmp_path / labels), return_X_y=True)
    assert_allclose(X, _expected(frame), rtol=1e-12)
    assert_array_equal(got, y)


def test_npy_rows_and_no_label(tmp_path):
    X = np.random.RandomState(0).rand(5, 3)
    np.save(tmp_path / "X.npy", X)
    table = load_table(tmp_path / "X.npy")
    assert_allclose(table.data, X, rtol=0, atol=0)
    assert table.target is None and table.feature_names.tolist() == ["x0", "x1", "x2"]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize("name, text, label, words", [
    ("cat.csv", "age,sex\n61,F\n48,M\n", None,
     ["column 'sex' is not numeric", "'F' in data row 1", "same way at every participant",
      "before the mechanism"]),
    ("nan.csv", "age,bmi\n61,27\n48,\n", None,
     ["a missing value in column 'bmi', data row 2", "impute or drop"]),
    ("inf.csv", "age,bmi\n61,inf\n48,3\n", None, ["an infinite value in column 'bmi'"]),
    ("noheader.csv", "61,27.1\n48,31.4\n", None, ["has no header", "Add a header line"]),
    ("index.csv", ",age,bmi\n0,61,27\n1,48,31\n", None, ["column 1 has no name", "index=False"]),
    ("dup.csv", "age,age\n61,27\n", None, ["names column(s) ['age'] more than once"]),
    ("long.csv", "age,bmi\n61,27,1\n48,31,0\n", None, ["more fields than its header"]),
    ("semi.csv", "age;bmi\n61;27\n", None, ["separate its columns with ';'"]),
    ("empty.csv", "", None, ["is empty"]),
    ("header.csv", "age,bmi\n", None, ["is empty (0 rows"]),
    ("latin.csv", b"age,b\xe9\n1,2\n", None, ["is not UTF-8 text"]),
    ("rows.xlsx", "age\n1\n", None, ["cannot tell the format", ".csv, .tsv, .parquet"]),
    ("ok.csv", "age,bmi\n61,27\n", "diagnosis", ["has no column 'diagnosis'",
                                                  "no file of that name"]),
    ("ok2.csv", "age,bmi\n61,27\n", 7, ["label=7 is no column position"]),
    ("nolabel.csv", "age,dx\n61,\n48,1\n", "dx", ["column 'dx' has 1 missing label"]),
    ("junk.parquet", b"PAR1 not really", None, ["not a readable Parquet file"]),
    ("obj.npy", None, None, ["not a readable .npy array", "never unpickles"]),
    ("flat.npy", None, None, ["must be a 2-D array"]),
])
def test_refusals_are_one_line_naming_the_file(tmp_path, name, text, label, words):
    CASES["table (load_table)"] += 1
    if name == "obj.npy":
        path = tmp_path / name
        np.save(path, np.array([object(), 1], dtype=object), allow_pickle=True)
    elif name == "flat.npy":
        path = tmp_path / name
        np.save(path, np.arange(3.0))
    else:
        if name.endswith(".parquet"):
            pytest.importorskip("pyarrow")
        path = _write(tmp_path, name, text)
    with pytest.raises(FileError) as exc:
        load_table(path, label=label, what="--data")
    msg = str(exc.value)
    assert "\n" not in msg and str(path) in msg and ("--data" in msg or "label=" in msg), msg
    for word in words:
        assert word in msg, (word, msg)


def test_labels_file_must_match_the_rows(tmp_path):
    CASES["table (load_table)"] += 2
    _write(tmp_path, "X.csv", "a,b\n1,2\n3,4\n")
    np.save(tmp_path / "y.npy", np.arange(3))
    with pytest.raises(FileError, match="holds 3 labels for the 2 rows"):
        load_table(tmp_path / "X.csv", label=str(tmp_path / "y.npy"))
    _write(tmp_path, "y2.csv", "id,label\n1,0\n2,1\n")
    with pytest.raises(FileError, match="has 2 columns; a labels file holds one column"):
        load_table(tmp_path / "X.csv", label=str(tmp_path / "y2.csv"), label_what="--labels")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_pipes_folders_and_size_are_refused_before_parsing(tmp_path):
    CASES["table (load_table)"] += 3
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    with pytest.raises(FileError, match="named pipe"):  # never blocks on the pipe
        load_table(fifo)
    (tmp_path / "dir.csv").mkdir()
    with pytest.raises(FileError, match="directory"):
        load_table(tmp_path / "dir.csv")
    path = _write(tmp_path, "big.csv", "a\n" + "1\n" * 100)
    with pytest.raises(FileError, match="more than 50 bytes"):
        load_table(path, max_bytes=50)


def test_gzip_bomb_stops_at_the_limit(tmp_path):
    CASES["table (load_table)"] += 1
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b"a\n" + b"0\n" * 100_000)
    with pytest.raises(FileError, match="after decompression"):
        load_table(path, max_bytes=10_000)


def test_parquet_declaring_more_than_the_limit_is_refused(tmp_path):
    pytest.importorskip("pyarrow")
    CASES["table (load_table)"] += 1
    path = tmp_path / "wide.parquet"
    pd.DataFrame(np.zeros((2000, 5)), columns=list("abcde")).to_parquet(path)
    size = path.stat().st_size
    with pytest.raises(FileError, match="above the limit"):
        load_table(path, max_bytes=size + 100)  # the file fits, its content does not


def test_parquet_without_pyarrow_says_what_to_install(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.split(".")[0] == "pyarrow":
            raise ImportError("No module named 'pyarrow'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    path = _write(tmp_path, "rows.parquet", b"PAR1")
    with pytest.raises(ImportError) as exc:
        load_table(path)
    assert "pip install pyarrow" in str(exc.value) and "\n" not in str(exc.value)
