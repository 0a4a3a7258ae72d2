"""The audit: one participant simulates the collaboration on its own rows before joining.

:func:`audit` splits the participant's rows into parties (or uses a partition it is given),
deploys the chosen mechanism and aligner, calibrates the noise for a target attack error
(:func:`calibrate_noise`), sweeps a grid of noise values for the frontier, and writes a
self-contained HTML report (figures embedded as PNG, no scripts, no links) with the tables as
CSV files, so that a privacy officer can read the answer and a data scientist can check it.
"""

# Licence: BSD 3 clause

import base64
import html
import io
import math
import platform
import sys
from dataclasses import dataclass, field
from functools import partial
from numbers import Integral, Real
from pathlib import Path

import numpy as np

from ..utils._checkpoint import DrawCheckpoint
from ..utils._progress import progress_bar
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._calibrate import (
    _RUN_CONSTRAINTS,
    _data_digest,
    _one,
    _run_draws,
    _stable_repr,
    calibrate_noise,
)

__all__ = ["AuditReport", "audit"]

# (mechanism, aligner) -> (noise parameter, attacks that apply under analyst-participant
# collusion): the noisy-anchor paper's choice (its section 7.2).
_DEPLOYMENTS = {
    ("igdp", "gopp"): ("align__v", ("mp", "procrustes", "alignment_map")),
    ("cgdp", "none"): ("gdp__noise", ("known_secret",)),
}
SECTIONS = ("setting", "frontier", "attacks", "diagnostics", "bounds", "limits", "reproduce")
_TITLES = {"setting": "The setting", "frontier": "Privacy-utility frontier",
           "attacks": "Attacks at the recommended noise",
           "diagnostics": "Alignment diagnostics and utility",
           "bounds": "Provable bounds", "limits": "What this report does not cover",
           "reproduce": "How to reproduce it"}


@dataclass(eq=False)
class AuditReport:
    """The result of :func:`audit`: the calibration, its tables and the HTML report.

    Read more in the :ref:`User Guide <safety>`.

    Attributes
    ----------
    calibration : NoiseCalibration
        The noise calibration for the target error.
    draws : pandas.DataFrame
        Every draw run (the calibration's and the frontier grid's), column ``stage`` telling
        which.
    attacks : pandas.DataFrame
        One row per attack at the recommended noise: target, mean error, lower and upper
        prediction bounds, whether it meets the target, whether it binds.
    diagnostics : pandas.DataFrame
        Alignment diagnostics and utility at the recommended noise (one row per quantity).
    summary : pandas.DataFrame
        The headline numbers (one row per quantity).
    setting : dict
        The deployment in words and numbers.
    html : str
        The self-contained report.
    files : dict of {str: Path}
        What :meth:`save` wrote (empty until then).

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.datasets import make_classification
    >>> from skdc.experiments import audit
    >>> X, y = make_classification(n_samples=240, n_features=6, random_state=0)
    >>> rep = audit(X, y, n_participants=3, attacks=["procrustes"], target_error=0.2,
    ...             confidence=0.8, bounds=(0.0, 0.4), n_draws=3, n_grid=3, grid_draws=1,
    ...             model="ridge", progress=False)
    >>> sorted(rep.save(tempfile.mkdtemp()))
    ['attacks', 'calibration', 'diagnostics', 'draws', 'report', 'summary']
    """

    calibration: object
    draws: object = field(repr=False)
    attacks: object = field(repr=False)
    diagnostics: object = field(repr=False)
    summary: object = field(repr=False)
    setting: dict = field(repr=False)
    html: str = field(repr=False)
    files: dict = field(default_factory=dict)

    def save(self, out):
        """Write ``report.html`` and the CSV tables into the folder ``out``.

        Parameters
        ----------
        out : str or Path
            Folder (created when missing).

        Returns
        -------
        files : dict of {str: Path}
            The files written.
        """
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        files = {"report": out / "report.html"}
        files["report"].write_text(self.html, encoding="utf-8")
        for name in ("draws", "attacks", "diagnostics", "summary"):
            files[name] = out / f"{name}.csv"
            getattr(self, name).to_csv(files[name], index=False)
        files["calibration"] = out / "calibration.csv"
        self.calibration.summary.to_csv(files["calibration"], index=False)
        self.files = files
        return files


# ----------------------------------------------------------------------------- the audit


def _model(model):
    if model == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=1000)
    if model == "ridge":
        from sklearn.linear_model import RidgeClassifier

        return RidgeClassifier()
    if hasattr(model, "fit"):
        return model
    raise ValueError(f"model must be 'logistic', 'ridge' or an estimator; got {model!r}.")


def _pipeline(mechanism, aligner, n_participants, model, seed):
    from sklearn.pipeline import Pipeline

    from ..alignment import GOPPAligner
    from ..mechanisms import CGDP, IGDP

    mech = {"igdp": IGDP, "cgdp": CGDP}[mechanism](n_participants, random_state=seed)
    steps = [("gdp", mech)]
    if aligner == "gopp":
        steps.append(("align", GOPPAligner()))
    steps.append(("clf", _model(model)))
    return Pipeline(steps)


