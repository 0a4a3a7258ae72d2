"""Scaling of a privacy-utility sweep over joblib workers: loky and a Dask ``LocalCluster``.

The sweep: digits, 10 participants (I-GDP), GOPP anchor alignment, a logistic regression,
``--draws`` anchor-noise draws from 0 to 2.5 v_PT (the demo's sweep). Like with like: one worker
with one thread against ``k`` workers with one thread each (every draw runs with one BLAS thread,
``inner_threads=1``). The one-worker baseline of loky is joblib's in-process run (``n_jobs=1``
never starts a worker); Dask's is a cluster of one single-threaded worker. Workers are started
and warmed up by a two-draw sweep before the clock starts (a worker imports skdc and
scikit-learn once in its life; the Dask cluster's start-up is printed separately). Each timed
sweep still ships and unpickles its own context. With ``--repeats`` above one, the one-worker
and the ``k``-worker Dask clusters take turns (a fresh cluster each time), and the figures are
medians over the repeats.

For each run the script prints the wall time, draws per second, the speed-up over one worker
and the efficiency (speed-up / workers), and the per-draw overhead: the workers' time not spent
in draws, ``(workers * wall - sum of draw seconds) / sum of draw seconds``, where a draw's
seconds are its fit and scoring as the sweep table records them (this includes the idle tail when
draws of unequal length do not divide evenly; the overhead over the ideal schedule,
``wall / max(sum / workers, longest draw) - 1``, is printed beside it). It also checks that
every run gives the same table as the sequential one.

Dask runs twice, with its defaults and with the workers' statistical profiler off
(``distributed.worker.profile.enabled``: by default each worker samples its task thread's stack
every 10 ms, and with one worker per core that sampling takes its CPU time from the draws).
Both runs use Dask's default nanny environment, ``MALLOC_TRIM_THRESHOLD_=65536`` included,
which made every large temporary a page fault per page before the GOPP solver reused its work
arrays.

Targets, at 20 draws: per-draw overhead under 5 % on loky and on Dask; with two
workers on two cores at least 1.7x draws per second, on both. A machine shared with other work
cannot show the speed-up: the load average is printed before and after.

The draws of the demo's sweep differ in cost (more GOPP iterations at higher noise), so part of
the overhead with several workers is an idle tail; ``--equal-draws`` runs every draw at 0.5 v_PT
(fresh noise each), which leaves only dispatch and transfer.

Run: ``python benchmarks/bench_scaling.py [--draws 20] [--workers 2] [--repeats 1]
[--equal-draws]``.
"""

import argparse
import os
import statistics
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from joblib import Parallel, delayed, parallel_config  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

from skdc import _demo  # noqa: E402
from skdc.alignment import GOPPAligner, v_phase_transition  # noqa: E402
from skdc.experiments import privacy_utility_sweep  # noqa: E402
from skdc.mechanisms import IGDP  # noqa: E402

COLUMNS = ["value", "seed", "balanced_accuracy", "n_iter", "converged"]


def load():
    try:
        return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


def make_sweep(n_draws, equal=False):
    X_tr, X_te, y_tr, y_te = _demo._digits(0)
    d = X_tr.shape[1]
    v_pt = v_phase_transition(10, d, 4 * d)
    pipe = Pipeline([("gdp", IGDP(10, random_state=0)), ("align", GOPPAligner()),
                     ("clf", LogisticRegression(max_iter=3000))])

    if equal:  # draws of equal cost: one noise level, fresh noise each draw
        grid = dict(values=[0.5 * v_pt], n_draws=n_draws)
    else:
        grid = dict(values=_demo._grid(2.5 * v_pt, n_draws))

    def sweep(**kw):
        return privacy_utility_sweep(pipe, X_tr, y_tr, **grid, test_data=(X_te, y_te),
                                     random_state=0, progress=False, **kw)

    return sweep


