"""The reconstruction lower bound: no attack reconstructs a record better than this.

For any release leaking at most ``gamma`` bits about a record and every attack ``z_hat``,
Corollary 3.7 of [1]_ (the Shannon lower bound applied block by block, each block charged the
full ``gamma``) gives::

    E||Psi(x) - z_hat||^2 / tr Sigma
        >= max_{(k, nu^2) in G} [ (k / (2 pi e)) 2^{2 (h_LB(k, nu^2) - gamma) / k} - nu^2 ]_+

(unit-trace scale, eq. 13-14 of [1]_). :class:`ReconstructionBound` evaluates it from a fitted
:class:`BlockEntropyLowerBound` (or a table of grid records), and
:func:`mechanism_leakage_bits` reads the leakage ``gamma`` off a fitted mechanism.
:func:`per_block_bound` is the sharper bound ``rho_blk`` of Proposition G.1 of [1]_ for a release
that maps each record to one of a few cells (a codebook), charging each block only the leakage
it receives. The scorers
that put the bound next to the attack scorers live in :mod:`skdc.metrics`
(:func:`~skdc.metrics.make_bound_scorer`, :func:`~skdc.metrics.bound_slack_score`).

This module is the paper's home; the rest of [1]_ lives in ``privacy/_entropy.py`` (the block
entropy's lower confidence bound), ``privacy/_entropy_margins.py`` (its margins),
``privacy/_plugin_entropy.py`` (its plug-in estimate), ``privacy/_hadamard.py``, the leakage
accountants ``privacy/_dpsgd.py``, ``privacy/_subsampled_gaussian.py`` (one DP-SGD step) and
``privacy/_release_leakage.py`` (one-shot releases), ``mechanisms/_codebook.py``
(:class:`~skdc.mechanisms.CodebookRelease`), ``attacks/_likelihood.py``
(:class:`~skdc.attacks.PriorAwareLikelihoodAttack`), ``metrics/_bound_scorer.py``,
``utils/_reconstruction.py``, ``nn/_dpsgd.py`` and ``experiments/_reproduce_bound.py``. The
developer guide maps each paper to its modules.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
"""

# Licence: BSD 3 clause

import math
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils.validation import check_array

from ..utils._sklearn_compat import Interval, validate_params
from ._plugin_entropy import _block_entropies_numpy
from ._release_leakage import GaussianReleaseLeakage

__all__ = [
    "ReconstructionBound",
    "shannon_lower_bound",
    "mechanism_leakage_bits",
    "per_block_bound",
]

_TWO_PI_E = 2 * math.pi * math.e


