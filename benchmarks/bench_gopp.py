"""Benchmark of the GOPP solver against the reference approach, in the same run.

Reference approach: thin SVD of the stacked centered uploads for the spectral start, then per
iteration ``G R`` through the stacked uploads and a Python loop of ``p`` SVD-based polar factors,
stopping when ``||R_next - R||_F <= tol`` (Algorithm 4 of Nosaka et al., arXiv:2608.18749, as a
straightforward loop); it runs on the BLAS threads the machine allows (all cores). skdc's solver
(``solve_gopp`` with its default ``acceleration='anderson'``, the engine of
``skdc/alignment/_gopp_engine.py``: the participants in two fixed groups, on two threads at the
full sizes (not at ``--quick``'s), each calling BLAS on one thread; batched polar factors
warm-started from the previous ones once the iterates settle; safeguarded Anderson
acceleration) is timed on the same problem, with the machine's BLAS thread count as it stands,
and again on one thread (``threadpool_limits(1)``, which must give the same rotations). Both
are solved to ``tol=1e-7``; agreement is measured up to one common orthogonal matrix. On an easy
case both are also solved to 1e-10 and must agree to 1e-8.

Targets, same run, same problem (p=50, d=100, r=400): at least 10x the reference at 0.8 v_PT
and 20x at 0.9 v_PT on a quiet machine; and, while two other processes keep both cores busy
(the script starts them itself, pure-Python spin loops, and says so), skdc's solver at most 3x
slower than alone (a fair share of two cores). Times are medians of ``--repeats`` runs, wall
clock and CPU time of this process, the reference, skdc and skdc on one thread taking turns
within each repeat; the machine's load average is printed, since a shared machine moves every
figure.

Run: ``python benchmarks/bench_gopp.py [--repeats 3] [--quick] [--no-contention]
[--no-scaling]``.
"""

import argparse
import multiprocessing
import os
import statistics
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from skdc.alignment import solve_gopp, v_phase_transition  # noqa: E402
from skdc.anchors import orthonormal_anchor  # noqa: E402
from skdc.utils import haar_orthogonal, polar  # noqa: E402


def reference_gopp(Bbar, tol=1e-7, max_iter=500):
    """Straightforward implementation of the reference approach (kept here as the baseline)."""
    p, r, d = Bbar.shape
    D = np.concatenate([b.T for b in Bbar])  # (pd) x r
    U = np.linalg.svd(D, full_matrices=False)[0][:, :d]
    R = [polar(U[i * d:(i + 1) * d]) for i in range(p)]
    for t in range(max_iter):
        S = sum(Bbar[j] @ R[j] for j in range(p))
        R_next = []
        for i in range(p):
            u, _, vt = np.linalg.svd(Bbar[i].T @ S)
            R_next.append(u @ vt)
        step = np.sqrt(sum(np.linalg.norm(a - b) ** 2 for a, b in zip(R_next, R)))
        R = R_next
        if step <= tol:
            return np.stack(R), t + 1, True
    return np.stack(R), max_iter, False


def problem(p, d, r, v_frac, seed=0):
    rng = np.random.RandomState(seed)
    A = orthonormal_anchor(r, d, random_state=rng)
    v = v_frac * v_phase_transition(p, d, r)
    B = np.stack([A @ haar_orthogonal(d, rng) for _ in range(p)]) + v * rng.randn(p, r, d)
    return B - B.mean(axis=1, keepdims=True), v


def gauge_distance(R1, R2):
    Q = polar(np.einsum("kji,kjl->il", R1, R2))
    return float(np.linalg.norm(R1 @ Q - R2))


def timed(fn, repeats, cpu=False):
    times, cpus, out = [], [], None
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    if cpu:
        return statistics.median(times), statistics.median(cpus), out
    return statistics.median(times), out


def interleaved(fns, repeats):
    """``timed`` for several functions, run in turn in each repeat (a machine whose speed drifts
    over minutes then moves all of them alike): ``(wall median, CPU median, last output)``."""
    runs = [([], [], None) for _ in fns]
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            wall, cpu, out = timed(fn, 1, cpu=True)
            runs[k] = (runs[k][0] + [wall], runs[k][1] + [cpu], out)
    return [(statistics.median(w), statistics.median(c), out) for w, c, out in runs]


def _spin():
    while True:
        pass


class Competitors:
    """``n`` pure-Python busy processes for the duration of a ``with`` block."""

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        ctx = multiprocessing.get_context("spawn")
        self.procs = [ctx.Process(target=_spin, daemon=True) for _ in range(self.n)]
        for proc in self.procs:
            proc.start()
        time.sleep(1.0)  # let them reach the loop
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.join()


