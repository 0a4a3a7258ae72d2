"""Batched training of a sweep's utility CNNs against sequential skorch fits.

A privacy-utility sweep trains one utility CNN (paper Table 2) per noise draw. Here: digits,
5 participants (I-GDP), ``--n-draws`` anchor-noise draws aligned by GOPP, one
``RepresentationCNN`` per draw with the paper's training (Adam 1e-3, batch 256, 15 epochs,
best validation balanced accuracy, same seeds for every draw). Baseline: one skorch fit per
draw, one after the other. Candidate: ``skdc.nn.fit_batched`` on all draws at once. Both are
timed in the same run (training plus test prediction); the script prints both timings, the
ratio, the per-draw test balanced accuracies, their largest difference, and the device.

Target: >= 5x faster at equal accuracy per draw (within one point).

Run: ``python benchmarks/bench_sweep.py [--n-draws 50] [--epochs 15] [--device auto]``

On a GPU, the size of the paper's MNIST study (synthetic 50,000 x 784 rows projected to 100,
200 anchor-noise draws, 10 participants) is
``python benchmarks/bench_sweep.py --data synthetic-mnist --n-rows 60000 --n-draws 200
--sequential-draws 5``: the sequential time is then measured on 5 draws and extrapolated
(printed as such).
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import torch  # noqa: E402
from sklearn.metrics import balanced_accuracy_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from skdc.alignment import GOPPAligner  # noqa: E402
from skdc.datasets import (  # noqa: E402
    load_digit_images,
    make_image_classification,
    partition,
)
from skdc.mechanisms import IGDP  # noqa: E402
from skdc.nn import RepresentationCNN, fit_batched, resolve_device  # noqa: E402


def make_draws(n_draws, data="digits", n_rows=60000, seed=0, n_jobs=-1):
    """Aligned train/test representations Z for ``n_draws`` anchor-noise levels."""
    if data == "digits":
        X, y = load_digit_images(return_X_y=True)
        n_participants, v_max = 5, 0.2
    else:
        # the paper's MNIST setting: public Gaussian projection F (784 x 100), p = 10
        X, y = make_image_classification(n_rows, 10, random_state=seed)
        F = np.random.RandomState(seed).standard_normal((784, 100))
        X = X @ F
        n_participants, v_max = 10, 0.5
    tr, te = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=seed)
    part = partition(y, n_participants, random_state=seed)
    mech = IGDP(n_participants=n_participants, random_state=seed)
    data = (X[tr], part[tr], X[te], part[te])
    vs = np.linspace(0.0, v_max, n_draws)
    # one draw per process, BLAS single-threaded inside: the draws are independent; each
    # redraws the participants' anchor noise (noise_random_state), the secrets stay fixed
    out = Parallel(n_jobs=n_jobs)(delayed(_align)(mech, data, float(v), m)
                                  for m, v in enumerate(vs))
    Z_tr, Z_te = zip(*out)
    return vs, np.stack(Z_tr), y[tr], np.stack(Z_te), y[te]


def _align(mech, data, v, seed):
    warnings.filterwarnings("ignore", message="GOPPAligner did not converge")
    X_tr, part_tr, X_te, part_te = data
    with threadpool_limits(limits=1):
        mech = clone(mech).set_params(noise_random_state=seed)
        U_tr = mech.fit_transform(X_tr, participant=part_tr)
        U_te = mech.transform(X_te, participant=part_te)
        aligner = GOPPAligner(v=v).fit(U_tr)
        return aligner.transform(U_tr), aligner.transform(U_te)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-draws", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", choices=["digits", "synthetic-mnist"], default="digits")
    parser.add_argument("--n-rows", type=int, default=60000,
                        help="rows of synthetic-mnist (80%% train, 20%% test)")
    parser.add_argument("--sequential-draws", type=int, default=None,
                        help="time the sequential baseline on this many draws, extrapolate")
    parser.add_argument("--chunk-size", type=int, default=None)
    parser.add_argument("--n-jobs", type=int, default=-1,
                        help="processes aligning the draws (joblib; -1: every core)")
    parser.add_argument("--cache", default=None,
                        help="npz file to reuse the aligned draws from (written if absent)")
    args = parser.parse_args(argv)
    # draws above the phase transition do not converge; that is part of the sweep
    warnings.filterwarnings("ignore", message="GOPPAligner did not converge")
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    tic = time.perf_counter()
    if args.cache and os.path.exists(args.cache):
        with np.load(args.cache) as f:
            vs, Z_tr, y_tr, Z_te, y_te = (f[k] for k in ("vs", "Z_tr", "y_tr", "Z_te", "y_te"))
    else:
        vs, Z_tr, y_tr, Z_te, y_te = make_draws(args.n_draws, args.data, args.n_rows,
                                                n_jobs=args.n_jobs)
        if args.cache:
            np.savez(args.cache, vs=vs, Z_tr=Z_tr, y_tr=y_tr, Z_te=Z_te, y_te=y_te)
    print(f"data and alignment of {args.n_draws} draws: {time.perf_counter() - tic:.1f} s")
    template = RepresentationCNN(max_epochs=args.epochs, batch_size=256, device=device,
                                 random_state=0)
    print(f"device={device} ({torch.cuda.get_device_name(0) if device == 'cuda' else 'CPU'}), "
          f"torch threads={torch.get_num_threads()}, draws={args.n_draws}, "
          f"train={Z_tr.shape[1]} rows x {Z_tr.shape[2]} features, test={Z_te.shape[1]}, "
          f"epochs={args.epochs}")

    # warm-up (first CUDA / MKL calls) outside both timings
    fit_batched(RepresentationCNN(max_epochs=1, device=device, random_state=0),
                Z_tr[:2], y_tr)

    tic, cpu = time.perf_counter(), time.process_time()
    nets = fit_batched(template, Z_tr, y_tr, chunk_size=args.chunk_size)
    acc_batched = np.array([balanced_accuracy_score(y_te, n.predict(Z)) for n, Z in
                            zip(nets, Z_te)])
    t_batched = time.perf_counter() - tic
    c_batched = time.process_time() - cpu
    print(f"batched   : {t_batched:8.2f} s wall, {c_batched:8.2f} s CPU  "
          f"({t_batched / args.n_draws:.3f} s/draw)", flush=True)

    k = args.n_draws if args.sequential_draws is None else min(args.sequential_draws,
                                                                args.n_draws)
    tic, cpu = time.perf_counter(), time.process_time()
    acc_seq = []
    for m, (Zt, Zv) in enumerate(zip(Z_tr[:k], Z_te[:k])):
        net = RepresentationCNN(max_epochs=args.epochs, batch_size=256, device=device,
                                random_state=0)
        acc_seq.append(balanced_accuracy_score(y_te, net.fit(Zt, y_tr).predict(Zv)))
        print(f"  sequential draw {m + 1}/{k}: {time.perf_counter() - tic:8.2f} s wall, "
              f"{time.process_time() - cpu:8.2f} s CPU so far; accuracy {acc_seq[-1]:.4f} "
              f"(batched {acc_batched[m]:.4f})", flush=True)
    acc_seq = np.array(acc_seq)
    t_seq = (time.perf_counter() - tic) * args.n_draws / k
    c_seq = (time.process_time() - cpu) * args.n_draws / k
    how = "measured" if k == args.n_draws else f"extrapolated from {k} measured draws"
    print(f"sequential: {t_seq:8.2f} s wall, {c_seq:8.2f} s CPU  "
          f"({t_seq / args.n_draws:.3f} s/draw, {how})")

    diff = np.abs(acc_batched[:k] - acc_seq)
    print(f"speed-up (sequential / batched): {t_seq / t_batched:.2f}x wall, "
          f"{c_seq / c_batched:.2f}x CPU time  (target >= 5x)")
    print(f"test balanced accuracy: batched mean {acc_batched.mean():.4f}, sequential mean "
          f"{acc_seq.mean():.4f} (first {k} draws); largest per-draw difference "
          f"{100 * diff.max():.3f} points (target <= 1), median {100 * np.median(diff):.3f}")
    print("   v      batched  sequential")
    for m, (v, a) in enumerate(zip(vs, acc_batched)):
        b = f"{acc_seq[m]:.4f}" if m < k else "   -"
        print(f"{v:6.4f}   {a:.4f}   {b}")


if __name__ == "__main__":
    main()
