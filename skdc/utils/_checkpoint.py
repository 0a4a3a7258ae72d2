"""A checkpoint of finished jobs: one JSON line per job, appended as each one finishes.

Long experiments (noise calibrations, audits) run many independent draws. Each finished draw is
written as one line ``{"key": ..., "row": {...}}`` and flushed, so an interrupted run loses at
most the draws in flight; the next run with the same checkpoint reads the finished ones back
instead of running them again. Floats go through JSON's shortest round-trip representation, so
a resumed run's numbers equal the uninterrupted run's to the last bit. The first line records a
fingerprint of the run's configuration; a checkpoint written for another configuration is
refused rather than silently mixed in.
"""

# Licence: BSD 3 clause

import json
import math
from pathlib import Path

import numpy as np

__all__ = ["DrawCheckpoint"]


def _plain(value):
    """JSON-safe Python scalars (NaN kept as NaN, numpy scalars unwrapped)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return float("nan")
    return value


class DrawCheckpoint:
    """Finished draws kept in a JSON-lines file, keyed by a string.

    Parameters
    ----------
    path : str, Path or None
        The file; ``None`` keeps nothing (every method is then a no-op and ``get`` finds
        nothing).
    fingerprint : dict
        JSON-serialisable description of the run; a file written under another one is refused.

    Examples
    --------
    >>> import tempfile, os
    >>> from skdc.utils._checkpoint import DrawCheckpoint
    >>> path = os.path.join(tempfile.mkdtemp(), "draws.jsonl")
    >>> ck = DrawCheckpoint(path, {"seed": 0})
    >>> ck.put("v=0.1/0", {"error": 0.25})
    >>> DrawCheckpoint(path, {"seed": 0}).get("v=0.1/0")
    {'error': 0.25}
    """

    def __init__(self, path, fingerprint):
        self.path = None if path is None else Path(path)
        self.fingerprint = json.loads(json.dumps(fingerprint))
        self._rows = {}
        if self.path is None:
            return
        if self.path.is_file() and self.path.stat().st_size > 0:
            self._read()
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "w") as f:
                f.write(json.dumps({"fingerprint": self.fingerprint}) + "\n")

    def _read(self):
        with open(self.path) as f:
            text = f.read()
        if not text.endswith("\n"):  # cut short mid-line: later lines start on a fresh one
            with open(self.path, "a") as f:
                f.write("\n")
        lines = text.splitlines()
        try:
            head = json.loads(lines[0])["fingerprint"]
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            raise ValueError(
                f"checkpoint {self.path} is not a draw checkpoint (its first line holds no "
                "fingerprint); delete it or pass another checkpoint path."
            ) from exc
        if head != self.fingerprint:
            changed = sorted(k for k in set(head) | set(self.fingerprint)
                             if head.get(k) != self.fingerprint.get(k))
            raise ValueError(
                f"checkpoint {self.path} was written by a run with other settings (they differ "
                f"in {', '.join(changed)}); delete it to start afresh or pass another "
                "checkpoint path."
            )
        for line in lines[1:]:
            try:
                entry = json.loads(line)
            except ValueError:  # a line cut short by the interruption: run that draw again
                continue
            self._rows[entry["key"]] = entry["row"]

    def __len__(self):
        return len(self._rows)

    def get(self, key):
        """The stored row of ``key``, or ``None``."""
        row = self._rows.get(key)
        return None if row is None else dict(row)

    def put(self, key, row):
        """Store (and flush) the row of a finished draw."""
        row = {k: _plain(v) for k, v in row.items()}
        self._rows[key] = row
        if self.path is not None:
            with open(self.path, "a") as f:
                f.write(json.dumps({"key": key, "row": row}) + "\n")
