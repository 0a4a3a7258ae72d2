"""Every option side by side on 1,000 rows and 5 participants: the time of one command.

Data: ``make_classification(n_samples=1000, n_features=20, n_informative=8)``, standardized
(the kind of data set the tests make), saved as ``.npy``. Command: ``python -m skdc audit
--compare all --n-participants 5`` at the defaults (target error 0.5 at 95%, the order-statistic
rule, GaussMix at epsilon 1 and 8, kernel PCA + KTI, 5 measurement draws per calibrated
option), run in a fresh process with ``--n-jobs`` workers. The script prints the wall time,
the load average before and after (the machine may be shared), the comparison's table, and
then reruns the same command to show that it resumes from its checkpoint.

Target: the comparison table, figure and verdict within 10 minutes on two cores.

Run: ``python benchmarks/bench_compare.py [--n-rows 1000] [--n-jobs 2] [--out DIR]``
"""

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def _load():
    return ", ".join(f"{v:.2f}" for v in os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-rows", type=int, default=1000)
    ap.add_argument("--n-features", type=int, default=20)
    ap.add_argument("--n-participants", type=int, default=5)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", default=None, help="output folder (default: a temporary one)")
    args = ap.parse_args()

    from sklearn.datasets import make_classification
    from sklearn.preprocessing import StandardScaler

    root = args.out or tempfile.mkdtemp(prefix="bench-compare-")
    os.makedirs(root, exist_ok=True)
    X, y = make_classification(n_samples=args.n_rows, n_features=args.n_features,
                               n_informative=8, random_state=0)
    np.save(os.path.join(root, "X.npy"), StandardScaler().fit_transform(X))
    np.save(os.path.join(root, "y.npy"), y)
    out = os.path.join(root, "report")
    command = [sys.executable, "-m", "skdc", "audit", "--data", os.path.join(root, "X.npy"),
               "--labels", os.path.join(root, "y.npy"), "--n-participants",
               str(args.n_participants), "--compare", "all", "--n-jobs", str(args.n_jobs),
               "--out", out]
    env = {**os.environ, "PYTHONPATH": os.path.join(os.path.dirname(__file__), os.pardir)}
    print(f"{args.n_rows} rows x {args.n_features} features, {args.n_participants} participants, "
          f"--n-jobs {args.n_jobs}, {os.cpu_count()} cores on the machine")
    for run in ("first run", "rerun (resumes)"):
        load = _load()
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        print(f"{run}: {seconds:.1f} s (load average before {load}; after {_load()}); "
              f"exit {done.returncode}")
        if done.returncode:
            print(done.stdout, done.stderr, sep="\n")
            return done.returncode
        if run == "first run":
            print(done.stdout)
        else:
            print("\n".join(line for line in done.stderr.splitlines() if "resumed" in line))
    with open(os.path.join(out, "comparison.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    print(f"{'option':<12} {'utility':>8} {'interval':>17} {'attack error':>12} "
          f"{'linkage':>8} {'epsilon':>8}  meets")
    for r in rows:
        err = r["attack_error_bound"] or "-"
        print(f"{r['option']:<12} {float(r['utility']):>8.3f} "
              f"[{float(r['utility_low']):.3f}, {float(r['utility_high']):.3f}] "
              f"{err[:12]:>12} {(r['linkage'] or '-')[:8]:>8} {(r['epsilon'] or '-')[:8]:>8}"
              f"  {r['meets_target']}")
    print(f"report: {os.path.join(out, 'report.html')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
