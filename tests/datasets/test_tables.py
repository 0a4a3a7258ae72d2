"""``skdc.datasets.load_table``: CSV, TSV and Parquet with a header, ``.npy``; labels as a
column or a file; one-line refusals of what the mechanisms cannot take. ``load_rows``, the
commands' loader of ``--data``: a ``.npy`` kept as saved, a table through ``load_table``."""

import gzip
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skdc.datasets import load_rows, load_table
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
    ("later.csv", "age,sex\n61,1\n48,0\n50,F\n", None,  # the bad cell, not the first one
     ["column 'sex' is not numeric (e.g. 'F' in data row 3)"]),
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
    ("obj.npy", None, None, ["dtype object is not a plain numeric", "never hold pickled"]),
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


@pytest.mark.parametrize("name, text, words", [
    ("bigname.csv", "a" * 200_000 + ",b\n1,0\n",
     "header line cannot be read (a column name longer than 131072 characters)"),
    ("oneline.csv", "0," * 131_072 + "0\n",
     "first line holds 131073 fields, more than the 131072 columns"),
], ids=["a header cell over 128 KiB", "one line of 131073 fields"])
def test_hostile_header_lines_are_one_line(tmp_path, name, text, words):
    CASES["table (load_table)"] += 1
    path = _write(tmp_path, name, text)
    with pytest.raises(FileError) as exc:
        load_table(path, what="--data")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"{path}: --data") and words in msg, msg


def test_cell_budget_is_checked_before_parsing(tmp_path, monkeypatch):
    CASES["table (load_table)"] += 3
    path = _write(tmp_path, "rows.csv", "a,b,c\n" + "1,2,3\n" * 100)
    assert load_table(path, max_cells=300).data.shape == (100, 3)
    with pytest.raises(FileError, match=r"holds up to 100 rows x 3 columns \(300 cells\), "
                       r"above the limit of 299 cells.*SKDC_MAX_TABLE_CELLS"):
        load_table(path, max_cells=299)
    monkeypatch.setenv("SKDC_MAX_TABLE_CELLS", "299")  # every command's default
    with pytest.raises(FileError, match="above the limit of 299 cells"):
        load_table(path)
    monkeypatch.setenv("SKDC_MAX_TABLE_BYTES", "600")
    with pytest.raises(FileError, match="holds more than 600 bytes.*SKDC_MAX_TABLE_BYTES"):
        load_table(path, max_cells=300)
    monkeypatch.setenv("SKDC_MAX_TABLE_BYTES", "lots")
    with pytest.raises(ValueError, match="SKDC_MAX_TABLE_BYTES must be a positive whole"):
        load_table(path)


def test_parquet_declared_shape_is_checked_before_reading(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    import skdc.datasets._tables as tables

    CASES["table (load_table)"] += 2
    path = tmp_path / "const.parquet"  # 200,000 equal cells take a few hundred bytes
    pd.DataFrame({"a": np.zeros(100_000), "b": np.ones(100_000)}).to_parquet(path)
    with pytest.raises(FileError, match=r"declares 100000 rows x 2 columns \(200000 cells\), "
                       "above the limit of 199999 cells"):
        load_table(path, max_cells=199_999)
    monkeypatch.setattr(tables, "_PARQUET_FREE_CELLS", 1000)
    monkeypatch.setattr(tables, "PARQUET_MAX_CELLS_PER_BYTE", 10)
    with pytest.raises(FileError, match=r"in only \d+ bytes \(more than 10 cells per byte\); "
                       "it is crafted or damaged"):
        load_table(path)


def test_many_columns_are_checked_in_linear_time(tmp_path):
    # the duplicate check counted each name in the whole header: 100,000 columns took minutes
    from tests._fuzz import deadline

    CASES["table (load_table)"] += 1
    names = [f"c{j}" for j in range(30_000)] + ["c7"]
    path = _write(tmp_path, "wide.csv", ",".join(names) + "\n" + ",".join(["1"] * 30_001))
    with deadline(60), pytest.raises(FileError, match=r"names column\(s\) \['c7'\] more than"):
        load_table(path)
    path = _write(tmp_path, "wide2.csv", ",".join(names[:-1]) + "\n" + ",".join(["1"] * 30_000))
    with deadline(60):
        assert load_table(path).data.shape == (1, 30_000)


def test_lone_carriage_returns_end_lines(tmp_path):
    path = _write(tmp_path, "mac.csv", b"age,bmi,dx\r61,27.5,1\r48,31,0\r")
    table = load_table(path, label="dx")
    assert_allclose(table.data, [[61, 27.5], [48, 31]], rtol=0)
    assert table.feature_names.tolist() == ["age", "bmi"]


@pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="no /proc here")
def test_a_proc_file_behind_a_table_name_is_refused_at_once(tmp_path):
    from tests._fuzz import deadline

    CASES["table (load_table)"] += 1
    link = tmp_path / "rows.csv"
    link.symlink_to("/proc/self/pagemap")  # reports 0 bytes, never ends
    with deadline(), pytest.raises(FileError, match="--data delivers more bytes than the 0"):
        load_table(link, what="--data")


