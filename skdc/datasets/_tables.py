"""Read a participant's own table: CSV, TSV or Parquet with a header, or a ``.npy`` array.

Hospital and bank data live in tables. :func:`load_table` turns one into the float64 rows
every skdc mechanism takes, and its label column (or a separate labels file) into targets.
Every command that takes ``--data`` reads through :func:`load_rows`, which hands a table to
:func:`load_table` and keeps a ``.npy`` array as saved (its digest is the file's), so the rules
are the same everywhere:

* the file crosses skdc's file boundary (a regular file, read with a byte bound that also
  holds after gzip decompression); pandas parses the bytes, never the path, a ``.npy`` is
  read by skdc's one ``.npy`` reader (``skdc.utils._npy``), and nothing is ever unpickled;
* every column but the label is a feature and must be numeric (booleans count as 0/1):
  categories are encoded by the participants, the same way at every participant, before the
  mechanism, because the obfuscated uploads can no longer be re-encoded consistently;
* a missing or infinite value is refused, naming its column and row: impute or drop before
  the mechanism, the same way everywhere.

Every refusal is one line naming the file (a :class:`~skdc.utils._files.FileError`, which is a
``ValueError``); a missing optional reader (pandas, pyarrow) is one ``ImportError`` line
saying what to install.
"""

# Licence: BSD 3 clause

import csv
import io
import os
import warnings
from collections import Counter
from numbers import Integral

import numpy as np
from sklearn.utils import Bunch

from ..utils._files import FileError, one_line, read_bytes
from ..utils._npy import read_npy
from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["load_rows", "load_table", "table_byte_limit", "table_format"]

#: Largest table :func:`load_table` reads, in bytes after decompression: 4 GiB (a CSV of
#: about 134 million numbers of up to 30 characters). The environment variable
#: ``SKDC_MAX_TABLE_BYTES`` raises it for every command.
DEFAULT_MAX_BYTES = 2**32
#: Most cells (rows x columns) of a table: 2**27, about 134 million, 1 GiB as float64 (such as
#: 500,000 rows x 268 columns). Checked before parsing: a text table's lines times its header's
#: columns, a Parquet file's declared rows times its columns. The environment variable
#: ``SKDC_MAX_TABLE_CELLS`` raises it for every command.
DEFAULT_MAX_CELLS = 2**27
#: Most columns a table's header names: 2**17 = 131,072.
MAX_COLUMNS = 2**17
#: Most cells a Parquet file may declare per byte it holds, once it declares more than
#: ``2**24`` cells: repetitive columns compress far (a sorted 0/1 column about 300 cells per
#: byte), a file declaring more is crafted or damaged.
PARQUET_MAX_CELLS_PER_BYTE = 1024
_PARQUET_FREE_CELLS = 2**24
_LIMITS = {"max_bytes": ("SKDC_MAX_TABLE_BYTES", DEFAULT_MAX_BYTES),
           "max_cells": ("SKDC_MAX_TABLE_CELLS", DEFAULT_MAX_CELLS)}

# suffix -> format; ``.gz`` after a text suffix is decompressed by the file boundary
_FORMATS = {".csv": "csv", ".tsv": "tsv", ".txt": "csv", ".parquet": "parquet",
            ".pq": "parquet", ".npy": "npy"}
_ENCODING_ADVICE = ("encode categories as numbers the same way at every participant, before "
                    "the mechanism (one-hot or ordinal codes from one shared category list), or "
                    "drop the column")


def table_format(path):
    """The table format :func:`load_table` reads ``path`` as, from its suffix, or ``None``.

    Commands that also read other files at the same flag ask this first: ``"csv"`` (also
    ``.txt``), ``"tsv"`` (each possibly gzipped: ``.csv.gz``), ``"parquet"`` (``.pq``) or
    ``"npy"``.

    Parameters
    ----------
    path : str or path-like
        A file name.

    Returns
    -------
    format : str or None
        The format, or ``None`` for a suffix :func:`load_table` does not read.

    Examples
    --------
    >>> from skdc.datasets import table_format
    >>> table_format("clinic.csv.gz"), table_format("rows.parquet"), table_format("X.dat")
    ('csv', 'parquet', None)
    """
    name = os.path.basename(os.fspath(path)).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _FORMATS.get(os.path.splitext(name)[1])


