"""Prior-aware likelihood attack on a DP-SGD release of a single linear layer.

The attack of App. G.5 of [1]_, after Hayes et al. (2023) [2]_, on the model of Schwethelm et
al. (2024): a single linear layer with scalar output, ``l(W; u) = W u``, whose per-example
gradient is the input ``u`` itself (``u = x - x_bar``, the centring mean fixed on a shadow
sample). An informed adversary subtracts the other records' clipped gradients and sees, at each
of ``T`` steps, ``Y_t = 1_t a(u) u + sigma C xi_t`` with ``a(u) = min(1, C / ||u||)``,
``xi_t ~ N(0, I)`` and an **unobserved** participation bit ``1_t ~ Bernoulli(q)`` (always 1
when ``q = 1``). With a candidate prior ``z_1..z_n`` (the shadow sample, which excludes the
targets) and ``c_j = a(z_j) z_j``, the likelihood ratio of the trajectory against an absent
record is, with participation integrated out exactly,

    p(Y_{1:T} | z_j) / p(Y_{1:T} | absent) = prod_t [ (1 - q) + q exp(L_tj) ],
    L_tj = (2 <Y_t, c_j> - ||c_j||^2) / (2 sigma^2 C^2),

and the attack returns the posterior mean ``u_hat = sum_j w_j z_j``, ``w_j`` proportional to
that product: optimal for squared error under the candidate prior (Hayes et al. take the
argmax). Everything runs in the log domain (``logaddexp``, ``logsumexp``), chunked over
candidates and targets, so memory stays bounded and tiny noise does not overflow.

Against its leakage ``gamma`` (Theorem 4.1 of [1]_,
:class:`skdc.privacy.DPSGDLeakageAccountant`), the attack's
``rho = sqrt(mean ||z - z_hat||^2 / tr Sigma_hat)`` sits above the provable floor of
:class:`skdc.privacy.ReconstructionBound` on average over targets (Table 6 of [1]_).

Unlike the collusion attacks of :mod:`skdc.attacks`, whose ``reconstruct(view)`` reads what the
analyst and a colluding participant of a data-collaboration pipeline know (a
:class:`CollusionView`), this attack reads a DP-SGD release, so it has no ``reconstruct``:
``attack(Y)`` reconstructs the targets from their release ``Y`` (what this adversary sees), and
``release_and_attack(X)`` simulates the release of the targets ``X`` and attacks it.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026 (App. G.5, Table 6).
.. [2] Hayes, Mahloujifar and Balle, "Bounding Training Data Reconstruction in DP-SGD",
   NeurIPS 2023, App. G.
"""

# Licence: BSD 3 clause

import hashlib
import math
import warnings
from numbers import Integral, Real

import numpy as np
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..privacy import DPSGDLeakageAccountant
from ..utils._docstring import Substitution
from ..utils._reconstruction import reconstruction_ratio
from ..utils._sklearn_compat import Interval, _fit_context, validate_data

__all__ = ["PriorAwareLikelihoodAttack"]

# The parameter of the methods that read releases (log_posterior, attack), up to Returns.
_releases_doc = """Parameters
        ----------
        Y : array-like of shape (n_targets, steps, n_features) or (steps, n_features)
            Releases, as from :meth:`release`.

        Returns
        -------
"""

# elements of the largest float64 temporary (32 MiB): bounds the memory of the attack
_BUDGET = 2**22


def _row_key(row):
    return hashlib.blake2b(np.ascontiguousarray(row).tobytes(), digest_size=16).digest()


