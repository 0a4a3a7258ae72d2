"""Linkage of the data-channel attacks against Procrustes on standardized breast cancer.

I-GDP + GOPPAligner(v), 2 and 5 participants, v = 0.165 and 0.5, a few seeds: the linkage
accuracy (ten-way same-label galleries) of each attack's reconstruction under the default
matcher (the PCA-embedding cosine, as the audit uses) and under the attacker's best matcher
(the Mahalanobis one reading the colluder's rows), and the wall time of one attack call,
also on 1,000 x 20 Gaussian rows with 5 participants. Run: python
benchmarks/bench_data_channel_attacks.py [--seeds 5]
"""

import argparse
import time

import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from skdc.alignment import GOPPAligner
from skdc.attacks import collusion_view, make_attack
from skdc.mechanisms import IGDP
from skdc.metrics import linkage_accuracy

ATTACKS = ("procrustes", "sample_axes", "joint_likelihood")


def _timed(attack, view, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        rec = attack.reconstruct(view)
        best = min(best, time.perf_counter() - t)
    return rec, best


def main(seeds):
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    print("standardized breast cancer (569 x 30); linkage: default (PCA cosine) / best matcher")
    print(f"{'p':>2} {'v':>6} " + " ".join(f"{a:>26}" for a in ATTACKS))
    for p in (2, 5):
        for v in (0.165, 0.5):
            table = {a: [] for a in ATTACKS}
            for seed in range(seeds):
                pipe = make_pipeline(IGDP(p, random_state=seed), GOPPAligner(v)).fit(X)
                view = collusion_view(pipe, X)
                yt = y[view.target_rows]
                for name in ATTACKS:
                    rec, t = _timed(make_attack(name), view)
                    default = linkage_accuracy(view.truth.X, rec.X, yt, auditor="pca",
                                               random_state=seed)
                    best = linkage_accuracy(view.truth.X, rec.X, yt, auditor="pca",
                                            matcher="best", sample=view.colluder_X_input,
                                            random_state=seed)
                    table[name].append((float(default), float(best), t))
            cells = []
            for name in ATTACKS:
                r = np.array(table[name])
                ms = r[:, 2].max() * 1e3
                cells.append(f"{r[:, 0].mean():.2f} / {r[:, 1].mean():.2f} ({ms:.0f} ms)")
            print(f"{p:>2} {v:>6} " + " ".join(f"{c:>26}" for c in cells))
            for name in ATTACKS:
                r = np.array(table[name])
                print(f"      {name:>17}: default {np.round(r[:, 0], 2).tolist()}, "
                      f"best {np.round(r[:, 1], 2).tolist()}")
    rng = np.random.RandomState(0)
    G = rng.randn(1000, 20) @ rng.randn(20, 20)
    print("1,000 x 20 Gaussian rows, 5 participants, v = 0.5: seconds per call")
    pipe = make_pipeline(IGDP(5, random_state=0), GOPPAligner(0.5)).fit(G)
    view = collusion_view(pipe, G)
    for name in ATTACKS:
        _, t = _timed(make_attack(name), view)
        print(f"  {name}: {t:.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    with threadpool_limits(limits=1, user_api="blas"):
        main(args.seeds)
