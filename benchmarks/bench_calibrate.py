"""Noise calibration by bisection against a plain grid sweep reaching the same bracket width.

Digits, 3 participants (I-GDP), noisy-anchor GOPP alignment, a ridge classifier, the
Procrustes attack. Task: the smallest anchor noise ``v`` in ``[0, HIGH]`` whose attack error a
fresh draw meets with 95% probability (one-sided prediction bound over ``--n-draws`` draws per
value). Candidate: :func:`skdc.audit.calibrate_noise` with bracket width ``xtol``.
Baseline: :func:`skdc.experiments.privacy_utility_sweep` over the grid ``0, xtol, 2 xtol, ...,
HIGH`` with the same draws per value and the same criterion, whose bracket is one grid step:
the same width. Both run in the same process, one after the other, with one BLAS thread per
draw; the script prints draws, time and the answer of each, and the ratios.

Target: fewer draws than the grid; the ratio printed.

Run: ``python benchmarks/bench_calibrate.py [--n-draws 8] [--steps 32] [--n-jobs 1]``
(``--steps`` = HIGH / xtol, the grid's number of steps).
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

from sklearn.datasets import load_digits  # noqa: E402
from sklearn.linear_model import RidgeClassifier  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

from skdc.alignment import GOPPAligner  # noqa: E402
from skdc.audit._criteria import _prediction_bounds
from skdc.experiments import calibrate_noise, privacy_utility_sweep  # noqa: E402
from skdc.mechanisms import IGDP  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-draws", type=int, default=8, help="draws per noise value")
    ap.add_argument("--steps", type=int, default=32, help="HIGH / xtol")
    ap.add_argument("--high", type=float, default=0.12, help="upper end of the range")
    ap.add_argument("--target", type=float, default=0.3, help="target Procrustes error")
    ap.add_argument("--n-rows", type=int, default=600)
    ap.add_argument("--n-jobs", type=int, default=1)
    args = ap.parse_args()

    X, y = load_digits(return_X_y=True)
    X, y = X[: args.n_rows] / 16.0, y[: args.n_rows]
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    pipe = Pipeline([("gdp", IGDP(3, random_state=0)), ("align", GOPPAligner()),
                     ("clf", RidgeClassifier())])
    xtol = args.high / args.steps
    common = dict(test_data=(X_te, y_te), param="align__v", n_jobs=args.n_jobs, progress=False)
    print(f"digits {X_tr.shape[0]} train / {X_te.shape[0]} test rows, 3 participants, "
          f"target Procrustes error {args.target} at 95%, range [0, {args.high}], bracket width "
          f"{xtol:.4g}, {args.n_draws} draws per value")

    start = time.perf_counter()
    # the grid below judges by the Gaussian bound over one fixed deployment: the same here
    cal = calibrate_noise(pipe, X_tr, y_tr, attack="procrustes", min_error=args.target,
                          confidence=0.95, n_draws=args.n_draws, bounds=(0.0, args.high),
                          xtol=xtol, criterion="normal", redraw="noise", random_state=0,
                          **common)
    t_cal = time.perf_counter() - start

    start = time.perf_counter()
    grid = np.linspace(0.0, args.high, args.steps + 1)
    sweep = privacy_utility_sweep(pipe, X_tr, y_tr, values=grid, n_draws=args.n_draws,
                                  attacks=["procrustes"], random_state=0, **common)
    meets = [_prediction_bounds(sweep.loc[sweep["value"] == v, "procrustes"], 0.95,
                                "normal")[0] >= args.target for v in grid]
    k = int(np.argmax(meets)) if any(meets) else None
    t_grid = time.perf_counter() - start
    grid_value = float(grid[k]) if k is not None else float("nan")
    grid_bracket = (float(grid[k - 1]) if k else float("nan"), grid_value)

    print(f"{'method':<12} {'draws':>6} {'seconds':>8} {'value':>8} {'bracket':>20}")
    print(f"{'bisection':<12} {cal.n_draws_run:>6} {t_cal:>8.1f} {cal.value:>8.4f} "
          f"{cal.bracket[0]:>9.4f}..{cal.bracket[1]:<9.4f}")
    print(f"{'grid sweep':<12} {len(sweep):>6} {t_grid:>8.1f} {grid_value:>8.4f} "
          f"{grid_bracket[0]:>9.4f}..{grid_bracket[1]:<9.4f}")
    print(f"draws ratio grid / bisection: {len(sweep) / cal.n_draws_run:.2f} x; time ratio: "
          f"{t_grid / t_cal:.2f} x; answers differ by {abs(grid_value - cal.value):.4g} "
          f"({abs(grid_value - cal.value) / xtol:.1f} bracket widths; the draws differ)")


if __name__ == "__main__":
    main()
