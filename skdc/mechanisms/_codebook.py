"""Codebook release: a mechanism that spends every leaked bit on reconstruction.

App. G.6 of [1]_ measures how tight the reconstruction bound is by comparing it with the
release that the distortion-rate function says is best per bit: a quantiser. The mechanism
releases the index ``Q`` of the codeword nearest to a record, among ``M = 2^R`` codewords built
in two steps: k-means on a shadow sample ``D_shadow`` gives ``M`` centroids; one balanced
assignment of ``D_est`` to them, with at most ``ceil(n_est / M)`` records per cell, gives the
cells whose means are the codewords. ``Q`` is a deterministic function of the record with ``M``
values, so it leaks ``H(Q) <= R`` bits and is charged ``gamma = R``.

Below one bit, the two-cell codebook's index goes through a binary symmetric channel that keeps
it with probability ``p`` in [1/2, 1]: the release leaks exactly
``gamma = H_b(f0 p + f1 (1 - p)) - H_b(p)`` (:func:`skdc.privacy.binary_symmetric_leakage`).
The attack is the conditional mean ``E[Psi(x) | release]``: the released cell's mean, or the
two cell means weighted by the posterior of the true cell.

Unlike the participant-side transformers of :mod:`skdc.mechanisms`, whose uploads feed an
aligner, this release measures the bound: ``release(X)`` gives the indices, ``attack(Q)`` the
reconstructions from them, ``release_and_attack(X)`` both, and ``score`` the attack's ``rho``
(the contract of :class:`skdc.attacks.PriorAwareLikelihoodAttack`, its DP-SGD counterpart).

The per-block bound ``rho_blk`` of Proposition G.1 of [1]_ charges each block only the leakage
it receives, ``gamma_b = I(z~_b; Q) = h(z~_b) - sum_c Pr(Q = c) h(z~_b | Q = c)``, estimated with
one-dimensional plug-ins (:func:`skdc.privacy.plugin_entropy`,
:func:`skdc.privacy.per_block_bound`); the chain ``rho* <= rho_blk <= rho_cb``
splits the slack of the bound (Table 8 of [1]_).

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026 (App. G.6, Prop. G.1, Table 8).
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.cluster import KMeans
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.validation import check_array, check_is_fitted

from ..privacy import binary_symmetric_leakage, per_block_bound
from ..utils._docstring import Substitution
from ..utils._random import SECRET_SEED, secret_stream
from ..utils._reconstruction import reconstruction_ratio
from ..utils._sklearn_compat import Interval, _fit_context, validate_data

__all__ = ["CodebookRelease"]

# The parameter of the methods that read a release (posterior, attack), up to Returns.
_released_doc = """Parameters
        ----------
        Q : array-like of int of shape (n_samples,)
            Released indices.

        Returns
        -------
