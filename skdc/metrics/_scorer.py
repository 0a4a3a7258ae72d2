"""Privacy scorers: attacks usable wherever scikit-learn takes a scorer.

``make_attack_scorer`` turns an attack and a leakage metric into a scorer
``scorer(fitted_pipeline, X, y)``: it simulates the collusion on the evaluation rows (see
:func:`skdc.attacks.collusion_view`), reconstructs the target's rows, decodes them through the
pipeline's public earlier steps and scores them. **Higher always means more private**, so the
scorer sits next to utility scores in ``GridSearchCV``, ``cross_validate`` or
``permutation_test_score``. Errors propagate: ``error_score`` of the caller decides.
"""

# Licence: BSD 3 clause

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestClassifier
from sklearn.utils.metadata_routing import MetadataRequest

from ..attacks import (
    BaseAttack,
    check_colluders,
    collusion_view,
    get_attack_names,
    make_attack,
)
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._identity_linkage import identity_linkage_accuracy
from ._label_accuracy import reconstruction_label_accuracy
from ._linkage import _MATCHERS, linkage_accuracy
from ._reconstruction import psnr, record_mse, relative_error

__all__ = ["make_attack_scorer"]

_METRICS = ("relative_error", "mse", "psnr", "linkage", "identity_linkage", "label_accuracy")
_METRIC_PARAMS = {
    "relative_error": set(),
    "mse": set(),
    "psnr": {"data_range"},
    "linkage": {"auditor", "matcher", "n_candidates", "galleries", "max_queries",
                "random_state"},
    "identity_linkage": {"references", "reference_identity", "reference_condition", "auditor",
                         "n_lineups", "n_candidates", "one_per_identity", "clip",
                         "random_state"},
    "label_accuracy": {"classifier"},
}


class _PublicSteps:
    """The pipeline's public steps before the mechanism, as one reduction: ``transform``
    projects references as the rows were, ``inverse_transform`` decodes as the
    reconstructions are."""

    def __init__(self, view):
        self._view = view

    def transform(self, X):
        for _, step in self._view.decoders:
            X = step.transform(X)
        return X

    def inverse_transform(self, X):
        return self._view.decode(X)


class _AttackScorer:
    """Callable ``scorer(estimator, X, y=None, participant=None, identity=None)``; higher =
    more private. ``identity`` is taken by ``metric='identity_linkage'`` only."""

    def __init__(self, attack, metric, colluder, target, metric_params):
        self._attack = attack
        self._metric = metric
        self._colluder = colluder
        self._target = target
        self._metric_params = metric_params
        self._participant_request = True
        self._identity_request = True

    def __repr__(self):
        colluder = self._colluder[0] if len(self._colluder) == 1 else list(self._colluder)
        return (
            f"make_attack_scorer({self._attack!r}, metric={self._metric!r}, "
            f"colluder={colluder}, target={self._target})"
        )

    # -- metadata routing: the scorer requests the routed participant ids by default ------
    def set_score_request(self, *, participant=True, identity=True):
        """Request (True), refuse (False) or alias (str) routed ``participant`` metadata, and
        ``identity`` metadata for ``metric='identity_linkage'``.

        Parameters
        ----------
        participant : bool, str or None, default=True
            As in scikit-learn's ``set_score_request``.
        identity : bool, str or None, default=True
            The same for the identity of each evaluation row (identity linkage only).

        Returns
        -------
        self : object
            The scorer.
        """
        self._participant_request = participant
        self._identity_request = identity
        return self

    def _metadata(self):
        return ("participant", "identity") if self._metric == "identity_linkage" else (
            "participant",)

    def get_metadata_routing(self):
        """The scorer's metadata request: ``participant`` (and ``identity`` for identity
        linkage) on ``score``."""
        request = MetadataRequest(owner=self)
        request.score.add_request(param="participant", alias=self._participant_request)
        if self._metric == "identity_linkage":
            request.score.add_request(param="identity", alias=self._identity_request)
        return request

    def _accept_sample_weight(self):
        return False

    # -- scoring ------------------------------------------------------------------------
    def __call__(self, estimator, X, y_true=None, **kwargs):
        unknown = set(kwargs) - set(self._metadata())
        if unknown:
            raise TypeError(
                f"attack scorer got unexpected metadata {sorted(unknown)}; it only takes "
                f"{' and '.join(self._metadata())}."
            )
        view = collusion_view(
            estimator, X, colluder=self._colluder, target=self._target,
            participant=kwargs.get("participant"),
        )
        rec = self._attack.reconstruct(view)
        y = None if y_true is None else np.asarray(y_true)
        if self._metric == "identity_linkage":
            return self._identity_privacy(view, rec, kwargs.get("identity"), X)
        return self._privacy(view, rec, y)

    def _identity_privacy(self, view, rec, identity, X):
        if identity is None:
            raise ValueError(
                "metric='identity_linkage' needs the identity of each evaluation row: call the "
                "scorer as scorer(estimator, X, y, identity=ids), or route it with metadata "
                "routing (params={'identity': ids})."
            )
        identity = np.asarray(identity)
        if identity.shape != (len(X),):
            raise ValueError(
                f"identity must have one entry per evaluation row, shape ({len(X)},); got "
                f"{identity.shape}."
            )
        params = dict(self._metric_params)
        if params.pop("reference_condition", "decoded") == "decoded" and view.decoders:
            params["reference_decoder"] = _PublicSteps(view)
        acc = identity_linkage_accuracy(
            rec.X, identity[view.target_rows], params.pop("references"),
            params.pop("reference_identity"), n_bootstrap=0, **params,
        )
        return 1.0 - float(acc)

    @staticmethod
    def _colluder_sample(view, matcher):
        """The colluders' own rows in the space reconstructions are scored in: the sample
        whose covariance the Mahalanobis matcher reads (None for 'best' when there is none)."""
        if view.colluder_rows.size >= 2:
            return view.colluder_X_input
        if matcher == "best":
            return None  # 'best' then tries the matchers that need no sample
        raise ValueError(
            "metric_params matcher='mahalanobis' reads the covariance of the colluders' rows, "
            f"but colluder(s) {list(view.colluders)} have {view.colluder_rows.size} evaluation "
            "rows (2 needed). Evaluate on rows that include the colluders', or choose "
            "another matcher."
        )

    def _privacy(self, view, rec, y):
        X_true, X_hat = view.truth.X, rec.X
        params = dict(self._metric_params)
        if self._metric == "relative_error":
            return relative_error(X_true, X_hat)
        if self._metric == "mse":
            return record_mse(X_true, X_hat)
        if self._metric == "psnr":
            return -psnr(X_true, X_hat, **params)
        y_target = None if y is None else y[view.target_rows]
        if self._metric == "linkage":
            if params.get("matcher") in ("mahalanobis", "best"):
                params["sample"] = self._colluder_sample(view, params["matcher"])
            return 1.0 - float(linkage_accuracy(X_true, X_hat, y_target, **params))
        # label_accuracy
        if y is None:
            raise ValueError(
                "metric='label_accuracy' needs the labels y of the evaluation rows: call the "
                "scorer as scorer(estimator, X, y)."
            )
        classifier = params.get("classifier")
        if classifier is None:
            if view.colluder_rows.size == 0:
                raise ValueError(
                    "metric='label_accuracy' trains its default classifier on the colluders' "
                    f"clean rows, but colluder(s) {list(view.colluders)} have no evaluation "
                    "rows. Pass "
                    "metric_params={'classifier': fitted_classifier}."
                )
            classifier = RandomForestClassifier(n_estimators=50, random_state=0).fit(
                view.colluder_X_input, y[view.colluder_rows]
            )
        return 1.0 - reconstruction_label_accuracy(X_hat, y_target, classifier)