class PriorAwareLikelihoodAttack(BaseEstimator):
    """Posterior-mean reconstruction from a DP-SGD release of a linear layer (App. G.5 of [1]_).

    Read more in the :ref:`User Guide <floor_tightness>`.

    Fitted on a candidate prior ``D_shadow`` (which must exclude the targets; it also fixes the
    centring mean ``x_bar``), the estimator simulates the per-step release of a target's clipped
    gradient, ``Y_t = 1_t a(u) u + sigma C xi_t`` (:meth:`release`), and runs the prior-aware
    likelihood attack of Hayes et al. [2]_ on it (:meth:`attack`): the posterior mean of the
    candidates, participation integrated out exactly. :meth:`release_and_attack` does both and
    :meth:`score` returns the attack's ``rho``.

    Parameters
    ----------
    noise_multiplier : float, default=1.0
        ``sigma``: noise standard deviation over the clipping norm, > 0.
    max_grad_norm : float, default=0.3
        Clipping norm ``C`` of the per-example gradient, > 0 (0.3 in App. G.5 of [1]_, small
        enough that every gradient is clipped).
    sample_rate : float, default=1.0
        Poisson sampling rate ``q`` in (0, 1]; below 1 the participation bits are hidden.
    steps : int, default=1
        Number of released steps ``T``, >= 1.
    chunk_size : int, default=1024
        Candidates scored at once (memory: about ``steps * chunk_size`` floats per target).
    random_state : int, RandomState instance or None, default=None
        Seeds the simulated release (participation and noise), drawn once at ``fit``.

    Attributes
    ----------
    mean_ : ndarray of shape (n_features,)
        Centring mean ``x_bar`` of the shadow sample.
    candidates_ : ndarray of shape (n_candidates, n_features)
        The centred candidates ``z_j = x_j - x_bar``.
    trace_ : float
        ``tr Sigma_hat`` of the shadow sample (divisor ``n - 1``), the default normaliser of
        :meth:`score`.
    leakage_bits_ : float
        Per-record leakage ``gamma`` of the simulated run (Theorem 4.1 of [1]_).
    noise_seed_ : int
        Seed of the simulated release.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    See Also
    --------
    skdc.privacy.DPSGDLeakageAccountant : leakage in bits of the run.
    skdc.privacy.ReconstructionBound : the floor no attack beats.
    skdc.mechanisms.CodebookRelease : a release that spends its bits on reconstruction.

    Notes
    -----
    The input is a DP-SGD release, not a :class:`CollusionView`: the attack has no
    ``reconstruct(view)`` (the contract of the collusion attacks), but ``attack(Y)`` on a
    release and ``release_and_attack(X)`` on target records.

    Cost: ``n_targets * steps * n_candidates * n_features`` multiply-adds; memory is bounded by
    ``chunk_size`` and a fixed budget of 32 MiB per temporary. The attack's ``rho`` is an
    average over targets; individual targets may fall below the (population) bound (Fig. 6 of
    [1]_).

    References
    ----------
    .. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An
       Information-Theoretic Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
    .. [2] Hayes, Mahloujifar and Balle, "Bounding Training Data Reconstruction in DP-SGD",
       NeurIPS 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.attacks import PriorAwareLikelihoodAttack
    >>> rng = np.random.RandomState(0)
    >>> X_shadow, X_target = rng.standard_normal((200, 5)), rng.standard_normal((10, 5))
    >>> attack = PriorAwareLikelihoodAttack(noise_multiplier=0.5, random_state=0)
    >>> attack.fit(X_shadow).release_and_attack(X_target).shape
    (10, 5)
    >>> round(attack.leakage_bits_, 4)
    2.8854
    >>> 0 < attack.score(X_target) < 1.5
    True
    """

    _parameter_constraints = {
        "noise_multiplier": [Interval(Real, 0, None, closed="neither")],
        "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
        "sample_rate": [Interval(Real, 0, 1, closed="right")],
        "steps": [Interval(Integral, 1, None, closed="left")],
        "chunk_size": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(self, noise_multiplier=1.0, *, max_grad_norm=0.3, sample_rate=1.0, steps=1,
                 chunk_size=1024, random_state=None):
        self.noise_multiplier = noise_multiplier
        self.max_grad_norm = max_grad_norm
        self.sample_rate = sample_rate
        self.steps = steps
        self.chunk_size = chunk_size
        self.random_state = random_state

    # -- helpers ----------------------------------------------------------------------------
    def _clip(self, U):
        """``a(u) u`` with ``a(u) = min(1, C / ||u||)`` (per-example clipping, Sec 2.1 of [1])."""
        norms = np.linalg.norm(U, axis=-1, keepdims=True)
        C = float(self.max_grad_norm)
        with np.errstate(divide="ignore"):
            a = np.where(norms > C, C / np.where(norms > 0, norms, 1.0), 1.0)
        return a * U

    def _check_release(self, Y):
        check_is_fitted(self)
        Y = np.asarray(Y, dtype=np.float64)
        if Y.ndim == 2:
            Y = Y[None]
        d = self.n_features_in_
        if Y.ndim != 3 or Y.shape[1] != self.steps or Y.shape[2] != d:
            raise ValueError(
                f"the release must have shape (n_targets, steps, n_features) = (n, {self.steps}, "
                f"{d}) (or ({self.steps}, {d}) for one target); got {np.shape(Y)}. Pass the "
                "output of release() of an attack fitted with the same steps and features."
            )
        if not np.all(np.isfinite(Y)):
            raise ValueError("the release holds NaN or infinite values.")
        return Y

    def _check_targets(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=np.float64, reset=False)

    def _iter_log_posterior(self, Y):
        """Yield ``(rows, log w)`` per group of targets, ``log w`` normalised over candidates."""
        n_t, T, d = Y.shape
        Cj = self._clipped
        c_sq = self._clipped_sq
        n = Cj.shape[0]
        q = float(self.sample_rate)
        scale = 1.0 / (2.0 * float(self.noise_multiplier) ** 2 * float(self.max_grad_norm) ** 2)
        chunk = min(int(self.chunk_size), n)
        group = max(1, min(_BUDGET // (T * chunk), _BUDGET // n))
        lq, l1q = math.log(q), (math.log1p(-q) if q < 1 else -math.inf)
        for a in range(0, n_t, group):
            Yg = Y[a : a + group]
            g = Yg.shape[0]
            flat = Yg.reshape(g * T, d)
            logw = np.empty((g, n))
            for b in range(0, n, chunk):
                # L_tj = (2 <Y_t, c_j> - ||c_j||^2) / (2 sigma^2 C^2), App. G.5 of [1]
                L = flat @ Cj[b : b + chunk].T
                L *= 2.0
                L -= c_sq[b : b + chunk]
                L *= scale
                if q < 1.0:
                    # log((1 - q) + q exp(L)): participation integrated out, overflow-safe
                    L = np.logaddexp(l1q, lq + L)
                logw[:, b : b + chunk] = L.reshape(g, T, -1).sum(axis=1)
            logw -= logsumexp(logw, axis=1, keepdims=True)
            yield slice(a, a + g), logw

    # -- API ----------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Take the candidate prior ``D_shadow`` and fix the centring mean on it.

        Parameters
        ----------
        X : array-like of shape (n_candidates, n_features)
            The shadow sample ``D_shadow``, disjoint from the targets.
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            The fitted attack.
        """
        X = validate_data(self, X, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(
                f"the candidate prior needs at least 2 rows; got 1 sample (n_samples = "
                f"{X.shape[0]}). Pass the shadow sample D_shadow."
            )
        rng = check_random_state(self.random_state)
        self.mean_ = X.mean(axis=0)
        self.candidates_ = X - self.mean_
        self.trace_ = float(X.var(axis=0, ddof=1).sum())
        self._clipped = self._clip(self.candidates_)
        self._clipped_sq = np.einsum("ij,ij->i", self._clipped, self._clipped)
        self._keys = {_row_key(row) for row in X}
        self.leakage_bits_ = DPSGDLeakageAccountant().leakage_bits(
            float(self.sample_rate), float(self.noise_multiplier), int(self.steps)
        )
        self.noise_seed_ = int(rng.randint(2**31 - 1))
        return self

    def release(self, X, *, return_participation=False):
        """Simulate the per-step release of each target's clipped gradient.

        ``Y_t = 1_t a(u) u + sigma C xi_t`` with ``u = x - x_bar``, ``1_t ~ Bernoulli(q)``
        (1 when ``q = 1``) and ``xi_t ~ N(0, I)`` (App. G.5 of [1]_): what an informed adversary
        sees once it has subtracted the other records' clipped gradients. The draw is seeded
        by ``noise_seed_``, so repeating a call repeats the release.

        Parameters
        ----------
        X : array-like of shape (n_targets, n_features)
            Target records (in the input space of ``fit``).
        return_participation : bool, default=False
            Also return the hidden participation bits.

        Returns
        -------
        Y : ndarray of shape (n_targets, steps, n_features)
            The released noisy gradients.
        participation : ndarray of bool of shape (n_targets, steps)
            Only with ``return_participation=True``.
        """
        X = self._check_targets(X)
        rng = np.random.default_rng(self.noise_seed_)
        n_t, d = X.shape
        T = int(self.steps)
        G = self._clip(X - self.mean_)
        if self.sample_rate < 1:
            part = rng.random((n_t, T)) < self.sample_rate
        else:
            part = np.ones((n_t, T), dtype=bool)
        noise = rng.standard_normal((n_t, T, d))
        Y = part[..., None] * G[:, None, :] + (
            float(self.noise_multiplier) * float(self.max_grad_norm)
        ) * noise
        return (Y, part) if return_participation else Y

    @Substitution(releases=_releases_doc)
    def log_posterior(self, Y):
        """Normalised log posterior weights ``log w_j`` of every candidate, per target.

        {releases}
        log_w : ndarray of shape (n_targets, n_candidates)
            ``log w_j = sum_t log((1 - q) + q exp(L_tj)) - logsumexp``; each row's
            ``exp`` sums to 1.
        """
        Y = self._check_release(Y)
        out = np.empty((Y.shape[0], self.candidates_.shape[0]))
        for rows, logw in self._iter_log_posterior(Y):
            out[rows] = logw
        return out

    @Substitution(releases=_releases_doc)
    def attack(self, Y):
        """Posterior-mean reconstructions ``x_bar + sum_j w_j z_j`` from releases.

        {releases}
        X_hat : ndarray of shape (n_targets, n_features)
            Reconstructions in the input space of ``fit``.
        """
        Y = self._check_release(Y)
        U_hat = np.empty((Y.shape[0], self.n_features_in_))
        for rows, logw in self._iter_log_posterior(Y):
            U_hat[rows] = np.exp(logw) @ self.candidates_
        return U_hat + self.mean_

    def release_and_attack(self, X):
        """Release the targets' gradients and attack them: ``attack(release(X))``.

        A target that is also a candidate triggers a ``UserWarning``: the attack then saw it,
        and its error may fall below the provable floor.

        Parameters
        ----------
        X : array-like of shape (n_targets, n_features)
            Target records, disjoint from the shadow sample.

        Returns
        -------
        X_hat : ndarray of shape (n_targets, n_features)
            Reconstructions.
        """
        X = self._check_targets(X)
        seen = sum(_row_key(row) in self._keys for row in X)
        if seen:
            warnings.warn(
                f"{seen} of {X.shape[0]} targets are also candidates of the shadow sample: the "
                "attack saw them, so its error is not comparable with the reconstruction bound. "
                "Hold the targets out of D_shadow.",
                UserWarning,
            )
        return self.attack(self.release(X))

    def score(self, X, y=None, trace=None):
        """The attack's ``rho = sqrt(mean ||x - x_hat||^2 / tr Sigma)`` (lower: stronger).

        Parameters
        ----------
        X : array-like of shape (n_targets, n_features)
            Target records, disjoint from the shadow sample.
        y : Ignored
            Not used, present for API consistency by convention.
        trace : float or None, default=None
            Normaliser ``tr Sigma``; ``None`` uses ``trace_``. Pass the bound's calibration
            trace (``BlockEntropyLowerBound.trace_``) to compare with ``rho*``.

        Returns
        -------
        rho : float
            1 is the prior mean's error; the bound says the mean over targets stays above
            ``rho*(leakage_bits_)``.
        """
        X = self._check_targets(X)
        trace = self.trace_ if trace is None else float(trace)
        return reconstruction_ratio(X, self.release_and_attack(X), trace)