"""

def _balanced_assignment(D, capacity):
    """Assign each row to a cell, at most ``capacity`` rows per cell, near rows first.

    Rounds of proposals: every unassigned row proposes to its nearest cell that still has
    room, and each cell keeps its nearest proposers up to its remaining room. Each round fills
    a cell or ends the assignment, so there are at most ``M`` rounds.
    """
    n, M = D.shape
    labels = np.full(n, -1)
    room = np.full(M, capacity)
    free = np.arange(n)
    while free.size:
        Df = np.where(room[None, :] > 0, D[free], np.inf)
        cell = Df.argmin(axis=1)
        dist = Df[np.arange(free.size), cell]
        order = np.lexsort((free, dist, cell))  # by cell, then distance, then row (ties pinned)
        cell_sorted = cell[order]
        start = np.searchsorted(cell_sorted, cell_sorted, side="left")
        rank = np.arange(order.size) - start
        take = order[rank < room[cell_sorted]]
        labels[free[take]] = cell[take]
        room -= np.bincount(cell[take], minlength=M)
        free = free[labels[free] < 0]
    return labels


def _entropy_bits(freq):
    f = freq[freq > 0]
    return float(-(f * np.log2(f)).sum())


def _cell_means(X, labels, M, empty):
    """Mean of the rows of each of the ``M`` cells (``empty``'s row where a cell has none) and
    the cell counts."""
    counts = np.bincount(labels, minlength=M)
    sums = np.zeros((M, X.shape[1]))
    np.add.at(sums, labels, X)
    return np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], empty), counts


class CodebookRelease(BaseEstimator):
    """Nearest-codeword release of ``R`` bits and its conditional-mean attack (App. G.6 of [1]_).

    Read more in the :ref:`User Guide <floor_tightness>`.

    ``fit`` builds the codebook: k-means with ``M = 2^n_bits`` centroids on ``X_shadow``, one
    balanced assignment of the estimation rows ``X`` (at most ``ceil(n_est / M)`` per cell),
    codewords = cell means. :meth:`release` returns each record's nearest-codeword index (sent
    through a binary symmetric channel when ``keep_prob < 1``), :meth:`attack` the conditional
    mean given the release, :meth:`score` the attack's ``rho`` and :meth:`per_block_bound` the
    bound ``rho_blk`` that charges each block only its own leakage (Prop. G.1 of [1]_).

    Parameters
    ----------
    n_bits : int, default=1
        ``R``: the codebook has ``M = 2^R`` codewords, >= 1.
    keep_prob : float, default=1.0
        ``p`` in [1/2, 1]: probability that the binary symmetric channel keeps the index
        (sub-bit rates; only with ``n_bits=1``). ``1`` is the deterministic codebook.
    n_init : int, default=3
        Restarts of k-means.
    random_state : int, RandomState instance or None, default=None
        Seeds k-means and the channel's flips.

    Attributes
    ----------
    centroids_ : ndarray of shape (M, n_features)
        k-means centroids on the shadow sample.
    labels_ : ndarray of shape (n_est,)
        The balanced assignment of the estimation rows.
    codewords_ : ndarray of shape (M, n_features)
        Means of the balanced cells (a centroid where a cell is empty); the release indexes
        the nearest one.
    release_frequencies_ : ndarray of shape (M,)
        ``Pr(Q = c)``: frequencies of the (channel-free) release over the estimation rows.
    cell_means_ : ndarray of shape (M, n_features)
        ``E[Psi(x) | Q = c]``: means of the estimation rows released as ``c`` (the codeword
        where none is), the attack's decoder.
    entropy_bits_ : float
        Realised ``H(Q)`` of the release over the estimation rows (<= ``n_bits``).
    leakage_bits_ : float
        Charged leakage ``gamma``: ``n_bits`` for the deterministic codebook, else
        ``H_b(f0 p + f1 (1 - p)) - H_b(p)``.
    trace_ : float
        ``tr Sigma_hat`` of the estimation rows (divisor ``n - 1``), the default normaliser of
        :meth:`score`.
    noise_seed_ : int
        Seed of the channel's flips.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    See Also
    --------
    skdc.attacks.PriorAwareLikelihoodAttack : the attack on a DP-SGD release at the same
        leakage.
    skdc.privacy.ReconstructionBound : the floor ``rho*`` every attack stays above.
    skdc.privacy.per_block_bound : the bound ``rho_blk`` that charges each block its own
        leakage.
    skdc.privacy.binary_symmetric_leakage : the sub-bit leakage.

    Notes
    -----
    ``Q`` is a deterministic function of the record, so ``I(x; Q | X_{-i}) = H(Q) <= R``;
    charging ``R`` overstates the leakage slightly and only lowers ``rho*``. The codebook is
    fixed independently of held-out targets; every bound holds for any codebook. The balanced
    assignment proceeds in rounds in which each unassigned row proposes to its nearest cell
    with room left and each cell keeps its nearest proposers.

    References
    ----------
    .. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An
       Information-Theoretic Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import CodebookRelease
    >>> rng = np.random.RandomState(0)
    >>> X_shadow, X_est = rng.standard_normal((200, 3)), rng.standard_normal((160, 3))
    >>> cb = CodebookRelease(n_bits=2, random_state=0).fit(X_est, X_shadow=X_shadow)
    >>> cb.leakage_bits_, np.bincount(cb.labels_).tolist()
    (2, [40, 40, 40, 40])
    >>> cb.release(X_est[:4]).shape, cb.release_and_attack(X_est[:4]).shape
    ((4,), (4, 3))
    >>> round(CodebookRelease(keep_prob=0.9, random_state=0).fit(X_est).leakage_bits_, 2)
    0.53
    """

    _parameter_constraints = {
        "n_bits": [Interval(Integral, 1, None, closed="left")],
        "keep_prob": [Interval(Real, 0.5, 1, closed="both")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": SECRET_SEED,
    }

    def __init__(self, n_bits=1, *, keep_prob=1.0, n_init=3, random_state=None):
        self.n_bits = n_bits
        self.keep_prob = keep_prob
        self.n_init = n_init
        self.random_state = random_state

    def _nearest(self, X):
        return euclidean_distances(X, self.codewords_, squared=True).argmin(axis=1)

    def _check_targets(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, *, X_shadow=None):
        """Build the codebook: k-means on ``X_shadow``, balanced cells of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_est, n_features)
            Estimation rows ``D_est`` (cells, codewords, frequencies and decoder).
        y : Ignored
            Not used, present for API consistency by convention.
        X_shadow : array-like of shape (n_shadow, n_features), default=None
            Shadow rows for k-means; ``None`` runs k-means on ``X``. Held-out targets must be
            in neither.

        Returns
        -------
        self : object
            The fitted codebook.
        """
        X = validate_data(self, X, dtype=np.float64)
        n, M = X.shape[0], 2 ** int(self.n_bits)
        self._check_sizes(n, M)
        S = X if X_shadow is None else self._shadow_rows(X_shadow, X.shape[1], M)
        rng, next_seed = secret_stream(self.random_state)
        self._fit_codewords(X, S, M, rng)
        self._fit_decoder(X, M)
        self.entropy_bits_ = _entropy_bits(self.release_frequencies_)
        if self.keep_prob < 1:
            self.leakage_bits_ = binary_symmetric_leakage(
                float(self.release_frequencies_[0]), float(self.keep_prob)
            )
        else:
            self.leakage_bits_ = int(self.n_bits)
        self.trace_ = float(X.var(axis=0, ddof=1).sum()) if n > 1 else 0.0
        self.noise_seed_ = next_seed()
        return self

    def _check_sizes(self, n, M):
        if self.keep_prob < 1 and self.n_bits != 1:
            raise ValueError(
                f"keep_prob < 1 passes the index of the two-cell codebook through a binary "
                f"symmetric channel, so it needs n_bits=1; got n_bits={self.n_bits}, "
                f"keep_prob={self.keep_prob}. Use keep_prob=1.0 for rates of 1 bit or more."
            )
        if n < M:
            raise ValueError(
                f"a codebook of M = 2^{self.n_bits} = {M} cells needs at least {M} estimation "
                f"rows; got n_samples = {n}. Lower n_bits or give more rows."
            )

    @staticmethod
    def _shadow_rows(X_shadow, d, M):
        S = check_array(X_shadow, dtype=np.float64, input_name="X_shadow")
        if S.shape[1] != d:
            raise ValueError(
                f"X_shadow has {S.shape[1]} features but X has {d}; both must be rows of "
                "the same representation."
            )
        if S.shape[0] < M:
            raise ValueError(
                f"k-means with M = {M} centroids needs at least {M} shadow rows; got "
                f"{S.shape[0]}. Lower n_bits or give more shadow rows."
            )
        return S

    def _fit_codewords(self, X, S, M, rng):
        """k-means centroids on the shadow rows, then one balanced step on ``D_est``: at most
        ``ceil(n_est / M)`` rows per cell (App. G.6 of [1]_), each codeword its cell's mean."""
        km = KMeans(n_clusters=M, n_init=int(self.n_init), random_state=rng).fit(S)
        self.centroids_ = km.cluster_centers_.astype(np.float64)
        D = euclidean_distances(X, self.centroids_, squared=True)
        self.labels_ = _balanced_assignment(D, -(-X.shape[0] // M))
        self.codewords_ = _cell_means(X, self.labels_, M, self.centroids_)[0]

    def _fit_decoder(self, X, M):
        """The release on ``D_est``: ``Pr(Q = c)`` and the conditional means ``E[x | Q = c]``."""
        self.cell_means_, counts = _cell_means(X, self._nearest(X), M, self.codewords_)
        self.release_frequencies_ = counts / X.shape[0]

    def release(self, X):
        """Release each record's codebook index.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Records (held-out targets).

        Returns
        -------
        Q : ndarray of int of shape (n_samples,)
            Index of the nearest codeword; with ``keep_prob < 1``, flipped to the other cell
            with probability ``1 - keep_prob`` (seeded by ``noise_seed_``, so a repeated call
            repeats the release).
        """
        X = self._check_targets(X)
        Q = self._nearest(X)
        if self.keep_prob < 1:
            flip = np.random.default_rng(self.noise_seed_).random(Q.shape[0]) >= self.keep_prob
            Q = np.where(flip, 1 - Q, Q)
        return Q

    @Substitution(released=_released_doc)
    def posterior(self, Q):
        """``Pr(true cell = c | release)`` of every cell, per released index.

        {released}
        proba : ndarray of shape (n_samples, M)
            One-hot for the deterministic codebook; under the channel
            ``f_c p^[c = Q] (1 - p)^[c != Q]``, normalised.
        """
        check_is_fitted(self)
        Q = np.asarray(Q)
        M = self.codewords_.shape[0]
        if Q.ndim != 1 or not np.issubdtype(Q.dtype, np.integer) or np.any((Q < 0) | (Q >= M)):
            raise ValueError(
                f"released indices must be a 1-D integer array with values in [0, {M}); got "
                f"{Q.dtype} array of shape {Q.shape}. Pass the output of release()."
            )
        p = float(self.keep_prob)
        like = np.where(np.arange(M)[None, :] == Q[:, None], p, 1.0 - p)
        post = like * self.release_frequencies_[None, :]
        total = post.sum(axis=1, keepdims=True)
        # a cell no estimation row fell into: fall back to the channel's likelihood alone
        prior_free = like / like.sum(axis=1, keepdims=True)
        return np.where(total > 0, post / np.where(total > 0, total, 1.0), prior_free)

    @Substitution(released=_released_doc)
    def attack(self, Q):
        """The conditional-mean reconstruction ``E[Psi(x) | release]``.

        {released}
        X_hat : ndarray of shape (n_samples, n_features)
            The released cell's mean, or the posterior-weighted mean of the two cells under
            the binary symmetric channel.
        """
        return self.posterior(Q) @ self.cell_means_

    def release_and_attack(self, X):
        """Release the records and attack the release: ``attack(release(X))``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out targets.

        Returns
        -------
        X_hat : ndarray of shape (n_samples, n_features)
            Reconstructions.
        """
        return self.attack(self.release(X))

    def score(self, X, y=None, trace=None):
        """The attack's ``rho_cb = sqrt(mean ||x - x_hat||^2 / tr Sigma)`` (lower: stronger).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Held-out targets (disjoint from the shadow and estimation rows).
        y : Ignored
            Not used, present for API consistency by convention.
        trace : float or None, default=None
            Normaliser ``tr Sigma``; ``None`` uses ``trace_``. Pass the bound's calibration
            trace to compare with ``rho*``.

        Returns
        -------
        rho : float
            The attack's reconstruction ratio.
        """
        X = self._check_targets(X)
        trace = self.trace_ if trace is None else float(trace)
        return reconstruction_ratio(X, self.release_and_attack(X), trace)

    def per_block_bound(self, X, entropy, *, nu2=0.2, n_mc=2, min_cell_size=20):
        """The per-block bound ``rho_blk`` of Prop. G.1 of [1]_ on this release (a point estimate).

        :func:`skdc.privacy.per_block_bound` on the codebook's cells: the index of each row's
        nearest codeword (before the channel, which only lowers the leakage), ``M = 2^n_bits``
        cells, the charged ``leakage_bits_`` as the cap (under the channel
        ``I(z~_b; Y) <= min(I(z~_b; Q), I(Q; Y))``) and the plug-ins seeded by ``noise_seed_``.

        Parameters
        ----------
        X : array-like of shape (n_est, n_features)
            Estimation rows (those of ``fit``, or another sample of the population).
        entropy : fitted BlockEntropyLowerBound
            Supplies the calibration (centre, trace, rotation), fitted on rows disjoint from
            ``X`` in the same representation.
        nu2 : float, default=0.2
            Dither level ``nu^2 = s^2`` (``k = 1``).
        n_mc : int, default=2
            Monte Carlo replicates per centre of the plug-ins.
        min_cell_size : int, default=20
            Every release cell must hold this many rows of ``X``.

        Returns
        -------
        rho_blk : float
            In [0, 1]; lower-bounds every attack's ``rho`` on this release (normalised by
            ``entropy.trace_``), up to the estimation error of the plug-ins.
        """
        X = self._check_targets(X)
        return per_block_bound(
            entropy, X, self._nearest(X), self.leakage_bits_, n_cells=self.codewords_.shape[0],
            nu2=nu2, n_mc=n_mc, min_cell_size=min_cell_size, random_state=self.noise_seed_,
        )