def _default_bounds(param, n_participants, X):
    from ..alignment import v_phase_transition

    d = X.shape[1]
    if param.endswith("__v"):
        return 0.0, 3.0 * v_phase_transition(max(n_participants, 2), d, 4 * d)
    rms = float(np.sqrt(np.mean(np.asarray(X, dtype=np.float64) ** 2)))
    return 0.0, 4.0 * rms


@validate_params(
    {
        **_RUN_CONSTRAINTS,
        "X": ["array-like"],
        "y": ["array-like"],
        "n_participants": [Integral],  # checked (at least 2, unless a partition says) below
        "mechanism": [StrOptions({"igdp", "cgdp"})],
        "aligner": [StrOptions({"gopp", "none"})],
        "attacks": [list, tuple, None],
        "target_error": [Real],
        "partition": ["array-like", None],
        "model": [StrOptions({"logistic", "ridge"}), HasMethods(["fit"])],
        "n_grid": [Interval(Integral, 1, None, closed="left")],
        "grid_draws": [Interval(Integral, 1, None, closed="left")],
        "bounds": ["array-like", None],
        "random_state": "no_validation",  # checked below, saying why it must be an int
        "command_line": [str, None],
    },
    prefer_skip_nested_validation=True,
)
def audit(X, y, *, n_participants=5, mechanism="igdp", aligner="gopp", attacks=None,
          target_error=0.5, confidence=0.95, colluder=0, participant=None, partition=None,
          model="logistic", n_draws=8, n_grid=10, grid_draws=2, bounds=None, xtol=None,
          test_size=0.3, random_state=0, n_jobs=None, checkpoint=None, progress="auto",
          command_line=None):
    """Audit a data collaboration on one participant's rows: calibrated noise and a report.

    The rows are split into ``n_participants`` parties (by the mechanism's keyed hash of each
    row, or by ``partition``) that each obfuscate their share with the chosen mechanism; the
    analyst aligns and trains the model. Under the collusion of the analyst with participant
    ``colluder``, every applicable attack reconstructs participant ``participant``'s rows.
    :func:`calibrate_noise` finds the smallest noise whose attacks all stay above
    ``target_error`` at ``confidence`` on a fresh draw, a grid of ``n_grid`` noise values
    draws the frontier, and the report explains the result in words (:meth:`AuditReport.save`
    writes it with its CSV tables).

    Read more in the :ref:`User Guide <safety>`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The auditing participant's rows.
    y : array-like of shape (n_samples,)
        Their labels (the utility model is a classifier).
    n_participants : int, default=5
        Parties the rows are split into (ignored with ``partition``).
    mechanism : {"igdp", "cgdp"}, default="igdp"
        Independent secrets (I-GDP) or one common secret (C-GDP).
    aligner : {"gopp", "none"}, default="gopp"
        Noisy-anchor GOPP alignment (the anchor noise ``align__v`` is calibrated) or none
        (C-GDP; the private-data noise ``gdp__noise`` is calibrated).
    attacks : list of str, default=None
        Attack names (``"mp"``, ``"procrustes"``, ``"alignment_map"``, ``"known_anchor"``,
        ``"known_secret"``); ``None``: every attack that applies to the deployment.
    target_error : float, default=0.5
        The acceptable relative reconstruction error ``||Xhat - X||_F / ||X||_F``.
    confidence : float, default=0.95
        Probability that a fresh deployment at the recommended noise meets the target.
    colluder : int, default=0
        The participant colluding with the analyst.
    participant : int, default=None
        The attacked participant (the auditor); ``None``: 1, or 0 when the colluder is 1.
    partition : array-like of int of shape (n_samples,), default=None
        The participants' partition: party of each row. Parties are then formed from it
        (their count sets ``n_participants``) instead of a round-robin split.
    model : {"logistic", "ridge"} or estimator, default="logistic"
        The analyst's utility model.
    n_draws : int, default=8
        Noise draws per value of the calibration.
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
        The one seed of the audit (split, secrets, every draw).
    n_jobs : int, default=None
        Parallel draws (joblib; ``joblib.parallel_config(backend="dask")`` spreads them on a
        cluster).
    checkpoint : str or Path, default=None
        Folder for the draw checkpoints; an interrupted audit rerun with the same folder and
        settings resumes and gives the same report.
    progress : bool or "auto", default="auto"
        tqdm bars; ``"auto"``: when stderr is a terminal.
    command_line : str, default=None
        The command to print under "How to reproduce it" (the CLI passes its own).

    Returns
    -------
    report : AuditReport
        The calibration, the tables and the HTML.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skdc.experiments import audit
    >>> X, y = load_digits(return_X_y=True)
    >>> rep = audit(X[:300] / 16, y[:300], n_participants=3, attacks=["procrustes"],
    ...             target_error=0.3, bounds=(0.0, 0.1), n_draws=3, n_grid=4,
    ...             grid_draws=1, model="ridge", progress=False)
    >>> rep.calibration.binding_attack
    'procrustes'
    >>> "Attacks at the recommended noise" in rep.html
    True
    """
    X, y, param, names = _check_data_and_deployment(X, y, mechanism, aligner, attacks,
                                                    target_error, random_state)
    rng = np.random.RandomState(random_state)
    parties, n_participants = _parties(partition, n_participants, X)
    participant = _check_roles(colluder, participant, n_participants)
    split = _split_rows(X, y, parties, test_size, rng)
    pipe = _pipeline(mechanism, aligner, n_participants, model, random_state)
    if bounds is None:
        bounds = _default_bounds(param, n_participants, X)
    scorers = _collusion_scorers(names, colluder, participant, split.p_te)
    ck = None if checkpoint is None else Path(checkpoint)
    calibration = calibrate_noise(
        pipe, split.X_tr, split.y_tr, test_data=(split.X_te, split.y_te), param=param,
        attack=scorers, min_error=float(target_error), confidence=confidence, n_draws=n_draws,
        bounds=bounds, xtol=xtol, scoring="balanced_accuracy",
        random_state=rng.randint(2**31 - 1), n_jobs=n_jobs,
        checkpoint=None if ck is None else ck / "calibration.jsonl", progress=progress,
    )
    grid, grid_table = _frontier_grid(pipe, split, param, scorers, bounds, n_grid, grid_draws,
                                      rng, None if ck is None else ck / "grid.jsonl", n_jobs,
                                      progress)
    draws = _all_draws(calibration, grid_table)
    call = dict(n_participants=n_participants, mechanism=mechanism, aligner=aligner,
                attacks=attacks, target_error=target_error, confidence=confidence,
                colluder=colluder, participant=participant, model=model, n_draws=n_draws,
                n_grid=n_grid, grid_draws=grid_draws, bounds=bounds, xtol=xtol,
                test_size=test_size, random_state=random_state)
    setting = _setting(X, y, partition, split, call, param, names, grid,
                       command_line or _python_call(call))
    leakage = _gaussian_leakage(param, calibration, split.X_tr)
    attacks_df, diagnostics, summary = _tables(calibration, draws, names, param, leakage)
    figures = _figures(calibration, draws, names, param, setting)
    picture = _reconstruction_picture(calibration, pipe, split.X_tr, split.y_tr, split.X_te,
                                      param, colluder, participant, split.fit_params,
                                      split.p_te)
    page = _render(setting, calibration, attacks_df, diagnostics, summary, figures, picture,
                   leakage)
    return AuditReport(calibration=calibration, draws=draws, attacks=attacks_df,
                       diagnostics=diagnostics, summary=summary, setting=setting, html=page)


