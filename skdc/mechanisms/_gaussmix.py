"""Gaussian mixing mechanism (GaussMix): each participant uploads ``S X + sigma xi``.

``S`` is a secret ``k x n`` standard Gaussian sketch drawn fresh for each release and never
stored; the ``k`` rows of the upload are i.i.d. ``N(0, X^T X + sigma^2 I)``, so the release is a
noisy sketch of the Gram matrix and is ``(alpha, phi(alpha; k, zeta))``-RDP (Lemma 1 of [1]_).
Stacked uploads of ``p`` participants have the law of one sketch of all rows, with the noises
adding up: ``(1/k) sum_i M_i^T M_i ~ X^T X + p sigma^2 I``.

:func:`gaussmix_release` implements the adaptive Algorithm 1 of [1]_ with two corrections. The
printed algorithm subtracts the unnormalised ``lambda_min(X^T X)`` from the dimensionless
``gamma`` (under-private when ``C > 1``); here the eigenvalue is released in normalised units,
``lambda_min(X^T X) / C^2`` with sensitivity 1, so that ``eta_tilde^2 + lambda_min / C^2 >=
gamma`` on the good event ``{z <= tau}``. The printed non-adaptive branch adds ``gamma C`` noise
(effective scale ``gamma^2``); here it adds ``sqrt(gamma) C``.

This module is the paper's home; the rest of [1]_ lives in ``privacy/_gaussmix_rdp.py`` (the
RDP curve of Lemma 1, its conversion, :func:`~skdc.privacy.calibrate_gaussmix` and the
``k = ceil(2.5 d)`` rule :func:`~skdc.privacy.auto_sketch_rows`), ``privacy/_release_leakage.py``
(:class:`~skdc.privacy.GaussMixLeakage`), ``linear_model/_mixing.py`` and ``_baselines.py``
(the private regressions and their baselines) and ``experiments/_reproduce_gaussmix.py``. The
developer guide maps each paper to its modules.

References
----------
.. [1] Lev et al., "The Gaussian Mixing Mechanism: Renyi Differential Privacy via Gaussian
   Sketches", arXiv:2505.24603, 2025.
"""

# Licence: BSD 3 clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._uploads import Uploads
from ..privacy import (
    RDPCurve,
    adaptive_threshold,
    auto_sketch_rows,
    calibrate_gaussmix,
    gaussmix_epsilon,
)
from ..utils._docstring import Substitution
from ..utils._random import SECRET_SEED, secret_stream, seeded_rng
from ..utils._sklearn_compat import (
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
    validate_params,
)
from ._base import _assign_participants, _row_digests

__all__ = [
    "GaussMix", "adaptive_noise_scale", "calibrate_gaussmix", "check_row_bound", "gaussmix_release"
]


_GAUSSMIX_REFERENCE_DOC = """\
    .. [1] Lev et al., "The Gaussian Mixing Mechanism: Renyi Differential Privacy via Gaussian
       Sketches", arXiv:2505.24603, 2025.
"""


@validate_params(
    {
        "Z": ["array-like"],
        "bound": [Interval(Real, 0, None, closed="left")],
        "clip": ["boolean"],
        "what": [str],
    },
    prefer_skip_nested_validation=True,
)
def check_row_bound(Z, bound, *, clip, what="row"):
    """Refuse rows whose L2 norm exceeds the public ``bound``, or clip them when ``clip``.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Clipping is per record (no dataset-wide statistic), so it keeps the privacy analysis.

    Parameters
    ----------
    Z : array-like of shape (n_samples, n_features) or (n_samples,)
        Records: rows (their L2 norm is bounded) or scalars such as targets (their absolute
        value is).
    bound : float
        The public bound, >= 0.
    clip : bool
        Scale each record over the bound down to the bound instead of refusing the batch.
    what : str, default="row"
        What a record is called in the error message.

    Returns
    -------
    Z : ndarray of float64
        The records, clipped where ``clip`` and needed.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import check_row_bound
    >>> check_row_bound(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0, clip=True)
    array([[0.6, 0.8],
           [0.3, 0.4]])
    """
    Z = np.asarray(Z, dtype=np.float64)
    norms = np.linalg.norm(Z, axis=1) if Z.ndim == 2 else np.abs(Z)
    over = norms > bound * (1 + 1e-12)
    if np.any(over):
        if not clip:
            raise ValueError(
                f"{int(over.sum())} {what}(s) exceed the declared bound {bound:g} (largest "
                f"norm {float(norms.max()):.6g}). The privacy guarantee needs a public bound: "
                "raise it, rescale the data with public constants, or pass clip=True to clip "
                "each record to the bound."
            )
        scale = np.where(over, bound / np.maximum(norms, 1e-300), 1.0)
        Z = Z * (scale[:, None] if Z.ndim == 2 else scale)
    return Z


