"""Finite-sample lower confidence bound on the block entropy of a dithered representation.

The reconstruction bound needs, for each grid pair ``(k, nu^2)``, a lower bound ``h_LB`` on the
block-averaged differential entropy ``h_bar_U(k)`` of ``Pi_b Psi(x) + N(0, s^2 I_k)`` (Cor. 3.7
of [1]_) that holds for every pair at once with probability ``1 - alpha``. This module holds the
estimator, :class:`BlockEntropyLowerBound`, which follows Sec 4-5 of [1]_:

* a rotation ``U = m^{-1/2} H V^T`` (Hadamard times the eigenbasis of the covariance on a
  disjoint calibration sample ``D_perp``; or ``H D`` with random signs), so every block of ``k``
  rotated coordinates (scaled by ``sqrt(m / k)``) carries the whole trace;
* the plug-in estimator of Goldfeld et al. [2]_: the entropy of the empirical measure convolved
  with the dither, biased downwards at every ``n``, evaluated by Monte Carlo over all ``n``
  centres with log-sum-exp (eq. 11 and 31 of [1]_; :mod:`skdc.privacy._plugin_entropy`);
* two margins, in bits: Monte Carlo by Cantelli (``t_MC``, eq. 33) and sampling by McDiarmid
  (``t_MD``, Prop. 5.1), each Bonferroni-corrected over the grid, fixed before estimation
  (:mod:`skdc.privacy._entropy_margins`).

A long grid keeps each finished pair in a checkpoint, the draw checkpoint of
:mod:`skdc.utils._checkpoint` that the audit's draws use too, and a stopped fit resumes from it.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
.. [2] Goldfeld, Greenewald, Niles-Weed and Polyanskiy, "Convergence of Smoothed Empirical
   Measures with Applications to Entropy Estimation", IEEE Trans. Inf. Theory, 2020.
"""

# Licence: BSD 3 clause

import functools
import hashlib
import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_array

from ..utils._checkpoint import DrawCheckpoint
from ..utils._device import resolve_device
from ..utils._progress import progress_bar
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
)
from ._entropy_margins import _mc_constant, _required_rows, _sampling_margin, mc_margin, trace_ucb
from ._hadamard import _DEFAULT_FACTORS, apply_hadamard, hadamard_factors, hadamard_order
from ._plugin_entropy import _block_entropies_numpy, _block_entropies_torch

__all__ = ["BlockEntropyLowerBound"]


def _divisors_upto(m, cap):
    return [k for k in range(1, min(m, cap) + 1) if m % k == 0]


def _n_mc_paper(k):
    return 2 if k == 1 else max(k, 4)


# -- the checkpoint of grid pairs: a DrawCheckpoint, one record per pair ------------------------
_CHECKPOINT_MAX_BYTES = 2**24  # a grid of 32 block sizes x 100 dithers takes about 1 MB
_PAIR_FIELDS = {"k": "int", "nu2": "finite", "s": "finite", "n_mc": "int", "h_hat": "finite",
                "h_lb": "finite", "t_mc": "finite", "t_md": "finite", "c_mc_bar": "finite"}


def _pair_key(ki, vi):
    """A pair's key: its place in the grid, which also seeds its dither."""
    return f"{ki},{vi}"


