"""Loading and validating participants' upload files: the speed of a deployment's analyst.

Target: 100 upload files of 10,000 x 100 float64 rows each load and validate (checksum, dtypes,
shapes, finiteness, cross-file checks) in under 5 s, with the checksum streamed so that the
memory used beyond the stacked result stays under twice one file.

Baselines measured in the same run: ``numpy.load`` of each file's data member plus
``numpy.concatenate`` (no validation), and the raw SHA-256 throughput over the same bytes.
Memory is measured with :mod:`tracemalloc` (NumPy reports its buffers to it).

Run: ``python benchmarks/bench_protocol.py [n_files] [n_rows] [n_cols]``.
"""

import hashlib
import os
import shutil
import sys
import tempfile
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from skdc import Uploads  # noqa: E402
from skdc.protocol import load_uploads, save_upload  # noqa: E402


def _write_files(tmp, n_files, n_rows, n_cols):
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4 * n_cols, n_cols))
    paths = []
    for i in range(n_files):
        data = rng.standard_normal((n_rows, n_cols))
        up = Uploads(data, np.zeros(n_rows, dtype=np.intp), anchors=[A + i])
        paths.append(save_upload(os.path.join(tmp, f"upload_{i:03d}.npz"), up, i,
                                 labels=rng.integers(0, 10, n_rows), v=0.05))
    return paths


def _baseline(paths):
    blocks = []
    for p in paths:
        with np.load(p, allow_pickle=False) as z:
            blocks.append(z["data"])
    return np.concatenate(blocks)


def _timed(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
        del out
    return float(np.median(times)), times


def _sha_seconds(n_bytes, repeats):
    blob = np.random.default_rng(1).standard_normal(n_bytes // 8).tobytes()
    return _timed(lambda: hashlib.sha256(blob).digest(), repeats)[0]


def _peak_extra(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    out = fn()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, peak - base, current - base


def main(n_files=100, n_rows=10_000, n_cols=100, repeats=3):
    tmp = tempfile.mkdtemp(prefix="skdc-bench-")
    try:
        start = time.perf_counter()
        paths = _write_files(tmp, n_files, n_rows, n_cols)
        write_s = time.perf_counter() - start
        file_bytes = os.path.getsize(paths[0])
        data_bytes = n_rows * n_cols * 8
        total = sum(os.path.getsize(p) for p in paths)
        print(f"{n_files} files of {n_rows} x {n_cols} float64 ({file_bytes / 2**20:.1f} MiB "
              f"each, {total / 2**30:.2f} GiB in all); written in {write_s:.1f} s")

        _timed(lambda: _baseline(paths[:5]), 1)  # warm the page cache
        base_med, base_all = _timed(lambda: _baseline(paths), repeats)
        load_med, load_all = _timed(lambda: load_uploads(paths), repeats)
        print(f"numpy.load + concatenate (no checks), median of {repeats}: {base_med:.2f} s "
              f"{[round(t, 2) for t in base_all]}")
        print(f"load_uploads (checksum + validation), median of {repeats}: {load_med:.2f} s "
              f"{[round(t, 2) for t in load_all]}  ratio {load_med / base_med:.2f}x  "
              f"target < 5 s: {'met' if load_med < 5 else 'NOT met'}")

        sha_s = _sha_seconds(data_bytes, repeats)
        print(f"raw SHA-256 over one file's data: {data_bytes / sha_s / 2**30:.2f} GiB/s, so "
              f"{total / (data_bytes / sha_s):.2f} s of hashing for all files")

        loaded, peak, kept = _peak_extra(lambda: load_uploads(paths))
        out_bytes = (loaded.uploads.nbytes + loaded.y.nbytes + loaded.uploads.participant.nbytes
                     + sum(b.nbytes for b in loaded.uploads.anchors))
        extra = peak - out_bytes
        print(f"memory, all files: peak {peak / 2**20:.1f} MiB for a result of "
              f"{out_bytes / 2**20:.1f} MiB: {extra / 2**20:.1f} MiB beyond the result = "
              f"{extra / file_bytes:.2f} x one file (target < 2): "
              f"{'met' if extra < 2 * file_bytes else 'NOT met'}")
        del loaded
        _, peak1, _ = _peak_extra(lambda: load_uploads(paths[:1]))
        print(f"memory, one file: peak {peak1 / 2**20:.1f} MiB = {peak1 / file_bytes:.2f} x the "
              f"file (target < 2): {'met' if peak1 < 2 * file_bytes else 'NOT met'}")
        _, peakb, _ = _peak_extra(lambda: _baseline(paths[:1]))
        print(f"baseline numpy.load of one file: peak {peakb / 2**20:.1f} MiB = "
              f"{peakb / file_bytes:.2f} x the file")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main(*[int(a) for a in sys.argv[1:4]])
