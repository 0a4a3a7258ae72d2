"""The Central and Local baselines of data-collaboration experiments (Section 5.2 of [1]_).

Data collaboration sits between two references [1]_: **Central**, an idealized upper bound
that trains one model on the pooled raw rows of every participant (what no participant may
do), and **Local**, where each participant trains on its own raw rows only and is evaluated on
its own test rows. A DC pipeline is worth its privacy when it beats Local. Both take the
``participant`` of each row as routed metadata like every skdc mechanism, so the same sweep
code runs them next to ``Pipeline([mechanism, aligner, model])``.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted

from .._uploads import check_participant_ids
from ..utils._docstring import Substitution
from ..utils._references import kti_paper_references
from ..utils._sklearn_compat import HasMethods, _fit_context, validate_data

__all__ = ["Central", "Local"]

# The parameters and returns the two baselines' methods share (method docstrings: eight
# spaces of indentation).
_X_DOC = """\
X : array-like of shape (n_samples, n_features)
            Raw rows.
"""
_XY_DOC = _X_DOC + """\
        y : array-like of shape (n_samples,)
            Targets.
"""
_FIT_XY_DOC = """\
X : array-like of shape (n_samples, n_features)
            Raw rows of every participant.
        y : array-like of shape (n_samples,)
            Targets.
"""
_FIT_RETURNS_DOC = """\
Returns
        -------
        self : object
            Fitted baseline.
"""
_PREDICT_RETURNS_DOC = """\
Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predictions.
"""
_LOCAL_PARTICIPANT_DOC = """\
participant : array-like of int of shape (n_samples,)
            The participant of each row (required).
