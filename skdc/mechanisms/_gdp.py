"""Geometric data perturbation (GDP): a secret rotation and shift per participant.

GDP maps a row ``x`` to ``x O + Psi`` with a Haar-distributed orthogonal ``O`` and a Gaussian
translation ``Psi`` (Def 2.3 in [1]_), optionally adding Gaussian private-data noise of standard
deviation ``sigma`` (Def 2.6 and 2.13 in [1]_). Three mechanisms cover the paper's protocols:

* :class:`GDP`: one party's map, with its exact inverse;
* :class:`CGDP`: one common secret for all participants (C-GDP, Def 2.4): the output is ready to
  train on, but one colluding participant discloses everybody's secret (Prop 2.5);
* :class:`IGDP`: an independent secret per participant (I-GDP, Def 2.7), uploading the same map
  applied to a shared anchor so that an aligner can bring everyone into one frame (AA-I-GDP,
  Def 2.10 and 4.1).

This module is the paper's home; the rest of [1]_ lives in :mod:`skdc.anchors` (the shared
anchor), ``alignment/_reference.py`` and ``_gopp.py`` with its solver (the analyst's
:class:`~skdc.alignment.GOPPAligner`, the phase transition ``v_PT``), ``attacks/_view.py``,
``_gdp.py`` and ``_classical.py`` (the collusion view and the attacks of Sec. 3 and 5),
``metrics/_reconstruction.py``, ``_linkage.py`` and ``_identity_linkage.py`` (its MNIST and
CelebA linkage protocols), :mod:`skdc.nn` (the paper's CNNs and the linkage auditor),
:mod:`skdc.protocol` (the deployment) and ``experiments/_reproduce.py`` and
``_reproduce_gdp.py`` (its figures). The developer guide maps each paper to its modules.

References
----------
.. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
   Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._linalg import haar_orthogonal
from ..utils._random import SECRET_SEED, secret_stream, seed_bytes
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, InvalidParameterError, _fit_context, validate_data
from ._base import (
    _MECHANISM_ATTRIBUTES_DOC,
    _NOISE_RANDOM_STATE_DOC,
    BaseMechanism,
    _row_digests,
    _row_noise,
)

__all__ = ["CGDP", "GDP", "IGDP"]


def _draw_gdp_secret(n_features, translation_scale, rng):
    """One participant's GDP secret ``(O, Psi)`` of Def 2.3 of [1].

    ``O`` is Haar-distributed and ``Psi ~ N(0, translation_scale^2 I)``: the paper only asks for a
    private ``O`` in ``O(d)`` and a ``Psi`` in ``R^d``; these are the authors' code's choices.
    """
    O = haar_orthogonal(n_features, rng)
    psi = translation_scale * rng.standard_normal(n_features)
    return O, psi


# digits of the rows that the shift may cost before a warning, and before a refusal
_WARN_DIGITS_LOST, _MAX_DIGITS_LOST = 4, 12


def _shift(X, O, psi, who):
    """``X O + Psi``, refusing rows so small next to ``Psi`` that float64 loses them.

    Adding ``Psi`` rounds each entry to about ``eps * |Psi|``; rows of size ``s`` keep about
    ``16 - log10(|Psi| / s)`` significant digits. More than ``_WARN_DIGITS_LOST`` digits lost
    warns, more than ``_MAX_DIGITS_LOST`` (at ``|Psi| / s = 1e12`` only about four remain) is
    refused: at 1e-150 every upload row would equal the translation.
    """
    rows = float(np.abs(X).max()) if X.size else 0.0
    shift = float(np.abs(psi).max()) if psi.size else 0.0
    if rows > 0 and shift > 0:
        lost = np.log10(shift / rows)
        advice = (
            "Rescale the rows (e.g. StandardScaler) before the mechanism, or set "
            f"translation_scale near the rows' scale (e.g. translation_scale={rows:.1g})."
        )
        if lost > _MAX_DIGITS_LOST:
            raise ValueError(
                f"{who}: the rows (entries up to {rows:.3g}) are too small for the translation "
                f"(entries up to {shift:.3g}): adding it in float64 would keep about "
                f"{max(0.0, 16 - lost):.0f} significant digits of the rows. {advice}"
            )
        if lost > _WARN_DIGITS_LOST:
            warnings.warn(
                f"{who}: the rows (entries up to {rows:.3g}) are small next to the translation "
                f"(entries up to {shift:.3g}): adding it in float64 loses about {lost:.0f} of "
                f"the rows' 16 significant digits. {advice}",
                UserWarning,
                stacklevel=3,
            )
    return X @ O + psi


@Substitution(references=gdp_paper_references)
class GDP(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """One party's geometric data perturbation ``X O + Psi`` (+ noise), Def 2.3 of [1]_.

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    noise : float, default=0.0
        Standard deviation ``sigma`` of the Gaussian private-data noise added at ``transform``
        (Def 2.6 of [1]_). The noise of a row depends on its bytes only, so a row released
        twice carries the same noise.
    translation_scale : float, default=1.0
        Standard deviation of the entries of the translation ``Psi``, in the rows' units (an
        absolute scale, not relative to the data). Rows much smaller than the translation lose
        digits when shifted in float64: beyond 4 digits lost ``transform`` warns, beyond 12 it
        refuses; rescale the rows or set this near their scale.
    random_state : int, RandomState instance or None, default=None
        Seeds the secret drawn at ``fit`` and the noise seed.

    Attributes
    ----------
    rotation_ : ndarray of shape (n_features, n_features)
        The secret orthogonal matrix ``O``.
    translation_ : ndarray of shape (n_features,)
        The secret translation ``Psi``.
    noise_seed_ : int
        Seed of the private-data noise.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    CGDP : One common GDP secret for several participants.
    IGDP : Independent GDP secrets, with anchor uploads for alignment.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import GDP
    >>> X = np.random.RandomState(0).rand(5, 3)
    >>> gdp = GDP(random_state=0).fit(X)
    >>> bool(np.allclose(gdp.inverse_transform(gdp.transform(X)), X))
    True
    """

    _parameter_constraints: dict = {
        "noise": [Interval(Real, 0, None, closed="left")],
        "translation_scale": [Interval(Real, 0, None, closed="left")],
        "random_state": SECRET_SEED,
    }

    def __init__(self, *, noise=0.0, translation_scale=1.0, random_state=None):
        self.noise = noise
        self.translation_scale = translation_scale
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the secret rotation and translation.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows (only their width is used).
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            Fitted mechanism.
        """
        if isinstance(self.random_state, (bool, np.bool_)):
            raise InvalidParameterError(
                f"The 'random_state' parameter of GDP must be an int, a RandomState or None; "
                f"got the boolean {self.random_state!r}. Pass an int."
            )
        X = validate_data(self, X, dtype=np.float64)
        # None: the secret and the noise seed each from 128 bits of operating-system entropy
        rng, next_seed = secret_stream(self.random_state)
        self.rotation_, self.translation_ = _draw_gdp_secret(
            X.shape[1], self.translation_scale, rng
        )
        self.noise_seed_ = next_seed()
        self._n_features_out = X.shape[1]
        return self

    def transform(self, X):
        """Apply ``X O + Psi`` and add the private-data noise.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to obfuscate.

        Returns
        -------
        Y : ndarray of shape (n_samples, n_features)
            Obfuscated rows.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Y = _shift(X, self.rotation_, self.translation_, "GDP")
        if self.noise > 0:
            seeds = _row_digests(X, seed_bytes(self.noise_seed_))[:, 1]
            Y += self.noise * _row_noise(self.noise_seed_, 0, seeds, X.shape[1])
        return Y

    def inverse_transform(self, X):
        """Undo the rotation and translation: ``(Y - Psi) O^T`` (noise is not removed).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Obfuscated rows.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            Rows in the original coordinates.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.translation_) @ self.rotation_.T

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


