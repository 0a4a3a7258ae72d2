"""Template shared by every participant-side mechanism.

A mechanism holds each participant's secrets and the shared raw anchor. This base resolves who
is which participant, builds the anchor, derives the seeds, draws each participant's unit anchor
noise ``W_i`` from the participant's own noise stream, and packs the output into
:class:`~skdc.Uploads` (the developer guide's "Who is which participant" and "Randomness").
A subclass supplies the participant maps through three hooks: ``_fit_participants`` (draw or
fit the secrets), ``_apply`` (participant ``i``'s map on some rows, noiseless) and, optionally,
``_noise_scale`` (private-data noise).
"""

# Licence: BSD 3 clause

import hashlib
from abc import abstractmethod
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._uploads import Uploads, check_participant_ids
from ..anchors import check_full_rank_anchor, resolve_anchor
from ..utils._docstring import Substitution
from ..utils._random import SECRET_SEED, draw_seeds, seeded_rng
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    _fit_context,
    _get_output_config,
    validate_data,
)

__all__ = ["BaseMechanism"]

_SEED_MAX = np.iinfo(np.int32).max
# First word of every anchor-noise stream. Private-data noise streams start with the noise seed
# (a chosen one < 2**31, or a wide one of five 32-bit words whose top word is 1), so no
# anchor-noise stream can coincide with a private-data noise stream.
_ANCHOR_NOISE_STREAM = 0xA5C4_0A15


def _row_digests(X, key):
    """Keyed 128-bit digest of each row's bytes, as two uint64 columns.

    The first column assigns the participant, the second seeds the row's private-data noise;
    both depend only on the row's content and the key, never on its position in the batch.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    out = np.empty((X.shape[0], 2), dtype=np.uint64)
    view = out.view(np.uint8).reshape(X.shape[0], 16)
    for k, row in enumerate(X):
        view[k] = np.frombuffer(
            hashlib.blake2b(row.tobytes(), key=key, digest_size=16).digest(), dtype=np.uint8
        )
    return out


def _row_noise(noise_seed, participant, row_seeds, width):
    """Standard normal noise, one row per seed: a row's noise depends on its bytes only.

    Seeded from the fitted ``noise_seed``, the participant and the row's digest (the developer
    guide, section 4: randomness), so the same row released twice carries the same noise and
    cannot be averaged away, and ``fit_transform(X)`` equals ``fit(X).transform(X)``.
    """
    out = np.empty((row_seeds.shape[0], width))
    for k, s in enumerate(row_seeds):
        out[k] = np.random.default_rng([noise_seed, int(participant), int(s)]).standard_normal(
            width
        )
    return out


def _assign_participants(participant, digests, n_participants, n_samples, who, *, fitting):
    """Each row's participant: the given ids (checked against ``n_participants``) or, when
    ``participant`` is None, the keyed hash of the row's bytes (first digest column).

    ``fitting`` picks the advice of the error for an id ``>= n_participants``: at fit, raise
    ``n_participants``; later, fit with rows of every participant.
    """
    p = n_participants
    if participant is None:
        return (digests[:, 0] % np.uint64(p)).astype(np.intp)
    participant = check_participant_ids(participant, n_samples)
    unseen = np.unique(participant[participant >= p])
    if unseen.size and fitting:
        raise ValueError(
            f"participant ids must lie in 0 .. n_participants - 1 = {p - 1}; got id "
            f"{int(unseen.max())}. Set n_participants={int(unseen.max()) + 1} or "
            "relabel the participants."
        )
    if unseen.size:
        raise ValueError(
            f"participant id(s) {unseen.tolist()} were not seen when "
            f"{who} was fitted (fitted participants: 0 .. {p - 1}). Fit "
            "the mechanism with rows of every participant that will upload."
        )
    return participant


def _unit_anchor_noise(noise_seed, participant, shape):
    """Participant ``participant``'s unit anchor noise ``W_i`` (standard normal, Def 4.1 of [1]).

    Drawn from the participant's own noise stream: a deployed participant whose mechanism has
    the same noise seed draws the same ``W_i``, and nothing but that seed regenerates it.
    """
    rng = np.random.default_rng([_ANCHOR_NOISE_STREAM, int(noise_seed), int(participant)])
    return rng.standard_normal(shape)


# Docstring fragments every mechanism shares, substituted by
# ``@Substitution(noise_random_state=..., mechanism_attributes=...)``: the
# ``noise_random_state`` parameter and the fitted attributes of every mechanism.
_NOISE_RANDOM_STATE_DOC = """\
    noise_random_state : int, RandomState instance or None, default=None
        Seeds the participants' noise stream: each participant's unit anchor noise ``W_i``
        (carried in ``Uploads.unit_anchor_noise``; the analyst receives ``B_i + v W_i``, Def 4.1 of
        the GDP paper) and the private-data noise. ``None`` derives it from ``random_state``.
        Kept apart from ``random_state`` so that a sweep can redraw the noise while the
        deployment (secrets, anchor, partition) stays fixed.
