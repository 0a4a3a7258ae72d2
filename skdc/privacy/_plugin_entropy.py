"""The plug-in estimate of a dithered block entropy: the Monte Carlo kernel, NumPy and torch.

The plug-in estimator of Goldfeld et al. [2]_ takes the entropy of the empirical measure of the
``n`` block centres convolved with the dither ``N(0, s^2 I_k)``; it is biased downwards at every
``n``, which is what a lower bound needs. Its Monte Carlo estimate
``h_hat_MC = -(1/(n n_MC)) sum_i sum_r log2 f_hat(c_i + W_ir)`` (eq. 31 of [1]_) evaluates the
mixture density ``f_hat`` (eq. 11) exactly over all ``n`` centres with a log-sum-exp shifted by
each point's own centre. This module holds it for one set of centres (:func:`plugin_entropy`)
and for every block of a grid pair at once, on the CPU (float64, blocks spread over threads)
and on a torch device (float64, blocks batched), for
:class:`~skdc.privacy.BlockEntropyLowerBound` and the bound's per-block estimate.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
.. [2] Goldfeld, Greenewald, Niles-Weed and Polyanskiy, "Convergence of Smoothed Empirical
   Measures with Applications to Entropy Estimation", IEEE Trans. Inf. Theory, 2020.
"""

# Licence: BSD 3 clause

import math
from numbers import Integral, Real

import numpy as np

from ..utils._parallel import available_cpus
from ..utils._sklearn_compat import Interval, validate_params
from ._entropy_margins import LN2

__all__ = ["plugin_entropy"]


