"""The audit command's inputs: the rows of ``--data`` (a ``.npy`` array or a table) and their
``--labels``, read by :func:`skdc.datasets.load_rows` (the commands' one loader, which keeps a
``.npy`` as saved, so the run's digest is the file's); ``--partition``, read by skdc's one
``.npy`` reader and checked against ``--data``; and the column ``--sensitive`` names."""

# Licence: BSD 3 clause


def _read_inputs(args):
    """``(X, y, partition)`` from ``--data``, ``--labels`` and ``--partition`` (``None``
    without it), each checked against ``--data``."""
    from ..datasets import load_rows, table_byte_limit
    from ..utils._npy import read_npy

    rows = load_rows(args.data, label=args.labels, what="--data", label_what="--labels")
    X, y = rows.data, rows.target
    names = None if rows.feature_names is None else list(rows.feature_names)
    args.sensitive_index = _sensitive_index(args.sensitive, names, X.shape[1])
    args.columns = names
    partition = None
    if args.partition is not None:
        partition = read_npy(args.partition, "--partition", max_bytes=table_byte_limit()[0])
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
