"""A checkpoint of finished jobs: one JSON line per job, appended as each one finishes.

Long experiments (noise calibrations, audits) run many independent draws. Each finished draw is
written as one line ``{"key": ..., "row": {...}}`` and flushed, so an interrupted run loses at
most the draws in flight; the next run with the same checkpoint reads the finished ones back
instead of running them again. Floats go through JSON's shortest round-trip representation, so
a resumed run's numbers equal the uninterrupted run's to the last bit. The first line records a
fingerprint of the run's configuration; a checkpoint written for another configuration is
refused rather than silently mixed in.

A checkpoint crosses the file boundary (:mod:`skdc.utils._files`) like any other file: it is
read only when it is a regular file, within a byte limit; every record read back is checked
(its fields, their types, finite values where a row needs them) and a bad one is refused with
the file and the line; the file is created exclusively, and appended to only when it is a
regular file reached without a link. A line cut short by an interruption (the last one, without
its newline) is dropped and the file rewritten without it, so a later line never follows a
broken one.

It is the one checkpoint format of skdc: the audit, the noise calibration and the comparison
keep their draws in it, and the entropy bound its grid pairs
(:class:`~skdc.privacy.BlockEntropyLowerBound`). The entropy bound's own format of skdc 0.1 (one
JSON table of ``"fingerprint"`` and ``"pairs"``) is recognised and refused in words, never read.
"""

# Licence: BSD 3 clause

import json
import math
import os
import stat

import numpy as np

from ._files import FileError, file_kind, open_regular, read_text
from ._outputs import output_mode, write_file

__all__ = ["CheckpointError", "DrawCheckpoint", "is_checkpoint"]

_MAX_BYTES = 256 * 2**20  # a million draws of a few hundred bytes each
_KINDS = ("number", "finite", "int", "bool", "share", "error")
# the largest attack error a checkpoint keeps: a reconstruction a million times the rows' own
# size away is no reconstruction; a larger value read back is refused, not believed
_MAX_ERROR = 1e6


class CheckpointError(FileError):
    """A checkpoint file is of the wrong kind, of another run, or holds a bad record."""


