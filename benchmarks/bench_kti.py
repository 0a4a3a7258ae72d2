"""Speed of KTIAligner: fit and transform targets, and the Nystroem fit-time curve.

Targets, K = 10 participants, n_a = 1,000 anchors, width 10:
  * KTI fit under 3 s, transform of 1,000 rows under 0.1 s;
  * for large anchors, ``n_kernel_components`` (Nystroem) with an accuracy loss on digits
    under one point.

Timings use single-threaded BLAS, as the KTI paper does (Sec. 5.1 of Suetake et al.,
arXiv:2605.27219). Each figure is the median of ``--repeats`` runs and is printed next to
baselines measured in the same run: LTIAligner (the linear integration) and a naive KTI that
forms every ``(K + lambda I)^{-1}`` with ``numpy.linalg.inv`` and runs a full ``eigh`` of
``M_lambda``.

Run: ``python benchmarks/bench_kti.py`` (``--quick`` for a shorter curve).
"""

import argparse
import time

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from skdc import Uploads
from skdc.alignment import KTIAligner, LTIAligner, kernel_eigh_cache


def _uploads(rng, K, n_a, width, n_rows=1000):
    """Smooth nonlinear views of one anchor: tanh of participant-specific projections."""
    A = rng.standard_normal((n_a, 20))
    X = rng.standard_normal((n_rows, 20))
    maps = [rng.standard_normal((20, width)) / np.sqrt(20) for _ in range(K)]
    part = np.arange(n_rows) % K
    Y = np.zeros((n_rows, width))
    for k, W in enumerate(maps):
        Y[part == k] = np.tanh(X[part == k] @ W)
    return Uploads(Y, participant=part, anchors=[np.tanh(A @ W) for W in maps])


def _naive_kti(anchors, d, lam=1.0):
    n_a = anchors[0].shape[0]
    M = sum(lam * np.linalg.inv(rbf_kernel(b, gamma=1.0) + lam * np.eye(n_a)) for b in anchors)
    w, V = np.linalg.eigh(M)
    return V[:, :d]


def _median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


ALPHAS = (0.01, 0.1, 1.0, 10.0, 100.0)


def targets(repeats):
    rng = np.random.RandomState(0)
    Y = _uploads(rng, K=10, n_a=1000, width=10)
    kti = KTIAligner()
    t_fit = _median_time(lambda: kti.fit(Y), repeats)
    t_tr = _median_time(lambda: kti.transform(Y), max(repeats, 5))
    t_lti = _median_time(lambda: LTIAligner().fit(Y), repeats)
    t_naive = _median_time(lambda: _naive_kti(Y.anchors, 10), repeats)
    t_tsl = _median_time(lambda: KTIAligner(graph="gl", center=True).fit(Y), repeats)

    def eigh_cold():
        kernel_eigh_cache.clear()
        KTIAligner(solver="eigh").fit(Y)

    def alpha_path(solver):
        kernel_eigh_cache.clear()
        for alpha in ALPHAS:
            KTIAligner(alpha=alpha, solver=solver).fit(Y)

    t_eigh = _median_time(eigh_cold, repeats)
    t_path_chol = _median_time(lambda: alpha_path("cholesky"), repeats)
    t_path_eigh = _median_time(lambda: alpha_path("eigh"), repeats)
    print("== K = 10, n_a = 1000, width 10 (single-threaded BLAS, medians) ==")
    print(f"KTI fit                 {t_fit:8.3f} s   (target < 3 s)")
    print(f"KTI+GL+Center fit       {t_tsl:8.3f} s")
    print(f"KTI fit, solver='eigh'  {t_eigh:8.3f} s   ratio eigh/cholesky = {t_eigh / t_fit:5.2f}")
    print(f"{len(ALPHAS)} alphas, cholesky     {t_path_chol:8.3f} s")
    print(f"{len(ALPHAS)} alphas, eigh reused  {t_path_eigh:8.3f} s   ratio cholesky/eigh = "
          f"{t_path_chol / t_path_eigh:5.2f}")
    print(f"naive KTI (inv + eigh)  {t_naive:8.3f} s   ratio naive/KTI = {t_naive / t_fit:5.2f}")
    print(f"LTI fit                 {t_lti:8.3f} s   ratio KTI/LTI = {t_fit / t_lti:7.1f}")
    print(f"KTI transform 1000 rows {t_tr:8.4f} s   (target < 0.1 s)")
    return t_fit, t_tr