# ----------------------------------------------------------------------------- the audit's steps


def _check_data_and_deployment(X, y, mechanism, aligner, attacks, target_error, random_state):
    """``(X, y, param, names)``: the rows as float64, the calibrated parameter and the attacks
    that apply to the deployment (all of them when ``attacks`` is empty)."""
    from sklearn.utils.multiclass import type_of_target

    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[0] < 10:
        raise ValueError(f"X must be a 2-D array of at least 10 rows; got shape {X.shape}.")
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds NaN or infinite values; clean or impute them first.")
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must hold one label per row of X ({X.shape[0]}); got shape "
                         f"{y.shape}.")
    if type_of_target(y) not in ("binary", "multiclass"):
        raise ValueError(f"y must hold class labels (the utility model is a classifier); got "
                         f"{type_of_target(y)} targets.")
    if (mechanism, aligner) not in _DEPLOYMENTS:
        raise ValueError(
            f"mechanism={mechanism!r} with aligner={aligner!r} is not audited: use igdp with "
            "gopp (calibrates the anchor noise) or cgdp with none (the private-data noise)."
        )
    if not isinstance(random_state, Integral):
        raise ValueError(f"random_state must be an int (the report prints it to reproduce "
                         f"the audit); got {random_state!r}.")
    if not isinstance(target_error, Real) or not np.isfinite(target_error):
        raise ValueError(f"target_error must be a finite float; got {target_error!r}.")
    param, applicable = _DEPLOYMENTS[(mechanism, aligner)]
    names = list(applicable) if not attacks else list(dict.fromkeys(attacks))
    bad = [a for a in names if a not in applicable]
    if bad:
        raise ValueError(f"attack(s) {bad} do not apply to {mechanism} with aligner "
                         f"{aligner}; the applicable ones are {list(applicable)}.")
    return X, y, param, names


def _parties(partition, n_participants, X):
    """``(parties, n_participants)``: each row's party index from ``partition`` (``None``
    without one: the mechanism's keyed hash assigns rows) and the number of parties."""
    if partition is None:
        if not isinstance(n_participants, Integral) or n_participants < 2:
            raise ValueError(f"n_participants must be an int of at least 2; got "
                             f"{n_participants!r}.")
        return None, n_participants
    partition = np.asarray(partition)
    if partition.shape != (X.shape[0],) or partition.dtype.kind not in "iu":
        raise ValueError(f"partition must hold one integer party id per row of X "
                         f"({X.shape[0]}); got shape {partition.shape}, dtype "
                         f"{partition.dtype}.")
    ids, parties = np.unique(partition, return_inverse=True)
    if ids.size < 2:
        raise ValueError("partition names a single party; a collaboration needs two.")
    return parties, int(ids.size)