def timed(sweep, repeats, **kw):
    """The runs of ``sweep``, as ``(wall seconds, table)`` pairs."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        table = sweep(**kw)
        runs.append((time.perf_counter() - start, table))
    return runs


def wall(runs):
    return statistics.median(w for w, _ in runs)


def report(name, workers, runs, base_wall, ref):
    """One line per run set: medians over the runs, each run's overhead from its own table."""
    overheads, over_ideal, per_draw = [], [], []
    for w, table in runs:
        busy = float(table["seconds"].sum())
        overheads.append((workers * w - busy) / busy)
        # the best any schedule could do with these draws: the work spread evenly, or the
        # longest draw; what the run takes beyond it is dispatch, transfer and imbalance
        over_ideal.append(w / max(busy / workers, float(table["seconds"].max())) - 1)
        per_draw.append(busy / len(table))
    t, n = wall(runs), len(runs[-1][1])
    speedup = base_wall / t
    same = all(table[COLUMNS].equals(ref[COLUMNS]) for _, table in runs)
    print(f"{name:<40} {workers:>3} x 1 thread: {t:7.2f} s, {n / t:6.2f} draws/s, "
          f"speed-up {speedup:5.2f}x, efficiency {speedup / workers:5.2f}, per-draw overhead "
          f"{100 * statistics.median(overheads):6.1f} % (over the ideal schedule "
          f"{100 * statistics.median(over_ideal):5.1f} %; draws "
          f"{statistics.median(per_draw):.3f} s each); table as sequential: {same}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--equal-draws", action="store_true",
                        help="all draws at 0.5 v_PT (equal cost: no idle tail)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    k = args.workers
    print(f"{os.cpu_count()} CPUs, {load()}; {args.draws} draws, medians of {args.repeats} "
          "run(s)", flush=True)
    sweep = make_sweep(args.draws, args.equal_draws)
    warm = make_sweep(2)  # a two-draw sweep: imports and caches outside the clock
    warm(n_jobs=1)

    runs = timed(sweep, args.repeats, n_jobs=1)
    t_seq, ref = wall(runs), runs[0][1]
    report("sequential (in-process)", 1, runs, t_seq, ref)
    with parallel_config(backend="loky", n_jobs=k):
        Parallel()(delayed(abs)(i) for i in range(4 * k))  # start the workers
        warm()  # each worker imports skdc and scikit-learn once
        runs = timed(sweep, args.repeats)
    report("loky", k, runs, t_seq, ref)
    print(load(), flush=True)

    if args.no_dask:
        return
    try:
        import dask
        import distributed  # noqa: F401
    except ImportError:
        print("dask: distributed is not installed")
        return
    for profiler in (True, False):
        with dask.config.set({"distributed.worker.profile.enabled": profiler}):
            t_dask = dask_runs(sweep, warm, args.repeats, k, ref, profiler)
        print(f"dask speed-ups are over its own one-worker cluster; over the in-process run: "
              f"{t_seq / t_dask:.2f}x. {load()}", flush=True)


def dask_runs(sweep, warm, repeats, k, ref, profiler):
    """One-worker and ``k``-worker LocalClusters, taking turns in each repeat (a machine whose
    speed drifts over minutes then moves both alike); returns the ``k``-worker wall time."""
    from distributed import Client, LocalCluster

    runs, started = {1: [], k: []}, {1: [], k: []}
    for _ in range(repeats):
        for workers in (1, k):
            start = time.perf_counter()
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                client.wait_for_workers(workers)
                client.run(lambda: None)
                started[workers].append(time.perf_counter() - start)
                with parallel_config(backend="dask"):
                    warm()
                    runs[workers] += timed(sweep, 1)
    for workers in (1, k):
        name = (f"dask, profiler {'on ' if profiler else 'off'} "
                f"(+{statistics.median(started[workers]):.1f} s start)")
        report(name, workers, runs[workers], wall(runs[1]), ref)
    return wall(runs[k])


if __name__ == "__main__":
    main()
