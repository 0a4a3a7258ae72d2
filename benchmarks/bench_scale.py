"""Every option of ``compare_options`` at hospital size: wall time, peak memory, time per draw.

Data: ``make_classification(n_samples=N, n_features=20, n_informative=8, random_state=0)``,
standardized, split into 5 participants, at each of ``--sizes`` (default 2,000, 20,000 and
200,000 rows). Each option runs alone through ``compare_options(X, y, options=[option],
n_participants=5, random_state=0)`` in a fresh process, so its peak resident memory
(``ru_maxrss``) is its own; the memory the process held before the comparison (Python, the
libraries, the rows) is printed beside it. A draw is one deployment of the option (a
calibration or measurement draw; GaussMix's draws at every epsilon); Local and Central fit
once and count one. Time per draw is the option's wall time over its draws, and the growth
ratio between two sizes is ``(time per draw ratio) / (rows ratio)``: 1.0 is linear.

Baselines, measured in the same run where they can run:

* the KTI route's kernel PCA by the dense solver (``solver="dense"``, the only solver before
  issue 34) against the solver the route now takes (``"auto"``: Nystroem above 2,000 rows per
  participant): one deployment (fit of the five participants' kernel PCA, KTI+TSL and the
  model) timed with each, in a fresh process each for the peak memory; the dense one is
  skipped where its kernel matrices would pass ``--dense-max-gb``;
* exact-source linkage (``galleries="all"``, the attacker's best matcher) with every row of
  the target querying (``max_queries=None``: quadratic time; before issue 34 it also held the
  ``n x n`` score matrix, now it scores in blocks) against the 2,000 queries it now draws, on
  the target's rows with a noisy reconstruction; skipped where the old score matrix would
  have passed ``--dense-max-gb``.

Targets (issue 34), on two cores: 200,000 rows in under 30 minutes with memory under 4 GB,
and time per draw growing at most 1.3x faster than the rows for every option. A machine
shared with other work slows every figure alike: the load average is printed.

Run: ``python benchmarks/bench_scale.py [--sizes 2000,20000,200000] [--options all]
[--n-jobs 1] [--max-linkage 0.15] [--no-baselines]``; a quick run: ``--sizes 1000,4000``.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, ROOT)

OPTIONS = ("local", "central", "igdp", "cgdp", "kti", "gaussmix")
N_FEATURES, N_PARTICIPANTS = 20, 5


def _rows(n):
    import numpy as np
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    X, y = make_classification(n_samples=n, n_features=N_FEATURES, n_informative=8,
                               random_state=0)
    return np.ascontiguousarray(StandardScaler().fit_transform(X)), y


def _peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _rss_mb():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


# ----------------------------------------------------------------------------- child runs


def _child_option(n, option, n_jobs, max_linkage):
    import warnings

    from skdc.audit import compare_options

    X, y = _rows(n)
    before = _rss_mb()
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = compare_options(X, y, options=[option], n_participants=N_PARTICIPANTS,
                              random_state=0, n_jobs=n_jobs, progress=False,
                              max_linkage=max_linkage)
    wall = time.perf_counter() - start
    draws = 0
    for opt in cmp.options.values():
        draws += 1 if opt.draws is None else max(1, len(opt.draws))
    return {"wall": wall, "draws": draws, "peak_mb": _peak_mb(), "before_mb": before}


def _child_kpca(n, solver):
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    from skdc.alignment import KTIAligner
    from skdc.anchors import SMOTEAnchor
    from skdc.mechanisms import KernelPCAMechanism

    X, y = _rows(n)
    part = np.arange(n) % N_PARTICIPANTS
    n_tr = int(0.7 * n)  # the comparison's training share
    X, y, part = X[:n_tr], y[:n_tr], part[:n_tr]
    own = part == 0
    anchor = SMOTEAnchor(int(min(max(4 * N_FEATURES, 60), 400)), X[own], y[own],
                         k_neighbors=10)
    pipe = Pipeline([
        ("dr", KernelPCAMechanism(N_PARTICIPANTS, n_components=N_FEATURES, anchor=anchor,
                                  solver=solver, random_state=0)),
        ("align", KTIAligner(graph="tsl")), ("clf", LogisticRegression(max_iter=1000))])
    from sklearn import config_context

    before = _rss_mb()
    start = time.perf_counter()
    with config_context(enable_metadata_routing=True):
        pipe.fit(X, y, participant=part)
    wall = time.perf_counter() - start
    return {"wall": wall, "peak_mb": _peak_mb(), "before_mb": before,
            "solvers": pipe.named_steps["dr"].solvers_}


def _child_linkage(n, max_queries):
    import numpy as np

    from skdc.metrics import linkage_accuracy

    X, y = _rows(n)
    rng = np.random.RandomState(1)
    X_hat = X + 1.5 * rng.standard_normal(X.shape)
    before = _rss_mb()
    start = time.perf_counter()
    acc = linkage_accuracy(X, X_hat, y, matcher="best", auditor="pca", galleries="all",
                           max_queries=max_queries, random_state=0)
    wall = time.perf_counter() - start
    return {"wall": wall, "peak_mb": _peak_mb(), "before_mb": before, "rate": float(acc),
            "ci95": list(acc.ci95), "n_queries": acc.n_queries}


def _spawn(*args, timeout=None):
    env = {**os.environ, "PYTHONPATH": ROOT}
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", *map(str, args)],
                          env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- the report


def _load():
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def _fmt_s(s):
    return f"{s:8.1f} s" if s >= 10 else f"{s:8.2f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="2000,20000,200000",
                    help="comma-separated row counts (default 2000,20000,200000)")
    ap.add_argument("--options", default="all", help="comma-separated options, or all")
    ap.add_argument("--n-jobs", type=int, default=1)
    ap.add_argument("--max-linkage", type=float, default=0.15,
                    help="compare_options' linkage target (default 0.15, its own); on these "
                         "rows I-GDP fails it at once, and 0.5 makes C-GDP and the KTI route "
                         "calibrate over some 50 draws")
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--dense-max-gb", type=float, default=2.0,
                    help="skip a baseline whose n x n matrix would pass this (default 2 GB)")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        kind, n, rest = args.child[0], int(args.child[1]), args.child[2:]
        if kind == "option":
            out = _child_option(n, rest[0], int(rest[1]), float(rest[2]))
        elif kind == "kpca":
            out = _child_kpca(n, rest[0])
        else:
            out = _child_linkage(n, None if rest[0] == "none" else int(rest[0]))
        print(json.dumps(out))
        return 0

    sizes = [int(s) for s in args.sizes.split(",")]
    options = OPTIONS if args.options == "all" else tuple(args.options.split(","))
    print(f"compare_options at {sizes} rows x {N_FEATURES} features, {N_PARTICIPANTS} "
          f"participants, n_jobs={args.n_jobs}, max_linkage={args.max_linkage}, "
          f"{os.cpu_count()} cores on the machine, load average {_load()}", flush=True)
    per_draw = {}
    total = {}
    print(f"\n{'rows':>8} {'option':<9} {'wall':>10} {'draws':>6} {'per draw':>10} "
          f"{'peak MB':>8} {'(before)':>9}  load", flush=True)
    for n in sizes:
        total[n] = 0.0
        for option in options:
            r = _spawn("option", n, option, args.n_jobs, args.max_linkage)
            if "error" in r:
                print(f"{n:>8} {option:<9} failed: {r['error']}", flush=True)
                continue
            per = r["wall"] / r["draws"]
            per_draw[(n, option)] = per
            total[n] += r["wall"]
            print(f"{n:>8} {option:<9} {_fmt_s(r['wall'])} {r['draws']:>6} {_fmt_s(per)} "
                  f"{r['peak_mb']:>8.0f} {r['before_mb']:>9.0f}  {_load()}", flush=True)
        print(f"{n:>8} {'all':<9} {_fmt_s(total[n])}  (the options one after another; "
              f"target at 200,000 rows: under 1800 s)", flush=True)

    if len(sizes) > 1:
        print("\ngrowth of time per draw over growth of rows (target: at most 1.3)")
        print(f"{'option':<9} " + " ".join(f"{f'{a}->{b}':>16}"
                                           for a, b in zip(sizes, sizes[1:])))
        for option in options:
            cells = []
            for a, b in zip(sizes, sizes[1:]):
                if (a, option) in per_draw and (b, option) in per_draw:
                    g = per_draw[(b, option)] / per_draw[(a, option)] / (b / a)
                    cells.append(f"{g:>16.2f}")
                else:
                    cells.append(f"{'-':>16}")
            print(f"{option:<9} " + " ".join(cells))

    if args.no_baselines:
        return 0
    print("\nbaseline: one KTI deployment (5 x kernel PCA + KTI+TSL + logistic), dense "
          "solver against the solver the route takes now (auto)")
    print(f"{'rows':>8} {'solver':<8} {'wall':>10} {'peak MB':>8} {'(before)':>9}  solvers")
    for n in sizes:
        rows_per = int(0.7 * n) // N_PARTICIPANTS
        for solver in ("dense", "auto"):
            if solver == "dense" and 8 * 3 * rows_per**2 / 1e9 > args.dense_max_gb:
                print(f"{n:>8} {solver:<8} not run: {rows_per} rows per participant, "
                      f"{8 * 3 * rows_per**2 / 1e9:.1f} GB of kernel matrices")
                continue
            r = _spawn("kpca", n, solver)
            if "error" in r:
                print(f"{n:>8} {solver:<8} failed: {r['error']}")
                continue
            print(f"{n:>8} {solver:<8} {_fmt_s(r['wall'])} {r['peak_mb']:>8.0f} "
                  f"{r['before_mb']:>9.0f}  {','.join(sorted(set(r['solvers'])))}", flush=True)

    print("\nbaseline: exact-source linkage (galleries='all', best matcher) on the rows of "
          "one target, every row querying (max_queries=None) against 2,000 queries")
    print(f"{'target rows':>11} {'queries':<8} {'wall':>10} {'peak MB':>8} {'(before)':>9}  "
          "rate [Wilson 95%]")
    for n in sizes:
        n_t = n // N_PARTICIPANTS  # a target's rows (training and held-out)
        for mq in ("none", 2000):
            if mq == "none" and 8 * 2 * n_t**2 / 1e9 > args.dense_max_gb:
                print(f"{n_t:>11} {'all':<8} not run: {n_t**2:.2g} pairs per matcher (the "
                      f"old n x n scores: {8 * 2 * n_t**2 / 1e9:.1f} GB)")
                continue
            r = _spawn("linkage", n_t, mq)
            if "error" in r:
                print(f"{n_t:>11} {str(mq):<8} failed: {r['error']}")
                continue
            label = "all" if mq == "none" else str(r["n_queries"])
            print(f"{n_t:>11} {label:<8} {_fmt_s(r['wall'])} {r['peak_mb']:>8.0f} "
                  f"{r['before_mb']:>9.0f}  {r['rate']:.3f} [{r['ci95'][0]:.3f}, "
                  f"{r['ci95'][1]:.3f}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