class _BaseGDPMechanism(BaseMechanism):
    """Shared parts of C-GDP and I-GDP: per-participant ``(O_i, Psi_i)`` and noise."""

    _parameter_constraints: dict = {
        **BaseMechanism._parameter_constraints,
        "noise": [Interval(Real, 0, None, closed="left")],
        "translation_scale": [Interval(Real, 0, None, closed="left")],
    }
    _requires_full_rank_anchor = True
    _common_secret = False

    def __init__(
        self,
        n_participants=2,
        *,
        noise=0.0,
        translation_scale=1.0,
        anchor="orthonormal",
        n_anchors=None,
        random_state=None,
        noise_random_state=None,
    ):
        super().__init__(
            n_participants, anchor=anchor, n_anchors=n_anchors, random_state=random_state,
            noise_random_state=noise_random_state,
        )
        self.noise = noise
        self.translation_scale = translation_scale

    def _draw_secret(self, i, n_features):
        """Participant ``i``'s secret ``(O_i, Psi_i)``, from its own stream (seed and ``i``).

        The common secret of C-GDP is participant 0's, so CGDP(random_state=s) uses
        IGDP(random_state=s)'s participant-0 secret: the paper's matched comparison with
        ``(O, Psi) = (O_s, Psi_s)``, ``s = 0``.
        """
        return _draw_gdp_secret(n_features, self.translation_scale,
                                self._participant_rng(0 if self._common_secret else i))

    def _fit_participants(self, X, participant, rng):
        # each participant's secret comes from its own stream (``rng`` is not used): a
        # participant's secret does not depend on how many others there are, nor on the order
        # they are drawn in, and a deployed participant draws only its own (``fit_one``)
        d = X.shape[1]
        secrets = [self._draw_secret(i, d)
                   for i in range(1 if self._common_secret else self.n_participants)]
        if self._common_secret:
            secrets = secrets * self.n_participants
        self.rotations_ = np.stack([O for O, _ in secrets])
        self.translations_ = np.stack([psi for _, psi in secrets])
        return d

    def fit_one(self, participant, n_features):
        """Draw only participant ``participant``'s secret, as a deployed participant does.

        The secret, the anchor, the unit anchor noise ``W_i`` and the noise seeds are those
        :meth:`fit` draws for that participant with the same parameters, so the one
        participant's uploads are those of the full mechanism, bit for bit. No other
        participant's secret is drawn: the cost does not grow with ``n_participants``.

        Parameters
        ----------
        participant : int
            The participant's id, ``0 .. n_participants - 1``.
        n_features : int
            Width of the participant's rows.

        Returns
        -------
        self : object
            The mechanism, fitted for that participant only: ``transform`` takes its rows
            only and returns them under the local id 0, with its one anchor upload;
            ``rotations_`` and ``translations_`` hold its secret alone.

        Examples
        --------
        >>> import numpy as np
        >>> from skdc.mechanisms import IGDP
        >>> IGDP(n_participants=10**6, random_state=0).fit_one(123456, 3).rotations_.shape
        (1, 3, 3)
        >>> full = IGDP(n_participants=3, random_state=0).fit(np.eye(3), participant=[0, 1, 2])
        >>> one = IGDP(n_participants=3, random_state=0).fit_one(2, 3)
        >>> bool(np.array_equal(one.rotations_[0], full.rotations_[2]))
        True
        """
        self._validate_params()
        self._check_not_bool()
        p = self.n_participants
        if not isinstance(participant, Integral) or isinstance(participant, bool) or not (
                0 <= participant < p):
            raise ValueError(f"participant must be an int in 0 .. {p - 1}; got {participant!r}.")
        if not isinstance(n_features, Integral) or isinstance(n_features, bool) or n_features < 1:
            raise ValueError(f"n_features must be a positive int; got {n_features!r}.")
        participant, n_features = int(participant), int(n_features)
        _, anchor_seed = self._draw_seeds()
        self.n_features_in_ = n_features
        self._fit_anchor(n_features, anchor_seed)
        self.participants_ = np.array([participant])
        self._only = participant
        O, psi = self._draw_secret(participant, n_features)
        self.rotations_, self.translations_ = O[None], psi[None]
        self._n_features_out = n_features
        self._unit_anchor_noise = self._unit_anchor_noises(self._anchor_uploads())
        return self

    def _apply(self, X, i):
        who = f"{type(self).__name__} (participant {i})"
        k = self._slot(i)
        return _shift(X, self.rotations_[k], self.translations_[k], who)

    def _noise_scale(self):
        return self.noise

    def inverse_transform(self, X, participant=None):
        """Undo each row's participant map: ``(Y - Psi_i) O_i^T``. Noise is not removed.

        Parameters
        ----------
        X : Uploads or array-like of shape (n_samples, n_features)
            Uploads returned by ``transform`` (their participants are used).
        participant : array-like of int of shape (n_samples,), default=None
            The participant of each row, when ``X`` is a plain array.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            Rows in the original coordinates.
        """
        check_is_fitted(self)
        part = self._participant_of_rows(X, participant)
        Y = validate_data(self, np.asarray(X), dtype=np.float64, reset=False)
        out = np.empty_like(Y)
        for i in np.unique(part):
            rows, k = part == i, self._slot(i)
            out[rows] = (Y[rows] - self.translations_[k]) @ self.rotations_[k].T
        return out