@validate_params(
    {
        "path": [str, os.PathLike],
        "label": [str, os.PathLike, Integral, None],
        "return_X_y": ["boolean"],
        "max_bytes": [Interval(Integral, 1, None, closed="left"), None],
        "max_cells": [Interval(Integral, 1, None, closed="left"), None],
        "what": [str],
        "label_what": [str],
        "id_column": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def load_table(path, *, label=None, return_X_y=False, max_bytes=None, max_cells=None,
               what="the table", label_what="the labels", id_column=None):
    """Load a numeric table (CSV, TSV or Parquet with a header, or ``.npy``) and its labels.

    The format follows the suffix: ``.csv`` and ``.txt`` (comma-separated), ``.tsv``
    (tab-separated), each optionally gzipped (``.csv.gz``); ``.parquet`` or ``.pq`` (needs
    pyarrow); ``.npy`` (a 2-D numeric array, never unpickled). Text tables need a header line
    naming the columns.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        The table. Every column but the label is a feature; each must be numeric (booleans
        count as 0 and 1) and complete.
    label : str, int, path-like or None, default=None
        Where the targets are: the name of a column of the table (it is then not a feature),
        a column's position (``-1``: the last), or a file holding them (a 1-D ``.npy`` or a
        table of one column, with a header). A string names a column when the table has one
        of that name, else a file. ``None``: no targets.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.
    max_bytes : int, default=None
        Largest file accepted, in bytes after decompression (also for a labels file), counted
        while reading, so a compressed bomb or a file that never ends (``/proc/self/pagemap``)
        stops there. ``None``: the environment variable ``SKDC_MAX_TABLE_BYTES`` if set, else
        ``DEFAULT_MAX_BYTES`` (4 GiB).
    max_cells : int, default=None
        Most cells (rows x columns) accepted, checked before parsing (a text table's lines
        times its columns, a Parquet file's declared rows times its columns). ``None``: the
        environment variable ``SKDC_MAX_TABLE_CELLS`` if set, else ``DEFAULT_MAX_CELLS``
        (2**27, 1 GiB as float64). A header may name at most ``MAX_COLUMNS`` (131,072)
        columns.
    what : str, default="the table"
        What the table is (a flag such as ``"--data"``), for messages.
    label_what : str, default="the labels"
        What a labels file is (``"--labels"``), for messages.
    id_column : str, default=None
        The name of a column of row identifiers (any values: numbers or text), neither a
        feature nor the label: it is taken out of ``data`` and returned as ``ids``. Only
        for tables with a header (a ``.npy`` has no column names). ``None``: no id column.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With ``data`` (ndarray of float64 of shape (n_samples, n_features)), ``target``
        (ndarray of shape (n_samples,), numbers or strings, or ``None``),
        ``feature_names`` (ndarray of str; ``x0, x1, ...`` for ``.npy``) and
        ``target_name`` (the label column's name, or ``None``) and ``ids`` (the values of
        ``id_column``, or ``None``).
    (data, target) : tuple
        With ``return_X_y=True``.

    Raises
    ------
    ValueError
        One line naming the file: an unknown suffix, a text table without a header, a
        non-numeric column (encode categories the same way at every participant, before the
        mechanism), a missing or infinite value (impute or drop first), a label that is
        neither a column nor a file, labels of the wrong length, a file above ``max_bytes``
        or ``max_cells`` (the message says how to raise them), a file too large for the memory
        left.
    ImportError
        Reading needs pandas (and pyarrow for Parquet); the message says what to install.

    See Also
    --------
    skdc.datasets.partition : Split the rows among simulated participants.

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.datasets import load_table
    >>> path = os.path.join(tempfile.mkdtemp(), "clinic.csv")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("age,bmi,smoker,diagnosis\\n"
    ...                  "61,27.1,1,benign\\n"
    ...                  "48,31.4,0,malignant\\n")
    >>> table = load_table(path, label="diagnosis")
    >>> table.data
    array([[61. , 27.1,  1. ],
           [48. , 31.4,  0. ]])
    >>> table.target.tolist(), table.feature_names.tolist()
    (['benign', 'malignant'], ['age', 'bmi', 'smoker'])
    """
    path = os.fspath(path)
    limits = {"max_bytes": _limit("max_bytes", max_bytes),
              "max_cells": _limit("max_cells", max_cells)}
    try:
        return _load_table(path, label, return_X_y, limits, what, label_what, id_column)
    except MemoryError:
        raise _no_memory(path, what) from None


@validate_params(
    {
        "path": [str, os.PathLike],
        "label": [str, os.PathLike, None],
        "what": [str],
        "label_what": [str],
        "id_column": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def load_rows(path, *, label=None, what="--data", label_what="--labels", id_column=None):
    """Load the rows a command's ``--data`` names: a table, or a ``.npy`` array as saved.

    The one loader of ``--data`` for skdc's commands (``participant upload`` and ``predict``,
    ``audit``, ``bound``). A table (a name :func:`table_format` reads as CSV, TSV or Parquet),
    or labels in a table, are read by :func:`load_table`. Anything else is one ``.npy`` array
    (a name without a known suffix too), read without unpickling and kept in the dtype it was
    saved with, so that a digest of the rows (the audit's record, an upload's) is the file's;
    its labels, when given, are a 1-D ``.npy`` of one label per row.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        The rows: a table, or a 2-D ``.npy`` array of numbers (booleans count as 0 and 1),
        complete and finite.
    label : str, path-like or None, default=None
        Where the targets are, as :func:`load_table` takes it (a column of a table, or a
        file); beside a ``.npy`` of rows, a 1-D ``.npy`` file. ``None``: no targets.
    what : str, default="--data"
        What the rows are (the flag), for messages.
    label_what : str, default="--labels"
        What the labels are (the flag), for messages.
    id_column : str, default=None
        A column of row identifiers of a table, as :func:`load_table` takes it; a ``.npy``
        has none.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        As :func:`load_table` returns it; for a ``.npy`` of rows with its labels in a
        ``.npy`` (or none), ``data`` and ``target`` are the arrays as saved and
        ``feature_names``, ``target_name`` and ``ids`` are ``None`` (an array names no
        columns).

    Raises
    ------
    ValueError
        One line naming the file and ``what``: no such file, a file that is no readable
        ``.npy`` (not a regular file, text, a pickle, truncated) or no table, rows that are not
        2-D, numeric, complete and finite, labels that do not match the rows, and every
        refusal of :func:`load_table`.

    See Also
    --------
    skdc.datasets.load_table : Load a table's rows as float64, and its labels.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.datasets import load_rows
    >>> folder = tempfile.mkdtemp()
    >>> np.save(os.path.join(folder, "X.npy"), np.array([[61, 27], [48, 31]]))
    >>> np.save(os.path.join(folder, "y.npy"), np.array([0, 1]))
    >>> rows = load_rows(os.path.join(folder, "X.npy"), label=os.path.join(folder, "y.npy"))
    >>> rows.data.dtype.kind, rows.target.tolist(), rows.feature_names
    ('i', [0, 1], None)
    """
    path = os.fspath(path)
    if not os.path.lexists(path):
        raise FileError(f"{path}: no such file ({what}).")
    if table_format(path) not in (None, "npy") or (
            label is not None and table_format(label) not in (None, "npy")):
        return load_table(path, label=label, what=what, label_what=label_what,
                          id_column=id_column)
    limits = {"max_bytes": _limit("max_bytes", None), "max_cells": _limit("max_cells", None)}
    _refuse_id_column(path, what, id_column)
    try:
        X = _read_npy(path, what, limits, dtype=None)
        y = None if label is None else _labels_file(label, path, what, label_what, X.shape[0],
                                                     limits, npy=True)
    except MemoryError:
        raise _no_memory(path, what) from None
    return Bunch(data=X, target=y, feature_names=None, target_name=None, ids=None)


def _refuse_id_column(path, what, id_column):
    """A ``.npy`` array has no column names, so no id column."""
    if id_column is not None:
        raise FileError(f"{path}: {what} is a .npy array without column names, so it has no id "
                        f"column (id_column={id_column!r}); give a table with a header (.csv, "
                        ".parquet), or no id column.")


def _no_memory(path, what):
    return FileError(f"{path}: not enough memory to read {what}; free memory, or give a "
                     "smaller table (fewer rows or columns).")


def _limit(name, value):
    """``value``, or the environment variable's, or the default."""
    if value is not None:
        return value
    variable, default = _LIMITS[name]
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"the environment variable {variable} must be a positive whole number "
                         f"(of {'bytes' if name == 'max_bytes' else 'cells'}); got {text!r}.")
    return value


def table_byte_limit():
    """The most bytes a table read takes, and what to do about a larger one.

    The same limit :func:`load_table` applies: ``SKDC_MAX_TABLE_BYTES`` from the environment,
    else 4 GiB; readers of other row files (a command's ``.npy`` ``--data``) use it too.

    Returns
    -------
    max_bytes : int
        The byte limit, counted after decompression.
    advice : str
        One sentence saying how to read a larger table, for an error message.

    Examples
    --------
    >>> from skdc.datasets import table_byte_limit
    >>> table_byte_limit()[0] >= 1
    True
    """
    return _limit("max_bytes", None), _advice("max_bytes")


def _advice(name):
    variable, default = _LIMITS[name]
    return (f"To read a larger table, set {variable} in the environment (default "
            f"{default}) or pass {name} to skdc.datasets.load_table.")


def _load_table(path, label, return_X_y, limits, what, label_what, id_column=None):
    kind = table_format(path)
    if kind is None:
        raise FileError(
            f"{path}: cannot tell the format of {what} from its name; give a .csv, .tsv, "
            ".parquet or .npy file (text tables may be gzipped: .csv.gz)."
        )
    if kind == "npy":
        if isinstance(label, Integral):
            raise FileError(f"{path}: {what} is a .npy array without column names or a label "
                            f"column (label={label}); give the labels as a file.")
        _refuse_id_column(path, what, id_column)
        X, y, target_name, ids = _read_npy(path, what, limits), None, None, None
        names = [f"x{j}" for j in range(X.shape[1])]
    else:
        X, y, names, target_name, ids = _split_frame(_read_frame(path, kind, what, limits),
                                                     label, path, what, id_column)
    if label is not None and target_name is None:
        y = _labels_file(label, path, what, label_what, X.shape[0], limits)
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, feature_names=np.asarray(names, dtype=str),
                 target_name=target_name, ids=ids)


def _split_frame(frame, label, path, what, id_column=None):
    """``(X, y, feature_names, target_name, ids)`` of a table; ``y`` None unless ``label``
    names one of its columns, ``ids`` None unless ``id_column`` is given."""
    header = frame.attrs.pop("header", ())  # pandas deep-copies attrs into every column taken
    names = [str(c).strip() for c in (header if len(header) == frame.shape[1]
                                      else frame.columns)]
    _check_header(path, what, names, label)
    column = _label_column(names, label, path, what)
    y, target_name = None, None
    if column is not None:
        target_name = names.pop(column)
        y = _target(frame.iloc[:, column], path, f"{what} column {target_name!r}")
        frame = frame.drop(columns=frame.columns[column])
    ids = None
    if id_column is not None:
        if id_column not in names:
            listed = ", ".join(repr(n) for n in names[:8]) + (", ..." if len(names) > 8 else "")
            taken = (" (it is the label column)" if id_column == target_name else "")
            raise FileError(f"{path}: {what} has no column {id_column!r} for the ids "
                            f"(id_column={id_column!r}){taken}; its columns are {listed}. "
                            "Name one of them, as the header spells it.")
        k = names.index(id_column)
        names.pop(k)
        ids = frame.iloc[:, k].to_numpy()
        frame = frame.drop(columns=frame.columns[k])
    return _numeric_rows(frame, names, path, what), y, names, target_name, ids


# -- readers --------------------------------------------------------------------------------
def _pandas(why):
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(f"{why} needs pandas: pip install pandas (or pip install "
                          "'skdc[tables]').") from None
    return pd


def _read_frame(path, kind, what, limits):
    """The table as a DataFrame, parsed by pandas from bytes read through the file boundary."""
    if kind == "parquet":
        return _read_parquet(path, what, limits)
    pd = _pandas(f"reading {what} ({path})")
    data = read_bytes(path, what, max_bytes=limits["max_bytes"], advice=_advice("max_bytes"))
    sep = "\t" if kind == "tsv" else ","
    header = _header_cells(data, sep, path, what)
    _check_cells(path, what, _count_rows(data), len(header), limits["max_cells"])
    try:
        with warnings.catch_warnings():
            # index_col=False: a row longer than the header is an error (pandas warns and
            # drops its extra fields), never a silent index column
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(io.BytesIO(data), sep=sep, index_col=False, low_memory=False,
                                encoding="utf-8")
    except pd.errors.ParserWarning:
        raise FileError(f"{path}: {what} has rows with more fields than its header names; "
                        "give every column a name in the header line.") from None
    except UnicodeDecodeError as exc:
        raise FileError(f"{path}: {what} is not UTF-8 text (byte {exc.start}); save it as "
                        "UTF-8.") from None
    except pd.errors.EmptyDataError:
        raise FileError(f"{path}: {what} is empty; it needs a header line and rows.") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise FileError(f"{path}: {what} is not a readable {kind.upper()} table "
                        f"({one_line(exc, 120)}).") from None
    frame.attrs["header"] = header
    return frame


def _line_end(data):
    """Where the first line of ``data`` ends: its first ``\\n`` or ``\\r`` (pandas, too, ends
    lines at a lone ``\\r``), or its end."""
    ends = [k for k in (data.find(b"\n"), data.find(b"\r")) if k >= 0]
    return min(ends, default=len(data))


def _count_rows(data):
    """The data rows of a text table, at most (lines after the header; a quoted field may
    hold a line break)."""
    end = _line_end(data)
    cr_only = data[end:end + 1] == b"\r" and data[end + 1:end + 2] != b"\n"
    rows = data.count(b"\r" if cr_only else b"\n", end + 1)
    return rows + (len(data) > end + 1 and data[-1:] not in (b"\n", b"\r"))


def _header_cells(data, sep, path, what):
    """The cells of the first line as written (pandas renames duplicate names), refused in one
    line when it names more than ``MAX_COLUMNS`` columns or the csv module cannot read it."""
    end = _line_end(data)
    fields = data.count(sep.encode(), 0, end) + 1  # quoted separators count too: at most
    if fields > MAX_COLUMNS:
        raise FileError(f"{path}: {what}'s first line holds {fields} fields, more than the "
                        f"{MAX_COLUMNS} columns a table may have; it is no table (a header "
                        "line naming the columns, then one line per row).")
    first = data[:end].decode("utf-8", errors="replace").lstrip("\ufeff")
    try:
        return next(csv.reader([first], delimiter=sep), [])
    except csv.Error as exc:
        limit = csv.field_size_limit()
        why = (f"a column name longer than {limit} characters" if "field limit" in str(exc)
               else one_line(exc, 80))
        raise FileError(f"{path}: {what}'s header line cannot be read ({why}); give a header "
                        "line of short column names.") from None


def _check_cells(path, what, rows, columns, max_cells, declared=""):
    """Refuse a table of more than ``max_cells`` cells before it is parsed."""
    if rows * columns > max_cells:
        raise FileError(f"{path}: {what} {declared or 'holds up to '}{rows} rows x {columns} "
                        f"columns ({rows * columns} cells), above the limit of {max_cells} "
                        f"cells; is it the right file? {_advice('max_cells')}")


def _read_parquet(path, what, limits):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"reading the Parquet file {path} ({what}) needs pyarrow: pip install "
                          "pyarrow (or pip install 'skdc[tables]').") from None
    _pandas(f"reading {what} ({path})")
    max_bytes = limits["max_bytes"]
    data = read_bytes(path, what, max_bytes=max_bytes, decompress=None,
                      advice=_advice("max_bytes"))
    try:
        parquet = pq.ParquetFile(pa.BufferReader(data))
        meta = parquet.metadata
        rows, columns = meta.num_rows, meta.num_columns
        # the declared shape, checked before a byte of data is decoded: within the cell
        # budget and the columns a header may name, and plausible for the bytes the file holds
        if columns > MAX_COLUMNS:
            raise FileError(f"{path}: {what} declares {columns} columns, more than the "
                            f"{MAX_COLUMNS} a table may have; is it the right file?")
        _check_cells(path, what, rows, columns, limits["max_cells"], "declares ")
        if (rows * columns > _PARQUET_FREE_CELLS
                and rows * columns > PARQUET_MAX_CELLS_PER_BYTE * len(data)):
            raise FileError(f"{path}: {what} declares {rows} rows x {columns} columns in only "
                            f"{len(data)} bytes (more than {PARQUET_MAX_CELLS_PER_BYTE} cells "
                            "per byte); it is crafted or damaged, not a table.")
        # the byte bound holds after Parquet's own decompression too, as its metadata
        # declares it, and for the float64 rows it decodes to
        inflated = max(rows * columns * 8, sum(meta.row_group(k).total_byte_size
                                               for k in range(meta.num_row_groups)))
        if inflated > max_bytes:
            raise FileError(f"{path}: {what} declares {rows} rows x {columns} columns "
                            f"({inflated} bytes decoded), above the limit of {max_bytes} "
                            f"bytes; is it the right file? {_advice('max_bytes')}")
        frame = parquet.read().to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        if isinstance(exc, FileError):
            raise
        raise FileError(f"{path}: {what} is not a readable Parquet file "
                        f"({one_line(exc, 120)}).") from None
    frame.attrs["header"] = [str(c) for c in parquet.schema_arrow.names]
    return frame


def _read_npy(path, what, limits, *, ndim=2, dtype=np.float64):
    """One ``.npy`` array of ``ndim`` dimensions, read by :func:`skdc.utils._npy.read_npy`;
    rows (``ndim=2``) must be numeric, non-empty and finite, and are cast to ``dtype``
    (``None``: kept as saved)."""
    arr = read_npy(path, what, max_bytes=limits["max_bytes"], advice=_advice("max_bytes"))
    if arr.ndim != ndim:
        hint = (" Save one row per sample (for a single feature: X.reshape(-1, 1))."
                if ndim == 2 and arr.ndim == 1 else "")
        raise FileError(f"{path}: {what} must be a {ndim}-D array"
                        f"{' (rows x features)' if ndim == 2 else ' (one label per row)'}; got "
                        f"shape {arr.shape}.{hint}")
    if ndim == 1:
        return arr
    if arr.dtype.kind not in "biuf":
        raise FileError(f"{path}: {what} must hold numbers; got dtype {arr.dtype}. "
                        f"{_ENCODING_ADVICE[0].upper()}{_ENCODING_ADVICE[1:]}.")
    X = arr if dtype is None else arr.astype(dtype)
    _check_rows(X, path, what)
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise FileError(f"{path}: {what} holds {int(bad.sum())} NaN or infinite value(s), first "
                        f"in data row {row + 1}, column {col + 1}; impute or drop them the same "
                        "way at every participant, before the mechanism.")
    return X


# -- checks ---------------------------------------------------------------------------------
def _looks_numeric(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_header(path, what, names, label):
    """Refuse duplicate or empty column names, and a first line of numbers (no header)."""
    header = [c.strip() for c in names]
    duplicated = sorted(c for c, n in Counter(header).items() if n > 1)
    if duplicated:
        raise FileError(f"{path}: {what} names column(s) {duplicated} more than once; give "
                        "every column its own name.")
    unnamed = [k for k, c in enumerate(header) if not c or c.startswith("Unnamed: ")]
    if unnamed:
        raise FileError(
            f"{path}: {what} column {unnamed[0] + 1} has no name (a saved pandas index? save "
            "with index=False, or drop it); every column needs a name in the header."
        )
    numeric = [c for c in header if _looks_numeric(c)]
    if len(header) > 1 and len(numeric) >= len(header) - (label is not None):
        raise FileError(
            f"{path}: {what} has no header: its first line holds numbers ({', '.join(numeric[:3])}"
            f"{', ...' if len(numeric) > 3 else ''}), not column names. Add a header line "
            "naming the columns (e.g. x0,x1,...,label)."
        )


def _label_column(names, label, path, what):
    """Position of the label column in ``names``, or None when ``label`` is no column."""
    if label is None or isinstance(label, os.PathLike):
        return None
    if isinstance(label, Integral) and not isinstance(label, bool):
        if not -len(names) <= label < len(names):
            raise FileError(f"{path}: label={label} is no column position of {what}, which "
                            f"has {len(names)} columns.")
        return label % len(names)
    return names.index(label) if label in names else None


def _target(column, path, what):
    """One label per row: numbers or strings (never objects), none missing."""
    missing = column.isna().to_numpy()
    if missing.any():
        first = int(np.flatnonzero(missing)[0]) + 1
        raise FileError(f"{path}: {what} has {int(missing.sum())} missing label(s), first in "
                        f"data row {first}; drop those rows or label them.")
    values = column.to_numpy()
    if values.dtype.kind in "biuf":
        if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
            raise FileError(f"{path}: {what} holds infinite labels; labels must be finite.")
        return values
    return np.asarray([str(v) for v in values], dtype=str)


def _check_rows(X, path, what):
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise FileError(f"{path}: {what} is empty ({X.shape[0]} rows, {X.shape[1]} feature "
                        "columns); it needs rows and at least one feature column.")


def _not_numbers(column):
    """Positions of a column's cells that are no numbers (the first quoted as the example);
    when every present cell reads as one (numbers stored as text), those present."""
    pd = _pandas("reading a table")
    present = column.notna().to_numpy()
    try:
        numbers = pd.to_numeric(column, errors="coerce").notna().to_numpy()
    except (TypeError, ValueError):
        numbers = np.zeros_like(present)
    bad = np.flatnonzero(present & ~numbers)
    return bad if bad.size else np.flatnonzero(present)


def _numeric_rows(frame, names, path, what):
    """The feature columns as float64: numeric (booleans as 0/1), complete, finite."""
    _check_rows(frame, path, what)
    for k, dtype in enumerate(frame.dtypes):  # the dtypes at once: linear in the columns
        if not isinstance(dtype, np.dtype) or dtype.kind not in ("b", "i", "u", "f"):
            name, col = names[k], frame.iloc[:, k]
            if frame.shape[1] == 1 and ";" in name:
                raise FileError(f"{path}: {what} seems to separate its columns with ';' "
                                f"({name!r}); save it with commas (or tabs, as .tsv).")
            bad = _not_numbers(col)
            example = (f" (e.g. {str(col.iloc[bad[0]])[:30]!r} in data row {bad[0] + 1})"
                       if bad.size else "")
            raise FileError(f"{path}: {what} column {name!r} is not numeric{example}; "
                            f"{_ENCODING_ADVICE}.")
    X = frame.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(X)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        kind = "a missing" if np.isnan(X[row, col]) else "an infinite"
        raise FileError(
            f"{path}: {what} has {int(bad.sum())} missing or infinite value(s), first {kind} "
            f"value in column {names[col]!r}, data row {row + 1}; impute or drop them the same "
            "way at every participant, before the mechanism."
        )
    return X


def _labels_file(label, path, what, label_what, n_rows, limits, *, npy=False):
    """The targets from a labels file: a 1-D ``.npy`` (whatever its name with ``npy``, as
    :func:`load_rows` reads an array's labels) or a one-column table."""
    where = os.fspath(label)
    if isinstance(label, str) and not os.path.lexists(where):
        if npy or table_format(path) == "npy":
            raise FileError(f"{where}: no such file ({label_what}); give a file of one label "
                            "per row.")
        raise FileError(f"{path}: {what} has no column {label!r} and there is no file of that "
                        f"name ({label_what}); give the label column's name or a file of one "
                        "label per row.")
    kind = "npy" if npy else table_format(where)
    if kind == "npy":
        y = _read_npy(where, label_what, limits, ndim=1)
        if y.dtype.kind not in "biufU":
            raise FileError(f"{where}: {label_what} must hold numbers or strings; got dtype "
                            f"{y.dtype}.")
        if y.dtype.kind == "f" and not np.isfinite(y).all():
            raise FileError(f"{where}: {label_what} contains NaN or infinity; labels must be "
                            "finite.")
    elif kind is None:
        raise FileError(f"{where}: cannot tell the format of {label_what} from its name; give "
                        "a .npy file or a table of one column (.csv, .tsv, .parquet).")
    else:
        frame = _read_frame(where, kind, label_what, limits)
        if frame.shape[1] != 1:
            raise FileError(
                f"{where}: {label_what} has {frame.shape[1]} columns; a labels file holds one "
                "column (with a header). To use a column of the data table, give its name."
            )
        y = _target(frame.iloc[:, 0], where, label_what)
    if y.shape != (n_rows,):
        raise FileError(f"{where}: {label_what} holds {y.shape[0]} labels for the {n_rows} "
                        f"rows of {path} ({what}); give one label per row.")
    return y