def _plain(value):
    """JSON-safe Python scalars (NaN kept as NaN, numpy scalars unwrapped)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return float("nan")
    return value


def _is_kind(value, kind):
    """Whether a decoded JSON value is of ``kind`` (booleans are not numbers)."""
    if isinstance(value, bool):
        return kind == "bool"
    if kind == "int":
        return isinstance(value, int)
    if kind in ("number", "finite"):
        if not isinstance(value, (int, float)):
            return False
        try:
            number = float(value)
        except OverflowError:  # an integer beyond the floats: no number a row can hold
            return False
        return kind == "number" or math.isfinite(number)
    if kind == "share":
        return isinstance(value, (int, float)) and 0.0 <= value <= 1.0  # NaN is refused
    if kind == "error":
        return isinstance(value, (int, float)) and 0.0 <= value <= _MAX_ERROR
    return False


_WORDS = {"number": "a number", "finite": "a finite number", "int": "an integer",
          "bool": "true or false", "share": "a share from 0 to 1",
          "error": f"an error from 0 to {_MAX_ERROR:g}"}

# the entropy bound's checkpoint of skdc 0.1: one JSON table, no line of records
_OLD_ENTROPY_GRID = {"fingerprint", "pairs"}


def is_checkpoint(path):
    """Whether ``path`` is a regular file whose first line is a draw checkpoint's header.

    Used to recognise skdc's own checkpoints before removing them (``--fresh``).

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.utils._checkpoint import DrawCheckpoint, is_checkpoint
    >>> path = os.path.join(tempfile.mkdtemp(), "draws.jsonl")
    >>> _ = DrawCheckpoint(path, {"seed": 0})
    >>> is_checkpoint(path), is_checkpoint(os.path.dirname(path))
    (True, False)
    """
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return False
        with open_regular(path, "checkpoint") as fh:
            head = json.loads(fh.readline(1 << 20))
        return isinstance(head, dict) and "fingerprint" in head
    except (OSError, ValueError, RecursionError):
        return False


class DrawCheckpoint:
    """Finished draws kept in a JSON-lines file, keyed by a string.

    Parameters
    ----------
    path : str, Path or None
        The file; ``None`` keeps nothing (every method is then a no-op and ``get`` finds
        nothing). Its folder must exist.
    fingerprint : dict
        JSON-serialisable description of the run; a file written under another one is refused.
    fields : dict of {str: str}, default=None
        What a row holds: ``{name: kind}`` with kind ``"number"`` (any float, NaN and
        infinities included), ``"finite"``, ``"int"``, ``"bool"``, ``"share"`` (a rate such
        as an accuracy: from 0 to 1, not NaN) or ``"error"`` (a relative error: from 0 to
        1e6, not NaN). A name ending in ``"?"`` is optional, and its value may be ``null``.
        Rows read back are checked against it (missing, unknown, ill-typed or impossible
        fields are refused, naming the file and the line); ``None`` checks only that each row
        maps names to numbers, booleans or ``null``. A row that breaks it when stored (an
        attack error beyond 1e6, a NaN accuracy) is kept for this run but not written, so a
        resumed run computes it again rather than refusing its own file.
    max_bytes : int, default=256 MiB
        The largest checkpoint read.
    check : callable or None, default=None
        What ``fields`` cannot say about a row: ``check(key, row)`` returns what is wrong
        with a row whose fields passed (an identity its values must keep, a key that must
        match them), or ``None``. A row it faults is refused when read back and not written
        when stored, as for ``fields``.

    Attributes
    ----------
    n_read : int
        Rows read back from the file when it was opened (0 for a new checkpoint).
    read_keys : frozenset of str
        Their keys.

    Examples
    --------
    >>> import tempfile, os
    >>> from skdc.utils._checkpoint import DrawCheckpoint
    >>> path = os.path.join(tempfile.mkdtemp(), "draws.jsonl")
    >>> ck = DrawCheckpoint(path, {"seed": 0}, fields={"error": "number"})
    >>> ck.put("v=0.1/0", {"error": 0.25})
    >>> back = DrawCheckpoint(path, {"seed": 0}, fields={"error": "number"})
    >>> back.get("v=0.1/0"), back.n_read
    ({'error': 0.25}, 1)
    """

    def __init__(self, path, fingerprint, fields=None, *, max_bytes=_MAX_BYTES, check=None):
        self.path = None if path is None else os.fspath(path)
        self.fingerprint = json.loads(json.dumps(fingerprint))
        self.fields = None if fields is None else dict(fields)
        self.check = check
        for name, kind in (self.fields or {}).items():
            if kind not in _KINDS:
                raise ValueError(f"field {name!r}: kind must be one of {_KINDS}; got {kind!r}.")
        self._rows = {}
        self.n_read = 0
        self.read_keys = frozenset()
        if self.path is None:
            return
        st = self._lstat()
        if st is not None and st.st_size > 0:
            self._read(max_bytes)
            self.n_read = len(self._rows)
            self.read_keys = frozenset(self._rows)
        else:
            header = json.dumps({"fingerprint": self.fingerprint}) + "\n"
            self._rewrite([header], exclusive=st is None)

    # -- the file ---------------------------------------------------------------------------
    def _error(self, msg):
        return CheckpointError(f"{self.path}: checkpoint {msg}")

    def _lstat(self):
        """The file's ``lstat``, ``None`` when absent; a link or a non-regular file refused."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise self._error(f"cannot be read ({exc.strerror}).") from None
        if not stat.S_ISREG(st.st_mode):
            raise self._error(
                f"is {file_kind(st.st_mode)}, not a regular file; skdc reads and appends to "
                "its checkpoints only as regular files, never through a link. Remove it or "
                "pass another checkpoint path.")
        return st

    def _rewrite(self, lines, exclusive):
        # the checkpoint is the run's own state, read and rewritten: no input to protect
        with write_file(self.path, "checkpoint", mode=output_mode(0o644), exclusive=exclusive,
                        rewrite=True, error=CheckpointError) as fh:
            fh.write("".join(lines).encode("utf-8"))

    def _read(self, max_bytes):
        text = read_text(self.path, "checkpoint", max_bytes=max_bytes, error=CheckpointError)
        lines = text.split("\n")
        cut = lines.pop()  # "" when the text ends with a newline, else a line cut short
        if not lines:  # the header alone, its newline lost
            lines, cut = [cut], None
        self._check_header(lines[0])
        good = [lines[0] + "\n"]
        for number, line in enumerate(lines[1:], start=2):
            self._add(self._record(line, number), number)
            good.append(line + "\n")
        if cut is None:
            self._rewrite(good, exclusive=False)
        elif cut:
            try:  # a complete record whose newline was lost is kept
                self._add(self._record(cut, len(lines) + 1), len(lines) + 1)
                good.append(cut + "\n")
            except CheckpointError:
                pass  # cut short by the interruption: that draw runs again
            self._rewrite(good, exclusive=False)

    def _check_header(self, line):
        try:
            first = json.loads(line)
            head = first["fingerprint"]
        except (ValueError, KeyError, TypeError, IndexError, RecursionError):
            raise self._error(
                "is not a draw checkpoint (its first line holds no fingerprint); delete it or "
                "pass another checkpoint path.") from None
        if set(first) == _OLD_ENTROPY_GRID:
            raise self._error(
                "is an entropy-grid checkpoint in the format of skdc 0.1, which this skdc no "
                "longer reads; delete that file (skdc wrote it) to start the grid again, or "
                "pass another checkpoint path.")
        if head != self.fingerprint:
            keys = set(head) | set(self.fingerprint) if isinstance(head, dict) else {"all"}
            changed = sorted(k for k in keys if not isinstance(head, dict)
                             or head.get(k) != self.fingerprint.get(k))
            named = (k if k.isprintable() else repr(k) for k in changed)  # one line
            raise self._error(
                f"was written by a run with other settings (they differ in "
                f"{', '.join(named)}); delete it to start afresh or pass another checkpoint "
                "path.")

    def _record(self, line, number):
        """``(key, row)`` of one line, checked; a ``CheckpointError`` names the line."""
        where = f"line {number}"
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError):
            raise self._error(f"{where} is not a JSON record; the file was changed by "
                              "something else than skdc. Delete it to start afresh.") from None
        if not isinstance(entry, dict) or set(entry) != {"key", "row"}:
            got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise self._error(f"{where} must be a record {{\"key\": ..., \"row\": {{...}}}}; "
                              f"got {got}. Delete the file to start afresh.")
        key, row = entry["key"], entry["row"]
        if not isinstance(key, str) or not isinstance(row, dict):
            raise self._error(f"{where}: the key must be a string and the row an object; got "
                              f"{type(key).__name__} and {type(row).__name__}.")
        problem = self._row_problem(key, row)
        if problem:
            raise self._error(f"{where}: {problem}. Delete the file to start afresh.")
        return key, row

    def _row_problem(self, key, row):
        problem = self._field_problem(row)
        if problem is None and self.check is not None:
            problem = self.check(key, row)
        return problem

    def _field_problem(self, row):
        if self.fields is None:
            bad = sorted(k for k, v in row.items()
                         if v is not None and not isinstance(v, (int, float, bool)))
            return f"the fields {bad} are not numbers" if bad else None
        spec = {name.rstrip("?"): (kind, name.endswith("?")) for name, kind in
                self.fields.items()}
        unknown = sorted(set(row) - set(spec))
        if unknown:
            return f"the row holds fields {unknown} this run does not write"
        for name, (kind, optional) in spec.items():
            if name not in row:
                if not optional:
                    return f"the row lacks the field {name!r}"
                continue
            value = row[name]
            if value is None and optional:
                continue
            if not _is_kind(value, kind):
                return f"the field {name!r} must be {_WORDS[kind]}; got {value!r}"
        return None

    def _add(self, record, number):
        key, row = record
        if key in self._rows and self._rows[key] != row:
            raise self._error(f"line {number} repeats the key {key!r} with another row; the "
                              "file mixes two runs. Delete it to start afresh.")
        self._rows[key] = row

    # -- the API ----------------------------------------------------------------------------
    def __len__(self):
        return len(self._rows)

    def get(self, key):
        """The stored row of ``key``, or ``None``."""
        row = self._rows.get(key)
        return None if row is None else dict(row)

    def put(self, key, row):
        """Store (and flush) the row of a finished draw."""
        row = {k: _plain(v) for k, v in row.items()}
        line = json.dumps({"key": key, "row": row}) + "\n"
        self._rows[key] = json.loads(line)["row"]
        if self.path is None or ((self.fields is not None or self.check is not None)
                                 and self._row_problem(key, self._rows[key])):
            return
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) \
            | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags)
        except OSError as exc:  # ELOOP: a link was put there meanwhile
            raise self._error(f"cannot be appended to ({exc.strerror}); skdc appends only to a "
                              "regular file it created, never through a link.") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise self._error("is no longer a regular file; refusing to append to it.")
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)