# Docstring fragments that CGDP and IGDP share (``GDP`` shares the reference); the anchor
# and attributes fragments end with the fragments every mechanism shares.
_GDP_PARAMETERS_DOC = """\
    n_participants : int, default=2
        Number of participants ``p``.
    noise : float, default=0.0
        Standard deviation ``sigma`` of the Gaussian private-data noise added to every upload
        (Def 2.6 / 2.13 of [1]_). A row's noise depends on its bytes, the participant and the
        fitted seed only: the same row released twice carries the same noise.
    translation_scale : float, default=1.0
        Standard deviation of the entries of each translation ``Psi_i``, in the rows' units
        (an absolute scale, not relative to the data). Rows much smaller than the translation
        lose digits when shifted in float64: beyond 4 digits lost ``transform`` warns, beyond
        12 it refuses; rescale the rows (e.g. ``StandardScaler``) or set this near their scale.
"""

# The description of ``anchor`` and the parameters after it; the type line of ``anchor``, with
# each class's default, stays in the class's docstring.
_GDP_ANCHOR_DOC = """\
        The shared anchor ``A`` (participant-side; never given to the analyst). The default
        orthonormal anchor is eq. (22) of [1]_. ``None`` uploads no anchor.
    n_anchors : int, default=None
        Anchor rows ``r`` for generated anchors; ``None`` means ``4 * n_features``. Must be at
        least ``n_features + 1``.
    random_state : int, RandomState instance or None, default=None
        Seeds the secrets, the anchor and the row-to-participant hash key.
""" + _NOISE_RANDOM_STATE_DOC