"""


class _Baseline(MetaEstimatorMixin, BaseEstimator):
    _parameter_constraints: dict = {"estimator": [HasMethods(["fit", "predict", "score"])]}

    __metadata_request__fit = {"participant": True}
    __metadata_request__predict = {"participant": True}
    __metadata_request__score = {"participant": True}

    def __init__(self, estimator):
        self.estimator = estimator

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.estimator_type = inner.estimator_type
        tags.classifier_tags, tags.regressor_tags = inner.classifier_tags, inner.regressor_tags
        return tags


@Substitution(references=kti_paper_references)
class Central(_Baseline):
    """Central baseline: one estimator on the pooled raw rows of all participants.

    The idealized upper bound of Section 5.2 of [1]_: it ignores who owns which row.
    ``participant`` is accepted (and ignored) so that it is interchangeable with a
    data-collaboration pipeline in experiments.

    Read more in the :ref:`User Guide <experiments>`, and see the gallery example
    :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py`.

    Parameters
    ----------
    estimator : estimator object
        The downstream model (the paper: ``RandomForestClassifier``); cloned at fit.

    Attributes
    ----------
    estimator_ : estimator
        The fitted model.
    classes_ : ndarray of shape (n_classes,)
        The fitted model's class labels (when it is a classifier).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    Local : Each participant alone.

    {references}

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.linear_model import LogisticRegression
    >>> from skdc.audit import Central
    >>> X, y = load_iris(return_X_y=True)
    >>> central = Central(LogisticRegression(max_iter=500)).fit(X, y, participant=y % 2)
    >>> round(central.score(X, y), 2)
    0.97
    """

    @Substitution(fit_xy=_FIT_XY_DOC, fit_returns=_FIT_RETURNS_DOC)
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, participant=None):
        """Fit the model on all rows.

        Parameters
        ----------
        {fit_xy}
        participant : array-like of shape (n_samples,), default=None
            Ignored: the central model pools every participant.

        {fit_returns}
        """
        X, y = validate_data(self, X, y)
        self.estimator_ = clone(self.estimator).fit(X, y)
        return self

    @property
    def classes_(self):
        """The class labels of the fitted model (classifiers only)."""
        check_is_fitted(self)
        return self.estimator_.classes_

    @Substitution(X=_X_DOC, predict_returns=_PREDICT_RETURNS_DOC)
    def predict(self, X, participant=None):
        """Predict with the pooled model.

        Parameters
        ----------
        {X}
        participant : array-like of shape (n_samples,), default=None
            Ignored.

        {predict_returns}
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.estimator_.predict(X)

    @Substitution(xy=_XY_DOC)
    def score(self, X, y, participant=None):
        """The wrapped estimator's score on ``(X, y)``.

        Parameters
        ----------
        {xy}
        participant : array-like of shape (n_samples,), default=None
            Ignored.

        Returns
        -------
        score : float
            Accuracy for classifiers, R^2 for regressors.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.estimator_.score(X, y)


@Substitution(references=kti_paper_references)
class Local(_Baseline):
    """Local baseline: each participant trains on its own raw rows only.

    Participant ``k``'s model sees only its rows; a row is predicted by its own participant's
    model, and :meth:`score` averages the per-participant scores on their own rows. Section
    5.2 of [1]_ compares with a Local baseline without defining it further; this is the
    reading where each party is evaluated on its own test rows.

    Read more in the :ref:`User Guide <experiments>`, and see the gallery example
    :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py`.

    Parameters
    ----------
    estimator : estimator object
        The downstream model; one clone per participant.

    Attributes
    ----------
    estimators_ : list of estimator
        The fitted per-participant models, in participant order.
    participants_ : ndarray of shape (n_participants,)
        Participant ids seen at fit.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    Central : The pooled upper bound.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> from skdc.audit import Local
    >>> X, y = load_iris(return_X_y=True)
    >>> part = np.arange(150) % 3
    >>> local = Local(DecisionTreeClassifier(random_state=0)).fit(X, y, participant=part)
    >>> len(local.estimators_), local.predict(X[:2], participant=part[:2]).tolist()
    (3, [0, 0])
    """

    def _participants(self, participant, n_samples, *, fitting):
        if participant is None:
            raise ValueError(
                "Local needs each row's participant: pass participant=ids (routed metadata "
                "in a Pipeline)."
            )
        participant = check_participant_ids(participant, n_samples)
        if not fitting:
            unseen = np.setdiff1d(np.unique(participant), self.participants_)
            if unseen.size:
                raise ValueError(
                    f"Local: participant id(s) {unseen.tolist()} were not seen at fit (fitted "
                    f"participants: {self.participants_.tolist()}). Fit with rows of every "
                    "participant."
                )
        return participant

    @Substitution(fit_xy=_FIT_XY_DOC, participant=_LOCAL_PARTICIPANT_DOC,
                  fit_returns=_FIT_RETURNS_DOC)
    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, participant=None):
        """Fit one model per participant on its own rows.

        Parameters
        ----------
        {fit_xy}
        {participant}

        {fit_returns}
        """
        X, y = validate_data(self, X, y)
        participant = self._participants(participant, X.shape[0], fitting=True)
        self.participants_ = np.unique(participant)
        self.estimators_ = [
            clone(self.estimator).fit(X[participant == i], y[participant == i])
            for i in self.participants_
        ]
        return self

    @Substitution(X=_X_DOC, participant=_LOCAL_PARTICIPANT_DOC,
                  predict_returns=_PREDICT_RETURNS_DOC)
    def predict(self, X, participant=None):
        """Predict each row with its own participant's model.

        Parameters
        ----------
        {X}
        {participant}

        {predict_returns}
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        participant = self._participants(participant, X.shape[0], fitting=False)
        out = None
        for k, i in enumerate(self.participants_):
            rows = participant == i
            if not rows.any():
                continue
            pred = self.estimators_[k].predict(X[rows])
            if out is None:
                out = np.empty(X.shape[0], dtype=pred.dtype)
            out[rows] = pred
        return out if out is not None else np.empty(0)

    @Substitution(xy=_XY_DOC, participant=_LOCAL_PARTICIPANT_DOC)
    def score(self, X, y, participant=None):
        """Mean over participants of each model's score on its own participant's rows.

        Parameters
        ----------
        {xy}
        {participant}

        Returns
        -------
        score : float
            The average of the per-participant scores.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        y = np.asarray(y)
        participant = self._participants(participant, X.shape[0], fitting=False)
        scores = [
            self.estimators_[k].score(X[participant == i], y[participant == i])
            for k, i in enumerate(self.participants_)
            if np.any(participant == i)
        ]
        return float(np.mean(scores))