def curve(sizes, exact_max, m, repeats):
    print(f"\n== fit time against n_a (K = 10, width 10; Nystroem m = {m}) ==")
    print(f"{'n_a':>6} {'exact [s]':>10} {'Nystroem [s]':>13} {'ratio':>7}")
    for n_a in sizes:
        Y = _uploads(np.random.RandomState(1), K=10, n_a=n_a, width=10, n_rows=200)
        t_ny = _median_time(
            lambda Y=Y: KTIAligner(n_kernel_components=m, random_state=0).fit(Y), repeats
        )
        if n_a <= exact_max:
            t_ex = _median_time(lambda Y=Y: KTIAligner().fit(Y), repeats)
            print(f"{n_a:6d} {t_ex:10.3f} {t_ny:13.3f} {t_ex / t_ny:7.1f}")
        else:
            print(f"{n_a:6d} {'(skipped)':>10} {t_ny:13.3f} {'':>7}")


def nystroem_accuracy(n_seeds, m, n_anchors):
    """Digits under per-participant UMAP: exact KTI vs Nystroem on the same uploads."""
    from sklearn.datasets import load_digits
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import train_test_split

    from skdc.anchors import SMOTEAnchor
    from skdc.mechanisms import UMAPMechanism

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    acc = []
    for seed in range(n_seeds):
        Xp, Xr, yp, yr = train_test_split(X, y, train_size=300, stratify=y, random_state=seed)
        Xtr, Xte, ytr, yte = train_test_split(
            Xr, yr, train_size=1000, test_size=490, stratify=yr, random_state=seed
        )
        ptr, pte = np.arange(1000) % 10, np.arange(490) % 10
        mech = UMAPMechanism(10, n_components=10, init="pca", random_state=seed,
                             anchor=SMOTEAnchor(n_anchors, Xp, yp, n_source=100))
        mech.fit(Xtr, participant=ptr)
        Ytr, Yte = mech.transform(Xtr, participant=ptr), mech.transform(Xte, participant=pte)
        row = []
        for aligner in (KTIAligner(), KTIAligner(n_kernel_components=m, random_state=seed)):
            t = time.perf_counter()
            Z = aligner.fit_transform(Ytr)
            t = time.perf_counter() - t
            clf = RandomForestClassifier(random_state=seed).fit(Z, ytr)
            row += [clf.score(aligner.transform(Yte), yte), t]
        acc.append(row)
        print(f"seed {seed}: exact {row[0]:.3f} ({row[1]:.2f} s)  Nystroem {row[2]:.3f} "
              f"({row[3]:.2f} s)")
    acc = np.asarray(acc)
    loss = 100 * (acc[:, 0].mean() - acc[:, 2].mean())
    print(f"digits/UMAP, n_a = {n_anchors}, m = {m}: exact {acc[:, 0].mean():.3f}, Nystroem "
          f"{acc[:, 2].mean():.3f}, loss {loss:.2f} points (target < 1)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-accuracy", action="store_true")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        targets(args.repeats)
        if args.quick:
            curve([500, 1000, 2000], exact_max=1000, m=300, repeats=1)
        else:
            curve([500, 1000, 2000, 3000, 5000, 8000], exact_max=3000, m=500,
                  repeats=args.repeats)
        if not args.no_accuracy:
            nystroem_accuracy(2 if args.quick else 3, m=500, n_anchors=2000)
