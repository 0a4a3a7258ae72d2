"""A private classifier of a collaboration: one GaussMix sketch per participant, stacked.

Each participant releases one Gaussian-mixing sketch of its own rows ``[x / C, 1, onehot(y)]``
([1]_); the analyst stacks the releases and fits the Chebyshev-surrogate logistic regression of
Corollary 2 of [1]_ on them (:meth:`MixingLogisticRegression.fit_sketch`, post-processing). A
record belongs to one participant, so the collaboration is ``(epsilon, delta)``-DP per record.

References
----------
.. [1] Lev, Srinivasan, Shenfeld, Ligett, Sekhari and Wilson, "The Gaussian Mixing Mechanism:
   Renyi Differential Privacy via Gaussian Sketches", arXiv:2505.24603, 2025.
"""

# Licence: BSD 3 clause

import math
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._uploads import check_participant_ids
from ..mechanisms import check_row_bound, gaussmix_release
from ..privacy import auto_sketch_rows, calibrate_gaussmix, gaussmix_epsilon
from ..utils._sklearn_compat import Interval, _fit_context, validate_data
from ._mixing import MixingLogisticRegression, _privacy_spent

__all__ = ["GaussMixCollaborationClassifier"]


class GaussMixCollaborationClassifier(ClassifierMixin, BaseEstimator):
    """Private logistic regression of a collaboration: one GaussMix sketch per participant.

    Read more in the :ref:`User Guide <gaussmix_accounting>`.

    Participant ``i`` releases one sketch of its rows ``Z_i = [x / C, 1, onehot(y)]`` (each
    ``x / C`` clipped to norm 1): ``S_i Z_i + sqrt(gamma) C_Z xi`` with ``C_Z = sqrt(3)``, the
    bound of such a row, and ``gamma`` calibrated so that the release is ``(epsilon,
    delta)``-DP for the participant's rows (the Renyi curve of Lemma 1 of [1]_, converted by
    Proposition 1 of [1]_). The analyst stacks the ``n_participants`` releases and maximises
    the degree-2 Chebyshev surrogate of the log-likelihood on them (Corollary 2 of [1]_), as
    :meth:`MixingLogisticRegression.fit_sketch` does. A record belongs to one participant, so
    the collaboration is ``(epsilon, delta)``-DP per record. ``C`` (``row_bound_x``) must be
    public and data-independent; rows beyond it are clipped, never refused (``clipped_`` says
    how many).

    Unlike :class:`MixingLogisticRegression`, which sketches all the rows in one release, the
    analyst here never sees one party's rows next to another's: the utility is that of
    ``n_participants`` independent releases, each carrying its own noise.

    Parameters
    ----------
    n_participants : int, default=2
        Participants, each releasing one sketch; ``participant`` ids lie in ``0 ..
        n_participants - 1``. A participant without rows releases noise only.
    epsilon : float, default=1.0
        Privacy budget of each participant's release (and so of the collaboration, per
        record).
    delta : float, default=1e-6
        The ``delta`` of the ``(epsilon, delta)`` guarantee, in (0, 1).
    row_bound_x : float, default=1.0
        Public bound ``C`` on ``||x_i||``: rows are divided by it and clipped to norm 1.
    Q : float, default=2.0
        Half-width of the approximation interval of the margin ``y x^T theta``.
    random_state : int, RandomState instance or None, default=None
        Source of the sketches and the noise of every participant's release.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    model_ : MixingLogisticRegression
        The analyst's model, fitted on the stacked releases.
    k_ : int
        Sketch rows of each release, ``ceil(2.5 (n_features + 1 + n_classes))``.
    scale_ : float
        Dimensionless scale ``gamma`` of each release.
    noise_ : float
        Standard deviation of the noise added to each release.
    row_bound_z_ : float
        The bound ``sqrt(3)`` of a sketched row ``[x / C, 1, onehot(y)]``.
    epsilon_ : float
        The epsilon of the noise actually added, per record (Proposition 1 of [1]_); at most
        ``epsilon``.
    privacy_spent_ : dict
        ``{"eps", "delta", "rdp"}`` of each participant's release.
    clipped_ : float
        Share of the training rows whose norm exceeded ``row_bound_x``.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    MixingLogisticRegression : The same surrogate from one sketch of all the rows.

    References
    ----------
    .. [1] Lev et al., "The Gaussian Mixing Mechanism: Renyi Differential Privacy via Gaussian
       Sketches", arXiv:2505.24603, 2025.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.linear_model import GaussMixCollaborationClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.uniform(-0.5, 0.5, size=(4000, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> participant = np.arange(4000) % 2
    >>> clf = GaussMixCollaborationClassifier(2, epsilon=1.0, random_state=0)
    >>> clf = clf.fit(X, y, participant=participant)
    >>> clf.k_, bool(clf.score(X, y) > 0.8)
    (13, True)
    """

    __metadata_request__fit = {"participant": True}

    _parameter_constraints: dict = {
        "n_participants": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "row_bound_x": [Interval(Real, 0, None, closed="neither")],
        "Q": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_participants=2, *, epsilon=1.0, delta=1e-6, row_bound_x=1.0, Q=2.0,
                 random_state=None):
        self.n_participants = n_participants
        self.epsilon = epsilon
        self.delta = delta
        self.row_bound_x = row_bound_x
        self.Q = Q
        self.random_state = random_state

    def _rows(self, X):
        return check_row_bound(X / float(self.row_bound_x), 1.0, clip=True)

    def _participants(self, participant, n_samples):
        """Each row's participant: the given ids (within ``0 .. n_participants - 1``), or 0."""
        if participant is None:
            return np.zeros(n_samples, dtype=int)
        participant = check_participant_ids(participant, n_samples)
        if participant.size and participant.max() >= self.n_participants:
            raise ValueError(
                f"participant ids must lie in 0 .. n_participants - 1 = "
                f"{self.n_participants - 1}; got id {int(participant.max())}. Set "
                f"n_participants={int(participant.max()) + 1} or relabel the participants.")
        return participant

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, participant=None):
        """Release each participant's sketch of its rows and fit the surrogate on them all.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training rows of every participant (clipped to ``row_bound_x``).
        y : array-like of shape (n_samples,)
            Class labels.
        participant : array-like of int of shape (n_samples,), default=None
            The participant of each row (routed metadata); ``None``: every row is
            participant 0's.

        Returns
        -------
        self : object
            Fitted classifier.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        participant = self._participants(participant, len(X))
        classes, codes = np.unique(y, return_inverse=True)
        Z = np.hstack([self._rows(X), np.ones((len(X), 1)), np.eye(classes.size)[codes]])
        self.clipped_ = float(np.mean(np.linalg.norm(X, axis=1) > float(self.row_bound_x)))
        self.k_ = auto_sketch_rows(Z.shape[1])  # MixingLogisticRegression's k="auto"
        self.scale_, _ = calibrate_gaussmix(self.k_, float(self.epsilon), float(self.delta),
                                            False)
        self.row_bound_z_ = math.sqrt(3.0)
        rng = check_random_state(self.random_state)
        releases = []
        for i in range(self.n_participants):
            M, info = gaussmix_release(Z[participant == i], k=self.k_,
                                       row_bound=self.row_bound_z_, gamma=self.scale_,
                                       random_state=rng)
            releases.append(M)
        self.noise_ = float(info["sigma"])
        # Proposition 1 of [1]: the epsilon of the noise actually added, per record
        self.epsilon_ = gaussmix_epsilon(self.k_, self.scale_, float(self.delta))[0]
        self.privacy_spent_ = _privacy_spent(self.epsilon, self.delta, self.k_, self.scale_,
                                             None)
        self.model_ = MixingLogisticRegression(Q=self.Q).fit_sketch(np.vstack(releases),
                                                                    classes)
        self.classes_ = classes
        return self

    def predict(self, X):
        """Predicted class labels of the rows (divided by ``row_bound_x`` and clipped).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.model_.predict(self._rows(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True  # private: noise and sketching cost accuracy
        return tags
