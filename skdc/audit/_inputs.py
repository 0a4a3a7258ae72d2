"""The audit command's inputs: the rows of ``--data`` (a ``.npy`` array or a table), their
``--labels`` and ``--partition``, each read through the file boundary and checked against
``--data``, and the column ``--sensitive`` names."""

# Licence: BSD 3 clause

import os
from pathlib import Path


def _load(path, flag):
    """One ``.npy`` array, read as a regular file (never a pipe, a folder or a device) within
    a table's byte limit whose header declares no more data than the file holds."""
    import numpy as np

    from ..datasets import table_byte_limit
    from ..utils._files import check_npy_size, open_regular

    path = Path(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"{flag} {path}: no such file.")
    with open_regular(path, flag, max_bytes=table_byte_limit()[0]) as fh:
        check_npy_size(fh, os.fstat(fh.fileno()).st_size, f"{flag} {path}:")
        fh.seek(0)
        try:
            arr = np.load(fh, allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ValueError(f"{flag} {path}: not a readable .npy array ({msg}).") from None
        except MemoryError:
            raise ValueError(f"{flag} {path}: not enough memory to read it; free memory, or "
                             "give fewer rows.") from None
    if not hasattr(arr, "shape"):
        raise ValueError(f"{flag} {path}: holds several arrays (.npz); save one array with "
                         "numpy.save.")
    return arr


def _read_inputs(args):
    """``(X, y, partition)`` from the ``.npy`` files of ``--data``, ``--labels`` and
    ``--partition`` (``None`` without it), each checked against ``--data``."""
    import numpy as np

    from ..datasets import load_table, table_format

    names = None
    if table_format(args.data) in (None, "npy") and table_format(args.labels) in (None, "npy"):
        X, y = _load(args.data, "--data"), _load(args.labels, "--labels")
    else:  # a table (CSV, Parquet) with its label column or a labels file
        table = load_table(args.data, label=args.labels, what="--data",
                           label_what="--labels")
        X, y, names = table.data, table.target, list(table.feature_names)
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise ValueError(f"--data {args.data}: must be a 2-D numeric array (rows x features); "
                         f"got shape {X.shape}, dtype {X.dtype}.")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"--data {args.data}: holds NaN or infinite values; clean them first.")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"--labels {args.labels}: must hold one label per row of --data "
                         f"({X.shape[0]}); got shape {y.shape}.")
    args.sensitive_index = _sensitive_index(args.sensitive, names, X.shape[1])
    args.columns = names
    partition = None
    if args.partition is not None:
        partition = _load(args.partition, "--partition")
        if partition.shape != (X.shape[0],) or partition.dtype.kind not in "iu":
            raise ValueError(f"--partition {args.partition}: must hold one integer party id "
                             f"per row of --data ({X.shape[0]}); got shape {partition.shape}, "
                             f"dtype {partition.dtype}.")
    return X, y, partition


def _sensitive_index(sensitive, names, n_features):
    """The column ``--sensitive`` names: a column name of a ``--data`` table, or a 0-based
    index; ``None`` without the flag."""
    if sensitive is None:
        return None
    if names is not None and sensitive in names:
        return names.index(sensitive)
    if sensitive.lstrip("-").isdigit():
        k = int(sensitive)
        if 0 <= k < n_features:
            return k
        raise ValueError(f"--sensitive {sensitive}: --data has columns 0 to {n_features - 1}.")
    where = (f"no column of --data is named {sensitive!r}" if names is not None else
             "a .npy array has no column names; give the column's 0-based index")
    raise ValueError(f"--sensitive {sensitive}: {where}.")