def _open_checkpoint(path, Y, K, nu2, n_mc_of, alpha, seed, t_md):
    """The fit's checkpoint of grid pairs (``path=None``: kept in memory only).

    Its fingerprint is everything a pair's record depends on (a digest of the standardised
    rows, which fixes the data, the calibration and the rotation, then the grid, ``n_mc``,
    ``alpha`` and the seed), so the file of another run is refused naming what differs; every
    record read back is checked by :func:`_pair_problem`.
    """
    fingerprint = {
        "estimator": "BlockEntropyLowerBound",
        "rows": hashlib.sha256(np.ascontiguousarray(Y).view(np.uint8)).hexdigest(),
        "block_sizes": K, "nu2": nu2, "n_mc": [n_mc_of[k] for k in K], "alpha": float(alpha),
        "random_state": seed,
    }
    grid = {_pair_key(ki, vi): (k, v) for ki, k in enumerate(K) for vi, v in enumerate(nu2)}
    (n, m), n_pairs = Y.shape, len(grid)

    def t_mc(k, c_bar):  # as _estimate_pair computes it
        return mc_margin(c_bar, m // k, n, n_mc_of[k], n_pairs, alpha / 2)

    check = functools.partial(_pair_problem, grid=grid, n_mc_of=n_mc_of, t_md=t_md, t_mc=t_mc)
    return DrawCheckpoint(path, fingerprint, _PAIR_FIELDS, check=check,
                          max_bytes=_CHECKPOINT_MAX_BYTES)


def _pair_problem(key, record, *, grid, n_mc_of, t_md, t_mc):
    """What is wrong with one pair record read back (``None`` when nothing), its fields' kinds
    checked already: the pair its key places it at, and the identities the estimate keeps
    (the run's ``n_mc`` and ``t_md``, ``s = sqrt(nu2 / k)``, ``t_mc`` of ``c_mc_bar``,
    ``h_lb = h_hat - t_mc - t_md``)."""
    k, v = record["k"], record["nu2"]
    if grid.get(key) != (k, v):
        return f"the key {key!r} is not the grid place of the pair k = {k!r}, nu2 = {v!r}"
    if record["n_mc"] != n_mc_of[k] or record["t_md"] != t_md:
        return "n_mc or t_md differ from this run's"
    if record["s"] != math.sqrt(v / k):
        return f"s = {record['s']!r} is not sqrt(nu2 / k) for nu2 = {v!r}, k = {k}"
    if record["c_mc_bar"] < 0 or record["t_mc"] != t_mc(k, record["c_mc_bar"]):
        return "t_mc is not the Cantelli margin of c_mc_bar"
    if record["h_lb"] != record["h_hat"] - record["t_mc"] - record["t_md"]:
        return "h_lb is not h_hat - t_mc - t_md"
    return None


def _resolve_device(device):
    """``"cpu"`` (NumPy) or a checked torch device; torch is needed only off the CPU."""
    if device == "cpu":
        return "cpu"
    try:
        import torch  # noqa: F401
    except ImportError as exc:
        if device == "auto":
            return "cpu"
        raise ImportError(
            f"device={device!r} computes through torch, which is not installed: pip install "
            "'skdc[nn]', or use device='cpu'."
        ) from exc
    return resolve_device(device)


def _int_seed(random_state):
    """The integer seed of the dithers: an int as given, else drawn from the generator."""
    if isinstance(random_state, Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class BlockEntropyLowerBound(BaseEstimator):
    """Lower confidence bound on the block entropy of a dithered representation (Sec 5 of [1]_).

    Estimates, for every pair of a grid ``G = block_sizes x nu2`` fixed in advance, the smoothed
    plug-in entropy ``h_hat_MC`` of ``k``-blocks of the rotated, standardised representation and
    the lower bound ``h_LB = h_hat_MC - t_MC - t_MD``; with probability ``1 - alpha`` over the
    estimation sample and the Monte Carlo noise, ``h_LB`` lies below the true block entropy for
    every pair at once. Rotation, centre and scale come from a calibration sample ``X_perp``
    disjoint from ``X`` (never from ``X``), on which the entropies are estimated.

    Read more in the :ref:`User Guide <reconstruction_floor>`; the example
    :ref:`sphx_glr_auto_examples_plot_bound_vs_attacks.py` turns it into a reconstruction floor.

    Parameters
    ----------
    block_sizes : "divisors<=32" or list of int, default="divisors<=32"
        Block sizes ``k``; each must divide the (Hadamard-padded) dimension.
    nu2 : tuple of float, default=(0.2, 0.4, 0.8, 1.6, 3.2, 6.4)
        Dither levels ``nu^2 = k s^2 / tr Sigma``.
    alpha : float, default=0.05
        Failure probability, split evenly between the two margins.
    rotation : {"eig", "signs"}, default="eig"
        ``"eig"``: ``U = m^{-1/2} H V^T`` with ``V`` the eigenbasis of the calibration covariance
        (needs at least ``m`` calibration rows); ``"signs"``: ``U = m^{-1/2} H D``, data-free.
    n_mc : "paper" or int, default="paper"
        Monte Carlo replicates per centre: ``"paper"`` is 2 at ``k = 1``, ``max(k, 4)`` above.
    representation : fitted transformer or None, default=None
        ``Psi``, applied to ``X`` and ``X_perp`` by its ``transform``; ``None`` is the identity
        (pixel space). It must be fixed independently of the protected data.
    trace : float or None, default=None
        Declared ``tr Sigma`` (an upper bound), used when ``fit`` gets no ``X_perp``
        (``rotation="signs"`` only); ignored when ``X_perp`` is given.
    mean : array-like of shape (m,) or None, default=None
        Declared centre when ``fit`` gets no ``X_perp`` (zeros if ``None``); ignored when
        ``X_perp`` is given.
    device : {"auto", "cpu", "cuda"}, default="auto"
        ``"auto"`` uses a GPU through torch when one is visible (float64 throughout), else
        NumPy.
    diameter_sq : float or None, default=None
        Upper bound ``B`` on ``||Psi(x) - Psi(x')||^2`` enabling the trace upper confidence bound
        ``trace_ucb_`` (``255**2 * d`` for 8-bit pixels).
    random_state : int, RandomState instance or None, default=0
        Seed of the dithers (per pair and block) and of the sign rotation. An int seeds them
        directly; a ``RandomState`` instance or ``None`` draws the seed from it at ``fit`` (a
        run to be resumed from a checkpoint needs an int).
    progress : bool or "auto", default="auto"
        A tqdm progress bar over the grid pairs; ``"auto"`` shows it when standard error is
        a terminal.

    Attributes
    ----------
    pairs_ : list of dict
        One record per grid pair: ``k``, ``nu2``, ``s`` (dither std on the unit-trace scale),
        ``n_mc``, ``h_hat``, ``h_lb``, ``t_mc``, ``t_md``, ``c_mc_bar`` (bits; unit-trace scale).
    trace_ : float
        Point estimate of ``tr Sigma_Psi`` on the calibration sample (divisor ``n - 1``), or
        the declared ``trace``.
    trace_ucb_ : float or None
        Its upper confidence bound at level ``alpha`` (``None`` without ``diameter_sq``).
    mean_ : ndarray of shape (m,)
        Calibration mean.
    n_components_ : int
        Dimension ``m`` of the representation; ``padded_dim_`` its Hadamard order.
    device_ : str
        Device used.
    n_samples_ : int
        Estimation rows ``n``.
    n_features_in_ : int
        Number of columns of ``X`` (before the representation).

    Notes
    -----
    Cost per grid pair is about ``n^2 n_MC m`` multiply-adds and as many exponentials. To bound
    a perceptual error (LPIPS), pass ``representation`` = a transformer whose ``transform``
    returns the concatenated LPIPS features scaled by ``sqrt(w_lc / (H_l W_l))`` (App. G.3 of
    [1]_; ``||Psi(x) - Psi(x')||^2 = LPIPS(x, x')``), built from locally available weights whose
    training data are disjoint from the protected records.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.privacy import BlockEntropyLowerBound
    >>> rng = np.random.RandomState(0)
    >>> X, X_perp = rng.standard_normal((300, 4)), rng.standard_normal((100, 4))
    >>> ent = BlockEntropyLowerBound(block_sizes=[1, 2], nu2=(0.4, 1.6), device="cpu")
    >>> ent = ent.fit(X, X_perp=X_perp)
    >>> len(ent.pairs_), all(p["h_lb"] < p["h_hat"] for p in ent.pairs_)
    (4, True)
    """

    _parameter_constraints = {
        "block_sizes": [StrOptions({"divisors<=32"}), list, tuple],
        "nu2": [list, tuple],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "rotation": [StrOptions({"eig", "signs"})],
        "n_mc": [StrOptions({"paper"}), Interval(Integral, 1, None, closed="left")],
        "representation": [None, HasMethods(["transform"])],
        "trace": [None, Interval(Real, 0, None, closed="neither")],
        "mean": [None, "array-like"],
        "device": [StrOptions({"auto", "cpu", "cuda"})],
        "diameter_sq": [None, Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
        "progress": ["boolean", StrOptions({"auto"})],
    }

    def __init__(
        self,
        block_sizes="divisors<=32",
        nu2=(0.2, 0.4, 0.8, 1.6, 3.2, 6.4),
        alpha=0.05,
        rotation="eig",
        n_mc="paper",
        representation=None,
        trace=None,
        mean=None,
        device="auto",
        diameter_sq=None,
        random_state=0,
        progress="auto",
    ):
        self.block_sizes = block_sizes
        self.nu2 = nu2
        self.alpha = alpha
        self.rotation = rotation
        self.n_mc = n_mc
        self.representation = representation
        self.trace = trace
        self.mean = mean
        self.device = device
        self.diameter_sq = diameter_sq
        self.random_state = random_state
        self.progress = progress

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_perp=None, checkpoint=None):
        """Estimate the entropy lower bound of every grid pair on the rows ``X``.

        The steps of Sec 4-5 of [1]_: calibrate centre and scale on ``X_perp``, fix the
        rotation, fix the margins (before any estimate), then estimate each grid pair.

        Parameters
        ----------
        X : array-like of shape (n, d)
            Estimation rows ``D_est`` (i.i.d. from the population; may be the training set).
        y : Ignored
            Not used, present for API consistency by convention.
        X_perp : array-like of shape (n_perp, d), default=None
            Calibration rows ``D_perp``, disjoint from ``X``; fixes rotation, centre and scale.
            Without it the rotation must be ``"signs"`` and ``trace`` declared.
        checkpoint : str, path or None, default=None
            A file that receives each grid pair's record as soon as it is estimated (JSON
            lines, the format of the audit's checkpoints: the run's fingerprint, then one
            record a line). A later ``fit`` on the same data (same standardised rows, grid,
            ``n_mc``, ``alpha`` and integer seed) reads the finished pairs back and estimates
            only the rest, so a run of hours can be stopped and resumed; a file from other data
            or settings is refused, naming what differs, and so is a link, a damaged record
            and an entropy checkpoint of skdc 0.1 (delete it to start again). It is given to
            ``fit`` with the data it belongs to, not to the constructor, so clones of one
            estimator (a grid search) never share a file.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self.device_ = _resolve_device(self.device)  # a missing GPU fails before any work
        Z = self._represent(X, reset=True)
        n, m = Z.shape
        self.n_samples_, self.n_components_ = n, m
        self.padded_dim_ = hadamard_order(m, _DEFAULT_FACTORS)
        self._factors = hadamard_factors(self.padded_dim_)
        self._seed = _int_seed(self.random_state)
        Zp = None if X_perp is None else self._calibration_rows(X_perp, m)
        self._calibrate(Zp)
        self._fix_rotation(Zp)
        K, nu2 = self._grid()
        t_md = self._fixed_sampling_margin(n, len(K) * len(nu2))
        self.pairs_ = self._estimate_grid(self._rotate(Z), K, nu2, t_md, checkpoint)
        return self

    # -- calibration on D_perp ------------------------------------------------------------
    def _represent(self, X, reset=False):
        """``Psi(X)`` in float64; ``reset`` records the input width (the estimation rows)."""
        if reset:
            dtype = np.float64 if self.representation is None else None
            X = validate_data(
                self, X, dtype=dtype, allow_nd=self.representation is not None,
                ensure_min_samples=2,
            )
        if self.representation is None:
            return check_array(X, dtype=np.float64)
        return check_array(self.representation.transform(X), dtype=np.float64)

    def _calibration_rows(self, X_perp, m):
        """``Psi(X_perp)``, checked against the width and size the rotation needs."""
        Zp = self._represent(X_perp)
        if Zp.shape[1] != m:
            raise ValueError(
                f"X_perp has {Zp.shape[1]} columns after the representation; X has {m}."
            )
        if self.rotation == "eig" and Zp.shape[0] < m:
            raise ValueError(
                f"rotation='eig' needs at least m={m} calibration rows for a full-rank "
                f"covariance; got {Zp.shape[0]}. Give more X_perp rows or use "
                "rotation='signs'."
            )
        if Zp.shape[0] < 2:
            raise ValueError("X_perp needs at least 2 rows.")
        return Zp

    def _calibrate(self, Zp):
        """Centre ``mean_`` and scale ``trace_`` (with its upper bound) from ``D_perp``, or
        the declared ones when there is no calibration sample."""
        m = self.n_components_
        if Zp is not None:
            self.mean_ = Zp.mean(axis=0)
            self.trace_ = float(Zp.var(axis=0, ddof=1).sum())
            self.trace_ucb_ = (
                trace_ucb(Zp, self.diameter_sq, self.alpha, self._seed)
                if self.diameter_sq is not None
                else None
            )
        elif self.rotation == "eig" or self.trace is None:
            raise ValueError(
                "without X_perp the rotation must be data-free and the trace declared: use "
                "rotation='signs' and BlockEntropyLowerBound(trace=<upper bound on tr Sigma>)."
            )
        else:
            self.mean_ = (
                np.zeros(m) if self.mean is None else np.asarray(self.mean, dtype=np.float64)
            )
            self.trace_ = float(self.trace)
            self.trace_ucb_ = float(self.trace)
        if not self.trace_ > 0:
            raise ValueError("the calibration trace is zero: the representation is constant.")

    def _fix_rotation(self, Zp):
        """``U = m^{-1/2} H V^T`` (calibration eigenbasis, Sec 4 of [1]_) or ``m^{-1/2} H D``."""
        self._V = None
        if self.rotation == "eig":
            Zc = np.zeros((Zp.shape[0], self.padded_dim_))
            Zc[:, : self.n_components_] = Zp - self.mean_
            w, V = np.linalg.eigh(Zc.T @ Zc / (Zp.shape[0] - 1))
            self._V = V[:, ::-1]  # descending eigenvalues (the order does not affect validity)
        else:
            rng = np.random.RandomState(self._seed)
            self._signs = rng.choice([-1.0, 1.0], size=self.padded_dim_)

    def _rotate(self, Z):
        """Standardised rotated rows ``U (z - mu) / sqrt(tr)`` (rows as vectors), padded."""
        Zc = np.zeros((Z.shape[0], self.padded_dim_))
        Zc[:, : Z.shape[1]] = (Z - self.mean_) / math.sqrt(self.trace_)
        if self._V is not None:
            Zc = Zc @ self._V
        else:
            Zc = Zc * self._signs
        return apply_hadamard(Zc, self._factors) / math.sqrt(self.padded_dim_)

    # -- the grid and its margins, fixed before estimation ------------------------------
    def _grid(self):
        m = self.padded_dim_
        if isinstance(self.block_sizes, str):
            K = _divisors_upto(m, 32)
        else:
            K = [int(k) for k in self.block_sizes]
            bad = [k for k in K if k < 1 or m % k]
            if bad:
                raise ValueError(
                    f"block sizes must divide the dimension {m} (the representation's "
                    f"{self.n_components_} columns, Hadamard-padded); got {bad}. Use divisors of "
                    f"{m}, e.g. {_divisors_upto(m, 32)}."
                )
        nu2 = [float(v) for v in self.nu2]
        if not nu2 or any(v <= 0 for v in nu2):
            raise ValueError(f"nu2 must be a non-empty list of positive dither levels; got {nu2}.")
        return K, nu2

    def _fixed_sampling_margin(self, n, n_pairs):
        """``t_MD`` (Prop. 5.1 of [1]_), refused where it swallows half of the log2(n) cap."""
        t_md = _sampling_margin(n, n_pairs, self.alpha / 2)
        if t_md >= 0.5 * math.log2(n):
            raise ValueError(
                f"too few estimation rows for confidence 1 - alpha = {1 - self.alpha} over "
                f"{n_pairs} grid pairs: the sampling margin t_MD = {t_md:.3g} bits is not below "
                f"half of the log2(n) cap. At least {_required_rows(n, n_pairs, self.alpha / 2)} "
                "rows are needed."
            )
        return t_md

    # -- estimation, pair by pair -------------------------------------------------------
    def _estimate_grid(self, Y, K, nu2, t_md, checkpoint):
        """The record of every grid pair, read back from ``checkpoint`` or estimated."""
        n_mc_of = {k: _n_mc_paper(k) if self.n_mc == "paper" else int(self.n_mc) for k in K}
        done = _open_checkpoint(checkpoint, Y, K, nu2, n_mc_of, self.alpha, self._seed, t_md)
        n_pairs = len(K) * len(nu2)
        pairs = []
        grid = [(ki, k, vi, v) for ki, k in enumerate(K) for vi, v in enumerate(nu2)]
        for ki, k, vi, v in progress_bar(grid, self.progress, desc="entropy grid", unit="pair"):
            record = done.get(_pair_key(ki, vi))
            if record is None:
                record = self._estimate_pair(Y, k, v, n_mc_of[k], n_pairs, t_md, [ki, vi])
                done.put(_pair_key(ki, vi), record)
            pairs.append(record)
        return pairs

    def _estimate_pair(self, Y, k, v, n_mc, n_pairs, t_md, index):
        """``h_hat_MC`` (eq. 31 of [1]_), its Cantelli margin ``t_MC`` (eq. 33) and ``h_LB``."""
        n = Y.shape[0]
        n_blocks, s = self.padded_dim_ // k, math.sqrt(v / k)
        # block centres sqrt(N_k) P_b U z, shape (N_k, n, k)
        C = np.ascontiguousarray(Y.reshape(n, n_blocks, k).transpose(1, 0, 2))
        C *= math.sqrt(n_blocks)
        m_hat = np.einsum("bij,bij->b", C, C) / n
        h_blocks = self._block_entropies(C, s, n_mc, [self._seed, *index])
        h_hat = float(np.mean(h_blocks))
        c_bar = float(np.mean([_mc_constant(k, s, mb) for mb in m_hat]))
        t_mc = mc_margin(c_bar, n_blocks, n, n_mc, n_pairs, self.alpha / 2)
        return {"k": k, "nu2": v, "s": s, "n_mc": n_mc, "h_hat": h_hat,
                "h_lb": h_hat - t_mc - t_md, "t_mc": t_mc, "t_md": t_md, "c_mc_bar": c_bar}

    def _block_entropies(self, C, s, n_mc, seed):
        if self.device_ == "cpu":
            return _block_entropies_numpy(C, s, n_mc, seed)
        return _block_entropies_torch(C, s, n_mc, seed, self.device_)
