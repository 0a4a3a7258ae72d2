"""Wall time of ``python -m skdc demo`` and of one sweep under joblib backends.

Target: the demo under a few minutes on two CPU cores. The script times the demo's two parts
(the accuracy table and the sweeps, each attack scored in linkage and relative error, with the
demo's levels x draws), and one anchor-noise sweep of the demo's size, without attacks, run
sequentially (the baseline), with ``n_jobs=2`` (loky processes) and on a two-worker Dask
``LocalCluster``, and prints medians and ratios to the sequential run, plus whether the tables
agree. Run: ``python benchmarks/bench_demo.py [--repeats 1] [--levels 8 --draws 3]``.
"""

import argparse
import io
import os
import time

import numpy as np

from skdc import _demo
from skdc.alignment import GOPPAligner, v_phase_transition
from skdc.experiments import privacy_utility_sweep


def _median_time(func, repeats):
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--levels", type=int, default=_demo._N_LEVELS,
                        help="noise levels per sweep")
    parser.add_argument("--draws", type=int, default=_demo._N_DRAWS, help="draws per level")
    args = parser.parse_args()
    print(f"cpu cores visible: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")

    sink = io.StringIO()
    t_table, _ = _median_time(lambda: _demo.run_demo(file=sink), args.repeats)
    t_sweeps, _ = _median_time(
        lambda: _demo.run_demo_sweeps(n_levels=args.levels, n_draws=args.draws, out=None,
                                      n_jobs=-1, file=sink, progress=False),
        args.repeats)
    print(f"demo accuracy table: {t_table:.1f} s; demo sweeps ({args.levels} x {args.draws} "
          f"draws each, n_jobs=-1): {t_sweeps:.1f} s; total {t_table + t_sweeps:.1f} s "
          "(target: a few minutes on two cores)")

    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    from skdc import IGDP

    X_tr, X_te, y_tr, y_te = _demo._digits(0)
    v_pt = v_phase_transition(10, X_tr.shape[1], 4 * X_tr.shape[1])
    pipe = Pipeline([("gdp", IGDP(10, random_state=0)), ("align", GOPPAligner()),
                     ("clf", LogisticRegression(max_iter=3000))])

    def sweep(**kw):
        return privacy_utility_sweep(pipe, X_tr, y_tr,
                                     values=_demo._grid(2.5 * v_pt, args.levels),
                                     n_draws=args.draws, test_data=(X_te, y_te), random_state=0,
                                     progress=False, **kw)

    from joblib import parallel_config

    t_seq, ref = _median_time(lambda: sweep(n_jobs=1), args.repeats)
    t_loky, loky = _median_time(lambda: sweep(n_jobs=2), args.repeats)
    line = (f"anchor-noise sweep, {args.levels} x {args.draws} draws: sequential {t_seq:.1f} s "
            "(baseline); "
            f"loky n_jobs=2 {t_loky:.1f} s (x{t_seq / t_loky:.2f})")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print(line + "; dask: not installed")
        return
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster), parallel_config(backend="dask"):
        t_dask, dask = _median_time(sweep, args.repeats)
    cols = ["value", "seed", "balanced_accuracy", "n_iter", "converged"]
    same = ref[cols].equals(loky[cols]) and ref[cols].equals(dask[cols])
    print(line + f"; dask LocalCluster(2 workers) {t_dask:.1f} s (x{t_seq / t_dask:.2f}); "
          f"tables identical: {same}")


if __name__ == "__main__":
    main()