def _check_roles(colluder, participant, n_participants):
    """The attacked participant (by default 1, or 0 when the colluder is 1), checked against
    the colluder."""
    if participant is None:
        participant = 1 if colluder != 1 else 0
    for name, who in (("colluder", colluder), ("participant", participant)):
        if not isinstance(who, Integral) or not 0 <= who < n_participants:
            raise ValueError(f"{name} must be a participant id in 0 .. {n_participants - 1}; "
                             f"got {who!r}.")
    if colluder == participant:
        raise ValueError(f"colluder and participant are both {colluder}; the attacked "
                         "participant must differ from the colluder.")
    return participant


@dataclass
class _Split:
    """The audit's one train/test split; ``p_tr``/``p_te`` are the rows' parties (``None``
    when the mechanism assigns them) and ``fit_params`` routes ``p_tr`` to the mechanism."""

    X_tr: object
    X_te: object
    y_tr: object
    y_te: object
    p_tr: object = None
    p_te: object = None
    fit_params: dict = None


def _split_rows(X, y, parties, test_size, rng):
    from sklearn.model_selection import train_test_split

    if parties is None:
        # the mechanism assigns rows to parties by a keyed hash of their content
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, stratify=y,
                                                  random_state=rng.randint(2**31 - 1))
        return _Split(X_tr, X_te, y_tr, y_te)
    X_tr, X_te, y_tr, y_te, p_tr, p_te = train_test_split(
        X, y, parties, test_size=test_size, stratify=parties,
        random_state=rng.randint(2**31 - 1))
    return _Split(X_tr, X_te, y_tr, y_te, p_tr, p_te, {"participant": p_tr})


def _collusion_scorers(names, colluder, participant, p_te):
    """``{name: scorer}`` of the attacks by the analyst and ``colluder`` on ``participant``."""
    from ..metrics import make_attack, make_attack_scorer

    scorers = {a: make_attack_scorer(make_attack(a), colluder=colluder, target=participant)
               for a in names}
    if p_te is not None:  # the held-out rows' declared parties reach the collusion view
        scorers = {a: partial(sc, participant=p_te) for a, sc in scorers.items()}
    return scorers


def _frontier_grid(pipe, split, param, scorers, bounds, n_grid, grid_draws, rng, path,
                   n_jobs, progress):
    """``(grid, table)``: ``grid_draws`` draws at each of ``n_grid`` evenly spaced noise
    values, checkpointed in ``path`` as the calibration's draws are."""
    import pandas as pd

    low, high = map(float, bounds)
    grid = np.linspace(low, high, n_grid) if n_grid >= 2 else np.array([high])
    seeds = rng.randint(2**31 - 1, size=grid_draws)
    jobs = [(f"{float(v)!r}/{k}", float(v), int(s)) for v in grid for k, s in enumerate(seeds)]
    fingerprint = {"grid": [float(v) for v in grid], "seeds": [int(s) for s in seeds],
                   "estimator": _stable_repr(pipe),
                   "attacks": {n: _stable_repr(a) for n, a in scorers.items()},
                   "data": _data_digest(split.X_tr, split.y_tr, split.X_te, split.y_te,
                                        split.p_tr, split.p_te)}
    grid_ck = DrawCheckpoint(path, fingerprint)
    scoring = {"balanced_accuracy": "balanced_accuracy"}

    run_draw = partial(_one, pipe, split.X_tr, split.y_tr, (split.X_te, split.y_te), param,
                       scoring=scoring, attacks=scorers, fit_params=split.fit_params)
    bar = progress_bar(None, progress, total=len(jobs), desc="frontier grid", unit="draw")
    try:
        rows = _run_draws(run_draw, jobs, grid_ck, n_jobs, bar)
    finally:
        if bar is not None:
            bar.close()
    table = pd.DataFrame([{"value": v, "draw": k % grid_draws, "draw_seed": s, **row}
                          for k, ((_, v, s), row) in enumerate(zip(jobs, rows))])
    return grid, table


def _all_draws(calibration, grid_table):
    """Every draw run, the calibration's then the grid's, column ``stage`` first."""
    import pandas as pd

    cal_table = calibration.table.drop(columns=["step"])
    draws = pd.concat([cal_table.assign(stage="calibration"),
                       grid_table.assign(stage="grid")], ignore_index=True)
    draws.insert(0, "stage", draws.pop("stage"))
    return draws


