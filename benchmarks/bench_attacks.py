"""Speed of the privacy scorers: one fitted pipeline, 1,000 target rows, d = 100.

Target: scoring one fitted pipeline on 1,000 target rows at d = 100 in under 50 ms,
excluding the linkage auditor. Baseline measured in the same run: the pipeline's own
``transform`` of the same evaluation rows (mechanism + aligner), i.e. what any utility scorer
spends before its model even predicts. Prints medians over repeats and the ratio to the
baseline. Run: ``python benchmarks/bench_attacks.py``.
"""

import sys
import time

import numpy as np
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

from skdc.alignment import GOPPAligner
from skdc.mechanisms import IGDP
from skdc.metrics import linkage_accuracy, make_attack_scorer


def median_ms(fn, repeats=15):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * float(np.median(times))


def main():
    rng = np.random.RandomState(0)
    d, n_target = 100, 1000
    X = rng.rand(2 * n_target, d)
    y = rng.randint(10, size=len(X))
    ids = np.arange(len(X)) % 2  # participant 1 (the target) holds 1,000 rows
    pipe = Pipeline([("gdp", IGDP(2, random_state=0)),
                     ("align", GOPPAligner(v=0.05))])
    pipe.fit(X, gdp__participant=ids)

    base = median_ms(lambda: pipe["align"].transform(pipe["gdp"].transform(X, participant=ids)))
    print(f"d={d}, target rows={n_target}, evaluation rows={len(X)}, anchors="
          f"{pipe['gdp'].anchor_.shape[0]}")
    print(f"baseline pipeline transform (mechanism + aligner): {base:8.2f} ms")
    print(f"{'scorer':38s} {'median ms':>10s} {'x baseline':>11s}  target < 50 ms")
    cases = [
        ("known_anchor", {}, "relative_error"),
        ("mp", {}, "relative_error"),
        ("procrustes", {}, "relative_error"),
        ("alignment_map", {}, "relative_error"),
        ("procrustes", {}, "mse"),
        ("procrustes", {}, "psnr"),
        ("known_input", {"n_known": 150, "random_state": 0}, "relative_error"),
        ("known_sample", {}, "relative_error"),
        ("anchor_regression", {}, "relative_error"),
    ]
    for name, params, metric in cases:
        scorer = make_attack_scorer(name, metric, **params)
        ms = median_ms(lambda s=scorer: s(pipe, X, y, participant=ids))
        flag = "ok" if ms < 50 else "OVER"
        print(f"{name + ' / ' + metric:38s} {ms:10.2f} {ms / base:11.2f}  {flag}")

    # ICA runs two FastICA fits (iterative): not a d x d attack, shown for scale only
    scorer = make_attack_scorer("ica", random_state=0, max_iter=1000)
    ms = median_ms(lambda: scorer(pipe, X, y, participant=ids), repeats=3)
    print(f"{'ica / relative_error (FastICA x2)':38s} {ms:10.2f} {ms / base:11.2f}  (iterative)")

    # linkage: the auditor (PCA fallback here) is excluded from the target; shown for scale
    scorer = make_attack_scorer("procrustes", "linkage",
                                metric_params={"auditor": "pca", "random_state": 0})
    ms = median_ms(lambda: scorer(pipe, X, y, participant=ids), repeats=5)
    Xt = X[ids == 1]
    ms_link = median_ms(lambda: linkage_accuracy(Xt, Xt, y[ids == 1], auditor="pca",
                                                 random_state=0), repeats=5)
    print(f"{'procrustes / linkage (PCA auditor)':38s} {ms:10.2f} {ms / base:11.2f}  "
          f"(linkage_accuracy alone, auditor fit included: {ms_link:.2f} ms)")


if __name__ == "__main__":
    # d x d algebra: one BLAS thread is fastest and stable on a shared machine; pass
    # --threads=N to compare
    n_threads = int(next((a.split("=")[1] for a in sys.argv[1:] if a.startswith("--threads=")), 1))
    with threadpool_limits(limits=n_threads, user_api="blas"):
        main()