_GDP_ATTRIBUTES_DOC = """\
    rotations_ : ndarray of shape (n_participants, n_features, n_features)
        The secret orthogonal matrices ``O_i``.
    translations_ : ndarray of shape (n_participants, n_features)
        The secret translations ``Psi_i``.
""" + _MECHANISM_ATTRIBUTES_DOC

# One decorator fills CGDP's and IGDP's docstrings.
_gdp_mechanism_doc = Substitution(
    gdp_parameters=_GDP_PARAMETERS_DOC, gdp_anchor=_GDP_ANCHOR_DOC,
    gdp_attributes=_GDP_ATTRIBUTES_DOC, references=gdp_paper_references,
)


@_gdp_mechanism_doc
class CGDP(_BaseGDPMechanism):
    """Common GDP: one secret ``(O, Psi)`` shared by all participants (Def 2.4 of [1]_).

    Read more in the :ref:`User Guide <protocols>`.

    Every participant uploads ``X_i O + Psi (+ sigma W_i)``; the stacked uploads are already in
    one frame, so no aligner is needed. One colluding participant discloses the common secret
    and with it everybody's rows (Prop 2.5 of [1]_). With the same ``random_state``, the common
    secret equals :class:`IGDP`'s participant-0 secret: the paper's matched comparison.

    Parameters
    ----------
    {gdp_parameters}
    anchor : {'orthonormal', 'uniform'}, array-like, callable or None, default=None
        {gdp_anchor}

    Attributes
    ----------
    {gdp_attributes}

    See Also
    --------
    IGDP : Independent secrets with anchor uploads.

    {references}

    Examples
    --------
    The example :ref:`sphx_glr_auto_examples_plot_cgdp_igdp_aligned.py` compares it with
    aligned I-GDP.

    >>> from sklearn.datasets import make_classification
    >>> from skdc.mechanisms import CGDP
    >>> X, y = make_classification(n_samples=60, n_features=5, random_state=0)
    >>> Y = CGDP(n_participants=3, random_state=0).fit_transform(X, y)
    >>> Y.shape, sorted(set(Y.participant.tolist()))
    ((60, 5), [0, 1, 2])
    """

    _common_secret = True

    def __init__(
        self,
        n_participants=2,
        *,
        noise=0.0,
        translation_scale=1.0,
        anchor=None,
        n_anchors=None,
        random_state=None,
        noise_random_state=None,
    ):
        super().__init__(
            n_participants,
            noise=noise,
            translation_scale=translation_scale,
            anchor=anchor,
            n_anchors=n_anchors,
            random_state=random_state,
            noise_random_state=noise_random_state,
        )


@_gdp_mechanism_doc
class IGDP(_BaseGDPMechanism):
    """Independent GDP: a secret ``(O_i, Psi_i)`` per participant, with anchor uploads.

    Read more in the :ref:`User Guide <protocols>`.

    Participant ``i`` uploads ``Y_i = X_i O_i + Psi_i (+ sigma W_i)`` and the same map applied
    to the shared anchor, ``B_i = A O_i + Psi_i`` (Def 2.7, 2.10, 2.13 and 4.1 of [1]_). Without
    an aligner the blocks live in unrelated frames (the I-GDP baseline); with
    :class:`~skdc.alignment.ReferenceAligner` or :class:`~skdc.alignment.GOPPAligner` they are
    brought into one frame.

    Parameters
    ----------
    {gdp_parameters}
    anchor : {'orthonormal', 'uniform'}, array-like, callable or None, default='orthonormal'
        {gdp_anchor}

    Attributes
    ----------
    {gdp_attributes}

    See Also
    --------
    CGDP : One common secret.
    skdc.alignment.GOPPAligner : Noisy-anchor alignment.

    {references}

    Examples
    --------
    The example :ref:`sphx_glr_auto_examples_plot_cgdp_igdp_aligned.py` aligns its uploads
    through the anchor.

    >>> import numpy as np
    >>> from skdc.mechanisms import IGDP
    >>> rng = np.random.RandomState(0)
    >>> Y = IGDP(n_participants=3, noise=0.1, random_state=0).fit_transform(rng.randn(60, 5))
    >>> Y.shape, len(Y.anchors), Y.anchors[0].shape, Y.unit_anchor_noise[0].shape
    ((60, 5), 3, (20, 5), (20, 5))
    """
