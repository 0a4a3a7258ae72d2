"""Speed of the privacy accounting and of the entropy lower bound.

Targets: leakage accounting of a 10^5-step DP-SGD run under 50 ms (one quadrature per
distinct (q, sigma)); the entropy bound on a 10,000 x 784 sample under 60 s with the default
grid (GPU when torch sees one). Each figure is printed next to a baseline measured in the same
run: scipy's adaptive quadrature per step for the accountant, and the printed plug-in formula
(max-shifted log-sum-exp, eq. 11 and 31 of Bourne and Allison, arXiv:2610.13768) for the
entropy kernel. The full grid is timed at ``--n-entropy`` rows and extrapolated to 10,000 by its
exact cost, sum_k N_k n^2 n_MC.

Usage: ``python benchmarks/bench_privacy.py [--n-entropy N] [--device auto|cpu|cuda]``.
"""

import argparse
import math
import time

import numpy as np
from scipy import integrate
from scipy.special import logsumexp

from skdc.privacy import BlockEntropyLowerBound, DPSGDLeakageAccountant
from skdc.privacy._plugin_entropy import _block_entropies_numpy


def _median_time(fn, repeat=7):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def bench_leakage():
    q, sigma, steps = 1 / 49, 1.11, 100_000

    def ours():
        return DPSGDLeakageAccountant().add_run(q, sigma, steps).leakage_bits_

    from skdc.privacy import _subsampled_gaussian

    _subsampled_gaussian._GH_CACHE.clear()
    t = time.perf_counter()
    ours()  # cold: includes computing the 256 Gauss-Hermite nodes (once per process)
    t_cold = time.perf_counter() - t
    t_ours = _median_time(ours)

    def kl_quad():  # baseline: adaptive quadrature of one step's KL
        def f(y):
            p = (1 - q) * math.exp(-(y**2) / (2 * sigma**2)) + q * math.exp(
                -((y - 1) ** 2) / (2 * sigma**2)
            )
            p /= math.sqrt(2 * math.pi) * sigma
            return p * np.logaddexp(math.log1p(-q), math.log(q) + (2 * y - 1) / (2 * sigma**2))

        return integrate.quad(f, -40 * sigma, 40 * sigma + 1, limit=500)[0]

    t_step = _median_time(kl_quad, repeat=5)
    print(f"leakage, {steps} steps at (q={q:.4f}, sigma={sigma}): {1e3 * t_ours:.2f} ms "
          f"warm, {1e3 * t_cold:.2f} ms cold (target < 50 ms); gamma = {ours():.4f} bits")
    print(f"  baseline, scipy.quad per step: {1e3 * t_step:.2f} ms/step -> "
          f"{t_step * steps:.1f} s for the run; ratio {t_step * steps / t_ours:.0f}x")


def _spec_kernel(C, s, n_mc, seed, chunk=256):
    """Baseline: eq. 11/31 as printed (max-shifted scipy log-sum-exp), block by block, with
    BLAS free to use every core, on the same dither stream as skdc's kernel."""
    out = []
    for b, c in enumerate(C):
        n, k = c.shape
        P = np.repeat(c, n_mc, axis=0) + s * np.random.default_rng([*seed, b]).standard_normal(
            (n * n_mc, k))
        cs = np.sum(c * c, axis=1) / (2 * s**2)
        total = 0.0
        for a in range(0, P.shape[0], chunk):
            Q = P[a : a + chunk]
            total += float(np.sum(-np.sum(Q * Q, axis=1) / (2 * s**2)
                                  + logsumexp(Q @ c.T / s**2 - cs, axis=1)))
        const = -math.log(n) - 0.5 * k * math.log(2 * math.pi * s**2)
        out.append(-(const + total / P.shape[0]) / math.log(2))
    return np.array(out)


def _grid_cost(n, m, K):
    """Kernel evaluations of the default grid: sum over pairs of N_k n^2 n_MC."""
    return 6 * sum((m // k) * n * n * (2 if k == 1 else max(k, 4)) for k in K)


def bench_entropy(n, device):
    rng = np.random.RandomState(0)
    m = 784
    spectrum = np.geomspace(1.0, 1e-3, m)
    basis = np.linalg.qr(rng.standard_normal((m, m)))[0]
    X = (rng.standard_normal((n, m)) * np.sqrt(spectrum)) @ basis.T
    X_perp = (rng.standard_normal((1000, m)) * np.sqrt(spectrum)) @ basis.T
    ent = BlockEntropyLowerBound(device=device, random_state=0, progress=False)
    t = time.perf_counter()
    ent.fit(X, X_perp=X_perp)
    elapsed = time.perf_counter() - t
    K = sorted({p["k"] for p in ent.pairs_})
    evals = _grid_cost(n, m, K)
    at_10k = elapsed * _grid_cost(10_000, m, K) / evals
    print(f"entropy bound, n={n} x m={m}, {len(ent.pairs_)} grid pairs on {ent.device_}: "
          f"{elapsed:.1f} s, {evals / elapsed / 1e6:.0f} M kernel evaluations/s "
          f"(cost ~ n^2 -> {at_10k:.0f} s at n=10,000; target < 60 s)")
    # one pair at a time: skdc's CPU kernel against the printed formula, same centres and
    # dither, on at most 1,000 rows (the printed formula is slow)
    n_cmp = min(n, 1000)
    Y = ent._rotate(X[:n_cmp])
    print(f"  per pair, on the CPU, {n_cmp} rows:")
    for k, nu2 in ((1, 0.2), (4, 1.6), (28, 0.8)):
        nb = m // k
        C = np.ascontiguousarray(Y.reshape(n_cmp, nb, k).transpose(1, 0, 2)) * math.sqrt(nb)
        C = C[: max(1, nb // 8)]  # an eighth of the blocks keeps the baseline short
        s, n_mc = math.sqrt(nu2 / k), (2 if k == 1 else max(k, 4))
        t_ours = _median_time(lambda C=C, s=s, n_mc=n_mc: _block_entropies_numpy(C, s, n_mc, [0]),
                              repeat=3)
        t0 = time.perf_counter()
        ref = _spec_kernel(C, s, n_mc, [0])
        t_ref = time.perf_counter() - t0
        diff = np.abs(_block_entropies_numpy(C, s, n_mc, [0]) - ref).max()
        print(f"  k={k:2d}, nu2={nu2}, {C.shape[0]} blocks: skdc {t_ours:.3f} s, printed "
              f"formula {t_ref:.3f} s, ratio {t_ref / t_ours:.1f}x; max |difference| "
              f"{diff:.1e} bits")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-entropy", type=int, default=500)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    bench_leakage()
    bench_entropy(args.n_entropy, args.device)