def load():
    try:
        return "load average {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())
    except OSError:
        return "load average unknown"


def one_thread(fn, *args):
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return fn(*args)


def peak_memory_mb(fn):
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="smaller sizes, one repeat")
    parser.add_argument("--no-contention", action="store_true",
                        help="skip the run with two competing busy processes")
    parser.add_argument("--no-scaling", action="store_true", help="skip the scaling in p")
    args = parser.parse_args()
    import skdc

    print(f"skdc from {os.path.dirname(skdc.__file__)}; {os.cpu_count()} CPUs, {load()} "
          "(a shared machine moves every figure)")
    repeats = 1 if args.quick else args.repeats
    cases = [(50, 100, 400, 0.8), (50, 100, 400, 0.9)]
    if args.quick:
        cases = [(20, 50, 200, 0.8)]
    print("reference vs skdc, medians of wall seconds (CPU seconds of this process in brackets); "
          "targets: ratio >= 10 at 0.8 v_PT, >= 20 at 0.9 v_PT")
    print(f"{'p':>4} {'d':>4} {'r':>4} {'v/vPT':>6} | {'ref s':>15} {'iters':>5} {'conv':>5} | "
          f"{'skdc s':>15} {'iters':>5} {'conv':>5} | {'ratio':>6} {'cpu ratio':>9} "
          f"{'gauge dist':>10}")
    alone = {}
    for p, d, r, frac in cases:
        Bbar, _ = problem(p, d, r, frac)
        (t_ref, c_ref_t, (R_ref, it_ref, c_ref)), (t_new, c_new_t, res), (t_one, _, one) = (
            interleaved([lambda B=Bbar: reference_gopp(B), lambda B=Bbar: solve_gopp(B),
                         lambda B=Bbar: one_thread(solve_gopp, B)], repeats))
        alone[frac] = t_new
        print(f"{p:>4} {d:>4} {r:>4} {frac:>6.2f} | {t_ref:>7.2f} ({c_ref_t:>5.2f}) {it_ref:>5} "
              f"{c_ref!s:>5} | {t_new:>7.2f} ({c_new_t:>5.2f}) {res.n_iter:>5} "
              f"{res.converged!s:>5} | {t_ref / t_new:>6.1f} {c_ref_t / c_new_t:>9.1f} "
              f"{gauge_distance(res.rotations, R_ref):>10.2e}", flush=True)
        print(f"{'':>21} | skdc on one thread (threadpool_limits(1)): {t_one:.2f} s, "
              f"{one.n_iter} iterations, ratio {t_ref / t_one:.1f}; same rotations: "
              f"{np.array_equal(one.rotations, res.rotations)}", flush=True)
    print(load())

    if not args.no_contention:
        print("the same skdc solves while this script runs 2 busy processes (pure-Python spin "
              "loops, started here) that keep both cores busy; target: loaded / alone <= 3")
        with Competitors(2):
            for p, d, r, frac in cases:
                Bbar, _ = problem(p, d, r, frac)
                t_busy, c_busy, res = timed(lambda B=Bbar: solve_gopp(B), repeats, cpu=True)
                print(f"  v = {frac:.2f} v_PT: {t_busy:.2f} s wall ({c_busy:.2f} s CPU) against "
                      f"{alone[frac]:.2f} s alone: {t_busy / alone[frac]:.2f}x slower", flush=True)
        print(load())

    # easy case solved tightly: both agree to 1e-8
    Bbar, _ = problem(10, 20, 80, 0.3, seed=1)
    R_ref, _, _ = reference_gopp(Bbar, tol=1e-10, max_iter=5000)
    res = solve_gopp(Bbar, tol=1e-10, max_iter=5000)
    print(f"easy case (p=10, d=20, r=80, 0.3 v_PT) at tol 1e-10: gauge distance "
          f"{gauge_distance(res.rotations, R_ref):.2e} (must be < 1e-8)")

    if args.no_scaling:
        return
    # memory and time against p (linear)
    d, r = (50, 200) if args.quick else (100, 400)
    print("scaling in p (0.5 v_PT): p, seconds, peak MiB (tracemalloc)")
    for p in (10, 20, 40):
        Bbar, _ = problem(p, d, r, 0.5, seed=2)
        t, res = timed(lambda B=Bbar: solve_gopp(B), 1)
        mem = peak_memory_mb(lambda B=Bbar: solve_gopp(B))
        print(f"  p={p:>3}: {t:6.2f} s, {mem:7.1f} MiB, {res.n_iter} iterations")


if __name__ == "__main__":
    main()
