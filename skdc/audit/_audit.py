"""The audit: one participant simulates the collaboration on its own rows before joining.

:func:`audit` splits the participant's rows into parties (or uses the ``participant`` ids it
is given),
deploys the chosen mechanism and aligner, calibrates the noise for a target attack error
(:func:`calibrate_noise`: every draw a fresh deployment on the fixed partition, judged by a
distribution-free rule), sweeps a grid of noise values for the frontier, and computes the
tables of the report. :mod:`skdc.audit._report` renders them into a self-contained HTML
page (figures embedded as PNG, no scripts, no links) that :meth:`AuditReport.save` writes with
the tables as CSV files, so that a privacy officer can read the answer and a data scientist can
check it.
"""

# Licence: BSD 3 clause

import math
import os
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from ..utils._checkpoint import DrawCheckpoint
from ..utils._deprecation import renamed_argument
from ..utils._folders import write_outputs
from ..utils._progress import run_progress
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._calibrate import (
    _AUDIT_CONSTRAINTS,
    _RUN_CONSTRAINTS,
    _V_PT_COLUMN,
    _check_draws,
    _check_range,
    _FittedAttribute,
)
from ._deployments import (
    _DEPLOYMENTS,
    _default_bounds,
    _pipeline,
)
from ._draws import (
    _content_hash,
    _planned_values,
    _row_fields,
    _runner,
)
from ._report import render
from ._split import _split_parties
from ._steps import (
    _advice,
    _analyst_model,
    _calibrate,
    _check_rows,
    _checkpoint_folder,
    _parties,
    _recorded_setting,
    _reproducing_call,
)
from ._tables import _column_names, _reconstruction_picture, _tables
from ._targets import (
    _MAX_LINKAGE,
    _judged,
    _resolve_target,
)
from ._words import learns_nothing, noise_label

__all__ = ["AuditReport", "audit"]

_MAX_GRID = 10_000
_TABLES = ("attacks", "decisions", "diagnostics", "summary", "draws")


@dataclass(eq=False)
class AuditReport:
    """The result of :func:`audit`: the calibration, its tables and the HTML report.

    Read more in the :ref:`User Guide <safety>`.

    Attributes
    ----------
    calibration : NoiseCalibration
        The noise calibration for the targets.
    draws : pandas.DataFrame
        Every draw run (the calibration's and the frontier grid's), column ``stage`` telling
        which.
    attacks : pandas.DataFrame
        Each attack where the verdict is decided: at the recommended noise (at the largest
        noise when none passes) and at the bracket's failing end: draws, draws below the
        target, the errors' range and the criterion's lower bound, whether it binds.
    decisions : pandas.DataFrame
        The calibration's decisions, one row per evaluated noise value, in order (how many
        draws each needed and why).
    diagnostics : pandas.DataFrame
        Alignment diagnostics and utility where the verdict is decided (one row per quantity).
    summary : pandas.DataFrame
        The headline numbers (one row per quantity).
    setting : dict
        The deployment in words and numbers.
    html : str
        The self-contained report.
    files : dict of {str: str}
        What :meth:`save` wrote (empty until then).
    decision : str
        ``"collaborate"`` when a noise in the range meets every target, else ``"do not
        collaborate"``; the report's verdict opens with it.

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.datasets import make_classification
    >>> from skdc.audit import audit
    >>> X, y = make_classification(n_samples=240, n_features=6, random_state=0)
    >>> rep = audit(X, y, n_participants=3, attacks=["procrustes"], target_error=0.2,
    ...             max_linkage=None, confidence=0.8, bounds=(0.0, 0.4), n_grid=3,
    ...             grid_draws=1, model="ridge", progress=False)
    >>> rep.decision
    'collaborate'
    >>> sorted(rep.save(tempfile.mkdtemp()))
    ['attacks', 'calibration', 'decisions', 'diagnostics', 'draws', 'report', 'summary']
    """

    calibration: object
    draws: object = field(repr=False)
    attacks: object = field(repr=False)
    decisions: object = field(repr=False)
    diagnostics: object = field(repr=False)
    summary: object = field(repr=False)
    setting: dict = field(repr=False)
    html: str = field(repr=False)
    files: dict = field(default_factory=dict)

    @property
    def decision(self):
        return "collaborate" if np.isfinite(self.calibration.value) else "do not collaborate"

    def save(self, out):
        """Write ``report.html`` and the CSV tables into the folder ``out``.

        Every file is written whole through a temporary file (never through a link at its
        name: a link there is replaced, not followed), readable by others as an ordinary
        file would be (``0644`` less the umask).

        Parameters
        ----------
        out : str or Path
            Folder (created when missing; refused when it is, or lies under, a file).

        Returns
        -------
        files : dict of {str: str}
            The files written.
        """
        outputs = {"report": ("report.html", self.html)}
        for name in _TABLES:
            outputs[name] = (f"{name}.csv", getattr(self, name).to_csv(index=False))
        outputs["calibration"] = ("calibration.csv",
                                  self.calibration.summary.to_csv(index=False))
        self.files = write_outputs(out, outputs, "the report", folder_what="--out")
        return self.files


