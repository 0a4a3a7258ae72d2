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
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from ..utils._deprecation import renamed_argument
from ..utils._progress import run_progress
from ..utils._sklearn_compat import (
    Interval,
    StrOptions,
    validate_params,
)
from ._calibrate import _AUDIT_CONSTRAINTS, _RUN_CONSTRAINTS, _check_draws
from ._deployments import _DEPLOYMENTS, _pipeline
from ._draws import _planned_values
from ._options import (
    _MAX_EPSILONS,
    _MIN_EPSILON,
    _REDUCTIONS,
    _RUNNERS,
    OPTIONS,
    _gdp_range,
    _run_gaussmix,
    _top_dimension,
)
from ._results import ComparedOption, Comparison
from ._split import HeldOut, _split_parties
from ._steps import _advice, _analyst_model, _check_rows, _checkpoint_folder, _parties
from ._targets import _MAX_LINKAGE, _resolve_target
from ._verdict import _assemble

__all__ = ["ComparedOption", "Comparison", "compare_options"]


# ----------------------------------------------------------------------------- the comparison


@dataclass
class _Context:
    """What every option of one comparison shares."""

    X: np.ndarray
    held: HeldOut  # the one train/held-out split every option uses
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
    test_size: float = 0.3

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
        **_AUDIT_CONSTRAINTS,
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
                    participant=None, max_linkage=_MAX_LINKAGE, target_error=None,
                    sensitive=None, max_sensitive_gain=None, confidence=0.95, colluder=0,
                    target=None, model="logistic", model_params=None, n_anchors=None,
                    n_draws=None, criterion="order", xtol=None,
                    nonlinear="kpca", max_components=None, public=None, delta=1e-6,
                    row_bound=None, n_measure=5, test_size=0.3, random_state=0, n_jobs=None,
                    batch_size=None, checkpoint=None, progress="auto", command_line=None,
                    partition=None):
    """Compare every way to collaborate on the same rows: utility, attacks and epsilon.

    The rows are split once into training and held-out rows and into ``n_participants``
    parties (or as in ``participant``); every option uses that split. Each option runs at its
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
        Parties the rows are split into (ignored with ``participant``).
    participant : array-like of int of shape (n_samples,), default=None
        The participant of each row, as in :func:`calibrate_noise` and the mechanisms.
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
    partition : array-like of int of shape (n_samples,), default=None
        Deprecated spelling of ``participant``, removed in skdc 0.3.

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
    participant = renamed_argument("partition", partition, "participant", participant)
    X, y = _check_rows(X, y, target_error, random_state)
    names, eps = _check_options(options, epsilons)
    ctx = _context(X, y, participant=participant, n_participants=n_participants,
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
    from ._words import noise_label

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
    return _assemble(ctx, X, y, participant, results, eps, command_line, random_state)


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


def _context(X, y, *, participant, n_participants, colluder, target, model, target_error,
             confidence, n_draws, criterion, xtol, random_state, n_jobs, batch_size,
             checkpoint, progress, n_measure, delta, row_bound, nonlinear, max_components,
             public, test_size, model_params=None, n_anchors=None, cli=False):
    """The split, the partition, the roles and every option's seed, fixed once."""
    rng = np.random.RandomState(random_state)
    parties, n_participants = _parties(participant, n_participants, X)
    target = _resolve_target(colluder, target, n_participants)
    estimator, words = _analyst_model(model, model_params, y, cli)
    # the partition by the I-GDP mechanism's keyed hash (as the audit makes it), then fixed
    pipe = _pipeline("igdp", "gopp", n_participants, estimator, random_state, n_anchors)
    split = _split_parties(X, y, parties, test_size, rng, pipe)
    for ids, rows in ((split.participant_train, "training"), (split.participant_test, "held-out")):
        missing = sorted(set(range(n_participants)) - set(np.unique(ids).tolist()))
        if missing:
            raise ValueError(f"participant(s) {missing} have no {rows} rows; give more rows "
                             "or fewer participants.")
    seeds = dict(zip(OPTIONS, (int(s) for s in rng.randint(2**31 - 1, size=len(OPTIONS)))))
    if xtol is not None and not (math.isfinite(xtol) and 0 < xtol < 1):
        raise ValueError(f"xtol must be a share of each noise range in (0, 1); got {xtol!r}.")
    if public is not None and len(public) != 2:
        raise ValueError("public must be (X_public, y_public).")
    return _Context(
        X=X, held=split, n_participants=n_participants, colluder=int(colluder),
        target=target, model=model,
        target_error=None if target_error is None else float(target_error),
        confidence=float(confidence), n_draws=_check_draws(n_draws, confidence, criterion),
        criterion=criterion, xtol=xtol, seeds=seeds, n_jobs=n_jobs, batch_size=batch_size,
        folder=_checkpoint_folder(checkpoint), progress=progress, n_measure=int(n_measure),
        delta=float(delta),
        row_bound=float(math.sqrt(X.shape[1]) if row_bound is None else row_bound),
        nonlinear=nonlinear, max_components=max_components, public=public,
        estimator=estimator, model_params=words["model_params"], n_anchors=n_anchors,
        words=words, test_size=float(test_size))