@validate_params(
    {
        "attack": [StrOptions(set(get_attack_names())), HasMethods(["reconstruct"])],
        "metric": [StrOptions(set(_METRICS))],
        "colluder": [Interval(Integral, 0, None, closed="left"), "array-like"],
        "target": [Interval(Integral, 0, None, closed="left")],
        "metric_params": [None, dict],
    },
    prefer_skip_nested_validation=True,
)
def make_attack_scorer(attack, metric="relative_error", colluder=0, target=1, *,
                       metric_params=None, **attack_params):
    """Make a privacy scorer from an attack and a leakage metric (higher = more private).

    The scorer is called as ``scorer(fitted_pipeline, X, y)``: it builds the collusion view of
    the evaluation rows (:func:`skdc.attacks.collusion_view`: the analyst's fitted aligner plus
    the colluder's disclosed secret, rows and raw anchor, read from the fitted mechanism),
    reconstructs the target's rows, decodes them through the earlier pipeline steps with
    ``inverse_transform`` and scores them. Every metric is turned so that **higher means more
    private**:

    * ``'relative_error'``: ``||Xhat - X||_F / ||X||_F``;
    * ``'mse'``: mean per-record squared error;
    * ``'psnr'``: minus the mean per-record PSNR;
    * ``'linkage'``: one minus the exact-source linkage accuracy (chance: 0.9 for ten-way
      galleries); ``metric_params={'matcher': 'best'}`` lets the attacker keep its best
      matcher (:func:`linkage_accuracy`), the Mahalanobis one under the covariance of the
      colluders' own rows (in the space the reconstructions are scored in);
    * ``'identity_linkage'``: one minus the cross-image identity linkage accuracy of faces
      (:func:`identity_linkage_accuracy`, the paper's CelebA protocol): pass the reserved
      clean images as ``metric_params={'references': ..., 'reference_identity': ...}`` and
      the identity of each evaluation row as ``identity=`` metadata. By default
      (``reference_condition='decoded'``, the reference code's primary condition) each
      reference passes through the pipeline's public steps and back, and is clamped, as the
      reconstructions are; ``'raw'`` embeds the references as given;
    * ``'label_accuracy'``: one minus the reconstruction accuracy of a classifier trained on
      clean data (by default a random forest on the colluders' rows).

    When metadata routing is enabled (``sklearn.set_config(enable_metadata_routing=True)``),
    the scorer requests the routed ``participant`` ids by default, so the target's rows are
    the ones the user declared; otherwise the mechanism's own row assignment decides.
    Exceptions are never turned into NaN here: the caller's ``error_score`` decides.

    Read more in the :ref:`User Guide <what_an_attacker_knows>`; the example
    :ref:`sphx_glr_auto_examples_plot_privacy_utility.py` puts the scorers in a
    ``GridSearchCV``.

    Parameters
    ----------
    attack : str or attack instance
        A name of :func:`skdc.attacks.make_attack`, one of ``'known_secret'``,
        ``'known_anchor'``, ``'mp'``, ``'procrustes'``, ``'alignment_map'``, ``'known_input'``,
        ``'known_sample'``, ``'ica'``, ``'anchor_regression'``, ``'sample_axes'``,
        ``'joint_likelihood'``, or an object with
        ``reconstruct(view)`` (e.g. :class:`~skdc.attacks.KnownAnchorAttack`).
    metric : {'relative_error', 'mse', 'psnr', 'linkage', 'identity_linkage', \
            'label_accuracy'}, default='relative_error'
        The leakage metric.
    colluder : int or array-like of int, default=0
        The colluding participant, or several (e.g. ``[0, 2]``): distinct ids, not the target.
        Each attack documents what several colluders add (:func:`skdc.attacks.collusion_view`).
    target : int, default=1
        The attacked participant.
    metric_params : dict, default=None
        Keyword arguments of the metric: ``auditor``, ``matcher``, ``n_candidates``,
        ``galleries``, ``max_queries``, ``random_state`` for ``'linkage'`` (see
        :func:`linkage_accuracy`; the scorer passes the colluders' rows as its ``sample``);
        ``references`` and ``reference_identity`` (required), ``reference_condition``
        (``'decoded'`` or ``'raw'``), ``auditor``, ``n_lineups``, ``n_candidates``,
        ``one_per_identity``, ``clip``, ``random_state`` for ``'identity_linkage'`` (see
        :func:`identity_linkage_accuracy`); ``data_range`` for ``'psnr'``; a fitted
        ``classifier`` for ``'label_accuracy'``.
    **attack_params : dict
        Parameters of the attack (e.g. ``n_known=20`` for ``'known_input'``).

    Returns
    -------
    scorer : callable
        ``scorer(estimator, X, y=None, participant=None) -> float`` (plus ``identity=`` for
        ``'identity_linkage'``), with ``set_score_request``.

    Examples
    --------
    >>> from skdc.metrics import make_attack_scorer
    >>> am = make_attack_scorer("alignment_map", colluder=[0, 2], target=1)  # two colluders
    >>> am
    make_attack_scorer(AlignmentMapAttack(), metric='relative_error', colluder=[0, 2], target=1)

    It scores a fitted pipeline on evaluation rows:

    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdc.alignment import GOPPAligner
    >>> from skdc.mechanisms import IGDP
    >>> X = np.random.RandomState(0).rand(200, 5)
    >>> am(make_pipeline(IGDP(3, random_state=0), GOPPAligner(0.0)).fit(X), X) < 1e-8
    True
    >>> scorer = make_attack_scorer("procrustes")
    >>> for v in (0.0, 0.3):
    ...     pipe = make_pipeline(IGDP(2, random_state=0), GOPPAligner(v))
    ...     print(v, round(scorer(pipe.fit(X), X), 3))
    0.0 0.0
    0.3 0.315
    """
    if isinstance(attack, str):
        attack = make_attack(attack, **attack_params)
    else:
        attack = clone(attack) if isinstance(attack, BaseAttack) else attack
        if attack_params:
            attack.set_params(**attack_params)
    metric_params = dict(metric_params or {})
    allowed = _METRIC_PARAMS[metric]
    if set(metric_params) - allowed:
        raise ValueError(
            f"metric={metric!r} takes metric_params {sorted(allowed) or 'none'}; got "
            f"{sorted(set(metric_params) - allowed)}."
        )
    if metric == "linkage" and metric_params.get("matcher", "embedding") not in _MATCHERS:
        raise ValueError(
            f"metric_params matcher must be one of {sorted(_MATCHERS)}; got "
            f"{metric_params['matcher']!r}."
        )
    if metric == "identity_linkage":
        missing = {"references", "reference_identity"} - set(metric_params)
        if missing:
            raise ValueError(
                "metric='identity_linkage' matches reconstructions against reserved clean "
                f"images; metric_params lacks {sorted(missing)}. Pass e.g. metric_params="
                "{'references': X[split.reference], 'reference_identity': "
                "identity[split.reference]} from skdc.datasets.identity_split."
            )
        condition = metric_params.get("reference_condition", "decoded")
        if condition not in ("decoded", "raw"):
            raise ValueError(
                f"metric_params reference_condition must be 'decoded' (the references pass "
                f"through the pipeline's public steps and back) or 'raw'; got {condition!r}."
            )
    colluder = check_colluders(colluder, target=target)
    return _AttackScorer(attack, metric, colluder, target, metric_params)