def test_running_out_of_memory_is_one_line_naming_the_file(tmp_path, monkeypatch):
    CASES["table (load_table)"] += 1
    path = _write(tmp_path, "rows.csv", "a,b\n1,2\n")

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(pd, "read_csv", no_memory)
    with pytest.raises(FileError, match=f"^{path}: not enough memory to read --data; "):
        load_table(path, what="--data")


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


# -- load_rows: a command's --data ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["X.npy", "rows.bin"])
def test_load_rows_keeps_a_npy_as_saved(tmp_path, name):
    """An int ``.npy`` stays int (the audit's digest is the file's), under any name without a
    table suffix; its labels are a 1-D ``.npy``; an array names no columns."""
    X = np.arange(12, dtype=np.int16).reshape(4, 3)
    np.save(tmp_path / "X.npy", X)
    os.replace(tmp_path / "X.npy", tmp_path / name)
    np.save(tmp_path / "y.npy", np.array(["a", "b", "a", "b"]))
    rows = load_rows(tmp_path / name, label=str(tmp_path / "y.npy"))
    assert rows.data.dtype == np.int16
    assert_array_equal(rows.data, X)
    assert rows.target.tolist() == ["a", "b", "a", "b"]
    assert rows.feature_names is None and rows.target_name is None and rows.ids is None


def test_load_rows_reads_a_table_as_load_table_does(tmp_path):
    frame = _frame()
    frame.to_csv(tmp_path / "X.csv", index=False)
    rows = load_rows(tmp_path / "X.csv", label="diagnosis")
    table = load_table(tmp_path / "X.csv", label="diagnosis", what="--data")
    assert_array_equal(rows.data, table.data)
    assert_array_equal(rows.target, table.target)
    assert rows.feature_names.tolist() == ["age", "bmi", "smoker"]


@pytest.mark.parametrize("case, words", [
    ("missing", ["X.npy: no such file (--data)"]),
    ("nan labels", ["y.npy: --labels contains NaN or infinity"]),
    ("few labels", ["y.npy: --labels holds 3 labels for the 4 rows"]),
    ("nan rows", ["--data holds 1 NaN or infinite value(s), first in data row 2, column 3"]),
    ("strings", ["--data must hold numbers; got dtype <U1"]),
    ("1-D", ["--data must be a 2-D array (rows x features); got shape (4,)",
             "X.reshape(-1, 1)"]),
    ("id column", ["--data is a .npy array without column names, so it has no id column"]),
])
def test_load_rows_refusals_are_one_line_naming_file_and_flag(tmp_path, case, words):
    CASES["table (load_table)"] += 1
    X, y = np.ones((4, 3)), np.arange(4.0)
    if case == "nan labels":
        y[1] = np.nan
    elif case == "few labels":
        y = y[:3]
    elif case == "nan rows":
        X[1, 2] = np.inf
    elif case == "strings":
        X = np.full((4, 3), "a")
    elif case == "1-D":
        X = X[:, 0]
    if case != "missing":
        np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    with pytest.raises(FileError) as exc:
        load_rows(tmp_path / "X.npy", label=str(tmp_path / "y.npy"),
                  id_column="pid" if case == "id column" else None)
    msg = str(exc.value)
    assert "\n" not in msg and str(tmp_path) in msg, msg
    for word in words:
        assert word in msg, (word, msg)