def _setting(X, y, partition, split, call, param, names, grid, command_line):
    """The deployment in words and numbers, as the report prints it."""
    model = call["model"]
    return {
        "n_rows": int(X.shape[0]), "n_features": int(X.shape[1]),
        "n_train": int(split.X_tr.shape[0]), "n_test": int(split.X_te.shape[0]),
        "n_participants": int(call["n_participants"]), "mechanism": call["mechanism"],
        "aligner": call["aligner"], "param": param, "colluder": int(call["colluder"]),
        "participant": int(call["participant"]), "attacks": names,
        "target_error": float(call["target_error"]), "confidence": float(call["confidence"]),
        "bounds": tuple(map(float, call["bounds"])), "n_draws": int(call["n_draws"]),
        "n_grid": int(grid.size), "grid_draws": int(call["grid_draws"]),
        "random_state": int(call["random_state"]), "partition": partition is not None,
        "model": model if isinstance(model, str) else type(model).__name__,
        "input_sha256": _data_digest(X, y, partition),
        "command_line": command_line,
    }


def _gaussian_leakage(param, calibration, X_tr):
    """The leakage bound (bits per record) of a private-data-noise release, else ``None``."""
    if param != "gdp__noise" or not np.isfinite(calibration.value) or calibration.value <= 0:
        return None
    from ..privacy import GaussianReleaseLeakage

    # E1/E3 of the entropy-floor paper: the rotation earns no credit, the Gaussian noise
    # does; the covariance is this sample's estimate (a point estimate)
    return GaussianReleaseLeakage(calibration.value,
                                  cov=np.cov(X_tr, rowvar=False)).leakage_bits()


def _python_call(args):
    keys = ("n_participants", "mechanism", "aligner", "attacks", "target_error", "confidence",
            "colluder", "participant", "model", "n_draws", "n_grid", "grid_draws", "bounds",
            "xtol", "test_size", "random_state")
    inner = ", ".join(f"{k}={args[k]!r}" for k in keys if not hasattr(args[k], "fit"))
    return f"skdc.experiments.audit(X, y, {inner})"


# ----------------------------------------------------------------------------- tables


def _tables(cal, draws, names, param, leakage=None):
    import pandas as pd

    at = cal.value if np.isfinite(cal.value) else cal.bracket[0]
    s = cal.summary[cal.summary["value"] == at].set_index("attack")
    attacks = pd.DataFrame([{
        "attack": a, param: at, "target": s.loc[a, "target"], "mean_error": s.loc[a, "mean"],
        "lower_bound": s.loc[a, "lower"], "upper_bound": s.loc[a, "upper"],
        "meets_target": bool(s.loc[a, "meets"]), "binding": a == cal.binding_attack,
    } for a in names])
    rows = draws[(draws["stage"] == "calibration") & (draws["value"] == at)]
    v_pt = cal.v_phase_transition
    diag = [("noise value", at), ("draws at this value", len(rows))]
    if "converged" in rows and rows["converged"].notna().any():
        diag += [("share of draws converged", float(rows["converged"].astype(float).mean())),
                 ("median solver iterations", float(rows["n_iter"].median())),
                 ("median fixed-point residual", float(rows["fixed_point_residual"].median()))]
    if np.isfinite(v_pt):
        diag += [("v_PT (phase transition)", v_pt), ("v / v_PT", at / v_pt)]
    diag += [("balanced accuracy (mean)", cal.utility),
             ("balanced accuracy CI low", cal.utility_interval[0]),
             ("balanced accuracy CI high", cal.utility_interval[1])]
    base = cal.summary["value"].min()
    base_rows = draws[(draws["stage"] == "calibration") & (draws["value"] == base)]
    if base != at and len(base_rows):
        diag += [(f"balanced accuracy at {param} = {base:.4g}",
                  float(base_rows["balanced_accuracy"].mean()))]
    if leakage is not None:
        diag += [("leakage bound (bits per record)", leakage)]
    diagnostics = pd.DataFrame(diag, columns=["quantity", "value"])
    summary = pd.DataFrame([
        ("recommended noise", cal.value), ("bracket low (fails)", cal.bracket[0]),
        ("bracket high (meets)", cal.bracket[1]), ("bracket width", cal.bracket_width),
        ("target error", cal.min_error[cal.binding_attack]), ("confidence", cal.confidence),
        ("binding attack error (mean)", cal.attack_error),
        ("binding attack lower bound", cal.attack_error_interval[0]),
        ("balanced accuracy (mean)", cal.utility), ("draws run", len(draws)),
    ], columns=["quantity", "value"])
    return attacks, diagnostics, summary


# ----------------------------------------------------------------------------- figures