def _adaptive_noise_scale(lam_bar, z, gamma, eta, tau):
    lam_tilde = np.maximum(lam_bar + eta * (np.asarray(z, dtype=float) - tau), 0.0)
    return np.maximum(gamma - lam_tilde, 0.0), lam_tilde


@validate_params(
    {
        "lam_bar": [Real, "array-like"],
        "z": [Real, "array-like"],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "eta": [Interval(Real, 0, None, closed="left")],
        "tau": [Real],
    },
    prefer_skip_nested_validation=True,
)
def adaptive_noise_scale(lam_bar, z, *, gamma, eta, tau):
    """Noise variance, in units of ``C^2``, of the corrected adaptive Algorithm 1 of Lev et al.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    ``lam_tilde = max(lam_bar + eta (z - tau), 0)`` and ``eta_tilde^2 = max(gamma - lam_tilde,
    0)``, with ``lam_bar = lambda_min(X^T X) / C^2`` (sensitivity 1). On ``{z <= tau}``,
    ``eta_tilde^2 + lam_bar >= gamma``: the effective scale reaches the target.

    Parameters
    ----------
    lam_bar : float or array-like
        The normalised eigenvalue ``lambda_min(X^T X) / C^2``.
    z : float or array-like
        Standard normal draw(s) of the eigenvalue release.
    gamma : float
        Target dimensionless scale.
    eta : float
        Eigenvalue noise multiplier.
    tau : float
        Threshold of the good event ``{z <= tau}``.

    Returns
    -------
    eta_tilde2 : float or ndarray
        Noise variance to add, in units of ``C^2``.
    lam_tilde : float or ndarray
        The released (private) eigenvalue.

    Examples
    --------
    >>> from skdc.mechanisms import adaptive_noise_scale
    >>> eta_tilde2, lam_tilde = adaptive_noise_scale(3.0, 0.5, gamma=5.0, eta=1.0, tau=2.0)
    >>> float(eta_tilde2), float(lam_tilde)
    (3.5, 1.5)
    """
    return _adaptive_noise_scale(lam_bar, z, gamma, eta, tau)


def _gaussmix_release(Z, k, row_bound, gamma, adaptive, eta, delta, exact_tau, random_state):
    rng = check_random_state(random_state)
    Z = np.asarray(Z, dtype=np.float64)
    n, d = Z.shape
    c2 = float(row_bound) ** 2
    info = {"tau": None, "eta": None, "lam_tilde": None}
    if adaptive:
        eta = gamma / math.sqrt(k) if eta is None else float(eta)
        tau = adaptive_threshold(delta, exact=exact_tau)
        lam_bar = max(float(np.linalg.eigvalsh(Z.T @ Z)[0]), 0.0) / c2 if n else 0.0
        eta_t2, lam_tilde = _adaptive_noise_scale(lam_bar, rng.standard_normal(), gamma, eta,
                                                  tau)
        sigma = math.sqrt(float(eta_t2) * c2)
        info.update(tau=tau, eta=eta, lam_tilde=float(lam_tilde))
    else:
        sigma = math.sqrt(gamma * c2)  # sqrt(gamma) C, not the printed gamma C (scale gamma^2)
    S = rng.standard_normal((k, n))
    M = S @ Z + sigma * rng.standard_normal((k, d))
    info["sigma"] = sigma
    return M, info