# ----------------------------------------------------------------------------- the audit


@validate_params(
    {
        **_RUN_CONSTRAINTS,
        "X": ["array-like"],
        "y": ["array-like"],
        "n_participants": [Integral],  # checked (at least 2, unless a partition says) below
        "mechanism": [StrOptions({"igdp", "cgdp"})],
        "aligner": [StrOptions({"gopp", "none"})],
        "attacks": [list, tuple, None],
        **_AUDIT_CONSTRAINTS,
        "images": ["boolean"],
        "n_grid": [Interval(Integral, 1, _MAX_GRID, closed="both")],
        "grid_draws": [Interval(Integral, 1, _MAX_GRID, closed="both")],
        "bounds": ["array-like", None],
        "random_state": "no_validation",  # checked below, saying why it must be an int
        "command_line": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def audit(X, y, *, n_participants=5, mechanism="igdp", aligner="gopp", attacks=None,
          max_linkage=_MAX_LINKAGE, target_error=None, sensitive=None,
          max_sensitive_gain=None, confidence=0.95, colluder=0, target=None, participant=None,
          model="logistic", model_params=None, n_anchors=None, images=False, n_draws=None,
          criterion="order", n_grid=10, grid_draws=2, bounds=None, xtol=None, test_size=0.3,
          random_state=0, n_jobs=None, batch_size=None, checkpoint=None, progress="auto",
          command_line=None, partition=None):
    """Audit a data collaboration on one participant's rows: calibrated noise and a report.

    The rows are split into ``n_participants`` parties (by the mechanism's keyed hash of each
    row under ``random_state``, or by ``participant``) that each obfuscate their share with the
    chosen mechanism; the analyst aligns and trains the model. Under the collusion of the
    analyst with participant ``colluder``, every applicable attack reconstructs participant
    ``target``'s rows. :func:`calibrate_noise` finds the smallest noise at which a fresh
    deployment (new secrets, anchor and noise, the same rows and partition) meets every
    target under every attack with probability ``confidence``, by a distribution-free rule:
    exact-source linkage at most ``max_linkage`` (the primary risk: can a reconstruction be
    traced to its own row?) and, when given, a relative error at least ``target_error`` and
    a gain on the ``sensitive`` column at most ``max_sensitive_gain``. A grid of ``n_grid``
    noise values draws the frontier, and the report opens with the decision, "Collaborate"
    or "Do not collaborate", then says why (:meth:`AuditReport.save` writes it with its CSV
    tables). When no noise in the range meets the targets, it says so, with the linkage the
    strongest attack keeps at the largest noise and what would help.

    The verdict holds for the attacks run, on these rows, at the stated confidence: the
    attacks tried are not every attack, and neither anchor noise nor private-data noise is
    differential privacy.

    Read more in the :ref:`User Guide <safety>`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The auditing participant's rows. Attack errors are relative to the rows' scale, so
        standardize them as the collaboration will (the report says whether they are). A
        DataFrame's column names head the report's table of reconstructed rows.
    y : array-like of shape (n_samples,)
        Their labels (the utility model is a classifier).
    n_participants : int, default=5
        Parties the rows are split into (ignored with ``participant``).
    mechanism : {"igdp", "cgdp"}, default="igdp"
        Independent secrets (I-GDP) or one common secret (C-GDP).
    aligner : {"gopp", "none"}, default="gopp"
        Noisy-anchor GOPP alignment (the anchor noise ``align__v`` is calibrated) or none
        (C-GDP; the private-data noise ``gdp__noise`` is calibrated).
    attacks : list of str, default=None
        Attack names among those that apply to the deployment (for I-GDP with GOPP ``"mp"``,
        ``"procrustes"``, ``"alignment_map"`` and the colluder's-sample attacks
        ``"sample_axes"`` and ``"joint_likelihood"``; for C-GDP ``"known_secret"``);
        ``None``: every one of them, each draw judged by the strongest.
    max_linkage : float or None, default=0.15
        The largest acceptable exact-source linkage accuracy: the share of the attacked
        participant's reconstructed rows that the attacker's best matcher picks out as
        their own row among ten same-label rows (chance 0.1; the default is chance + 0.05,
        the GDP paper's standard). ``None``: not judged.
    target_error : float, default=None
        The acceptable relative reconstruction error ``||Xhat - X||_F / ||X||_F`` (at least
        0), judged jointly with the linkage; ``None``: errors are reported, not judged (a
        reconstruction half its norm off can still be closest to its own row).
    sensitive : int, default=None
        A column of ``X`` that is sensitive: the report says how much better the attacker
        predicts it from the reconstructions than from what it already holds (the target's
        labels and the colluder's rows). The labels reach the analyst in every deployment,
        so they are no risk measure of their own.
    max_sensitive_gain : float, default=None
        The largest acceptable gain on ``sensitive``, ``1 - MSE(reconstruction) / MSE(own
        guess)``; ``None``: reported, not judged.
    confidence : float, default=0.95
        Probability that a fresh deployment at the recommended noise meets the target.
    colluder : int, default=0
        The participant colluding with the analyst.
    target : int, default=None
        The attacked participant (the auditor); ``None``: 1, or 0 when the colluder is 1.
    participant : array-like of int of shape (n_samples,), default=None
        The participants' partition: the participant of each row, as in
        :func:`calibrate_noise` and the mechanisms. Parties are then formed from it
        (their count sets ``n_participants``); it reaches every draw.
    model : {"logistic", "ridge"} or estimator, default="logistic"
        The analyst's utility model. When the labels are imbalanced (the smallest class holds
        less than 80% of an even share: below 40% of the rows for two classes), ``"logistic"``
        and ``"ridge"`` weigh the classes alike (``class_weight="balanced"``; the report says
        so), unless ``model_params`` sets ``class_weight``; a given estimator is taken as
        configured. The verdict warns when the model without noise scores within 0.05 of
        chance: an audit of a model that learns nothing decides nothing.
    model_params : dict, default=None
        Parameters set on the model (``{"C": 0.1, "class_weight": None}``), as ``skdc
        analyst fit --model-param`` sets them.
    n_anchors : int, default=None
        Anchor rows of the noisy-anchor deployment (``None``: 4 per feature, as ``skdc
        anchor make`` makes them). More anchor rows raise v_PT, the noise above which the
        alignment breaks down.
    images : bool, default=False
        Whether the rows are square images (8 x 8 digits): the report then draws a few of
        them beside their reconstructions as pictures. Otherwise it shows a few rows beside
        their reconstructions as a table headed by the columns' names.
    n_draws : int, default=None
        Most deployments drawn per calibrated value; ``None``: the fewest the criterion needs
        (19 at 95% for ``"order"``).
    criterion : {"order", "clopper-pearson", "normal"}, default="order"
        How a noise value is judged (see :func:`calibrate_noise`).
    n_grid : int, default=10
        Noise values of the frontier grid (evenly spaced over ``bounds``).
    grid_draws : int, default=2
        Draws per grid value.
    bounds : tuple of (float, float), default=None
        Noise range; ``None``: ``(0, 3 v_PT)`` for anchor noise, ``(0, 4 RMS(X))`` for
        private-data noise.
    xtol : float, default=None
        Bracket width of the calibration; ``None``: a 32nd of the range.
    test_size : float, default=0.3
        Share of rows held out for utility and attacks.
    random_state : int, default=0
        The one seed of the audit (split, partition, every draw).
    n_jobs : int, default=None
        Parallel draws (joblib; ``joblib.parallel_config(backend="dask")`` spreads them on a
        cluster).
    batch_size : int, default=None
        Draws run together before a value's verdict is checked (see
        :func:`calibrate_noise`).
    checkpoint : str or Path, default=None
        Folder for the draw checkpoints; an interrupted audit rerun with the same folder and
        settings resumes (the report says from how many draws) and gives the same numbers.
    progress : bool or "auto", default="auto"
        Each stage's draws done out of draws planned (at most, for the calibration: a
        value decided early needs fewer), the time spent and an estimate, and, after the
        first draws, an estimate of the whole audit with how to shorten it: tqdm bars when
        stderr is a terminal, else (``"auto"``) one line on stderr per stage, per noise value
        decided and per minute of draws, for a log file; ``False``: nothing.
    command_line : str, default=None
        The command to print under "How to reproduce it" (the CLI passes its own); when
        given, the report's advice and the progress's estimate name the command line's
        flags (``--n-anchors``, ``--n-jobs``) instead of this function's parameters
        (``n_anchors=``, ``n_jobs=``).
    partition : array-like of int of shape (n_samples,), default=None
        Deprecated spelling of ``participant``, removed in skdc 0.3.

    Returns
    -------
    report : AuditReport
        The calibration, the tables and the HTML.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skdc.audit import audit
    >>> X, y = load_digits(return_X_y=True)
    >>> rep = audit(X[:300] / 16, y[:300], n_participants=3, attacks=["procrustes"],
    ...             max_linkage=None, target_error=0.3, confidence=0.8, bounds=(0.0, 0.1),
    ...             n_grid=4, grid_draws=1, model="ridge", images=True, progress=False)
    >>> rep.calibration.binding_attack, rep.decision
    ('procrustes', 'collaborate')
    >>> rep.html.index("<b>Collaborate</b>:") < rep.html.index("The setting")
    True
    """
    participant = renamed_argument("partition", partition, "participant", participant)
    columns = _column_names(X)
    X, y, param, names = _check_data_and_deployment(X, y, mechanism, aligner, attacks,
                                                    target_error, random_state)
    if images and round(math.sqrt(X.shape[1])) ** 2 != X.shape[1]:
        raise ValueError(f"images=True draws square images, but the rows have {X.shape[1]} "
                         "columns, no square number; leave it off for a table.")
    targets = dict(target_error=target_error, max_linkage=max_linkage, sensitive=sensitive,
                   max_sensitive_gain=max_sensitive_gain)
    rng = np.random.RandomState(random_state)
    parties, n_participants = _parties(participant, n_participants, X)
    target = _resolve_target(colluder, target, n_participants)
    estimator, words = _analyst_model(model, model_params, y, command_line is not None)
    pipe = _pipeline(mechanism, aligner, n_participants, estimator, random_state, n_anchors)
    split = _split_parties(X, y, parties, test_size, rng, pipe)
    low, high, xtol = _check_range(_default_bounds(param, n_participants, X, n_anchors)
                                   if bounds is None else bounds, xtol)
    folder = _checkpoint_folder(checkpoint)
    plan = [(f"calibrate {param}", _planned_draws(n_draws, confidence, criterion, low, high,
                                                   xtol)),
            ("frontier grid", (n_grid if n_grid >= 2 else 1) * grid_draws)]
    with run_progress([(k, n) for k, n in plan if n], progress,
                      _advice(command_line is not None, n_jobs, "grid"),
                      "skdc audit" if command_line is not None else "skdc",
                      {param: noise_label(param)}):
        calibration = _calibrate(pipe, split, param, names, targets, confidence, n_draws,
                                 (low, high), xtol, criterion, colluder, target, rng, n_jobs,
                                 batch_size, folder, progress)
        grid, grid_table, grid_resumed = _frontier_grid(
            pipe, split, param, names, targets, colluder, target, (low, high), n_grid,
            grid_draws, rng, folder, n_jobs, progress)
    draws = _all_draws(calibration, grid_table)
    # the arguments, in the order of the Python call that reproduces the audit
    call = dict(n_participants=n_participants, mechanism=mechanism, aligner=aligner,
                attacks=attacks, max_linkage=max_linkage, target_error=target_error,
                sensitive=sensitive, max_sensitive_gain=max_sensitive_gain,
                confidence=confidence, colluder=colluder, target=target, model=model,
                model_params=model_params, n_anchors=n_anchors, images=images,
                n_draws=n_draws, criterion=criterion, n_grid=n_grid, grid_draws=grid_draws,
                bounds=(low, high), xtol=xtol, test_size=test_size, random_state=random_state)
    setting = _setting(X, y, participant, split, call, param, names, grid, words,
                       command_line or _reproducing_call("audit", call),
                       calibration.n_draws_resumed + grid_resumed, len(draws))
    setting.update(images=bool(images), columns=columns)
    leakage = _gaussian_leakage(param, calibration, split.X_train)
    tables = _tables(calibration, draws, setting, leakage)
    setting["linkage"] = tables["linkage"]  # the strongest attack's, where the verdict is read
    setting["learns_nothing"] = learns_nothing(setting, tables["baseline"])
    picture = _reconstruction_picture(calibration, pipe, split, param, colluder, target,
                                      images)
    page = render(setting, calibration, draws, tables, picture, leakage)
    return AuditReport(calibration=calibration, draws=draws, attacks=tables["attacks"],
                       decisions=calibration.decisions, diagnostics=tables["diagnostics"],
                       summary=tables["summary"], setting=setting, html=page)


# ----------------------------------------------------------------------------- the audit's steps


def _check_data_and_deployment(X, y, mechanism, aligner, attacks, target_error, random_state):
    """``(X, y, param, names)``: the rows as float64, the calibrated parameter and the attacks
    that apply to the deployment (all of them when ``attacks`` is empty)."""
    X, y = _check_rows(X, y, target_error, random_state)
    if (mechanism, aligner) not in _DEPLOYMENTS:
        raise ValueError(
            f"mechanism={mechanism!r} with aligner={aligner!r} is not audited: use igdp with "
            "gopp (calibrates the anchor noise) or cgdp with none (the private-data noise)."
        )
    param, applicable = _DEPLOYMENTS[(mechanism, aligner)]
    if attacks and not all(isinstance(a, str) for a in attacks):
        raise TypeError(f"attacks must be attack names (strings); got {list(attacks)!r}.")
    names = list(applicable) if not attacks else list(dict.fromkeys(attacks))
    bad = [a for a in names if a not in applicable]
    if bad:
        raise ValueError(f"attack(s) {bad} do not apply to {mechanism} with aligner "
                         f"{aligner}; the applicable ones are {list(applicable)}.")
    return X, y, param, names


def _planned_draws(n_draws, confidence, criterion, low, high, xtol):
    """The calibration's most draws (0 where its settings are refused: it says why)."""
    try:
        return _check_draws(n_draws, confidence, criterion) * _planned_values(low, high, xtol)
    except (TypeError, ValueError):
        return 0


def _frontier_grid(pipe, split, param, names, targets, colluder, target, bounds, n_grid,
                   grid_draws, rng, folder, n_jobs, progress):
    """``(grid, table, n_resumed)``: ``grid_draws`` fresh deployments at each of ``n_grid``
    evenly spaced noise values, checkpointed as the calibration's draws are."""
    import pandas as pd

    from ..utils._draw_jobs import _resolve_scoring

    low, high = map(float, bounds)
    grid = np.linspace(low, high, n_grid) if n_grid >= 2 else np.array([high])
    seeds = rng.randint(2**31 - 1, size=grid_draws)
    attacks, _, errors = _judged(names, colluder, target, split.participant_test,
                                 targets["target_error"], targets["max_linkage"],
                                 targets["sensitive"], targets["max_sensitive_gain"],
                                 split.X_train.shape[1])
    scoring = {**_resolve_scoring("balanced_accuracy"),
               _V_PT_COLUMN: _FittedAttribute("v_phase_transition_")}
    fit_params = {"participant": split.participant_train}
    fingerprint = {"param": param, "redraw": "deployment", "columns": [*scoring, *attacks],
                   "content": _content_hash(pipe, attacks, scoring, split.X_train, split.y_train,
                                            (split.X_test, split.y_test), fit_params)}
    path = None if folder is None else os.path.join(folder, "grid.jsonl")
    ck = DrawCheckpoint(path, fingerprint, _row_fields(scoring, attacks, errors))
    data = (split.X_train, split.X_test, split.y_train, split.y_test, fit_params)
    jobs = [(float(v), int(s)) for v in grid for s in seeds]
    with _runner(pipe, param, "deployment", data, scoring, attacks, n_jobs, ck, progress,
                 "frontier grid", len(jobs)) as run:
        rows = run(jobs)
    table = pd.DataFrame([{"value": v, "draw": k % grid_draws, "draw_seed": s, **row}
                          for k, ((v, s), row) in enumerate(zip(jobs, rows))])
    return grid, table, run.n_resumed


def _all_draws(calibration, grid_table):
    """Every draw run, the calibration's then the grid's, column ``stage`` first."""
    import pandas as pd

    cal_table = calibration.table.drop(columns=["step", "meets"])
    draws = pd.concat([cal_table.assign(stage="calibration"),
                       grid_table.assign(stage="grid")], ignore_index=True)
    draws.insert(0, "stage", draws.pop("stage"))
    return draws


def _setting(X, y, participant, split, call, param, names, grid, words, command_line,
             n_resumed, n_draws_all):
    """The deployment in words and numbers, as the report prints it: what every run records
    (:func:`_recorded_setting`) and the audit's deployment, attacks and frontier grid."""
    setting = _recorded_setting(
        X, y, participant, split, n_participants=call["n_participants"],
        colluder=call["colluder"], target=call["target"],
        targets={"target_error": _float_or_none(call["target_error"]),
                 "max_linkage": _float_or_none(call["max_linkage"]),
                 "sensitive": call["sensitive"],
                 "max_sensitive_gain": call["max_sensitive_gain"]},
        confidence=call["confidence"], criterion=call["criterion"],
        random_state=call["random_state"], words=words, n_anchors=call["n_anchors"],
        command_line=command_line, n_resumed=n_resumed, n_draws_all=n_draws_all)
    setting.update(mechanism=call["mechanism"], aligner=call["aligner"], param=param,
                   noise=noise_label(param), attacks=names,
                   bounds=tuple(map(float, call["bounds"])), n_grid=int(grid.size),
                   grid_draws=int(call["grid_draws"]))
    return setting


def _float_or_none(value):
    return None if value is None else float(value)


def _gaussian_leakage(param, calibration, X_tr):
    """The leakage bound (bits per record) of a private-data-noise release, else ``None``."""
    if param != "gdp__noise" or not np.isfinite(calibration.value) or calibration.value <= 0:
        return None
    from ..privacy import GaussianReleaseLeakage

    # E1/E3 of the entropy-floor paper: the rotation earns no credit, the Gaussian noise
    # does; the covariance is this sample's estimate (a point estimate)
    return GaussianReleaseLeakage(calibration.value,
                                  cov=np.cov(X_tr, rowvar=False)).leakage_bits()