def _png(fig):
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _figures(cal, draws, names, param, setting):
    """The report's two figures as base64 PNG: ``curves`` and ``frontier``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    return {"curves": _curves_figure(cal, draws, names, param, setting),
            "frontier": _frontier_figure(cal, draws, setting)}


def _curves_figure(cal, draws, names, param, setting):
    """Attack errors (left) and utility (right) against the noise, with the target, the
    recommended noise and v_PT."""
    import matplotlib.pyplot as plt

    from ._plot import plot_noise_curves

    low, high = setting["bounds"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    top = float(np.nanmax(draws[names].to_numpy())) if len(draws) else 1.0
    # relative errors live in [0, inf): fits and bands are clipped there; the view stops at
    # 2 (twice as far off as guessing zeros) so that one exploding attack does not hide the
    # others
    plot_noise_curves(draws, names, hue=None, x_range=(low, high), y_range=(0.0, np.inf),
                      n_boot=500 if len(draws) >= 12 else 0, ax=axes[0])
    axes[0].set_ylim(0.0, 1.05 * max(min(top, 2.0), 1.2 * setting["target_error"]))
    axes[0].axhline(setting["target_error"], color="k", linestyle=":", linewidth=1,
                    label=f"target error {setting['target_error']:.3g}")
    plot_noise_curves(draws, "balanced_accuracy", hue=None, x_range=(low, high),
                      y_range=(0.0, 1.0), n_boot=500 if len(draws) >= 12 else 0, ax=axes[1])
    for ax in axes:
        if np.isfinite(cal.value):
            ax.axvline(cal.value, color="C3", linewidth=1.5,
                       label=f"recommended {param} = {cal.value:.4g}")
        if np.isfinite(cal.v_phase_transition) and cal.v_phase_transition <= high * 1.5:
            ax.axvline(cal.v_phase_transition, color="0.4", linestyle="--", linewidth=1,
                       label=f"v_PT = {cal.v_phase_transition:.4g}")
        ax.set_xlabel(param)
        ax.legend(fontsize="small", frameon=False)
    axes[0].set_ylabel("attack error (relative, higher = more private)")
    axes[1].set_ylabel("balanced accuracy")
    return _png(fig)


def _frontier_figure(cal, draws, setting):
    """Utility against the binding attack's error, the star at the recommended noise."""
    import matplotlib.pyplot as plt

    from ._plot import plot_frontier

    fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
    frame = draws.assign(binding_error=draws[cal.binding_attack])
    plot_frontier(frame, "binding_error", "balanced_accuracy", hue=None,
                  n_boot=500 if len(frame) >= 12 else 0, ax=ax)
    if np.isfinite(cal.value):
        ax.errorbar([cal.attack_error], [cal.utility],
                    yerr=[[cal.utility - cal.utility_interval[0]],
                          [cal.utility_interval[1] - cal.utility]],
                    fmt="*", color="C3", markersize=12, label="recommended noise")
    ax.axvline(setting["target_error"], color="k", linestyle=":", linewidth=1,
               label="target error")
    ax.set_xlabel(f"{cal.binding_attack} attack error (binding attack)")
    ax.set_ylabel("balanced accuracy")
    ax.legend(fontsize="small", frameon=False)
    return _png(fig)


def _reconstruction_picture(cal, pipe, X_tr, y_tr, X_te, param, colluder, participant,
                            fit_params, p_te):
    """Originals and the binding attack's reconstructions at the recommended noise (image
    rows only: the width must be a square)."""
    side = int(round(math.sqrt(X_te.shape[1])))
    if side * side != X_te.shape[1] or not np.isfinite(cal.value):
        return None
    import matplotlib.pyplot as plt
    from sklearn import config_context

    from ..attacks import collusion_view
    from ..metrics import make_attack, relative_error
    from ._sweep import _Maker

    row = cal.table[cal.table["value"] == cal.value].iloc[0]
    from threadpoolctl import threadpool_limits

    est = _Maker(pipe, param, "auto")(cal.value, int(row["seed"]))
    # one BLAS thread, as in the sweep's draws: the same numbers as the draw it repeats
    with config_context(enable_metadata_routing=bool(fit_params)), threadpool_limits(1):
        est.fit(X_tr, y_tr, **(fit_params or {}))
    view = collusion_view(est, X_te, colluder=colluder, target=participant, participant=p_te)
    rec = make_attack(cal.binding_attack).reconstruct(view)
    truth, X_hat = view.truth.X, rec.X
    err = float(relative_error(truth, X_hat))
    k = min(6, truth.shape[0])
    fig, axes = plt.subplots(2, k, figsize=(1.3 * k, 2.9), layout="constrained")
    axes = np.atleast_2d(axes).reshape(2, k)
    lo, hi = float(truth.min()), float(truth.max())
    for j in range(k):
        for r, img in enumerate((truth[j], X_hat[j])):
            axes[r, j].imshow(img.reshape(side, side), cmap="gray_r", vmin=lo, vmax=hi)
            axes[r, j].set_xticks([])
            axes[r, j].set_yticks([])
    axes[0, 0].set_ylabel("original")
    axes[1, 0].set_ylabel("attack")
    fig.suptitle(f"{cal.binding_attack} reconstruction, relative error {err:.3f}",
                 fontsize="small")
    return {"png": _png(fig), "error": err, "draw": int(row["draw"])}


# ----------------------------------------------------------------------------- HTML