@validate_params(
    {
        "Z": ["array-like"],
        "k": [Interval(Integral, 1, None, closed="left")],
        "row_bound": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "adaptive": ["boolean"],
        "eta": [None, Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "exact_tau": ["boolean"],
        "random_state": SECRET_SEED,
    },
    prefer_skip_nested_validation=True,
)
@Substitution(gaussmix_reference=_GAUSSMIX_REFERENCE_DOC)
def gaussmix_release(Z, *, k, row_bound, gamma, adaptive=False, eta=None, delta=1e-6,
                     exact_tau=False, random_state=None):
    """One GaussMix release of ``Z``: Algorithm 1 of [1]_, corrected in units and noise scale.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    The eigenvalue is released as ``lambda_min(Z^T Z) / C^2`` (sensitivity 1) and the
    non-adaptive branch adds ``sqrt(gamma) C`` noise (the printed algorithm subtracts the
    unnormalised eigenvalue from the dimensionless ``gamma`` and adds ``gamma C``).

    Parameters
    ----------
    Z : array-like of shape (n, d)
        Rows already within ``row_bound``.
    k : int
        Sketch dimension.
    row_bound : float
        Public row-norm bound ``C`` of ``Z``.
    gamma : float
        Target dimensionless scale, > 1.
    adaptive : bool, default=False
        Release ``lam_tilde = max(lambda_min(Z^T Z)/C^2 + eta (z - tau), 0)`` and add only
        ``eta_tilde^2 = max(gamma - lam_tilde, 0)`` (in units of ``C^2``); otherwise add
        ``sqrt(gamma) C`` noise.
    eta : float or None, default=None
        Eigenvalue noise multiplier (``gamma / sqrt(k)`` if None).
    delta : float, default=1e-6
        Sets ``tau = sqrt(2 ln(3/delta))`` (or the exact quantile with ``exact_tau``).
    exact_tau : bool, default=False
        Use ``Phi^{-1}(1 - delta/3)`` for ``tau``.
    random_state : int, RandomState instance or None, default=None
        Source of ``S``, ``xi`` and ``z``.

    Returns
    -------
    M : ndarray of shape (k, d)
        The release.
    info : dict
        ``sigma`` (noise std used), ``lam_tilde`` (published, adaptive only), ``tau``, ``eta``.

    References
    ----------
    {gaussmix_reference}

    Examples
    --------
    The non-adaptive branch adds ``sqrt(gamma) C`` noise to the ``k`` sketch rows:

    >>> import numpy as np
    >>> from skdc.mechanisms import gaussmix_release
    >>> rng = np.random.RandomState(0)
    >>> M, info = gaussmix_release(rng.uniform(-0.4, 0.4, size=(100, 3)), k=6, row_bound=1.0,
    ...                            gamma=4.0, random_state=0)
    >>> M.shape, info["sigma"]
    ((6, 3), 2.0)
    """
    return _gaussmix_release(Z, k, row_bound, gamma, adaptive, eta, delta, exact_tau,
                             random_state)


@Substitution(gaussmix_reference=_GAUSSMIX_REFERENCE_DOC)
class GaussMix(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Gaussian mixing mechanism: each participant uploads a noisy sketch ``S X_i + sigma xi``.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Each participant's ``k`` upload rows are i.i.d. ``N(0, X_i^T X_i + sigma^2 I)``; the release
    is ``(epsilon, delta)``-DP for the participant's rows under a public row bound (Lemma 1 and
    Proposition 1 of [1]_). The noise is calibrated from ``epsilon`` and ``delta`` (or given as
    ``noise``); with ``adaptive=True`` a privately released ``lambda_min`` lowers it (corrected
    Algorithm 1). A sketch mixes rows, so the upload has ``k`` rows per participant, not one per
    input row, and carries no anchor uploads.

    Parameters
    ----------
    n_participants : int, default=1
        Number of participants ``p``.
    k : int or "auto", default="auto"
        Sketch rows per participant; ``"auto"`` is ``ceil(2.5 * n_features)`` (the paper's
        experiments, :func:`~skdc.privacy.auto_sketch_rows`).
    epsilon : float, default=1.0
        Privacy budget of each participant's release (ignored when ``noise`` is set).
    delta : float, default=1e-6
        In (0, 1).
    noise : float or None, default=None
        Fixed noise standard deviation ``sigma`` instead of calibrating from ``epsilon``.
    row_bound : float, default=1.0
        Public bound ``C_X`` on row norms.
    lambda_low : float, default=0.0
        Public lower bound on ``lambda_min(X_i^T X_i)`` (non-adaptive calibration).
    adaptive : bool, default=False
        Use the corrected adaptive Algorithm 1 (privately released ``lambda_min``).
    eta : float or None, default=None
        Eigenvalue noise multiplier of the adaptive release (``gamma / sqrt(k)`` if None).
    clip : bool, default=False
        Clip rows to ``row_bound`` instead of refusing them.
    random_state : int, RandomState instance or None, default=None
        Seeds the release seed and the row-to-participant hash.

    Attributes
    ----------
    k_ : int
        Sketch rows per participant.
    scale_ : float
        Dimensionless scale ``gamma`` (``zeta``) of the calibrated release.
    noise_ : float
        Noise standard deviation of the non-adaptive release.
    privacy_spent_ : dict
        ``{"eps", "delta", "rdp"}`` per participant release; ``rdp`` maps ``alpha`` to nats.
    noise_seed_ : int
        Seed of the releases (with the participant and the content of its rows).
    participants_ : ndarray of shape (p,)
        Participant ids.
    n_features_in_ : int
        Number of features seen during fit.

    References
    ----------
    {gaussmix_reference}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import GaussMix
    >>> X = np.random.RandomState(0).uniform(-0.4, 0.4, size=(200, 3))
    >>> M = GaussMix(n_participants=2, k=10, epsilon=1.0, random_state=0).fit_transform(X)
    >>> M.shape, sorted(set(M.participant))
    ((20, 3), [0, 1])
    """

    _parameter_constraints = {
        "n_participants": [Interval(Integral, 1, None, closed="left")],
        "k": [StrOptions({"auto"}), Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "noise": [None, Interval(Real, 0, None, closed="neither")],
        "row_bound": [Interval(Real, 0, None, closed="neither")],
        "lambda_low": [Interval(Real, 0, None, closed="left")],
        "adaptive": ["boolean"],
        "eta": [None, Interval(Real, 0, None, closed="neither")],
        "clip": ["boolean"],
        "random_state": SECRET_SEED,
    }
    __metadata_request__fit = {"participant": True}
    __metadata_request__transform = {"participant": True}

    def __init__(self, n_participants=1, *, k="auto", epsilon=1.0, delta=1e-6, noise=None,
                 row_bound=1.0, lambda_low=0.0, adaptive=False, eta=None, clip=False,
                 random_state=None):
        self.n_participants = n_participants
        self.k = k
        self.epsilon = epsilon
        self.delta = delta
        self.noise = noise
        self.row_bound = row_bound
        self.lambda_low = lambda_low
        self.adaptive = adaptive
        self.eta = eta
        self.clip = clip
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, participant=None):
        """Calibrate the release and draw its seed.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of all participants (only their width and bound are checked).
        y : Ignored
            Not used, present for API consistency by convention.
        participant : array-like of int of shape (n_samples,), default=None
            The participant of each row (routed metadata); ``None`` uses a keyed hash.

        Returns
        -------
        self : object
        """
        X = validate_data(self, X, dtype=np.float64)
        check_row_bound(X, self.row_bound, clip=self.clip)
        # None: the release's noise seed and hash key from 128 bits of system entropy
        _, next_seed = secret_stream(self.random_state)
        self.noise_seed_ = next_seed()
        self._hash_key = seeded_rng(next_seed()).bytes(16)
        self.participants_ = np.arange(self.n_participants)
        self.k_ = auto_sketch_rows(X.shape[1]) if self.k == "auto" else int(self.k)
        c2 = float(self.row_bound) ** 2
        if self.noise is not None:
            if self.adaptive:
                raise ValueError("noise and adaptive=True exclude each other: the adaptive "
                                 "release chooses its own noise. Set one of them.")
            self.scale_ = (float(self.noise) ** 2 + self.lambda_low) / c2
            self.noise_ = float(self.noise)
            eps = gaussmix_epsilon(self.k_, self.scale_, self.delta)[0]
            eta = None
        else:
            self.scale_, eta = calibrate_gaussmix(
                self.k_, float(self.epsilon), float(self.delta), bool(self.adaptive), self.eta
            )
            self.noise_ = math.sqrt(max(self.scale_ * c2 - self.lambda_low, 0.0))
            eps = float(self.epsilon)
        self._eta = eta
        rdp = RDPCurve(k=self.k_, zeta=self.scale_, noise=eta)
        self.privacy_spent_ = {"eps": eps, "delta": float(self.delta), "rdp": rdp}
        self._n_features_out = X.shape[1]
        return self

    def transform(self, X, participant=None):
        """Release each participant's sketch of its rows ``X_i``.

        The release seed depends on the fitted seed, the participant and the bytes of all its
        rows: the same rows give the same release (no averaging away), different rows an
        independent sketch (each such release is charged separately).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to release.
        participant : array-like of int of shape (n_samples,), default=None
            The participant of each row.

        Returns
        -------
        M : Uploads of shape (n_participants_present * k_, n_features)
            Stacked sketches; ``participant`` gives each sketch row's participant.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        X = check_row_bound(X, self.row_bound, clip=self.clip)
        digests = _row_digests(X, self._hash_key)
        part = _assign_participants(
            participant, digests, self.n_participants, X.shape[0], "GaussMix", fitting=True
        )
        blocks, owners = [], []
        for i in np.unique(part):
            rows = part == i
            content = np.sort(digests[rows, 1])  # order-free fingerprint of the row set
            seed = np.random.SeedSequence(
                [self.noise_seed_, int(i), *content.view(np.uint32).tolist()]
            ).generate_state(1)[0]
            M, _ = _gaussmix_release(
                X[rows], self.k_, self.row_bound, self.scale_, self.adaptive, self._eta,
                self.delta, False, np.random.RandomState(int(seed)),
            ) if self.noise is None else (self._fixed_release(X[rows], int(seed)), None)
            blocks.append(M)
            owners.append(np.full(self.k_, i))
        return Uploads(np.vstack(blocks), participant=np.concatenate(owners))

    def _fixed_release(self, Xi, seed):
        rng = np.random.RandomState(seed)
        S = rng.standard_normal((self.k_, Xi.shape[0]))
        return S @ Xi + self.noise_ * rng.standard_normal((self.k_, Xi.shape[1]))

    def leakage_bits(self):
        """Per-record leakage in bits of one participant release (KL limit over ln 2)."""
        check_is_fitted(self)
        from ..privacy import GaussMixLeakage

        return GaussMixLeakage(self.k_, math.sqrt(self.scale_), 1.0).leakage_bits()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        tags.non_deterministic = False
        return tags