@validate_params(
    {
        "centres": ["array-like"],
        "s": [Interval(Real, 0, None, closed="neither")],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "random_state": [None, Interval(Integral, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def plugin_entropy(centres, s, n_mc, random_state=None):
    """Monte Carlo plug-in entropy (bits) of the empirical measure convolved with ``N(0, s^2 I)``.

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    ``h_hat_MC = -(1/(n n_MC)) sum_i sum_r log2 f_hat(c_i + W_ir)``, eq. 31 of [1]_, with
    ``f_hat`` evaluated exactly over all ``n`` centres.

    Parameters
    ----------
    centres : array-like of shape (n, k)
        The mixture centres.
    s : float
        Dither standard deviation.
    n_mc : int
        Replicates per centre.
    random_state : int or None
        Seed of the dither.

    Returns
    -------
    h : float
        The estimate, in bits.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.privacy import plugin_entropy
    >>> c = np.random.RandomState(0).standard_normal((2000, 1))
    >>> round(plugin_entropy(c, 0.5, 4, random_state=0), 1)
    2.2
    """
    C = np.asarray(centres, dtype=np.float64)
    seed = [np.random.SeedSequence(random_state).entropy]
    return float(_block_entropies_numpy(C[None], float(s), int(n_mc), seed, n_threads=1)[0])


# exp(E) with E <= ||w||^2 / (2 s^2) stays finite below this (float64 overflows past 709)
_SHIFT_LIMIT = 600.0


def _block_log_density_sum(c, s, n_mc, rng, chunk_elems):
    """``sum_{i, r} ln f_hat(c_i + W_ir)`` (nats) for one block's centres ``c`` of shape (n, k).

    With ``y = c_i + w``, eq. 11 of [1]_ reads ``ln f_hat(y) = const - ||w||^2 / (2 s^2) +
    ln sum_j exp(E_j)`` with ``E_j = (||w||^2 - ||y - c_j||^2) / (2 s^2)``: the log-sum-exp
    shifted by the point's own centre (``E_i = 0``, so the sum is >= 1) instead of its maximum,
    which saves a pass over the ``n`` logits. ``E`` comes from one matrix product of the
    augmented rows ``[y / s^2, 1, a]`` and ``[c_j, -||c_j||^2 / (2 s^2), 1]``, where
    ``a = ||c_i||^2 / (2 s^2) - <y, c_i> / s^2``. Every centre enters exactly (no truncation).
    ``E_j <= ||w||^2 / (2 s^2)``; a chunk where that could overflow falls back to the row
    maximum.
    """
    n, k = c.shape
    inv = 1.0 / s**2
    centres = np.empty((k + 2, n))
    centres[:k] = c.T
    centres[k] = -0.5 * inv * np.einsum("ij,ij->i", c, c)
    centres[k + 1] = 1.0
    own = np.repeat(np.arange(n), n_mc)
    W = s * rng.standard_normal((own.size, k))
    rows = max(1, chunk_elems // n)
    buf = np.empty((min(rows, own.size), n))
    total = -0.5 * inv * float(np.einsum("ij,ij->", W, W))
    for a in range(0, own.size, rows):
        ci, w = c[own[a : a + rows]], W[a : a + rows]
        y = ci + w
        aug = np.empty((y.shape[0], k + 2))
        aug[:, :k] = y * inv
        aug[:, k] = 1.0
        aug[:, k + 1] = inv * (0.5 * np.einsum("ij,ij->i", ci, ci) - np.einsum("ij,ij->i", y, ci))
        E = buf[: y.shape[0]]
        np.matmul(aug, centres, out=E)
        if 0.5 * inv * float(np.einsum("ij,ij->i", w, w).max()) > _SHIFT_LIMIT:
            top = E.max(axis=1, keepdims=True)
            E -= top
            total += float(top.sum())
        np.exp(E, out=E)
        total += float(np.log(E.sum(axis=1)).sum())
    return total


def _block_entropies_numpy(C, s, n_mc, seed, n_threads=None, chunk_elems=2**20):
    """Plug-in block entropies (bits), eq. 31 of [1]_, float64, blocks spread over threads.

    Block ``b``'s dither comes from ``default_rng([*seed, b])``, so the result does not depend
    on the number of threads or on the chunking. NumPy releases the GIL in the products and
    exponentials; BLAS runs single-threaded inside the pool.
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits

    n_blocks, n, k = C.shape
    const = -math.log(n) - 0.5 * k * math.log(2 * math.pi * s**2)

    def one(b):
        rng = np.random.default_rng([*seed, b])
        return _block_log_density_sum(C[b], s, n_mc, rng, chunk_elems)

    workers = min(n_blocks, n_threads or available_cpus())
    with threadpool_limits(limits=1, user_api="blas"):
        if workers == 1:
            sums = [one(b) for b in range(n_blocks)]
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                sums = list(pool.map(one, range(n_blocks)))
    return -(const + np.asarray(sums) / (n * n_mc)) / LN2


def _block_entropies_torch(C, s, n_mc, seed, device, budget=2**28):
    """Plug-in block entropies on a torch device, batched over blocks, float64.

    The same own-centre-shifted sum as :func:`_block_log_density_sum` (one batched product of
    the augmented rows, then ``exp_`` in place and a sum), with the dither drawn on the device.
    """
    import torch

    n_blocks, n, k = C.shape
    gen = torch.Generator(device=device)
    gen.manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))
    inv = 1.0 / s**2
    Ct = torch.as_tensor(C, dtype=torch.float64, device=device)
    c_half = 0.5 * inv * (Ct * Ct).sum(-1)  # (B, n)
    Ca = torch.cat([Ct, -c_half[..., None], torch.ones_like(c_half)[..., None]], dim=-1)
    const = -math.log(n) - 0.5 * k * math.log(2 * math.pi * s**2)
    total = torch.zeros(n_blocks, dtype=torch.float64, device=device)
    n_points = n * n_mc
    bb = max(1, min(n_blocks, budget // max(1, n * n)))  # blocks per batch
    pc = max(1, budget // (bb * n))  # points per chunk
    for b0 in range(0, n_blocks, bb):
        Cb, Cab, hb = Ct[b0 : b0 + bb], Ca[b0 : b0 + bb], c_half[b0 : b0 + bb]
        for p0 in range(0, n_points, pc):
            idx = torch.arange(p0, min(p0 + pc, n_points), device=device) // n_mc
            ci = Cb[:, idx, :]
            w = s * torch.randn(ci.shape, generator=gen, dtype=torch.float64, device=device)
            y = ci + w
            w_half = 0.5 * inv * (w * w).sum(-1)
            shift = hb[:, idx] - inv * (y * ci).sum(-1)
            Ya = torch.cat([y * inv, torch.ones_like(shift)[..., None], shift[..., None]], -1)
            E = torch.bmm(Ya, Cab.transpose(1, 2))
            if float(w_half.max()) > _SHIFT_LIMIT:
                lse = torch.logsumexp(E, dim=-1)
            else:
                lse = E.exp_().sum(-1).log()
            total[b0 : b0 + bb] += (const - w_half + lse).sum(-1)
    return (-(total / n_points) / LN2).cpu().numpy()