"""

_MECHANISM_ATTRIBUTES_DOC = """\
    anchor_ : ndarray of shape (n_anchors, n_features) or None
        The raw shared anchor ``A`` (participant-side; never sent to the analyst).
    anchor_y_ : ndarray of shape (n_anchors,) or None
        Anchor labels (SMOTE anchors), else None.
    participants_ : ndarray of shape (n_participants,)
        Participant ids seen at fit.
    n_samples_per_participant_ : ndarray of shape (n_participants,)
        Training rows per participant.
    noise_seed_ : int
        Seed of the participants' noise stream (unit anchor noise and private-data noise).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of features seen during fit, when ``X`` has string column names.
"""

# The parameters of ``fit`` and ``fit_transform`` (method docstrings: eight spaces).
_FIT_PARAMETERS_DOC = """\
        X : array-like of shape (n_samples, n_features)
            Training rows of all participants.
        y : Ignored
            Not used, present for API consistency by convention.
        participant : array-like of int of shape (n_samples,), default=None
            The participant of each row (routed metadata). ``None`` assigns rows by a keyed
            hash of their bytes.
"""


class BaseMechanism(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class of participant-side mechanisms.

    Read more in the :ref:`User Guide <protocols>`.

    Warning: This class should not be used directly. Use derived classes instead.
    """

    _parameter_constraints: dict = {
        "n_participants": [Interval(Integral, 1, None, closed="left")],
        "anchor": [
            None,
            StrOptions({"orthonormal", "uniform"}),
            "array-like",
            callable,
            HasMethods(["make_anchor"]),
        ],
        "n_anchors": [None, Interval(Integral, 2, None, closed="left")],
        "random_state": SECRET_SEED,
        "noise_random_state": SECRET_SEED,
    }

    # routed metadata: Pipeline(...).fit(X, y, participant=ids) reaches the mechanism
    __metadata_request__fit = {"participant": True}
    __metadata_request__transform = {"participant": True}

    # GDP needs a centered anchor of full column rank; nonlinear reductions do not.
    _requires_full_rank_anchor = False

    def __init__(self, n_participants=2, *, anchor=None, n_anchors=None, random_state=None,
                 noise_random_state=None):
        self.n_participants = n_participants
        self.anchor = anchor
        self.n_anchors = n_anchors
        self.random_state = random_state
        self.noise_random_state = noise_random_state

    # -- hooks --------------------------------------------------------------------------
    @abstractmethod
    def _fit_participants(self, X, participant, rng):
        """Draw or fit each participant's secrets; return the output width."""

    @abstractmethod
    def _apply(self, X, i):
        """Participant ``i``'s noiseless map applied to the rows ``X``."""

    def _noise_scale(self):
        """Standard deviation of the private-data noise added at ``transform`` (0: none)."""
        return 0.0

    # -- participants -------------------------------------------------------------------
    def _assign(self, X, participant, digests, *, fitting):
        return _assign_participants(
            participant, digests, self.n_participants, X.shape[0], type(self).__name__,
            fitting=fitting,
        )

    # -- fit steps ----------------------------------------------------------------------
    def _check_not_bool(self):
        """Booleans are not integers here: ``random_state=True`` is a mistake, not seed 1."""
        for name in ("n_participants", "n_anchors", "random_state", "noise_random_state"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)):
                raise InvalidParameterError(
                    f"The {name!r} parameter of {type(self).__name__} must be an int (or None"
                    f"{', or a RandomState' if name.endswith('random_state') else ''}); got "
                    f"the boolean {value!r}. Pass an int."
                )

    def _draw_seeds(self):
        """Seeds of the deployment, from ``random_state`` in a fixed order; the noise seed
        from ``noise_random_state`` when given. ``None`` draws 128 bits of operating-system
        entropy and every purpose gets its own child seed as wide (a chosen int below
        ``2**32`` keeps the 31-bit child seeds of earlier versions: tests only). Sets the hash
        key, the secret seed (each participant's secret stream starts from it and the
        participant's id) and ``noise_seed_``; returns the secret and anchor seeds."""
        secret_seed, anchor_seed, noise_seed, hash_seed = draw_seeds(self.random_state, 4)
        if self.noise_random_state is not None:
            (noise_seed,) = draw_seeds(self.noise_random_state, 1)
        self._hash_key = seeded_rng(hash_seed).bytes(16)
        self._secret_seed = int(secret_seed)
        self._only = None  # set by a one-participant fit (GDP's ``fit_one``)
        self.noise_seed_ = int(noise_seed)
        return secret_seed, anchor_seed

    def _participant_rng(self, i):
        """Participant ``i``'s own secret stream, seeded from the secret seed and ``i``.

        Each participant's secret depends on the seed and its id only, never on the other
        participants or on the order they are drawn in: a deployed participant draws its
        own secret without drawing anyone else's.
        """
        state = np.random.SeedSequence([self._secret_seed, int(i)]).generate_state(8)
        return np.random.RandomState(state)

    def _slot(self, i):
        """Where participant ``i``'s secret is stored (0 after a one-participant fit)."""
        return i if getattr(self, "_only", None) is None else 0

    def _unit_anchor_noises(self, anchors):
        """Each fitted participant's unit anchor noise ``W_i``, from its own noise stream."""
        if anchors is None:
            return None
        return [_unit_anchor_noise(self.noise_seed_, i, b.shape)
                for i, b in zip(self.participants_, anchors)]

    def _partition(self, X, participant):
        """Each training row's participant; every participant must have rows."""
        self.participants_ = np.arange(self.n_participants)
        participant = self._assign(X, participant, _row_digests(X, self._hash_key), fitting=True)
        counts = np.bincount(participant, minlength=self.n_participants)
        if np.any(counts == 0):
            empty = np.flatnonzero(counts == 0).tolist()
            raise ValueError(
                f"participant(s) {empty} have no rows among the {X.shape[0]} training rows. "
                "Every participant needs rows: lower n_participants, give more rows, or pass "
                "a participant array covering 0 .. n_participants - 1."
            )
        self.n_samples_per_participant_ = counts
        return participant

    def _fit_anchor(self, n_features, anchor_seed):
        """The shared raw anchor ``A`` (full column rank where the mechanism needs it)."""
        if self.anchor is None:
            self.anchor_, self.anchor_y_ = None, None
            return
        self.anchor_, self.anchor_y_ = resolve_anchor(
            self.anchor, self.n_anchors, n_features, seeded_rng(anchor_seed)
        )
        if self._requires_full_rank_anchor:
            check_full_rank_anchor(self.anchor_)

    # -- sklearn API --------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=False)
    @Substitution(fit_parameters=_FIT_PARAMETERS_DOC)
    def fit(self, X, y=None, participant=None):
        """Draw each participant's secrets and the shared anchor.

        Parameters
        ----------
        {fit_parameters}

        Returns
        -------
        self : object
            Fitted mechanism.
        """
        self._check_not_bool()
        X = validate_data(self, X, dtype=np.float64)
        if X.shape[0] < self.n_participants:
            raise ValueError(
                f"{type(self).__name__} got n_samples={X.shape[0]} rows, fewer than "
                f"n_participants={self.n_participants}: every participant needs at least one "
                "row. Lower n_participants or give more rows."
            )
        secret_seed, anchor_seed = self._draw_seeds()
        participant = self._partition(X, participant)
        self._fit_anchor(X.shape[1], anchor_seed)
        self._n_features_out = self._fit_participants(X, participant, seeded_rng(secret_seed))
        # each participant's unit anchor noise W_i, drawn once from its noise stream
        self._unit_anchor_noise = self._unit_anchor_noises(self._anchor_uploads())
        return self

    @Substitution(fit_parameters=_FIT_PARAMETERS_DOC)
    def fit_transform(self, X, y=None, participant=None):
        """Fit the mechanism and return the uploads of ``X``; equals ``fit(X).transform(X)``.

        Parameters
        ----------
        {fit_parameters}

        Returns
        -------
        Y : Uploads of shape (n_samples, n_components)
            The uploads, with participants and anchor uploads attached.
        """
        return self.fit(X, y, participant=participant).transform(X, participant=participant)

    def transform(self, X, participant=None):
        """Obfuscate rows with their participant's map and attach the anchor uploads.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of any split (train, validation, test): the same secrets serve all of them.
        participant : array-like of int of shape (n_samples,), default=None
            The participant of each row (routed metadata); ``None`` uses the keyed hash.

        Returns
        -------
        Y : Uploads of shape (n_samples, n_components)
            The private-data uploads with ``participant``, ``anchors``, ``anchor_y`` and each
            participant's unit anchor noise ``unit_anchor_noise``. Under
            ``set_output(transform="pandas")``, a DataFrame (:meth:`Uploads.to_frame`) whose
            ``attrs`` carry the same metadata to the aligner.
        """
        check_is_fitted(self)
        index = X.index if hasattr(X, "columns") else None  # a DataFrame's row labels
        X = validate_data(self, X, dtype=np.float64, reset=False)
        digests = _row_digests(X, self._hash_key)
        participant = self._assign(X, participant, digests, fitting=False)
        only = getattr(self, "_only", None)
        if only is not None and np.any(participant != only):
            raise ValueError(
                f"{type(self).__name__} was fitted for participant {only} only (fit_one); "
                f"got rows of participant(s) {np.unique(participant[participant != only])}. "
                f"Pass participant={only} for every row."
            )
        Y = np.zeros((X.shape[0], self._n_features_out))
        sigma = self._noise_scale()
        for i in np.unique(participant):
            rows = participant == i
            Yi = self._apply(X[rows], i)
            if sigma > 0:
                Yi = Yi + sigma * self._row_noise(digests[rows, 1], i, Yi.shape[1])
            if not np.all(np.isfinite(Yi)):
                raise ValueError(
                    f"{type(self).__name__}: participant {i}'s uploads overflow float64 (input "
                    f"entries up to {np.abs(X[rows]).max():.3g}). Rescale the data (e.g. "
                    "StandardScaler) before the mechanism."
                )
            Y[rows, : Yi.shape[1]] = Yi
        anchors = self._anchor_uploads()
        # one participant's own uploads carry the local id 0, as it uploads them
        uploads = Uploads(
            Y, participant=participant if only is None else np.zeros_like(participant),
            anchors=anchors, anchor_y=self.anchor_y_, unit_anchor_noise=self._unit_anchor_noise,
        )
        return self._output_container(uploads, index)

    def _output_container(self, uploads, index):
        """``uploads`` in the container ``set_output`` asks for: the :class:`Uploads` itself, or
        under ``"pandas"`` a DataFrame whose ``attrs`` carry the metadata to the aligner."""
        dense = _get_output_config("transform", self)["dense"]
        if dense == "default":
            return uploads
        if dense == "pandas":
            return uploads.to_frame(columns=self.get_feature_names_out(), index=index)
        raise ValueError(
            f"{type(self).__name__}.set_output(transform={dense!r}): a {dense} frame cannot "
            "carry each row's participant and the anchor uploads to the aligner. Use "
            "transform='pandas' (the DataFrame's attrs carry them) or 'default'."
        )


    def _anchor_uploads(self):
        if self.anchor_ is None:
            return None
        return [self._apply(self.anchor_, i) for i in self.participants_]

    def _row_noise(self, row_seeds, i, width):
        return _row_noise(self.noise_seed_, i, row_seeds, width)

    def _participant_of_rows(self, Y, participant):
        if participant is None and isinstance(Y, Uploads) and Y.participant is not None:
            participant = Y.participant
        if participant is None:
            if self.n_participants == 1:
                return np.zeros(np.asarray(Y).shape[0], dtype=np.intp)
            raise ValueError(
                f"{type(self).__name__}.inverse_transform needs to know each row's participant: "
                "pass the Uploads returned by transform, or participant=ids."
            )
        return self._assign(np.asarray(Y), participant, None, fitting=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags
