"""Every option a data team has, side by side: utility, the strongest attack, and epsilon.

:func:`audit` answers "at what noise is *this* deployment safe?". A hospital choosing whether and
how to collaborate weighs several ways against each other, and its privacy officer asks which
of them carries a formal guarantee. :func:`compare_options` runs them all on the same rows, the
same partition and the same held-out rows, each at its calibrated or stated setting:

* ``"local"``: no collaboration; each participant's own model on its own rows (the utility
  floor; nothing leaves home);
* ``"central"``: the raw rows pooled (the utility ceiling; the analyst holds every row, so the
  attack error is 0);
* ``"igdp"``: I-GDP with noisy-anchor GOPP alignment [1]_, the anchor noise ``v`` calibrated;
* ``"cgdp"``: C-GDP, the private-data noise ``sigma`` calibrated;
* ``"kti"``: the nonlinear route of the KTI paper [2]_, per-participant kernel PCA (or UMAP)
  with a SMOTE anchor and KTI+TSL integration, judged by the paper's anchor-regression
  reconstruction attacks (Section 5.5 of [2]_), its dimension calibrated;
* ``"gaussmix"``: Gaussian sketches [3]_ at the epsilons the user states, with their Renyi-DP
  accounting: the one option with a formal guarantee.

Calibrated options use :func:`calibrate_noise`'s distribution-free rule (with ``n`` fresh
deployments of which ``m`` fail, a fresh one fails with probability at most ``(m + 1) / (n +
1)``); every draw redraws a whole deployment on the fixed partition and is checkpointed, so an
interrupted comparison resumes. At each option's setting a few more draws measure what the
European guidance on anonymisation asks about (Article 29 Working Party, Opinion 05/2014):
exact-source linkage of the reconstructions (singling out, linkability) and attribute inference
from them (inference). The anchor noise, the private-data noise and the dimension are
empirical, attack-relative protections, never differential privacy; the report says so.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
.. [2] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
.. [3] Lev, Srinivasan, Shenfeld, Ligett, Sekhari and Wilson, "The Gaussian Mixing Mechanism:
   Renyi Differential Privacy via Gaussian Sketches", arXiv:2505.24603, 2025.
"""

# Licence: BSD 3 clause

import math
import os
import warnings
from dataclasses import dataclass, field
from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ..utils._checkpoint import DrawCheckpoint
from ..utils._deployment import settings_fingerprint
from ..utils._draw_jobs import _Maker, _resolve_scoring, _SweepContext
from ..utils._files import write_outputs
from ..utils._progress import run_progress, stage_progress
from ..utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
    validate_params,
)
from ._audit import (
    _COMPARE_NAMES,
    _DEPLOYMENTS,
    _advice,
    _check_rows,
    _checkpoint_folder,
    _default_bounds,
    _labels,
    _model,
    _model_params,
    _parties,
    _pipeline,
    _scale,
    _split_rows,
    _where,
)
from ._calibrate import (
    _MAX_LINKAGE,
    _RUN_CONSTRAINTS,
    _UNLINKED,
    _V_PT_COLUMN,
    _attack_of,
    _attacked_rows,
    _check_draws,
    _check_range,
    _content_hash,
    _data_digest,
    _FittedAttribute,
    _linkage_params,
    _mean_interval,
    _OnRows,
    _order_bounds,
    _planned_values,
    _prediction_bounds,
    _resolve_target,
    _result,
    _row_fields,
    _Runner,
    _Search,
)

__all__ = ["ComparedOption", "Comparison", "compare_options"]

OPTIONS = ("local", "central", "igdp", "cgdp", "kti", "gaussmix")
# the checkpoint files a comparison writes in its folder (and `--fresh` may remove)
CHECKPOINT_FILES = tuple(f"compare_{o}.jsonl" for o in ("igdp", "cgdp", "kti", "gaussmix")) \
    + tuple(f"measure_{o}.jsonl" for o in ("igdp", "cgdp", "kti"))
_LABELS = {"local": "Local (each alone)", "central": "Central (raw rows pooled)",
           "igdp": "I-GDP + GOPP", "cgdp": "C-GDP", "kti": "{red} + KTI",
           "gaussmix": "GaussMix"}
_REDUCTIONS = {"kpca": "kernel PCA", "umap": "UMAP"}
# the KTI paper's attacks of Section 5.5: regress raw anchor rows on the target's anchor upload
_ANCHOR_ATTACKS = {"pinv": {"regressor": "pinv"}, "lr": {"regressor": "lr"},
                   "mlp": {"regressor": "mlp", "random_state": 0}}
_N_BOOTSTRAP = 2000
# the named attacks' relative-error columns (a checkpoint keeps them within 0 and 1e6)
_ERROR_ATTACKS = tuple(dict.fromkeys(a for _, names in _DEPLOYMENTS.values() for a in names))
_MAX_EPSILONS = 16
# below it GaussMix's noise is thousands of times the rows' bound: its model is at chance
# (balanced accuracy 0.500 measured at 0.001), and far below (1e-30) the report's log axis fails
_MIN_EPSILON = 1e-3


# ----------------------------------------------------------------------------- the sketch option


class _SketchCollaboration(ClassifierMixin, BaseEstimator):
    """Each participant releases one GaussMix sketch of its rows ``[x / C, 1, onehot(y)]``;
    the analyst stacks the releases and fits the Chebyshev-surrogate logistic regression
    (Corollary 2 of [3]).

    A participant's release is ``S_i Z_i + sqrt(gamma) C_Z xi`` with ``C_Z = sqrt(3)`` (rows
    clipped to norm 1, the constant 1 and a one-hot label), ``gamma`` calibrated so that it is
    ``(epsilon, delta)``-DP for the participant's rows (Lemma 1 and Proposition 1 of [3]); a
    record belongs to one participant, so the collaboration is ``(epsilon, delta)``-DP per
    record. ``C`` (``row_bound``) must be public and data-independent.
    """

    __metadata_request__fit = {"participant": True}

    _parameter_constraints = {
        "n_participants": [Interval(Integral, 1, None, closed="left")],
        "epsilon": [Interval(Real, 0, None, closed="neither")],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "row_bound": [Interval(Real, 0, None, closed="neither")],
        "Q": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_participants=2, *, epsilon=1.0, delta=1e-6, row_bound=1.0, Q=2.0,
                 random_state=None):
        self.n_participants = n_participants
        self.epsilon = epsilon
        self.delta = delta
        self.row_bound = row_bound
        self.Q = Q
        self.random_state = random_state

    def _rows(self, X):
        from ..mechanisms import check_row_bound

        return check_row_bound(X / float(self.row_bound), 1.0, clip=True)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, participant=None):
        from sklearn.utils import check_random_state

        from ..linear_model import MixingLogisticRegression
        from ..mechanisms import calibrate_gaussmix, gaussmix_release
        from ..privacy import gaussmix_epsilon

        X, y = validate_data(self, X, y, dtype=np.float64)
        participant = np.zeros(len(X), dtype=int) if participant is None \
            else np.asarray(participant)
        classes, codes = np.unique(y, return_inverse=True)
        Z = np.hstack([self._rows(X), np.ones((len(X), 1)), np.eye(classes.size)[codes]])
        self.clipped_ = float(np.mean(np.linalg.norm(X, axis=1) > float(self.row_bound)))
        self.k_ = math.ceil(2.5 * Z.shape[1])  # MixingLogisticRegression's k="auto"
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
        # Proposition 1 of [3]: the epsilon of the noise actually added, per record
        self.epsilon_ = gaussmix_epsilon(self.k_, self.scale_, float(self.delta))[0]
        self.model_ = MixingLogisticRegression(Q=self.Q).fit_sketch(np.vstack(releases),
                                                                    classes)
        self.classes_ = classes
        return self

    def predict(self, X):
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.model_.predict(self._rows(X))


# ----------------------------------------------------------------------------- results


@dataclass(eq=False)
class ComparedOption:
    """One option of a :func:`compare_options` comparison, at its setting.

    Read more in the :ref:`User Guide <safety>`.

    Attributes
    ----------
    name : str
        ``"local"``, ``"central"``, ``"igdp"``, ``"cgdp"``, ``"kti"`` or ``"gaussmix@EPS"``.
    label : str
        The option in words.
    protection : str
        ``"nothing shared"``, ``"none"`` (raw rows), ``"empirical"`` (attack-relative) or
        ``"formal"`` (``(epsilon, delta)``-DP).
    setting : str
        The setting in words (``"anchor noise v = 0.19"``; ``""`` when there is none).
    value : float
        The setting's value (the anchor noise, the private-data noise, the dimension or
        epsilon); NaN for Local and Central.
    utility : float
        Mean balanced accuracy on the held-out rows.
    utility_interval : tuple of (float, float)
        Its interval at the comparison's confidence: Student-t over the deployments drawn, or,
        for Local and Central (nothing random), a percentile bootstrap over the held-out rows.
    interval_over : str
        What the interval is over.
    n_draws : int
        Simulated deployments at the setting.
    attack : str or None
        The strongest attack (the binding one at the setting); ``None`` when none applies.
    attack_error : float
        Its error that a fresh deployment exceeds at the comparison's confidence (the
        criterion's lower bound over the draws); 0 for Central; NaN when no attack applies.
    attack_error_median : float
        Its median error over the draws.
    linkage : float
        Exact-source linkage accuracy of the strongest attack's reconstructions (chance in
        ``linkage_chance``); NaN when not measured.
    linkage_chance : float
        A random guess's linkage accuracy.
    inference : float
        Label accuracy of a clean-data classifier on the reconstructions (the KTI paper's
        ReconAcc); NaN when not measured.
    inference_chance : float
        The target's majority-label share (guessing the commonest label). The labels reach
        the analyst in every option, so label inference is no risk measure of its own.
    sensitive_gain : float
        How much better the strongest attack predicts the ``sensitive`` column from the
        reconstructions than from what it already holds (median over the deployments at the
        setting, ``1 - MSE(reconstruction) / MSE(own guess)``); NaN when no column was
        named.
    epsilon, delta : float
        The formal guarantee (GaussMix only; NaN otherwise).
    meets : bool or None
        Whether the option meets the target at the confidence (``None``: not measured, or
        nothing shared).
    calibration : NoiseCalibration or None
        The calibration of a calibrated option.
    draws : pandas.DataFrame
        The option's draws (calibration and measurement), column ``stage`` telling which.
    extra : dict
        What the option's own report section needs: each attack's measured ``(linkage,
        inference)`` and the pipeline of a calibrated option; the KTI route's ``top`` and
        ``dimension``; GaussMix's sketch rows ``k``, ``scale`` (gamma), ``noise`` (sigma),
        ``row_bound``, ``row_bound_z`` and the share of rows ``clipped``.
    """

    name: str
    label: str
    protection: str
    setting: str
    value: float
    utility: float
    utility_interval: tuple
    interval_over: str
    n_draws: int
    attack: object = None
    attack_error: float = float("nan")
    attack_error_median: float = float("nan")
    linkage: float = float("nan")
    linkage_chance: float = float("nan")
    inference: float = float("nan")
    inference_chance: float = float("nan")
    sensitive_gain: float = float("nan")
    epsilon: float = float("nan")
    delta: float = float("nan")
    meets: object = None
    calibration: object = field(default=None, repr=False)
    draws: object = field(default=None, repr=False)
    extra: dict = field(default_factory=dict, repr=False)


@dataclass
class HeldOut:
    """The comparison's one split and partition (every option uses it).

    Attributes
    ----------
    X_train, y_train, participant_train : ndarray
        The training rows, their labels and participants.
    X_test, y_test, participant_test : ndarray
        The held-out rows (utility; the attacks read the training rows too).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    participant_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    participant_test: np.ndarray


@dataclass(eq=False)
class Comparison:
    """The result of :func:`compare_options`: every option side by side, a verdict, the
    deployment of the chosen option and the HTML report.

    Read more in the :ref:`User Guide <safety>`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per option: utility and its interval, the cost against Local and Central,
        the strongest attack's error, exact-source linkage, attribute inference, epsilon,
        whether it meets the target.
    options : dict of {str: ComparedOption}
        Each option's result.
    verdict : dict
        ``decision``: ``"collaborate"`` when an option meets every target under every attack
        and beats each participant alone (Local), else ``"do not collaborate"``; ``sentence``
        (the answer in words, opening with the decision: "Collaborate: ..." or "Do not
        collaborate: ..."), ``meeting`` (the collaborations meeting the targets), ``formal``
        (the options with a formal guarantee), ``best`` (the meeting option of highest
        utility, or ``None``) and ``deploy`` (the meeting option of highest utility that
        ``skdc participant upload`` deploys: I-GDP or C-GDP, or ``None``; when Local does
        better the report offers it only as what to deploy should the participants
        collaborate anyway).
    regulator : pandas.DataFrame
        The risks of the Article 29 Working Party's Opinion 05/2014 on anonymisation
        techniques (singling out, linkability, inference): what measures each, and what is
        not measured.
    deployment : dict or None
        For ``verdict["deploy"]``: the audited ``settings``, their ``fingerprint`` (checked by
        ``skdc analyst fit --audit-fingerprint``), the ``commands`` each party runs, and the
        audited ``draw`` (its seeds) that the flags reproduce bit for bit.
    held_out : HeldOut
        The split and the partition.
    setting : dict
        The comparison's settings in words and numbers.
    html : str
        The self-contained report.
    files : dict of {str: str}
        What :meth:`save` wrote (empty until then).

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.datasets import make_classification
    >>> from skdc.audit import compare_options
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> cmp = compare_options(X, y, options=["local", "central", "gaussmix"],
    ...                       epsilons=[4.0], n_participants=2, confidence=0.75,
    ...                       progress=False)
    >>> list(cmp.table["option"])
    ['local', 'central', 'gaussmix@4']
    >>> sorted(cmp.save(tempfile.mkdtemp()))
    ['comparison', 'decisions', 'draws', 'regulator', 'report']
    """

    table: object
    options: dict = field(repr=False)
    verdict: dict = field(repr=False)
    regulator: object = field(repr=False)
    deployment: object = field(repr=False)
    held_out: HeldOut = field(repr=False)
    setting: dict = field(repr=False)
    html: str = field(repr=False)
    files: dict = field(default_factory=dict)

    def save(self, out):
        """Write ``report.html``, the CSV tables and, when an option is deployable,
        ``deployment.json`` and ``deployment.txt`` into the folder ``out``.

        Every file is written whole through a temporary file, never through a link at its
        name, readable by others as an ordinary file would be (``0644`` less the umask).

        Parameters
        ----------
        out : str or Path
            Folder (created when missing; refused when it is, or lies under, a file).

        Returns
        -------
        files : dict of {str: str}
            The files written.
        """
        import json

        import pandas as pd

        draws = pd.concat([o.draws.assign(option=k) for k, o in self.options.items()
                           if o.draws is not None and len(o.draws)], ignore_index=True) \
            if any(o.draws is not None and len(o.draws) for o in self.options.values()) \
            else pd.DataFrame({"option": []})
        draws.insert(0, "option", draws.pop("option"))
        outputs = {"report": ("report.html", self.html),
                   "comparison": ("comparison.csv", self.table.to_csv(index=False)),
                   "regulator": ("regulator.csv", self.regulator.to_csv(index=False)),
                   "draws": ("draws.csv", draws.to_csv(index=False)),
                   "decisions": ("decisions.csv", _decisions(self.options).to_csv(index=False))}
        if self.deployment is not None:
            doc = {k: self.deployment[k] for k in ("option", "settings", "fingerprint",
                                                   "commands")}
            outputs["deployment"] = ("deployment.json", json.dumps(doc, indent=2) + "\n")
            outputs["commands"] = ("deployment.txt", self.deployment["text"])
        self.files = write_outputs(out, outputs, "the comparison", folder_what="--out")
        return self.files

    def plot(self, axes=None):
        """Utility against the strongest attack's error (left) and against epsilon (right).

        Parameters
        ----------
        axes : pair of matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.

        Returns
        -------
        axes : pair of matplotlib Axes
        """
        from ._compare_report import plot_comparison

        return plot_comparison(self, axes)


def _decisions(options):
    """Every calibrated option's decisions, one table (column ``option`` first)."""
    import pandas as pd

    parts = [o.calibration.decisions.assign(option=k) for k, o in options.items()
             if o.calibration is not None]
    if not parts:
        return pd.DataFrame({"option": []})
    table = pd.concat(parts, ignore_index=True)
    table.insert(0, "option", table.pop("option"))
    return table


# ----------------------------------------------------------------------------- the comparison


@dataclass
class _Context:
    """What every option of one comparison shares."""

    X: np.ndarray
    held: HeldOut
    split: object
    n_participants: int
    colluder: int
    target: int
    model: object
    target_error: object
    confidence: float
    n_draws: int
    criterion: str
    xtol: object
    seeds: dict
    n_jobs: object
    batch_size: object
    folder: object
    progress: object
    n_measure: int
    delta: float
    row_bound: float
    nonlinear: str
    max_components: object
    public: object
    resumed: list = field(default_factory=list)
    max_linkage: object = _MAX_LINKAGE
    sensitive: object = None
    max_sensitive_gain: object = None
    estimator: object = None
    model_params: dict = field(default_factory=dict)
    n_anchors: object = None
    words: dict = field(default_factory=dict)

    @property
    def targets(self):
        """The targets as the audit's calibration takes them."""
        return {"target_error": self.target_error, "max_linkage": self.max_linkage,
                "sensitive": self.sensitive, "max_sensitive_gain": self.max_sensitive_gain}


def _check_options(options, epsilons):
    """The options as a list (``gaussmix`` expanded to one per epsilon) and the epsilons."""
    options = list(OPTIONS) if options is None else list(dict.fromkeys(options))
    unknown = [o for o in options if o not in OPTIONS]
    if unknown or not options:
        raise ValueError(f"options must name some of {list(OPTIONS)}; got {options!r}.")
    eps = []
    if "gaussmix" in options:
        eps = [float(e) for e in np.atleast_1d(np.asarray(epsilons, dtype=object))]
        if not eps or len(eps) > _MAX_EPSILONS or not all(
                math.isfinite(e) and _MIN_EPSILON <= e <= 1e3 for e in eps):
            raise ValueError(f"epsilons must be 1 to {_MAX_EPSILONS} finite privacy budgets "
                             f"in [{_MIN_EPSILON:g}, 1000] (below, GaussMix's model is at "
                             f"chance); got {epsilons!r}.")
        eps = sorted(set(eps))
    return options, eps


@validate_params(
    {
        **{k: v for k, v in _RUN_CONSTRAINTS.items() if k not in ("colluder", "test_size")},
        "X": ["array-like"],
        "y": ["array-like"],
        "options": [list, tuple, None],
        "epsilons": ["array-like"],
        "n_participants": [Integral],
        "target_error": [Real, None],
        "max_linkage": [Interval(Real, 0, 1, closed="both"), None],
        "sensitive": [Interval(Integral, 0, None, closed="left"), None],
        "max_sensitive_gain": [Interval(Real, 0, 1, closed="both"), None],
        "colluder": [Interval(Integral, 0, None, closed="left")],
        "partition": ["array-like", None],
        "model": [StrOptions({"logistic", "ridge"}), HasMethods(["fit"])],
        "model_params": [dict, None],
        "n_anchors": [Interval(Integral, 2, None, closed="left"), None],
        "nonlinear": [StrOptions(set(_REDUCTIONS))],
        "max_components": [Interval(Integral, 1, None, closed="left"), None],
        "public": [tuple, None],
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "row_bound": [Interval(Real, 0, None, closed="neither"), None],
        "n_measure": [Interval(Integral, 1, 1000, closed="both")],
        "test_size": [Interval(Real, 0, 1, closed="neither")],
        "random_state": "no_validation",  # checked with the rows, saying why it is an int
        "command_line": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def compare_options(X, y, *, options=None, epsilons=(1.0, 8.0), n_participants=5,
                    partition=None, max_linkage=_MAX_LINKAGE, target_error=None,
                    sensitive=None, max_sensitive_gain=None, confidence=0.95, colluder=0,
                    target=None, model="logistic", model_params=None, n_anchors=None,
                    n_draws=None, criterion="order", xtol=None,
                    nonlinear="kpca", max_components=None, public=None, delta=1e-6,
                    row_bound=None, n_measure=5, test_size=0.3, random_state=0, n_jobs=None,
                    batch_size=None, checkpoint=None, progress="auto", command_line=None):
    """Compare every way to collaborate on the same rows: utility, attacks and epsilon.

    The rows are split once into training and held-out rows and into ``n_participants``
    parties (or as in ``partition``); every option uses that split. Each option runs at its
    calibrated or stated setting (see the module's summary): Local and Central as the floor
    and the ceiling; I-GDP + GOPP, C-GDP and the nonlinear KTI route calibrated for
    the targets (``max_linkage``, and ``target_error`` and ``max_sensitive_gain`` when given)
    at ``confidence`` by :func:`calibrate_noise`'s rule (fresh deployments
    on the fixed partition; the KTI route's largest dimension that passes); GaussMix at each of
    ``epsilons``. At each setting ``n_measure`` deployments measure exact-source linkage and
    attribute inference from the strongest attack's reconstructions. The verdict opens with
    the decision: "Collaborate" when an option meets every target and beats each participant
    alone (Local), else "Do not collaborate", with why (Local gets more; or no option meets
    the targets in the ranges tried, the linkage the strongest attack keeps there and what
    would help). When collaborating, it writes the ``skdc participant upload`` flags of the
    best of I-GDP and C-GDP that meets the targets and the settings' fingerprint that ``skdc
    analyst fit --audit-fingerprint`` checks. The verdict holds for the attacks run, not for
    every attack; only GaussMix carries a formal guarantee.

    Read more in the :ref:`User Guide <safety>`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The rows (standardize them as the collaboration will; attack errors are relative to
        their scale).
    y : array-like of shape (n_samples,)
        Their class labels.
    options : list of str, default=None
        Some of ``"local"``, ``"central"``, ``"igdp"``, ``"cgdp"``, ``"kti"``,
        ``"gaussmix"``; ``None``: all.
    epsilons : array-like of float, default=(1.0, 8.0)
        The privacy budgets at which GaussMix runs (one option each, at most 16).
    n_participants : int, default=5
        Parties the rows are split into (ignored with ``partition``).
    partition : array-like of int of shape (n_samples,), default=None
        The party of each row.
    max_linkage : float or None, default=0.15
        The largest acceptable exact-source linkage accuracy under every attack (chance 0.1
        with ten-way galleries; the default is chance + 0.05), by the attacker's best
        matcher; ``None``: not judged.
    target_error : float, default=None
        The acceptable relative reconstruction error ``||Xhat - X||_F / ||X||_F``, judged
        with the linkage; ``None``: reported, not judged.
    sensitive : int, default=None
        A sensitive column of ``X``: the table gives how much better the strongest attack
        predicts it from the reconstructions than from what the attacker already holds (the
        target's labels and the colluder's rows). The labels reach the analyst in every
        option, so label inference is no risk measure of its own.
    max_sensitive_gain : float, default=None
        The largest acceptable gain on ``sensitive``; ``None``: reported, not judged.
    confidence : float, default=0.95
        Probability that a fresh deployment meets the target; also the level of the
        utility intervals.
    colluder : int, default=0
        The participant colluding with the analyst.
    target : int, default=None
        The attacked participant; ``None``: 1, or 0 when the colluder is 1.
    model : {"logistic", "ridge"} or estimator, default="logistic"
        The analyst's model (Local's and Central's too). GaussMix fits its own private
        logistic regression. With imbalanced labels (the smallest class below 80% of an even
        share: 40% of two) ``"logistic"`` and ``"ridge"`` weigh the classes alike
        (``class_weight="balanced"``) unless ``model_params`` sets ``class_weight``; the
        verdict warns when Central (no noise) scores within 0.05 of chance.
    model_params : dict, default=None
        Parameters set on the model, as ``skdc analyst fit --model-param`` sets them (the
        deployment's ``analyst fit`` command carries them).
    n_anchors : int, default=None
        Anchor rows of the I-GDP option (``None``: 4 per feature); more raise v_PT.
    n_draws : int, default=None
        Most deployments per evaluated setting; ``None``: the fewest the criterion needs.
    criterion : {"order", "clopper-pearson", "normal"}, default="order"
        How a setting is judged (see :func:`calibrate_noise`).
    xtol : float, default=None
        Bracket width of the noise calibrations, as a share of their range; ``None``: 1/32.
    nonlinear : {"kpca", "umap"}, default="kpca"
        The per-participant reduction of the KTI route.
    max_components : int, default=None
        The KTI route's largest dimension; ``None``: the rows' width (at most the smallest
        party's rows less one).
    public : tuple of (X_public, y_public), default=None
        Public rows the SMOTE anchor of the KTI route is made from; ``None``: the colluder's
        training rows (they reach the attacker anyway; the target's rows never do).
    delta : float, default=1e-6
        GaussMix's delta.
    row_bound : float, default=None
        GaussMix's public row-norm bound ``C`` (rows are divided by it and clipped to norm 1);
        ``None``: ``sqrt(n_features)``, the norm of a standardized row on average. It must
        not be read off the data.
    n_measure : int, default=5
        Deployments measuring linkage and inference at each calibrated setting.
    test_size : float, default=0.3
        Share of rows held out.
    random_state : int, default=0
        The one seed of the comparison.
    n_jobs : int, default=None
        Parallel draws (joblib).
    batch_size : int, default=None
        Draws run together before a setting's verdict is checked.
    checkpoint : str or Path, default=None
        Folder of the draw checkpoints; a rerun with the same folder and settings resumes.
    progress : bool or "auto", default="auto"
        Each option's stages (calibration, measurement, GaussMix's draws) show draws done out
        of draws planned (at most, for a calibration: a setting decided early needs fewer),
        the time spent and an estimate, and, after the first draws, an estimate of the whole
        comparison with how to shorten it: tqdm bars when stderr is a terminal, else
        (``"auto"``) one line on stderr per stage, per setting decided and per minute of
        draws, for a log file; ``False``: nothing.
    command_line : str, default=None
        The command printed under "How to reproduce it"; when given, the verdict's and the
        report's advice and the progress's estimate name the command line's flags instead
        of this function's parameters.

    Returns
    -------
    comparison : Comparison

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdc.audit import compare_options
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> cmp = compare_options(X, y, options=["local", "central", "gaussmix"],
    ...                       epsilons=[4.0], n_participants=2, confidence=0.75,
    ...                       progress=False)
    >>> cmp.options["central"].attack_error, cmp.options["gaussmix@4"].protection
    (0.0, 'formal')
    """
    X, y = _check_rows(X, y, target_error, random_state)
    names, eps = _check_options(options, epsilons)
    ctx = _context(X, y, partition=partition, n_participants=n_participants,
                   colluder=colluder, target=target, model=model, target_error=target_error,
                   confidence=confidence, n_draws=n_draws, criterion=criterion, xtol=xtol,
                   random_state=random_state, n_jobs=n_jobs, batch_size=batch_size,
                   checkpoint=checkpoint, progress=progress, n_measure=n_measure, delta=delta,
                   row_bound=row_bound, nonlinear=nonlinear, max_components=max_components,
                   public=public, test_size=test_size, model_params=model_params,
                   n_anchors=n_anchors, cli=command_line is not None)
    if max_linkage is None and target_error is None:
        raise ValueError("Nothing is judged: give a linkage target (max_linkage=) or an error "
                         "target (target_error=).")
    if max_sensitive_gain is not None and sensitive is None:
        raise ValueError("max_sensitive_gain= is a target for the sensitive column; name it "
                         "with sensitive=.")
    if sensitive is not None and not sensitive < X.shape[1]:
        raise ValueError(f"sensitive must be a column index from 0 to {X.shape[1] - 1}; got "
                         f"{sensitive!r}.")
    ctx.max_linkage, ctx.sensitive = max_linkage, sensitive
    ctx.max_sensitive_gain = max_sensitive_gain
    from ._report import noise_label

    results = {}
    with run_progress(_plan(ctx, names, eps), progress,
                      _advice(command_line is not None, n_jobs, "options"),
                      "skdc audit" if command_line is not None else "skdc",
                      {p: noise_label(p) for p, _ in _DEPLOYMENTS.values()}) as run:
        for name in names:
            with run.step(name):
                if name == "gaussmix":
                    results.update((o.name, o) for o in _run_gaussmix(ctx, eps))
                else:
                    results[name] = _RUNNERS[name](ctx)
    return _assemble(ctx, X, y, partition, results, eps, command_line, random_state)


def _plan(ctx, names, epsilons):
    """``[(stage, draws)]``: every option's stages with their most draws, as the runners
    label them (an option whose settings its runner refuses plans nothing: it says why)."""
    plan, measure = [], min(ctx.n_measure, ctx.n_draws)
    for name in names:
        try:
            if name in ("igdp", "cgdp"):
                param, low, high, xtol = _gdp_range(ctx, name)
                plan.append((f"{name}: calibrate {param}",
                             ctx.n_draws * _planned_values(low, high, xtol)))
            elif name == "kti":
                top = _top_dimension(ctx)
                plan.append(("kti: calibrate KTI dimension",
                             ctx.n_draws * (1 if top == 1 else _planned_values(0, top - 1, 1))))
            elif name == "gaussmix":
                plan.append(("gaussmix: draws at each epsilon", len(epsilons) * ctx.n_draws))
        except (TypeError, ValueError):
            continue
        if name in ("igdp", "cgdp", "kti"):
            plan.append((f"{name}: measure linkage and inference", measure))
    return plan


def _context(X, y, *, partition, n_participants, colluder, target, model, target_error,
             confidence, n_draws, criterion, xtol, random_state, n_jobs, batch_size,
             checkpoint, progress, n_measure, delta, row_bound, nonlinear, max_components,
             public, test_size, model_params=None, n_anchors=None, cli=False):
    """The split, the partition, the roles and every option's seed, fixed once."""
    rng = np.random.RandomState(random_state)
    parties, n_participants = _parties(partition, n_participants, X)
    target = _resolve_target(colluder, target, n_participants)
    labels = _labels(y)
    params, balanced = _model_params(model, model_params, labels)
    estimator = _model(model, params)
    # the partition by the I-GDP mechanism's keyed hash (as the audit makes it), then fixed
    pipe = _pipeline("igdp", "gopp", n_participants, estimator, random_state, n_anchors)
    split = _split_rows(X, y, parties, test_size, rng, pipe)
    for ids, rows in ((split.p_tr, "training"), (split.p_te, "held-out")):
        missing = sorted(set(range(n_participants)) - set(np.unique(ids).tolist()))
        if missing:
            raise ValueError(f"participant(s) {missing} have no {rows} rows; give more rows "
                             "or fewer participants.")
    seeds = dict(zip(OPTIONS, (int(s) for s in rng.randint(2**31 - 1, size=len(OPTIONS)))))
    if xtol is not None and not (math.isfinite(xtol) and 0 < xtol < 1):
        raise ValueError(f"xtol must be a share of each noise range in (0, 1); got {xtol!r}.")
    if public is not None and len(public) != 2:
        raise ValueError("public must be (X_public, y_public).")
    held = HeldOut(split.X_tr, split.y_tr, split.p_tr, split.X_te, split.y_te, split.p_te)
    return _Context(
        X=X, held=held, split=split, n_participants=n_participants, colluder=int(colluder),
        target=target, model=model,
        target_error=None if target_error is None else float(target_error),
        confidence=float(confidence), n_draws=_check_draws(n_draws, confidence, criterion),
        criterion=criterion, xtol=xtol, seeds=seeds, n_jobs=n_jobs, batch_size=batch_size,
        folder=_checkpoint_folder(checkpoint), progress=progress, n_measure=int(n_measure),
        delta=float(delta),
        row_bound=float(math.sqrt(X.shape[1]) if row_bound is None else row_bound),
        nonlinear=nonlinear, max_components=max_components, public=public,
        estimator=estimator, model_params=params, n_anchors=n_anchors,
        words={**labels, "cli": cli, "balanced": balanced, "model_params": params,
               "model": model if isinstance(model, str) else type(model).__name__})


# ----------------------------------------------------------------------------- Local, Central


_BOOTSTRAP_CELLS = 4_000_000  # indices a batch of resamples holds at once


def _resampled_balanced_accuracy(y_true, correct, idx):
    """The balanced accuracy of each resample (a row of indices ``idx``)."""
    yt, ok = y_true[idx], correct[idx]
    recalls = []
    for c in np.unique(y_true):
        n_c = (yt == c).sum(axis=1)
        with np.errstate(invalid="ignore"):
            recalls.append(np.where(n_c > 0, (ok & (yt == c)).sum(axis=1) / np.maximum(n_c, 1),
                                    np.nan))
    return np.nanmean(np.vstack(recalls), axis=0)


def _balanced_accuracy_bootstrap(y_true, y_pred, confidence, seed):
    """Balanced accuracy and its percentile bootstrap interval over the held-out rows."""
    from sklearn.metrics import balanced_accuracy_score

    y_true, correct = np.asarray(y_true), np.asarray(y_true) == np.asarray(y_pred)
    n, rng = len(y_true), np.random.RandomState(seed)
    # resamples in batches of at most ~4 million indices, drawn in the order of one draw of
    # all of them (the same stream): memory stays linear in the rows
    batch = max(1, min(_N_BOOTSTRAP, _BOOTSTRAP_CELLS // max(n, 1)))
    boot = np.concatenate([
        _resampled_balanced_accuracy(y_true, correct,
                                     rng.randint(n, size=(min(batch, _N_BOOTSTRAP - start), n)))
        for start in range(0, _N_BOOTSTRAP, batch)])
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(boot, [alpha, 1.0 - alpha])
    return float(balanced_accuracy_score(y_true, y_pred)), (float(low), float(high))


def _fit_baseline(ctx, cls):
    from sklearn import config_context

    h = ctx.held
    est = cls(ctx.estimator)
    with config_context(enable_metadata_routing=True):
        est.fit(h.X_train, h.y_train, participant=h.participant_train)
        return est.predict(h.X_test, participant=h.participant_test)


def _run_local(ctx):
    from ._baselines import Local

    util, ci = _balanced_accuracy_bootstrap(ctx.held.y_test, _fit_baseline(ctx, Local),
                                            ctx.confidence, ctx.seeds["local"])
    return ComparedOption(
        name="local", label=_LABELS["local"], protection="nothing shared", setting="",
        value=float("nan"), utility=util, utility_interval=ci,
        interval_over="held-out rows (bootstrap)", n_draws=1, meets=None)


def _run_central(ctx):
    """The analyst holds the raw rows: the target's rows are its 'reconstruction'."""
    from ._baselines import Central

    h = ctx.held
    util, ci = _balanced_accuracy_bootstrap(h.y_test, _fit_baseline(ctx, Central),
                                            ctx.confidence, ctx.seeds["central"])
    # the target's rows and the colluder's, all of them, as the attacks read them
    X, y, p = _attacked_rows(h.X_train, h.y_train, h.X_test, h.y_test, h.participant_train,
                             h.participant_test)
    X_t, y_t = X[p == ctx.target], y[p == ctx.target]
    link, link_chance = _linkage(X_t, X_t, y_t)
    infer = _inference(X_t, y_t, X[p == ctx.colluder], y[p == ctx.colluder])
    return ComparedOption(
        name="central", label=_LABELS["central"], protection="none", setting="raw rows",
        value=float("nan"), utility=util, utility_interval=ci,
        interval_over="held-out rows (bootstrap)", n_draws=1, attack="raw rows",
        attack_error=0.0, attack_error_median=0.0, linkage=link, linkage_chance=link_chance,
        inference=infer, inference_chance=_majority_share(y_t),
        meets=False)


def _linkage(X_true, X_hat, y):
    from ..metrics import linkage_accuracy

    acc = linkage_accuracy(X_true, X_hat, y, **_linkage_params())
    return float(acc), float(acc.chance)


def _inference(X_hat, y_target, X_colluder, y_colluder):
    """ReconAcc with the attack scorer's default reader: a random forest on the colluder's
    clean rows labels the reconstructions."""
    from sklearn.ensemble import RandomForestClassifier

    from ..metrics import reconstruction_label_accuracy

    reader = RandomForestClassifier(n_estimators=50, random_state=0).fit(X_colluder,
                                                                        y_colluder)
    return float(reconstruction_label_accuracy(X_hat, y_target, reader))


def _deployments(n):
    return f"{n} deployment{'' if n == 1 else 's'}"


def _majority_share(y):
    _, counts = np.unique(y, return_counts=True)
    return float(counts.max() / counts.sum())


def _linkage_chance(y, n_candidates=10):
    """A random guess's exact-source linkage: a gallery holds the source and up to
    ``n_candidates - 1`` same-label rows."""
    _, inv, counts = np.unique(y, return_inverse=True, return_counts=True)
    return float(np.mean(1.0 / np.minimum(counts[inv], n_candidates)))


# ----------------------------------------------------------------------------- calibrated options


def _scorers(specs, metric, ctx, metric_params=None):
    """``{name: scorer}`` of named attacks (``{name: (attack, params)}``) under ``metric``,
    scored on every row of the target (training and held-out: the analyst holds both
    uploads), the participants read from the fixed partition."""
    from ..metrics import make_attack_scorer

    h = ctx.held
    X, y, participant = _attacked_rows(h.X_train, h.y_train, h.X_test, h.y_test,
                                       h.participant_train, h.participant_test)
    out = {}
    for name, (attack, params) in specs.items():
        s = make_attack_scorer(attack, metric=metric, colluder=ctx.colluder, target=ctx.target,
                               metric_params=metric_params, **params)
        out[name] = _OnRows(partial(s, participant=participant), X, y)
    return out


def _runner(ctx, maker, scorers, attacks, filename, extra, desc, total=None, early=False):
    """A checkpointed :class:`_Runner` of one option's draws on the comparison's split; its
    progress plans ``total`` draws (at most, with ``early``)."""
    h = ctx.held
    fit_params = {"participant": h.participant_train}
    fingerprint = {"param": maker.param, "redraw": "deployment",
                   "columns": [*scorers, *attacks],
                   "content": _content_hash(maker.estimator, attacks, scorers, h.X_train,
                                            h.y_train, (h.X_test, h.y_test), fit_params,
                                            extra)}
    path = None if ctx.folder is None else os.path.join(ctx.folder, filename)
    ck = DrawCheckpoint(path, fingerprint, _row_fields(
        scorers, attacks, [a for a in attacks if a in _ANCHOR_ATTACKS or a in _ERROR_ATTACKS]))
    data = (h.X_train, h.X_test, h.y_train, h.y_test, fit_params)
    bar = stage_progress(desc, total, ctx.progress, early=early)
    return _Runner(_SweepContext(maker, data, scorers, attacks, inner_threads=1), ctx.n_jobs,
                   ck, bar)


def _utility_scoring():
    return {**_resolve_scoring("balanced_accuracy"),
            _V_PT_COLUMN: _FittedAttribute("v_phase_transition_")}


def _batch(ctx):
    if ctx.batch_size is not None:
        return int(ctx.batch_size)
    from joblib import effective_n_jobs

    return max(1, int(effective_n_jobs(ctx.n_jobs)))


def _run_gdp(ctx, kind):
    """I-GDP + GOPP (anchor noise) or C-GDP (private-data noise), calibrated as the audit
    calibrates them, then measured at the calibrated noise."""
    from ._audit import _calibrate

    mechanism, aligner = {"igdp": ("igdp", "gopp"), "cgdp": ("cgdp", "none")}[kind]
    param, names = _DEPLOYMENTS[(mechanism, aligner)]
    pipe = _pipeline(mechanism, aligner, ctx.n_participants, ctx.estimator, ctx.seeds[kind],
                     ctx.n_anchors)
    _, low, high, xtol = _gdp_range(ctx, kind)
    cal = _calibrate(pipe, ctx.split, param, list(names), ctx.targets, ctx.confidence,
                     ctx.n_draws, (low, high), xtol, ctx.criterion, ctx.colluder, ctx.target,
                     np.random.RandomState(ctx.seeds[kind]), ctx.n_jobs, ctx.batch_size,
                     ctx.folder, ctx.progress, filename=f"compare_{kind}.jsonl",
                     words=_COMPARE_NAMES)
    ctx.resumed.append(cal.n_draws_resumed)
    at, _ = _where(cal)
    specs = {a: (a, {}) for a in names}
    measured = _measure(ctx, kind, _Maker(pipe, param, "deployment"), at, cal, specs)
    words = {"igdp": "anchor noise v", "cgdp": "private-data noise sigma"}[kind]
    return _calibrated_option(ctx, kind, _LABELS[kind], cal, at, f"{words} = {at:.4g}",
                              measured, pipe=pipe, param=param)


def _gdp_range(ctx, kind):
    """``(param, low, high, xtol)``: the noise and the range an I-GDP or C-GDP option
    calibrates over."""
    mechanism, aligner = {"igdp": ("igdp", "gopp"), "cgdp": ("cgdp", "none")}[kind]
    param, _ = _DEPLOYMENTS[(mechanism, aligner)]
    low, high = _default_bounds(param, ctx.n_participants, ctx.X, ctx.n_anchors)
    return (param, *_check_range((low, high), None if ctx.xtol is None
                                 else ctx.xtol * (high - low)))


def _measure(ctx, kind, maker, value, cal, specs):
    """``n_measure`` deployments at ``value`` (the calibration's first draw seeds): exact-source
    linkage and attribute inference of each attack's reconstructions."""
    import pandas as pd

    scorers = {**_resolve_scoring("balanced_accuracy")}
    link = _scorers(specs, "linkage", ctx, _linkage_params())
    infer = _scorers(specs, "label_accuracy", ctx)
    attacks = {**{f"{a} linkage": s for a, s in link.items()},
               **{f"{a} inference": s for a, s in infer.items()}}
    seeds = cal.table.sort_values("draw").drop_duplicates("draw")["draw_seed"]
    seeds = [int(s) for s in seeds][: ctx.n_measure]
    with _runner(ctx, maker, scorers, attacks, f"measure_{kind}.jsonl", specs,
                 "measure linkage and inference", len(seeds)) as run:
        rows = run([(float(value), s) for s in seeds])
    ctx.resumed.append(run.n_resumed)
    table = pd.DataFrame([{"value": float(value), "draw_seed": s, **r}
                          for s, r in zip(seeds, rows)])
    # the scorers say 1 - accuracy (higher = more private): back to accuracies
    out = {}
    for a in specs:
        out[a] = (1.0 - float(table[f"{a} linkage"].mean()),
                  1.0 - float(table[f"{a} inference"].mean()))
    return table, out


def _error_bound(cal, errors):
    """The relative error a fresh deployment exceeds at the calibration's confidence, by its
    criterion (an order statistic, or the Gaussian prediction bound)."""
    if cal.criterion == "normal":
        return float(_prediction_bounds(errors, cal.confidence, "normal")[0])
    return float(_order_bounds(errors, int(cal.decisions["allowed_failures"].iloc[0]) + 1)[0])


def _calibrated_option(ctx, name, label, cal, at, setting, measured, **extra):
    """A calibrated option's row: utility where the verdict is read, the binding attack's
    bounds there, the strongest linkage and inference of the measurement."""
    import pandas as pd

    rows = cal.table[cal.table["value"] == at]
    util, ci = _mean_interval(rows["balanced_accuracy"], ctx.confidence)
    attack = _attack_of(cal.binding_attack)
    bound = _error_bound(cal, rows[attack])
    sens = [c for c in rows.columns if c.endswith(" sensitive")]
    gain = max((1.0 - float(rows[c].median()) for c in sens), default=float("nan"))
    table, by_attack = measured
    strongest_link = max(by_attack.values(), key=lambda t: t[0])[0]
    strongest_infer = max(by_attack.values(), key=lambda t: t[1])[1]
    h = ctx.held
    y_t = np.r_[h.y_train[h.participant_train == ctx.target],
                h.y_test[h.participant_test == ctx.target]]  # the attacked rows' labels
    draws = pd.concat([cal.table.assign(stage="calibration"),
                       table.assign(stage="measurement")], ignore_index=True)
    draws.insert(0, "stage", draws.pop("stage"))
    return ComparedOption(
        name=name, label=label, protection="empirical", setting=setting, value=float(at),
        utility=util, utility_interval=ci, interval_over=_deployments(len(rows)),
        n_draws=int(len(rows)), attack=attack,
        attack_error=bound, attack_error_median=float(rows[attack].median()),
        sensitive_gain=gain,
        linkage=strongest_link, linkage_chance=_linkage_chance(y_t),
        inference=strongest_infer, inference_chance=_majority_share(y_t),
        meets=bool(np.isfinite(cal.value)), calibration=cal, draws=draws,
        extra={"measured": by_attack, **extra})


# ----------------------------------------------------------------------------- the KTI route


class _DimensionMaker(_Maker):
    """A draw's estimator with ``top - k`` components, ``k`` the draw's value (dimensions
    dropped: the knob grows with privacy, as a noise does)."""

    def __init__(self, estimator, param, seed_param, dim_param, top):
        super().__init__(estimator, param, seed_param)
        self.dim_param, self.top = dim_param, top

    def __call__(self, value, seed):
        est = super().__call__(value, seed)
        return est.set_params(**{self.dim_param: self.top - int(round(value))})


def _kti_pipeline(ctx, top):
    from sklearn.pipeline import Pipeline

    from ..alignment import KTIAligner
    from ..anchors import SMOTEAnchor
    from ..mechanisms import KernelPCAMechanism, UMAPMechanism

    h = ctx.held
    if ctx.public is None:
        own = h.participant_train == ctx.colluder
        X_pub, y_pub = h.X_train[own], h.y_train[own]
    else:
        X_pub, y_pub = (np.asarray(a) for a in ctx.public)
    n_anchors = int(min(max(4 * h.X_train.shape[1], 60), 400))
    anchor = SMOTEAnchor(n_anchors, X_pub, y_pub, k_neighbors=10)
    if ctx.nonlinear == "umap":
        mech = UMAPMechanism(ctx.n_participants, n_components=top, init="pca", n_epochs=100,
                             anchor=anchor, random_state=ctx.seeds["kti"])
    else:
        mech = KernelPCAMechanism(ctx.n_participants, n_components=top, anchor=anchor,
                                  random_state=ctx.seeds["kti"])
    # KTI+TSL, the integration of Table 3 of [2] (C = I, no centering)
    return Pipeline([("dr", mech), ("align", KTIAligner(graph="tsl")),
                     ("clf", ctx.estimator)])


def _top_dimension(ctx):
    """The largest dimension tried: the rows' width, at most the smallest party's rows less
    one (a reduction has no more components) and ``max_components``."""
    h = ctx.held
    smallest = int(np.bincount(h.participant_train, minlength=ctx.n_participants).min())
    top = min(h.X_train.shape[1], smallest - 1)
    if ctx.max_components is not None:
        top = min(top, int(ctx.max_components))
    if ctx.nonlinear == "umap":
        top = min(top, smallest - 2)
    if top < 1:
        raise ValueError(f"the KTI route needs parties of at least 2 training rows; the "
                         f"smallest has {smallest}. Give more rows or fewer participants.")
    return int(top)


def _bisect_dimensions(search, top):
    """``(value, bracket)`` of the fewest dimensions dropped that pass, over ``0 .. top - 1``
    (``(nan, (top - 1, inf))`` when even one dimension fails)."""
    most = top - 1
    if not search(most):
        return float("nan"), (float(most), float("inf"))
    if search(0):
        return 0.0, (0.0, 0.0)
    lo, hi = 0, most
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if search(mid):
            hi = mid
        else:
            lo = mid
    return float(hi), (float(lo), float(hi))


def _run_kti(ctx):
    """The nonlinear route: the largest dimension whose fresh deployments keep the paper's
    anchor-regression attacks at or above the target, by the calibration's rule."""
    from sklearn.utils import check_random_state

    top = _top_dimension(ctx)
    pipe = _kti_pipeline(ctx, top)
    specs = {a: ("anchor_regression", _ANCHOR_ATTACKS[a]) for a in ("pinv", "lr")}
    attacks = _scorers(specs, "relative_error", ctx)
    targets = {} if ctx.target_error is None else dict.fromkeys(attacks, ctx.target_error)
    if ctx.max_linkage is not None:
        link = _scorers(specs, "linkage", ctx, _linkage_params())
        attacks.update((a + _UNLINKED, sc) for a, sc in link.items())
        targets.update((a + _UNLINKED, 1.0 - ctx.max_linkage) for a in link)
    maker = _DimensionMaker(pipe, "dimensions dropped", "deployment", "dr__n_components", top)
    rng = check_random_state(ctx.seeds["kti"])
    draw_seeds = rng.randint(2**31 - 1, size=ctx.n_draws)
    values = 1 if top == 1 else _planned_values(0, top - 1, 1)
    with _runner(ctx, maker, _utility_scoring(), attacks, "compare_kti.jsonl", top,
                 "calibrate KTI dimension", ctx.n_draws * values, early=True) as run:
        search = _Search(run, draw_seeds, targets, "balanced_accuracy", ctx.confidence,
                         ctx.criterion, _batch(ctx))
        search.say = lambda v: f"dimension {top - int(round(v))} (of {top})"
        value, bracket = _bisect_dimensions(search, top)
    ctx.resumed.append(run.n_resumed)
    with warnings.catch_warnings():  # said below in the route's own words
        warnings.simplefilter("ignore", UserWarning)
        cal = _result(search, value, bracket, "dimensions dropped", 0.0, float(top - 1),
                      "deployment", run.n_resumed)
    cal.decisions.insert(2, "n_components", top - cal.decisions["value"].astype(int))
    at, _ = _where(cal)
    dim = top - int(round(at))
    if not np.isfinite(cal.value):
        s = cal.summary[(cal.summary["value"] == at)
                        & (cal.summary["attack"] == cal.binding_attack)].iloc[0]
        from ._calibrate import _relax, _shortfall

        warnings.warn(
            f"The KTI route meets the targets at no dimension, not even 1: there "
            f"{_shortfall(cal.binding_attack, s)}. {_relax(cal.binding_attack).capitalize()} "
            "or lower confidence=.", UserWarning, stacklevel=3)
    measured = _measure(ctx, "kti", maker, at, cal, specs)
    red = _REDUCTIONS[ctx.nonlinear]
    return _calibrated_option(ctx, "kti", _LABELS["kti"].format(red=red), cal, at,
                              f"{red} dimension d = {dim} (of {top})", measured, pipe=pipe,
                              top=top, dimension=dim)


# ----------------------------------------------------------------------------- GaussMix


def _run_gaussmix(ctx, epsilons):
    """GaussMix at each stated epsilon: utility over fresh deployments (fresh sketches and
    noise); the guarantee is the accountant's epsilon of the noise actually added."""
    import pandas as pd
    from sklearn.utils import check_random_state

    est = _SketchCollaboration(ctx.n_participants, delta=ctx.delta, row_bound=ctx.row_bound,
                               random_state=ctx.seeds["gaussmix"])
    rng = check_random_state(ctx.seeds["gaussmix"])
    seeds = [int(s) for s in rng.randint(2**31 - 1, size=ctx.n_draws)]
    maker = _Maker(est, "epsilon", "deployment")
    scorers = _resolve_scoring("balanced_accuracy")
    out = []
    with _runner(ctx, maker, scorers, {}, "compare_gaussmix.jsonl", None,
                 "draws at each epsilon", len(epsilons) * len(seeds)) as run:
        rows = run([(e, s) for e in epsilons for s in seeds])
    ctx.resumed.append(run.n_resumed)
    h = ctx.held
    for j, eps in enumerate(epsilons):
        part = rows[j * len(seeds):(j + 1) * len(seeds)]
        table = pd.DataFrame([{"stage": "utility", "value": eps, "draw": k, "draw_seed": s,
                               **r} for k, (s, r) in enumerate(zip(seeds, part))])
        util, ci = _mean_interval(table["balanced_accuracy"], ctx.confidence)
        fitted = maker(eps, seeds[0]).fit(h.X_train, h.y_train,
                                          participant=h.participant_train)
        out.append(ComparedOption(
            name=f"gaussmix@{eps:g}", label=f"GaussMix, epsilon = {eps:g}",
            protection="formal", setting=f"epsilon = {eps:g}, delta = {ctx.delta:g}",
            value=eps, utility=util, utility_interval=ci,
            interval_over=_deployments(len(seeds)), n_draws=len(seeds),
            epsilon=float(fitted.epsilon_), delta=ctx.delta, meets=None, draws=table,
            extra={"k": fitted.k_, "scale": fitted.scale_, "noise": fitted.noise_,
                   "row_bound": ctx.row_bound, "clipped": fitted.clipped_,
                   "row_bound_z": fitted.row_bound_z_}))
    return out


_RUNNERS = {"local": _run_local, "central": _run_central,
            "igdp": partial(_run_gdp, kind="igdp"), "cgdp": partial(_run_gdp, kind="cgdp"),
            "kti": _run_kti}


# ----------------------------------------------------------------------------- the verdict


def _assemble(ctx, X, y, partition, results, epsilons, command_line, random_state):
    from ._compare_report import render_comparison

    table = _table(results)
    verdict = _verdict(ctx, results)
    deployment = None if verdict["deploy"] is None else _deployment(ctx,
                                                                   results[verdict["deploy"]])
    setting = _setting(ctx, X, y, partition, results, epsilons, command_line, random_state)
    regulator = _regulator(results)
    html = render_comparison(setting, results, table, verdict, regulator, deployment)
    return Comparison(table=table, options=results, verdict=verdict, regulator=regulator,
                      deployment=deployment, held_out=ctx.held, setting=setting, html=html)


def _meets_words(o):
    if o.protection == "nothing shared":
        return "nothing shared"
    if o.meets is None:
        return "not measured"
    return "yes" if o.meets else "no"


def _table(results):
    """One row per option, every number read off the options' results."""
    import pandas as pd

    local = results.get("local")
    central = results.get("central")
    rows = []
    for o in results.values():
        rows.append({
            "option": o.name, "label": o.label, "protection": o.protection,
            "setting": o.setting, "utility": o.utility, "utility_low": o.utility_interval[0],
            "utility_high": o.utility_interval[1], "interval_over": o.interval_over,
            "vs_local": o.utility - local.utility if local else float("nan"),
            "vs_central": o.utility - central.utility if central else float("nan"),
            "strongest_attack": o.attack or "none applies",
            "attack_error_bound": o.attack_error, "attack_error_median": o.attack_error_median,
            "linkage": o.linkage, "linkage_chance": o.linkage_chance,
            "inference": o.inference, "inference_chance": o.inference_chance,
            "sensitive_gain": o.sensitive_gain,
            "epsilon": o.epsilon, "delta": o.delta, "meets_target": _meets_words(o),
            "draws": o.n_draws})
    return pd.DataFrame(rows)


def _cost(o, results):
    """What an option costs (or gains) against Local and Central, in words."""
    parts = []
    for ref, word in (("local", "Local"), ("central", "Central")):
        r = results.get(ref)
        if r is not None:
            parts.append(f"{o.utility - r.utility:+.3f} against {word} ({r.utility:.3f})")
    return ", ".join(parts)


def _verdict(ctx, results):
    """The decision ("collaborate" or "do not collaborate") and the answer in words that opens
    with it; the options meeting the targets, the formal ones, the best and the deployable
    one, and the warnings it needs."""
    from ._report import learns_nothing, say, targets_words

    empirical = [o for o in results.values() if o.protection == "empirical"]
    meeting = sorted((o.name for o in empirical if o.meets), key=lambda n: -results[n].utility)
    formal = [o.name for o in results.values() if o.protection == "formal"]
    best = meeting[0] if meeting else None
    local = results.get("local")
    what = targets_words({"max_linkage": ctx.max_linkage, "target_error": ctx.target_error,
                          "sensitive": ctx.sensitive,
                          "max_sensitive_gain": ctx.max_sensitive_gain})
    c = ctx.confidence
    collaborate = best is not None and (local is None or results[best].utility
                                        > local.utility)
    if collaborate:
        b = results[best]
        sentence = (f"Collaborate: {b.label} at {b.setting}: a fresh deployment keeps {what} "
                    f"under every attack tried, with probability at least {c:.0%}; balanced "
                    f"accuracy {b.utility:.3f} ({_cost(b, results)}).")
    elif best is not None:
        b = results[best]
        sentence = (f"Do not collaborate: each participant alone gets {local.utility:.3f}, "
                    f"more than any option that meets the targets (the best, {b.label} at "
                    f"{b.setting}, gets {b.utility:.3f}).")
    elif empirical:
        sentence = f"Do not collaborate: no option meets {what} in the ranges tried"
        sentence += "".join(f"; GaussMix at epsilon = {results[n].epsilon:.3g} carries a "
                            f"formal guarantee at {results[n].utility:.3f}" for n in formal)
        sentence += "."
        kept = [o for o in empirical if np.isfinite(o.linkage)]
        if kept:
            sentence += " At the largest setting tried the strongest attack still links " + \
                ", ".join(f"{o.linkage:.0%} of the rows under {o.label} ({o.setting})"
                          for o in kept) + " (chance 10%)."
        sentence += " What would help: " + _helps(ctx.words)
    else:
        sentence = ("Do not collaborate: no collaboration judged by attacks was compared"
                    + ("".join(f"; GaussMix at epsilon = {results[n].epsilon:.3g} carries a "
                               f"formal guarantee at {results[n].utility:.3f}"
                               for n in formal)) + ".")
    if formal and (collaborate or best is not None):
        listed = ", ".join(f"{results[n].utility:.3f} at epsilon = {results[n].epsilon:.3g}"
                           for n in formal)
        sentence += (f" GaussMix carries a formal (epsilon, delta = {ctx.delta:g})-DP "
                     f"guarantee, its attacks not measured: balanced accuracy {listed}.")
    deployable = [n for n in meeting if n in ("igdp", "cgdp")]
    deploy = deployable[0] if deployable else None
    if collaborate and deploy is not None and deploy != best:
        sentence += (f" The best that skdc participant upload deploys is "
                     f"{results[deploy].label}.")
    elif collaborate and deploy is None:
        sentence += (" skdc participant upload runs I-GDP and C-GDP only, and neither "
                     "meets the targets.")
    sentence += (" The verdict holds for the attacks run here, not for every attack; anchor "
                 "noise and private-data noise are no differential privacy.")
    linked = [results[n] for n in meeting if _linked(results[n])]
    warns = [] if not linked or ctx.max_linkage is not None else [
        "Meeting the error target is not enough against singling out: "
        + ", ".join(f"{o.label} links {o.linkage:.0%}" for o in linked)
        + f" of its reconstructions to their own row (chance {linked[0].linkage_chance:.0%})."
        f" Give a linkage target ({say(ctx.words, 'max_linkage=', '--max-linkage')})."]
    ceiling = results.get("central") or results.get("local")
    if ceiling is not None:
        where = ("without noise (Central, the raw rows pooled)" if ceiling.name == "central"
                 else "with nothing shared (Local)")
        nothing = learns_nothing(ctx.words, ceiling.utility, where)
        if nothing:
            warns.append(nothing)
    return {"decision": "collaborate" if collaborate else "do not collaborate",
            "meeting": meeting, "formal": formal, "best": best, "deploy": deploy,
            "sentence": sentence, "warnings": warns}


def _helps(words):
    """What would help when no option meets the targets, in the caller's words (plain
    text): each piece names the flag (or the parameter) that tries it."""
    from ._report import say

    cgdp = say(words, "audit(X, y, mechanism='cgdp', aligner='none', bounds=(LOW, HIGH))",
               "skdc audit --mechanism cgdp --aligner none --range LOW HIGH, without "
               "--compare")
    gauss = say(words, "options=['gaussmix'], epsilons=[1]", "--compare gaussmix --epsilon 1")
    return (f"private-data noise on the rows beyond the range compared (audit C-GDP alone: "
            f"{cgdp}), fewer shared features ({say(words, 'X', '--data')} with fewer "
            f"columns), GaussMix at a stated epsilon ({gauss}), or not collaborating.")


def _linked(o):
    """Whether an option's reconstructions link to their own rows well above chance."""
    return bool(np.isfinite(o.linkage) and o.linkage > max(2 * o.linkage_chance,
                                                           o.linkage_chance + 0.1))


_REGULATOR = (
    ("singling out", "can an individual's record be isolated in the released data?",
     "exact-source linkage", "linkage",
     "which of 10 same-label candidate rows a reconstruction is closest to: a linked "
     "reconstruction singles its row out among them",
     "records singled out by rare combinations of values in the uploads themselves; "
     "singling out through the trained model's predictions"),
    ("linkability", "can two records of the same individual be linked, within or across "
     "data sets?", "exact-source linkage", "linkage",
     "linking a reconstruction to the same individual's row held elsewhere (the gallery "
     "stands in for the attacker's other data set)",
     "linking across two releases or collaborations of the same rows; linking to external "
     "data sets with other columns"),
    ("inference", "can an attribute be deduced with significant probability?",
     "reconstruction error; attribute inference from reconstructions", "attack_error_bound, "
     "sensitive_gain, inference",
     "how far the best reconstruction is from the rows (relative error), how much better the "
     "attacker predicts a column the user names as sensitive from the reconstructions than "
     "from what it already holds, and how often a classifier trained on clean rows reads the "
     "label off a reconstruction; the labels reach the analyst in every option, so label "
     "inference is no risk measure of its own",
     "membership inference; inference from the trained model; attributes that are not "
     "columns of the rows"),
)


def _regulator(results):
    """The Article 29 Working Party's three risks (Opinion 05/2014 on anonymisation
    techniques, WP216, section 2.2.3) against what the comparison measures, with each
    option's numbers."""
    import pandas as pd

    table = pd.DataFrame(_REGULATOR, columns=["risk", "the guidance asks", "measured by",
                                              "column", "what the measurement is",
                                              "not measured"])
    table["what the options show"] = [_shown(results, col) for col in table["column"]]
    return table


def _shown(results, column):
    """Each option's value of the measurement(s) in ``column``, in words."""
    measured = [o for o in results.values() if o.attack is not None]
    parts = []
    for col in (c.strip() for c in column.split(",")):
        key, ref = {"linkage": ("linkage", "chance"),
                    "inference": ("inference", "majority label"),
                    "attack_error_bound": ("attack_error", None),
                    "sensitive_gain": ("sensitive_gain", None)}[col]
        vals = ", ".join(f"{o.label} {getattr(o, key):.2f}" for o in measured
                         if np.isfinite(getattr(o, key)))
        if not vals:
            continue
        what = {"linkage": "linkage accuracy", "inference": "label inference accuracy",
                "attack_error": "reconstruction error bound",
                "sensitive_gain": "gain on the sensitive column"}[key]
        chance = [getattr(o, f"{key}_chance") for o in measured if ref
                  and np.isfinite(getattr(o, f"{key}_chance", np.nan))]
        parts.append(f"{what}: {vals}" + (f" ({ref} {max(chance):.2f})" if chance else ""))
    others = [o.label for o in results.values() if o.attack is None]
    if others:
        parts.append(f"not measured for {', '.join(others)} (nothing shared, or bounded by "
                     "epsilon)")
    return "; ".join(parts)


def _deployment(ctx, option):
    """The audited settings of a deployable option, their fingerprint and the commands each
    party runs; the audited deployment's seeds, which the flags reproduce bit for bit."""
    h = ctx.held
    cal, pipe, param = option.calibration, option.extra["pipe"], option.extra["param"]
    row = cal.table[cal.table["value"] == option.value].sort_values("draw").iloc[0]
    mech = _Maker(pipe, param, "deployment")(option.value, int(row["draw_seed"]))[0]
    mech.fit(h.X_train, participant=h.participant_train)
    params = mech.get_params()
    igdp = option.name == "igdp"
    settings = {"mechanism": type(mech).__name__, "n_participants": ctx.n_participants,
                "n_features": int(h.X_train.shape[1]), "noise": float(params["noise"]),
                "translation_scale": float(params["translation_scale"]),
                "anchor_noise": float(option.value) if igdp else 0.0,
                "n_anchors": 0 if mech.anchor_ is None else int(mech.anchor_.shape[0])}
    flags = ["--n-participants", str(ctx.n_participants), "--mechanism", option.name,
             "--noise", repr(settings["noise"]), "--translation-scale",
             repr(settings["translation_scale"])]
    if igdp:
        flags += ["--anchor", "anchor.npy", "--anchor-noise", repr(settings["anchor_noise"])]
    fingerprint = settings_fingerprint(settings)
    commands, text = _commands(ctx, option, settings, flags, fingerprint)
    return {"option": option.name, "settings": settings, "fingerprint": fingerprint,
            "flags": flags, "commands": commands, "text": text,
            "draw": {"draw_seed": int(row["draw_seed"]),
                     "random_state": int(params["random_state"]),
                     "noise_random_state": int(params["noise_random_state"])}}


def _commands(ctx, option, settings, flags, fingerprint):
    """The commands of the deployment, and the text of ``deployment.txt`` (the analyst's
    model carries the comparison's model parameters)."""
    import json
    import shlex

    igdp = option.name == "igdp"
    anchor = (["python", "-m", "skdc", "anchor", "make", "--n-features",
               str(settings["n_features"]), "--n-anchors", str(settings["n_anchors"]),
               "--out", "anchor.npy"] if igdp else None)
    seeds = ([] if igdp else ["--seed", "SHARED_SEED"])
    uploads = [["python", "-m", "skdc", "participant", "upload", "--id", str(i), *flags,
                *seeds, "--data", f"X_{i}.npy", "--labels", f"y_{i}.npy", "--secret-out",
                f"secret_{i}.npz", "--out", f"upload_{i}.npz"]
               for i in range(ctx.n_participants)]
    model = (["--model", "logistic", "--model-param", "max_iter=1000",
              *(w for k, v in ctx.model_params.items()
                for w in ("--model-param", f"{k}={v if isinstance(v, str) else json.dumps(v)}"))]
             if ctx.model == "logistic" else [])
    fit = ["python", "-m", "skdc", "analyst", "fit",
           *[f"upload_{i}.npz" for i in range(ctx.n_participants)],
           "--aligner", "gopp" if igdp else "none", *model, "--audit-fingerprint",
           "deployment.json", "--out", "model/"]
    lines = [f"# The audited deployment: {option.label} at {option.setting}.",
             f"# Fingerprint of its settings: {fingerprint}",
             "# `skdc analyst fit --audit-fingerprint deployment.json` refuses any upload "
             "whose declared settings differ.", ""]
    if igdp:
        lines += ["# 1. Once, by one participant; give anchor.npy to every participant, "
                  "never to the analyst:", shlex.join(anchor), ""]
    lines += [f"# {'2' if igdp else '1'}. Each participant at home, on its own rows "
              "(X_i.npy, y_i.npy)."]
    if igdp:
        lines += ["#    No --seed: each draws its own private seeds from the operating "
                  "system."]
    else:
        lines += ["#    C-GDP shares one secret: one participant runs `python -m skdc "
                  "participant new-seed` (128 bits from the operating system) and gives its "
                  "output to every participant, never to the analyst; each passes it as "
                  "SHARED_SEED. Each draws its own noise seed from the operating system."]
    lines += [shlex.join(u) for u in uploads] + [""]
    lines += [f"# {'3' if igdp else '2'}. The analyst:", shlex.join(fit), ""]
    commands = ([anchor] if igdp else []) + uploads + [fit]
    return commands, "\n".join(lines)


def _setting(ctx, X, y, partition, results, epsilons, command_line, random_state):
    h = ctx.held
    n_draws = sum(0 if o.draws is None else len(o.draws) for o in results.values())
    return {
        "n_rows": int(X.shape[0]), "n_features": int(X.shape[1]),
        "n_train": int(len(h.X_train)), "n_test": int(len(h.X_test)),
        "n_participants": ctx.n_participants, "colluder": ctx.colluder, "target": ctx.target,
        "target_rows": int(np.sum(h.participant_train == ctx.target)
                           + np.sum(h.participant_test == ctx.target)),  # the attacked rows
        "target_error": ctx.target_error, "max_linkage": ctx.max_linkage,
        "sensitive": ctx.sensitive, "max_sensitive_gain": ctx.max_sensitive_gain,
        "confidence": ctx.confidence,
        "criterion": ctx.criterion, "n_draws": ctx.n_draws, "options": list(results),
        "epsilons": list(epsilons), "delta": ctx.delta, "row_bound": ctx.row_bound,
        "nonlinear": ctx.nonlinear, "n_measure": ctx.n_measure,
        **ctx.words, "n_anchors": ctx.n_anchors,
        "random_state": int(random_state), "partition": partition is not None,
        "input_sha256": _data_digest(X, y, partition), "scale": _scale(X),
        "command_line": command_line or _python_call(ctx, results, epsilons, random_state),
        "n_resumed": int(sum(ctx.resumed)), "n_draws_all": int(n_draws),
    }


def _python_call(ctx, results, epsilons, random_state):
    names = list(dict.fromkeys("gaussmix" if n.startswith("gaussmix@") else n
                               for n in results))
    args = [f"options={names!r}", f"epsilons={list(epsilons)!r}",
            f"n_participants={ctx.n_participants}", f"max_linkage={ctx.max_linkage!r}",
            f"target_error={ctx.target_error!r}", f"sensitive={ctx.sensitive!r}",
            f"max_sensitive_gain={ctx.max_sensitive_gain!r}",
            f"confidence={ctx.confidence!r}", f"colluder={ctx.colluder}",
            f"target={ctx.target}", f"criterion={ctx.criterion!r}",
            f"nonlinear={ctx.nonlinear!r}", f"random_state={random_state!r}"]
    if isinstance(ctx.model, str):
        args.append(f"model={ctx.model!r}")
    given = {k: v for k, v in ctx.model_params.items()
             if not (k == "class_weight" and ctx.words.get("balanced"))}
    if given:
        args.append(f"model_params={given!r}")
    if ctx.n_anchors is not None:
        args.append(f"n_anchors={ctx.n_anchors!r}")
    return f"skdc.audit.compare_options(X, y, {', '.join(args)})"