def _bounds_section(s, cal, leakage):
    tail = ("The attack errors in this report show what the strongest known attacks achieve, "
            "not what every attack could.")
    if leakage is not None:
        return (
            f"<p>The private-data noise is a Gaussian release: at sigma = {cal.value:.4g} each "
            f"record leaks at most <b>{leakage:.4g} bits</b> (Gaussian maximum-entropy bound "
            "of the entropy-floor paper, E1 and E3; the rotation earns no credit). The rows' "
            "covariance in it is this sample's estimate, not an upper confidence bound. "
            "<code>python -m skdc bound --data X.npy --perp CALIBRATION.npy --gamma "
            f"{leakage:.4g}</code> turns the leakage into a certified floor on any attack's "
            f"reconstruction error. {tail}</p>")
    return (
        "<p>No provable bound applies to this deployment. The anchor noise of GOPP alignment "
        "is not differential privacy and has no leakage bound. The entropy floor "
        "(<code>skdc bound</code>) certifies Gaussian releases (C-GDP or I-GDP with "
        "private-data noise) and DP-SGD-trained models, and the GaussMix epsilon certifies "
        f"Gaussian sketches; audit those deployments for a bound. {tail}</p>")

_NAMES = {"igdp": "I-GDP", "cgdp": "C-GDP", "gopp": "noisy-anchor GOPP alignment",
          "none": "no alignment"}
_CSS = """
body{font-family:Helvetica,Arial,sans-serif;max-width:60em;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:1.8em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #bbb;padding:.25em .6em;
text-align:right}th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
.verdict{font-size:1.1em;padding:.8em 1em;border-left:6px solid #2a7;background:#eef8f1}
.warn{border-left-color:#c60;background:#fbf3e8}img{max-width:100%}code{background:#f4f4f4;
padding:0 .2em}
"""


def _fmt(value):
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (Integral, np.integer)):
        return str(int(value))
    if isinstance(value, (Real, np.floating)):
        v = float(value)
        return "n/a" if math.isnan(v) else ("inf" if math.isinf(v) else f"{v:.4g}")
    return html.escape(str(value))


