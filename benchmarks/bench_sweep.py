"""Batched training of a sweep's utility CNNs against sequential skorch fits.

A privacy-utility sweep trains one utility CNN (paper Table 2) per noise draw. Here: digits,
5 participants (I-GDP), ``--n-draws`` anchor-noise draws aligned by GOPP, one
``RepresentationCNN`` per draw with the paper's training (Adam 1e-3, batch 256, 15 epochs,
best validation balanced accuracy, same seeds for every draw). Baseline: one skorch fit per
draw, one after the other. Candidate: ``skdc.nn.fit_batched`` on all draws at once. Both are
timed in the same run (training plus test prediction); the script prints both timings, the
ratio, the per-draw test balanced accuracies, their largest difference, and the device.

Target (issue 6): >= 5x faster at equal accuracy per draw (within one point).

Run: ``python benchmarks/bench_sweep.py [--n-draws 50] [--epochs 15] [--device auto]``
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir))

import torch  # noqa: E402
from sklearn.metrics import balanced_accuracy_score  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from skdc.alignment import GOPPAligner  # noqa: E402
from skdc.datasets import load_digit_images, partition  # noqa: E402
from skdc.mechanisms import IGDP  # noqa: E402
from skdc.nn import RepresentationCNN, fit_batched, resolve_device  # noqa: E402


def make_draws(n_draws, n_participants=5, seed=0):
    """Aligned train/test representations Z for ``n_draws`` anchor-noise levels."""
    X, y = load_digit_images(return_X_y=True)
    tr, te = train_test_split(np.arange(len(y)), test_size=0.2, stratify=y, random_state=seed)
    part = partition(y, n_participants, random_state=seed)
    mech = IGDP(n_participants=n_participants, random_state=seed)
    U_tr = mech.fit_transform(X[tr], y[tr], participant=part[tr])
    U_te = mech.transform(X[te], participant=part[te])
    vs = np.linspace(0.0, 0.2, n_draws)
    Z_tr, Z_te = [], []
    for m, v in enumerate(vs):
        aligner = GOPPAligner(v=float(v), random_state=m).fit(U_tr)
        Z_tr.append(aligner.transform(U_tr))
        Z_te.append(aligner.transform(U_te))
    return vs, np.stack(Z_tr), y[tr], np.stack(Z_te), y[te]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-draws", type=int, default=50)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    vs, Z_tr, y_tr, Z_te, y_te = make_draws(args.n_draws)
    template = RepresentationCNN(max_epochs=args.epochs, device=device, random_state=0)
    print(f"device={device} ({torch.cuda.get_device_name(0) if device == 'cuda' else 'CPU'}), "
          f"torch threads={torch.get_num_threads()}, draws={args.n_draws}, "
          f"train={Z_tr.shape[1]} rows x {Z_tr.shape[2]} features, test={Z_te.shape[1]}, "
          f"epochs={args.epochs}")

    # warm-up (first CUDA / MKL calls) outside both timings
    fit_batched(RepresentationCNN(max_epochs=1, device=device, random_state=0),
                Z_tr[:2], y_tr)

    tic = time.perf_counter()
    nets = fit_batched(template, Z_tr, y_tr)
    acc_batched = np.array([balanced_accuracy_score(y_te, n.predict(Z)) for n, Z in
                            zip(nets, Z_te)])
    t_batched = time.perf_counter() - tic
    print(f"batched   : {t_batched:8.2f} s  ({t_batched / args.n_draws:.3f} s/draw)", flush=True)

    tic = time.perf_counter()
    acc_seq = []
    for Zt, Zv in zip(Z_tr, Z_te):
        net = RepresentationCNN(max_epochs=args.epochs, device=device, random_state=0)
        acc_seq.append(balanced_accuracy_score(y_te, net.fit(Zt, y_tr).predict(Zv)))
    acc_seq = np.array(acc_seq)
    t_seq = time.perf_counter() - tic
    print(f"sequential: {t_seq:8.2f} s  ({t_seq / args.n_draws:.3f} s/draw)")

    diff = np.abs(acc_batched - acc_seq)
    print(f"speed-up (sequential / batched): {t_seq / t_batched:.2f}x  (target >= 5x)")
    print(f"test balanced accuracy: batched mean {acc_batched.mean():.4f}, sequential mean "
          f"{acc_seq.mean():.4f}; largest per-draw difference {100 * diff.max():.3f} points "
          f"(target <= 1), median {100 * np.median(diff):.3f}")
    print("   v      batched  sequential")
    for v, a, b in zip(vs, acc_batched, acc_seq):
        print(f"{v:6.4f}   {a:.4f}   {b:.4f}")


if __name__ == "__main__":
    main()