@validate_params(
    {
        "h_bits": [Real],
        "gamma_bits": [Real],
        "dim": [Interval(Integral, 1, None, closed="left")],
        "dither_var": [Interval(Real, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def shannon_lower_bound(h_bits, gamma_bits, dim, dither_var=0.0):
    """Absolute MSE floor of Theorem 3.6 of [1]_: ``[(m/(2 pi e)) 2^{2(h - gamma)/m} - m s^2]_+``.

    Read more in the :ref:`User Guide <reconstruction_floor>`.

    Parameters
    ----------
    h_bits : float
        Differential entropy (bits) of the dithered representation.
    gamma_bits : float
        Leakage (bits).
    dim : int
        Dimension ``m``.
    dither_var : float, default=0.0
        Dither variance ``s^2``.

    Returns
    -------
    mse : float
        Lower bound on ``E||z - z_hat||^2``.

    Examples
    --------
    >>> import math
    >>> from skdc.privacy import shannon_lower_bound
    >>> round(shannon_lower_bound(2 * math.log2(2 * math.pi * math.e), 2.0, 4), 6)
    2.0
    """
    val = (dim / _TWO_PI_E) * 2.0 ** (2.0 * (h_bits - gamma_bits) / dim) - dim * dither_var
    return max(float(val), 0.0)


class ReconstructionBound:
    """Provable floor on any attack's reconstruction error, given the leakage in bits.

    Read more in the :ref:`User Guide <reconstruction_floor>`; the example
    :ref:`sphx_glr_auto_examples_plot_bound_vs_attacks.py` uses it.

    Parameters
    ----------
    entropy : fitted BlockEntropyLowerBound or list of dict
        The entropy grid: a fitted :class:`BlockEntropyLowerBound`, or records with keys ``k``,
        ``nu2``, ``h_lb`` (and optionally ``h_hat``) on the unit-trace scale.
    normaliser : {"point", "ucb"} or float, default="point"
        ``tr Sigma`` used in the ratio: the calibration point estimate (as the paper), its upper
        confidence bound (a confidence statement at ``1 - 2 alpha``), or a declared upper bound.
    trace : float or None, default=None
        ``tr Sigma_hat`` on the raw scale for records given as a list (needed by
        :meth:`mse_floor`).

    Examples
    --------
    >>> from skdc.privacy import ReconstructionBound
    >>> records = [{"k": 1, "nu2": 0.2, "h_lb": 2.0}, {"k": 2, "nu2": 0.4, "h_lb": 3.0}]
    >>> rho, k, nu2 = ReconstructionBound(records).rho_star(0.5)
    >>> round(rho, 4), k, nu2
    (0.5181, 1, 0.2)
    """

    def __init__(self, entropy, normaliser="point", trace=None):
        self.entropy = entropy
        self.normaliser = normaliser
        self.trace = trace

    def _records(self):
        ent = self.entropy
        if hasattr(ent, "pairs_"):
            return ent.pairs_, ent.trace_, ent.trace_ucb_
        if isinstance(ent, (list, tuple)) and ent and all(isinstance(r, dict) for r in ent):
            return list(ent), self.trace, None
        raise TypeError(
            "entropy must be a fitted BlockEntropyLowerBound or a list of records with keys "
            f"'k', 'nu2', 'h_lb'; got {type(ent).__name__}. Fit the entropy bound first."
        )

    def _scale(self, trace_point, trace_ucb):
        """Ratio of the normaliser to the point-estimate trace (>= 1 for a valid UCB)."""
        if self.normaliser == "point":
            return 1.0
        if self.normaliser == "ucb":
            if trace_ucb is None:
                raise ValueError(
                    "normaliser='ucb' needs the trace upper bound: fit BlockEntropyLowerBound "
                    "with diameter_sq set."
                )
            return trace_ucb / trace_point
        if isinstance(self.normaliser, Real) and self.normaliser > 0:
            if trace_point is None:
                raise ValueError("a declared normaliser needs the point trace (trace=...).")
            return float(self.normaliser) / trace_point
        raise ValueError(
            f"normaliser must be 'point', 'ucb' or a positive float; got {self.normaliser!r}."
        )

    def _best(self, gamma_bits, key):
        if not isinstance(gamma_bits, Real) or gamma_bits < 0 or not np.isfinite(gamma_bits):
            raise ValueError(f"gamma_bits must be a finite number >= 0; got {gamma_bits!r}.")
        records, tp, tu = self._records()
        scale = self._scale(tp, tu)
        best = (0.0, None, None)
        for r in records:
            k, v = int(r["k"]), float(r["nu2"])
            # eq. (13) of [1] on the unit-trace scale; a larger normaliser divides the SLB term
            # and the dither term alike
            val = ((k / _TWO_PI_E) * 2.0 ** (2.0 * (r[key] - gamma_bits) / k) - v) / scale
            if val > best[0]:
                best = (val, k, v)
        rho2, k, v = best
        if rho2 > 1.0:
            warnings.warn(
                f"the bound exceeds 1 (rho^2 = {rho2:.4f}) and is capped: only possible with "
                "point estimates or a normaliser that is not an upper bound on tr Sigma.",
                RuntimeWarning,
            )
            rho2 = 1.0
        return math.sqrt(rho2), k, v

    def rho_star(self, gamma_bits):
        """Floor on ``rho = sqrt(E||z - z_hat||^2 / tr Sigma)``: ``(rho*, k*, nu2*)``.

        Parameters
        ----------
        gamma_bits : float
            Leakage in bits.

        Returns
        -------
        rho : float
            In [0, 1]; 0 means the bound is vacuous.
        k : int or None
            The binding block size.
        nu2 : float or None
            The binding dither level.
        """
        return self._best(gamma_bits, "h_lb")

    def max_leakage(self, rho_target, *, tol=1e-9):
        """Largest leakage (bits) whose floor is still ``>= rho_target``.

        Step 7 of Algorithm 1 of [1]_, first half.

        Feed it to :meth:`DPSGDLeakageAccountant.calibrate_sigma` to pick the noise of a run
        that provably keeps every attack's ``rho`` at or above ``rho_target``.
        """
        if not 0 < rho_target < 1:
            raise ValueError(f"rho_target must lie in (0, 1); got {rho_target!r}.")
        if self.rho_star(0.0)[0] < rho_target:
            raise ValueError(
                f"rho_target={rho_target} is above the floor at zero leakage "
                f"({self.rho_star(0.0)[0]:.4f}): no noise level certifies it with this entropy "
                "grid. Lower the target or estimate the entropy on more rows."
            )
        lo, hi = 0.0, 1.0
        while self.rho_star(hi)[0] >= rho_target:
            lo, hi = hi, 2 * hi
        while hi - lo > tol * max(1.0, hi):  # rho* is non-increasing in gamma
            mid = 0.5 * (lo + hi)
            if self.rho_star(mid)[0] >= rho_target:
                lo = mid
            else:
                hi = mid
        return lo

    def rho_point(self, gamma_bits):
        """The point-estimate version (margins dropped): a diagnostic, not a bound."""
        return self._best(gamma_bits, "h_hat")

    def mse_floor(self, gamma_bits):
        """Floor on ``E||Psi(x) - z_hat||^2`` in the representation's raw units."""
        records, tp, _ = self._records()
        if tp is None:
            raise ValueError("mse_floor needs the raw trace: pass trace=... with the records.")
        rho = self._best(gamma_bits, "h_lb")[0]
        return rho**2 * tp * self._scale(tp, self._records()[2])


@validate_params(
    {"mechanism": [object], "radius": [Interval(Real, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def mechanism_leakage_bits(mechanism, radius):
    """Per-record leakage (bits) of a fitted mechanism's private-data noise (Lemma 3.4 of [1]_).

    Read more in the :ref:`User Guide <floor_and_attacks>`.

    For C-GDP / I-GDP / GDP with noise ``sigma`` the rotation earns no credit and rows within
    ``radius`` of a known centre leak ``radius^2 / (2 sigma^2 ln 2)`` bits; a mechanism exposing
    ``leakage_bits()`` (a GaussMix release) reports its own.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import CGDP
    >>> from skdc.privacy import mechanism_leakage_bits
    >>> X = np.random.RandomState(0).rand(40, 3)
    >>> mech = CGDP(2, noise=0.5, random_state=0).fit(X)
    >>> round(mechanism_leakage_bits(mech, radius=1.0), 4)  # 1 / (2 * 0.25 * ln 2)
    2.8854
    """
    if hasattr(mechanism, "leakage_bits") and callable(mechanism.leakage_bits):
        return float(mechanism.leakage_bits())
    sigma = getattr(mechanism, "noise", None)
    if sigma is None:
        raise TypeError(
            f"{type(mechanism).__name__} exposes neither leakage_bits() nor a Gaussian noise "
            "level; no leakage bound is known for it."
        )
    if sigma <= 0:
        return math.inf
    return GaussianReleaseLeakage(sigma, radius=radius).leakage_bits()


def _check_cells(cells, n_rows, n_cells):
    cells = np.asarray(cells)
    if cells.shape != (n_rows,) or not np.issubdtype(cells.dtype, np.integer):
        raise ValueError(
            f"cells must be a 1-D integer array with one cell per row of X ({n_rows}); got a "
            f"{cells.dtype} array of shape {cells.shape}. Pass each row's release cell."
        )
    M = int(cells.max()) + 1 if n_cells is None else int(n_cells)
    if cells.min() < 0 or cells.max() >= M:
        raise ValueError(f"cells must lie in [0, {M}); got values in [{cells.min()}, "
                         f"{cells.max()}].")
    return cells, M


@validate_params(
    {
        "entropy": [object],
        "X": ["array-like"],
        "cells": ["array-like"],
        "leakage_bits": [Interval(Real, 0, None, closed="left")],
        "n_cells": [None, Interval(Integral, 1, None, closed="left")],
        "nu2": [Interval(Real, 0, None, closed="neither")],
        "n_mc": [Interval(Integral, 1, None, closed="left")],
        "min_cell_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": [Interval(Integral, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def per_block_bound(entropy, X, cells, leakage_bits, *, n_cells=None, nu2=0.2, n_mc=2,
                    min_cell_size=20, random_state=0):
    """The per-block bound ``rho_blk`` of Prop. G.1 of [1]_ on a release of cells (an estimate).

    Read more in the :ref:`User Guide <floor_tightness>`.

    A release that maps each record to one of ``M`` cells (the index of a codebook,
    :class:`skdc.mechanisms.CodebookRelease`) leaks each ``k = 1`` block ``z~_b`` of the
    calibrated rotation of ``entropy`` (dither ``s^2 = nu2``, unit-trace scale) only
    ``gamma_b = h(z~_b) - sum_c Pr(Q = c) h(z~_b | Q = c)`` (1-D plug-ins on the rows of each
    cell), capped at ``leakage_bits`` (data processing), and
    ``rho_blk^2 = (1 / N) sum_b (1 / (2 pi e)) 2^{2 (h(z~_b) - gamma_b)} - nu2`` (eq. 40 of [1]_).

    Parameters
    ----------
    entropy : fitted BlockEntropyLowerBound
        Supplies the calibration (centre, trace, rotation), fitted on rows disjoint from ``X``
        in the same representation.
    X : array-like of shape (n_est, n_features)
        Estimation rows (a sample of the population the release is applied to).
    cells : array-like of int of shape (n_est,)
        The release cell ``Q`` of each row of ``X``, before any channel (a channel only lowers
        the leakage).
    leakage_bits : float
        The release's charged leakage ``gamma``, the cap of every ``gamma_b``.
    n_cells : int or None, default=None
        ``M``, the number of cells; ``None`` takes ``max(cells) + 1``.
    nu2 : float, default=0.2
        Dither level ``nu^2 = s^2`` (``k = 1``).
    n_mc : int, default=2
        Monte Carlo replicates per centre of the plug-ins.
    min_cell_size : int, default=20
        Every cell must hold this many rows of ``X``.
    random_state : int, default=0
        Seeds the plug-ins' dither: ``h(z~_b)`` draws from the stream ``[random_state, 0]``,
        cell ``c``'s ``h(z~_b | Q = c)`` from ``[random_state, c + 1]``.

    Returns
    -------
    rho_blk : float
        In [0, 1]; lower-bounds every attack's ``rho`` on this release (normalised by
        ``entropy.trace_``), up to the estimation error of the plug-ins.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.privacy import BlockEntropyLowerBound, per_block_bound
    >>> rng = np.random.RandomState(0)
    >>> X_perp, X = rng.standard_normal((100, 4)), rng.standard_normal((400, 4))
    >>> ent = BlockEntropyLowerBound(block_sizes=[1], nu2=(0.2,), device="cpu",
    ...                              progress=False, random_state=0).fit(X, X_perp=X_perp)
    >>> cells = (X[:, 0] > 0).astype(int)  # a one-bit release: the sign of the first feature
    >>> 0 < per_block_bound(ent, X, cells, 1.0) < 1
    True
    """
    X = check_array(X, dtype=np.float64)
    if not hasattr(entropy, "pairs_") or not hasattr(entropy, "_rotate"):
        raise TypeError(
            "entropy must be a fitted BlockEntropyLowerBound (it supplies the rotation); "
            f"got {type(entropy).__name__}."
        )
    if entropy.n_components_ != X.shape[1]:
        raise ValueError(
            f"the entropy bound was fitted on {entropy.n_components_} features but the "
            f"codebook has {X.shape[1]}; fit both in the same representation."
        )
    Q, M = _check_cells(cells, X.shape[0], n_cells)
    counts = np.bincount(Q, minlength=M)
    if counts.min() < min_cell_size:
        raise ValueError(
            f"every codebook cell must hold >= {min_cell_size} estimation rows for the "
            f"per-block plug-ins; cell {int(counts.argmin())} holds {int(counts.min())} "
            f"of {X.shape[0]}. Use fewer cells (M = {M}) or give more rows."
        )
    freq = counts / X.shape[0]
    Y = entropy._rotate(X)
    n_blocks = Y.shape[1]
    centres = math.sqrt(n_blocks) * Y  # k = 1 blocks: sqrt(N_k) P_b U z, Sec 4.1 of [1]
    s = math.sqrt(float(nu2))
    seed = int(random_state)
    # the plug-in of plugin_entropy, batched over the blocks: h(z~_b), then h(z~_b | Q = c)
    h = _block_entropies_numpy(centres.T[:, :, None], s, n_mc, [seed, 0])
    h_cond = np.zeros(n_blocks)
    for c in range(M):
        cell = centres[Q == c].T[:, :, None]
        h_cond += freq[c] * _block_entropies_numpy(cell, s, n_mc, [seed, c + 1])
    gamma_b = np.clip(h - h_cond, 0.0, float(leakage_bits))  # 0 <= gamma_b <= gamma
    terms = 2.0 ** (2.0 * (h - gamma_b)) / _TWO_PI_E  # eq. 40 of [1], k = 1
    rho2 = float(terms.mean()) - float(nu2)
    return math.sqrt(min(max(rho2, 0.0), 1.0))