def _table(df, table_id):
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row) + "</tr>"
                   for row in df.itertuples(index=False))
    return (f'<table id="{table_id}" data-csv="{table_id}.csv"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def _img(png, alt):
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{png}">'


_LIMITS = (
    "<ul><li>Other threat models: collusion of several participants, an analyst who "
    "deviates from the protocol, attacks that use side information (known rows, "
    "public data sets), membership or attribute inference.</li>"
    "<li>The anchor noise is not differential privacy: it makes the known attacks "
    "err, it gives no epsilon.</li>"
    "<li>The simulation runs on your rows only: the other participants' data may "
    "differ, and the result holds for this split and these sizes.</li>"
    "<li>The confidence is over noise draws of this one deployment (fixed secrets and "
    "split), assuming the attack errors of draws are roughly Gaussian.</li></ul>")


def _verdict(s, cal):
    """The answer in one paragraph: the recommended noise and its cost, or why there is none;
    a warning when it lies above the phase transition."""
    e, p = html.escape, s["param"]
    kind = "anchor noise v" if p.endswith("__v") else "private-data noise sigma"
    ok = np.isfinite(cal.value)
    if ok:
        verdict = (
            f"<p class='verdict'>Recommended {e(kind)}: <b>{p} = {cal.value:.4g}</b>. At this "
            f"noise, a fresh deployment keeps every attack's error at or above "
            f"<b>{s['target_error']:.3g}</b> with probability {s['confidence']:.0%} (one-sided "
            f"prediction bound over {s['n_draws']} draws). The binding attack is "
            f"<b>{e(cal.binding_attack)}</b>. It costs balanced accuracy "
            f"{cal.utility:.3f} ({s['confidence']:.0%} CI {cal.utility_interval[0]:.3f} to "
            f"{cal.utility_interval[1]:.3f}). The smallest sufficient noise lies in "
            f"[{cal.bracket[0]:.4g}, {cal.bracket[1]:.4g}].</p>")
    else:
        verdict = (
            f"<p class='verdict warn'>No noise in [{s['bounds'][0]:.4g}, {s['bounds'][1]:.4g}] "
            f"meets the target error {s['target_error']:.3g} at {s['confidence']:.0%}: the "
            f"{e(cal.binding_attack)} attack stays below it. Widen the range, lower the "
            "target, or do not join under this deployment.</p>")
    if ok and np.isfinite(cal.v_phase_transition) and cal.value > cal.v_phase_transition:
        verdict += (
            f"<p class='verdict warn'>The recommended noise is above the phase transition "
            f"v_PT = {cal.v_phase_transition:.4g} ({cal.value / cal.v_phase_transition:.2f} x):"
            " the alignment degrades sharply there, so utility is fragile. More anchor rows "
            "raise v_PT.</p>")
    return verdict


def _meaning(s, cal, picture):
    """What an attack error means, with the reconstruction picture when there is one."""
    e = html.escape
    meaning = (
        "<p>An attack error <i>e</i> is the relative reconstruction error "
        "||X&#770; - X||<sub>F</sub> / ||X||<sub>F</sub> of the attacked participant's rows: "
        "<i>e</i> = 0 is an exact copy, <i>e</i> = 1 is as far off as guessing all zeros, "
        f"<i>e</i> = {s['target_error']:.3g} means the attacker's rows are off by "
        f"{s['target_error']:.0%} of the rows' own size.</p>")
    if picture is None:
        return meaning + "<p>(No picture: the rows are not square images.)</p>"
    return meaning + (f"<p>Below: your rows (top) and the {e(cal.binding_attack)} attack's "
                      f"reconstructions (bottom) at the recommended noise, one draw, relative "
                      f"error {picture['error']:.3f}.</p>" + _img(picture["png"],
                                                                 "reconstruction"))


def _setting_section(s, cal, picture):
    """The deployment and the threat model in words."""
    e = html.escape
    who = (f"participant {s['participant']}" + " (you, the auditing party)")
    mech = {"igdp": "its own secret rotation and shift (I-GDP)",
            "cgdp": "a rotation and shift common to all participants (C-GDP)"}[s["mechanism"]]
    align = ("The analyst aligns the uploads by noisy-anchor GOPP alignment: each participant "
             "uploads its obfuscated copy of a shared anchor plus Gaussian noise of scale v, "
             "drawn on the participant side." if s["aligner"] == "gopp" else
             "The analyst trains on the uploads as received (no alignment step); each "
             "participant adds Gaussian noise of scale sigma to its rows before obfuscating.")
    split = ("as in the participants' partition file" if s["partition"] else
             f"of your {s['n_rows']} rows, assigned by a keyed hash of each row")
    return (
        f"<p>{s['n_participants']} participants each hold a share of the rows "
        f"({split}; {s['n_features']} features, {s['n_train']} rows train the model, "
        f"{s['n_test']} held-out rows measure utility and attacks). Each participant "
        f"obfuscates its rows with {mech}. {align} The analyst trains a "
        f"{e(str(s['model']))} classifier.</p>"
        f"<p>Threat model: the analyst colludes with participant {s['colluder']}, who "
        f"discloses its secret, its rows and the raw anchor. They attack {e(who)} with "
        f"{', '.join(map(e, s['attacks']))}.</p>" + _meaning(s, cal, picture))


def _frontier_section(s, cal, figures, summary):
    return (
        f"{_verdict(s, cal)}<p>Every draw is a point; lines are cubic regression splines with "
        "95% pointwise bootstrap bands, clipped to each metric's range. Left: attack errors "
        "against the noise, the target dotted; right: utility. The red line marks the "
        "recommended noise, the dashed one v_PT.</p>" + _img(figures["curves"], "curves")
        + "<p>The frontier: utility against the binding attack's error, the star at the "
        "recommended noise (with the utility interval).</p>"
        + _img(figures["frontier"], "frontier") + _table(summary, "summary"))


def _attacks_section(s, cal, attacks):
    p = s["param"]
    return (
        f"<p>At {p} = {_fmt(attacks[p].iloc[0])}: mean error, and one-sided "
        f"{s['confidence']:.0%} lower and upper prediction bounds of a fresh draw's error. "
        f"The binding attack, <b>{html.escape(cal.binding_attack)}</b>, is the one closest to "
        "(or furthest below) its target: it decides the noise.</p>"
        + _table(attacks, "attacks"))


def _reproduce_section(s, cal):
    """The command, the versions and the seed that reproduce the report."""
    import sklearn

    import skdc

    e = html.escape
    return (
        f"<p>Command: <code>{e(s['command_line'])}</code></p><table id='versions'>"
        + "".join(f"<tr><td>{k}</td><td>{e(str(v))}</td></tr>" for k, v in [
            ("skdc", skdc.__version__ if hasattr(skdc, "__version__") else "dev"),
            ("python", platform.python_version()), ("numpy", np.__version__),
            ("scikit-learn", sklearn.__version__), ("platform", sys.platform),
            ("seed", s["random_state"]), ("SHA-256 of the inputs", s["input_sha256"]),
            ("draws run", len(cal.table)), ("noise range", s["bounds"])])
        + "</table><p>Every draw is in <code>draws.csv</code>; the calibration's steps in "
        "<code>calibration.csv</code>.</p>")


def _render(setting, cal, attacks, diagnostics, summary, figures, picture, leakage=None):
    """The self-contained HTML page: a heading, then the sections of ``SECTIONS`` in order."""
    s = setting
    sections = {
        "setting": _setting_section(s, cal, picture),
        "frontier": _frontier_section(s, cal, figures, summary),
        "attacks": _attacks_section(s, cal, attacks),
        "diagnostics": (
            "<p>The alignment solver's state and the utility model's score at the recommended "
            "noise (balanced accuracy on the held-out rows, Student-t interval over draws)."
            "</p>" + _table(diagnostics, "diagnostics")),
        "bounds": _bounds_section(s, cal, leakage),
        "limits": _LIMITS,
        "reproduce": _reproduce_section(s, cal),
    }
    body = "".join(f'<section id="{k}"><h2>{_TITLES[k]}</h2>{sections[k]}</section>'
                   for k in SECTIONS)
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            "<title>skdc audit: is our collaboration safe?</title>"
            f"<style>{_CSS}</style></head><body><h1>Is our collaboration safe?</h1>"
            f"<p>An audit of {_NAMES[s['mechanism']]} with {_NAMES[s['aligner']]}, "
            f"{s['n_participants']} participants, target attack error "
            f"{s['target_error']:.3g} at {s['confidence']:.0%}.</p>{body}</body></html>\n")
