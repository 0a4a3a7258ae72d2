"""Speed of the privacy accounting and of the entropy lower bound.

Targets (issue 5): leakage accounting of a 10^5-step DP-SGD run under 50 ms (one quadrature per
distinct (q, sigma)); the entropy bound on a 10,000 x 784 sample under 60 s with the default
grid (GPU when torch sees one). Each figure is printed next to a baseline measured in the same
run.

Usage: ``python benchmarks/bench_privacy.py [--n-entropy N] [--device auto|cpu|cuda]``.
"""

import argparse
import math
import time

import numpy as np
from scipy import integrate
from scipy.special import logsumexp

from skdc.privacy import BlockEntropyLowerBound, DPSGDLeakageAccountant
from skdc.privacy._entropy import _log_density_numpy


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

    from skdc.privacy import _leakage

    _leakage._GH_CACHE.clear()
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


def bench_entropy(n, device):
    rng = np.random.RandomState(0)
    m = 784
    spectrum = np.geomspace(1.0, 1e-3, m)
    basis = np.linalg.qr(rng.standard_normal((m, m)))[0]
    X = (rng.standard_normal((n, m)) * np.sqrt(spectrum)) @ basis.T
    X_perp = (rng.standard_normal((1000, m)) * np.sqrt(spectrum)) @ basis.T
    ent = BlockEntropyLowerBound(device=device, random_state=0)
    t = time.perf_counter()
    ent.fit(X, X_perp=X_perp)
    elapsed = time.perf_counter() - t
    pairs = len(ent.pairs_)
    scale = (10_000 / n) ** 2
    print(f"entropy bound, n={n} x m={m}, {pairs} grid pairs on {ent.device_}: {elapsed:.1f} s "
          f"(cost ~ n^2: x{scale:.0f} -> {elapsed * scale:.0f} s at n=10,000; target < 60 s)")
    # baseline: the same plug-in, one point at a time (k = 1, one block, one pair)
    Y = ent._rotate(X)
    C = math.sqrt(m) * Y[:, :1]
    s = math.sqrt(0.2)
    P = np.repeat(C, 2, axis=0) + s * rng.standard_normal((2 * n, 1))
    sub = P[:200]
    t = time.perf_counter()
    for p in sub:
        logsumexp(p @ C.T / s**2 - (C[:, 0] ** 2) / (2 * s**2))
    per_point_loop = (time.perf_counter() - t) / sub.shape[0]
    t_batched = _median_time(lambda: _log_density_numpy(sub, C, s), repeat=3) / sub.shape[0]
    print(f"  baseline, point-by-point log-sum-exp: {1e6 * per_point_loop:.1f} us/point vs "
          f"batched {1e6 * t_batched:.1f} us/point (ratio {per_point_loop / t_batched:.1f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-entropy", type=int, default=500)
    parser.add_argument("--device", default="auto")
    args = parser.parse_args()
    bench_leakage()
    bench_entropy(args.n_entropy, args.device)
