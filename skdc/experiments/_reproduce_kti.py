"""The KTI paper's experiments, reproduced on the rows you give [1]_.

* :func:`reproduce_kti`: research question 1 (Section 5.2, Fig. 3 of [1]_): Central, Local and
  the data-collaboration integrations MPP, GEP, ODC, LTI and KTI under per-party UMAP with a
  SMOTE anchor, as the number of parties ``K`` grows;
* :func:`reproduce_kti_tables`: research question 4 (Section 5.5, Tables 3 and 4 of [1]_): LTI,
  KTI and KTI+TSL under PCA, kernel PCA and UMAP at widths 4, 16 and 64 with a real anchor, and
  the reconstruction accuracy of the PINV, LR and MLP anchor-regression attacks on KTI+TSL's
  uploads when the anchor rows of digits 0-2 leak.

Both return a :class:`~skdc.experiments.Reproduction`: means with t-based 95 % intervals over
the trials, beside the paper's numbers where the paper gives them.

References
----------
.. [1] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

import warnings
from numbers import Integral

import numpy as np

from ..utils._docstring import Substitution
from ..utils._progress import progress_bar
from ..utils._references import kti_paper_references
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._reproduce import Reproduction, _bar_figure

__all__ = ["reproduce_kti", "reproduce_kti_tables"]

_DATA = {"X_train": ["array-like"], "y_train": ["array-like"], "X_test": ["array-like"],
         "y_test": ["array-like"]}
_RUN = {"random_state": ["random_state"], "progress": ["boolean", StrOptions({"auto"})]}
_COUNT = [Interval(Integral, 1, None, closed="left")]

# Section 5.2 of [1]: K in {2, 4, ..., 64}, n(k) = 100 rows per party, N_seed = 100
PAPER_K = (2, 4, 8, 16, 32, 64)
# the only numbers of Fig. 3 the text gives (Section 5.2 of [1]): Central's mean accuracy on
# MNIST at the two ends of the K grid
_PAPER_CENTRAL = {2: 0.680, 64: 0.941}
_LINEAR = ("MPP", "GEP", "ODC", "LTI")
_SWEEP_METHODS = ("Central", "Local", *_LINEAR, "KTI")

# Tables 3 and 4 of [1] (MNIST rows): mean and 95 % half-width over 30 trials
_REDUCTIONS = ("PCA", "K-PCA", "UMAP")
_WIDTHS = (4, 16, 64)
_TABLE_METHODS = ("LTI", "KTI", "KTI+TSL")
_PAPER_TABLE4 = {
    ("PCA", 4): ((.408, .007), (.336, .011), (.394, .008)),
    ("PCA", 16): ((.755, .007), (.517, .012), (.824, .004)),
    ("PCA", 64): ((.751, .013), (.673, .008), (.859, .004)),
    ("K-PCA", 4): ((.346, .006), (.320, .006), (.329, .005)),
    ("K-PCA", 16): ((.636, .007), (.673, .006), (.685, .006)),
    ("K-PCA", 64): ((.635, .014), (.717, .009), (.753, .006)),
    ("UMAP", 4): ((.349, .006), (.425, .008), (.457, .008)),
    ("UMAP", 16): ((.512, .007), (.567, .005), (.594, .005)),
    ("UMAP", 64): ((.554, .007), (.586, .005), (.598, .005)),
}
# Table 3 of [1]: KTI+TSL's reconstruction accuracy under its strongest attack
_PAPER_TABLE3 = {
    ("PCA", 4): (.267, .010, "PINV"), ("PCA", 16): (.632, .007, "PINV"),
    ("PCA", 64): (.834, .005, "PINV"),
    ("K-PCA", 4): (.188, .007, "LR"), ("K-PCA", 16): (.540, .014, "LR"),
    ("K-PCA", 64): (.684, .010, "LR"),
    ("UMAP", 4): (.143, .000, "PINV"), ("UMAP", 16): (.159, .017, "LR"),
    ("UMAP", 64): (.153, .021, "LR"),
}
_ATTACKS = ("pinv", "lr", "mlp")


def _interval(values):
    """``(mean, half-width)``: the t-based 95 % interval of the mean (NaN width for one
    value; the paper's Tables 3-4 report mean and 95 % CI over trials)."""
    from scipy import stats

    values = np.asarray(values, dtype=float)
    n = values.size
    mean = float(values.mean())
    if n < 2:
        return mean, float("nan")
    return mean, float(stats.t.ppf(0.975, n - 1) * values.std(ddof=1) / np.sqrt(n))


def _summarise(trials, keys, value="accuracy"):
    """One row per ``keys`` group: ``mean``, ``ci`` (95 % half-width), ``low``, ``high`` and
    ``n_trials``."""
    import pandas as pd

    rows = []
    for key, group in trials.groupby(list(keys), sort=False):
        mean, ci = _interval(group[value])
        rows.append({**dict(zip(keys, key)), "mean": mean, "ci": ci, "low": mean - ci,
                     "high": mean + ci, "n_trials": len(group)})
    return pd.DataFrame(rows)


def _agreement(row):
    """Whether the measured mean lies inside the paper's interval, and whether the two 95 %
    intervals overlap (NaN where the paper gives no number)."""
    paper, half = row["paper"], row["paper_ci"]
    if not np.isfinite(paper):
        return np.nan, np.nan
    inside = abs(row["mean"] - paper) <= half + 5e-4  # the paper rounds to 3 decimals
    ci = row["ci"] if np.isfinite(row["ci"]) else 0.0
    return bool(inside), bool(abs(row["mean"] - paper) <= half + ci + 5e-4)


# ----------------------------------------------------------------------------- Fig. 3


def _sweep_grid(n_participants, n_train, n_test, n_rows, n_source):
    """The K values of the sweep: the paper's grid up to what the rows allow, or the given
    ones."""
    if n_participants is None:
        grid = [K for K in PAPER_K if K * n_rows + n_source <= n_train and K * n_rows <= n_test]
        if not grid:
            raise ValueError(
                f"the sweep needs at least 2 x {n_rows} training rows plus {n_source} public "
                f"rows, and 2 x {n_rows} test rows; X_train has {n_train}, X_test {n_test}."
            )
        return grid
    grid = [int(n_participants)] if np.ndim(n_participants) == 0 else [
        int(K) for K in n_participants]
    for K in grid:
        if K < 1:
            raise ValueError(f"n_participants must be at least 1; got {K}.")
        if K * n_rows + n_source > n_train:
            raise ValueError(
                f"n_participants={K} needs {K} x {n_rows} training rows plus {n_source} "
                f"public rows for the SMOTE anchor; X_train has {n_train}. Lower "
                "n_participants or n_rows."
            )
    return grid


@Substitution(references=kti_paper_references)
@validate_params(
    {**_DATA, "n_participants": [None, Interval(Integral, 1, None, closed="left"),
                                 "array-like"],
     "n_trials": _COUNT, "n_rows": _COUNT, "n_components": _COUNT,
     "n_source": [Interval(Integral, 2, None, closed="left")], "n_anchors": _COUNT, **_RUN},
    prefer_skip_nested_validation=True,
)
def reproduce_kti(X_train, y_train, X_test, y_test, *, n_participants=None, n_trials=100,
                  n_rows=100, n_components=10, n_source=100, n_anchors=1000, random_state=0,
                  progress="auto"):
    """KTI against the linear integrations as the parties grow (RQ1, Fig. 3 of [1]_).

    For each number of parties ``K`` and each trial, ``K`` parties draw ``n_rows`` training
    rows each (at random, split equally: Section 5.1 of [1]_) and as many test rows each (the
    shared test set of ``N = K n_rows`` rows, each party mapping its own block through its own
    reduction and integration), then a random forest (scikit-learn's defaults) is trained on
    all raw rows (Central), on each party's own raw rows (Local, each evaluated on its own test
    block and averaged), and on the collaboration representation of each integration: MPP,
    GEP, ODC, LTI and KTI (RBF ``gamma = 1``, ``lambda = 1``). Every party reduces its rows by
    its own UMAP to ``n_components`` dimensions (the heterogeneous metric, ``n_neighbors`` and
    ``min_dist`` of Table 2 of [1]_), and the anchor is ``n_anchors`` SMOTE rows from
    ``n_source`` public rows (the training rows no party drew). One UMAP fit per party serves
    every integration, so the comparison is paired.

    The paper finds DC-KTI above the linear integrations "in most conditions", the gap
    growing with ``K``, and the linear integrations often below Local (Section 5.2 of [1]_);
    Central's mean accuracy on MNIST is 0.680 at ``K = 2`` and 0.941 at ``K = 64``.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    X_train : array-like of shape (n_samples, n_features)
        Training rows; the rows no party draws form the public pool of the SMOTE anchor.
    y_train : array-like of shape (n_samples,)
        Their labels.
    X_test : array-like of shape (n_test, n_features)
        Test rows; each trial draws ``K * n_rows`` of them (all of them when fewer).
    y_test : array-like of shape (n_test,)
        Their labels.
    n_participants : int, array-like of int or None, default=None
        The numbers of parties ``K`` swept. ``None``: the paper's grid 2, 4, ..., 64 up to
        the largest ``K`` whose ``K * n_rows`` training rows (plus ``n_source``) and test rows
        the data holds (16 on 5,000 MNIST images split 3,000 / 2,000).
    n_trials : int, default=100
        Trials per ``K`` (the paper's ``N_seed = 100``), each with its own draw of rows.
    n_rows : int, default=100
        Training rows per party ``n(k)``.
    n_components : int, default=10
        Dimensions ``d~`` of each party's UMAP.
    n_source : int, default=100
        Public rows the SMOTE anchor is made from.
    n_anchors : int, default=1000
        Rows of the SMOTE anchor.
    random_state : int, default=0
        Seeds the draws of rows, the anchor, the UMAPs and the forests (per ``K`` and trial).
    progress : bool or "auto", default="auto"
        A progress bar over ``K`` x trials x methods; ``"auto"`` shows it when stderr is a
        terminal.

    Returns
    -------
    reproduction : Reproduction
        ``table``: ``K``, ``method``, ``mean``, ``ci`` (95 % half-width), ``low``, ``high``,
        ``n_trials`` and ``paper`` (Central's two numbers, else NaN);
        ``extra_tables["trials"]``: ``K``, ``trial``, ``method``, ``accuracy``;
        ``details``: ``"grid"`` (the ``K`` values), ``"kti_best"`` (the ``K`` values where KTI
        has the highest mean among the integrations), ``"below_local"`` (per linear method,
        the ``K`` values where its mean is below Local's) and ``"lti_gep_gap"`` (the largest
        ``|LTI - GEP|`` of the means); the figure: mean accuracy against ``K`` with the 95 %
        intervals (Central left out, as in the paper's figure).

    Raises
    ------
    ValueError
        When ``X_train`` holds fewer than ``K * n_rows + n_source`` rows for a given ``K``.

    See Also
    --------
    reproduce_kti_tables : Tables 3 and 4 of the same paper.
    skdc.alignment.KTIAligner : Kernel-based target-normalised integration.

    {references}

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skdc.experiments import reproduce_kti
    >>> X, y = load_digits(return_X_y=True)
    >>> rep = reproduce_kti(X[:400] / 16, y[:400], X[400:600] / 16, y[400:600],
    ...                     n_participants=2, n_trials=1, n_rows=60, n_anchors=100,
    ...                     n_source=60, progress=False)  # doctest: +SKIP
    >>> rep.table["method"].tolist()  # doctest: +SKIP
    ['Central', 'Local', 'MPP', 'GEP', 'ODC', 'LTI', 'KTI']
    """
    import pandas as pd

    X_train, X_test = np.asarray(X_train), np.asarray(X_test)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    grid = _sweep_grid(n_participants, X_train.shape[0], X_test.shape[0], n_rows, n_source)
    parts = _kti_parts()
    total = len(grid) * n_trials * len(_SWEEP_METHODS)
    bar = progress_bar(range(total), progress, desc="kti", unit="setting", total=total)
    steps = iter(bar)  # one step per method done: started here (0 of N), closed by the N-th
    next(steps, None)
    rows = []
    for K in grid:
        for trial in range(n_trials):
            rows += [{"K": K, "trial": trial, **row} for row in _kti_trial(
                K, trial, random_state, (X_train, y_train, X_test, y_test),
                (n_rows, n_components, n_source, n_anchors), parts,
                lambda: next(steps, None))]
    trials = pd.DataFrame(rows)
    summary = _summarise(trials, ("K", "method"))
    summary["paper"] = [_PAPER_CENTRAL.get(K, np.nan) if m == "Central" else np.nan
                        for K, m in zip(summary["K"], summary["method"])]
    means = summary.set_index(["K", "method"])["mean"]
    details = {
        "grid": grid,
        "kti_best": [K for K in grid
                     if means[K, "KTI"] >= max(means[K, m] for m in _LINEAR)],
        "below_local": {m: [K for K in grid if means[K, m] < means[K, "Local"]]
                        for m in _LINEAR},
        "lti_gep_gap": float(max(abs(means[K, "LTI"] - means[K, "GEP"]) for K in grid)),
    }
    return Reproduction("kti", summary, extra_tables={"trials": trials}, details=details,
                        figure=_kti_figure,
                        title=f"KTI vs linear integrations under UMAP (Fig. 3), "
                              f"{n_trials} trial(s) per K")


def _kti_figure(rep):
    """Mean accuracy against K with 95 % intervals (Fig. 3 of the KTI paper), or bars for a
    single K."""
    import matplotlib.pyplot as plt

    table = rep.table
    if "K" not in table or table["K"].nunique() == 1:
        return _bar_figure(table, rep.title, "test accuracy (mean, 95% interval)")
    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    for method, group in table[table["method"] != "Central"].groupby("method", sort=False):
        err = group["ci"].fillna(0.0) if "ci" in group else None
        ax.errorbar(group["K"], group["mean"], yerr=err, marker="o", capsize=3,
                    linestyle="--" if method == "Local" else "-", label=method)
    ax.set_xscale("log", base=2)
    ks = sorted(table["K"].unique())
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("number of parties K (n(k) = 100 rows each)")
    ax.set_ylabel("test accuracy (mean, 95% interval)")
    ax.set_title(rep.title, fontsize=9)
    ax.legend(fontsize=8)
    return fig


def _kti_parts():
    """The integrations compared (Section 5.2 of the KTI paper), and the UMAP mechanism and
    SMOTE anchor every one of them runs on."""
    try:
        from ..alignment import GEPAligner, KTIAligner, LTIAligner, MPPAligner, ODCAligner
        from ..anchors import SMOTEAnchor
        from ..mechanisms import UMAPMechanism
    except ImportError as exc:
        raise ImportError(
            f"reproduce_kti needs the data-collaboration aligners and UMAP mechanism of skdc "
            f"(KTIAligner, LTIAligner, MPPAligner, GEPAligner, ODCAligner, UMAPMechanism, "
            f"SMOTEAnchor) and umap-learn: {exc}"
        ) from exc
    # Table 2 of [1]: RBF kernel with gamma = 1, lambda = 1
    aligners = {"MPP": MPPAligner(), "GEP": GEPAligner(), "ODC": ODCAligner(),
                "LTI": LTIAligner(), "KTI": KTIAligner(kernel="rbf", gamma=1.0, alpha=1.0)}
    return aligners, UMAPMechanism, SMOTEAnchor


def _draw(rng, n, k):
    """``k`` of ``range(n)`` at random (all of them, permuted, when ``k >= n``)."""
    return rng.permutation(n)[:k]


def _kti_trial(K, trial, seed, data, sizes, parts, step):
    """One trial at ``K`` parties: a fresh draw of each party's rows, Central and Local, then
    every integration on the same UMAP uploads; one row ``{method, accuracy}`` per method."""
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier

    from ..audit import Central, Local

    X_tr, y_tr, X_te, y_te = data
    n_k, d_tilde, n_source, n_anchors = sizes
    aligners, UMAPMechanism, SMOTEAnchor = parts
    rng = np.random.RandomState([seed, K, trial])
    order = rng.permutation(X_tr.shape[0])
    train, pool = order[: K * n_k], order[K * n_k:]
    test = _draw(rng, X_te.shape[0], K * n_k)
    part, part_te = np.arange(train.size) % K, np.arange(test.size) % K
    Xa, ya, Xb, yb = X_tr[train], y_tr[train], X_te[test], y_te[test]
    s = int(rng.randint(2**31 - 1))
    rf = RandomForestClassifier(random_state=s)
    rows = [{"method": "Central", "accuracy": Central(rf).fit(Xa, ya).score(Xb, yb)}]
    step()
    rows.append({"method": "Local", "accuracy": Local(rf).fit(Xa, ya, participant=part).score(
        Xb, yb, participant=part_te)})
    step()
    anchor = SMOTEAnchor(n_anchors=n_anchors, X_public=X_tr[pool], y_public=y_tr[pool],
                         n_source=n_source, random_state=s)
    mech = UMAPMechanism(n_participants=K, n_components=d_tilde, anchor=anchor, random_state=s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        U_tr = mech.fit_transform(Xa, participant=part)
        U_te = mech.transform(Xb, participant=part_te)
        for name, aligner in aligners.items():
            aligner = clone(aligner)
            clf = clone(rf).fit(aligner.fit_transform(U_tr), ya)
            rows.append({"method": name, "accuracy": clf.score(aligner.transform(U_te), yb)})
            step()
    return rows


# ----------------------------------------------------------------------------- Tables 3-4


@Substitution(references=kti_paper_references)
@validate_params(
    {**_DATA, "reductions": ["array-like"], "widths": ["array-like"], "n_trials": _COUNT,
     "n_participants": _COUNT, "n_rows": _COUNT, "n_per_class": _COUNT,
     "leaked_classes": ["array-like"], "n_evaluator": _COUNT, "attacks": ["array-like"],
     **_RUN},
    prefer_skip_nested_validation=True,
)
def reproduce_kti_tables(X_train, y_train, X_test, y_test, *, reductions=_REDUCTIONS,
                         widths=_WIDTHS, n_trials=30, n_participants=10, n_rows=100,
                         n_per_class=100, leaked_classes=(0, 1, 2), n_evaluator=5000,
                         attacks=_ATTACKS, random_state=0, progress="auto"):
    """The utility-privacy trade-off of KTI (RQ4: Tables 3 and 4 of [1]_).

    Each trial draws, from ``X_train``, a real anchor of ``n_per_class`` rows per class (no
    SMOTE: 100 per label, ``n_a = 1000``, Section 5.5 of [1]_), ``n_participants`` parties of
    ``n_rows`` rows each (at random, split equally), and up to ``n_evaluator`` further rows
    on which a random forest, the evaluator, learns to read digits; and from ``X_test`` a test
    set of ``n_participants * n_rows`` rows, one block per party. Then for each reduction
    (per-party PCA; kernel PCA on standardized rows with the median-heuristic bandwidth; the
    heterogeneous UMAP of Table 2) and width ``d~`` (``d^ = d~``), the parties reduce their
    rows and the anchor once, and

    * **Table 4**: LTI, KTI and KTI+TSL (RBF ``gamma = 1``, ``lambda = 1``, ``mu = 1``,
      ``k_nn = 10``, ``C = I``, no centering) integrate the uploads; a random forest trained on
      the collaboration representation is scored on the test blocks;
    * **Table 3**: the raw anchor rows of ``leaked_classes`` (digits 0-2) leak to the analyst,
      who learns the map from the target party's anchor upload back to raw rows with each
      attack of :class:`~skdc.attacks.AnchorRegressionAttack` (PINV, LR, MLP: the attacks of
      Section 5.5 of [1]_, both sides centred with the leaked rows' means) and reconstructs
      the other anchor rows (digits 3-9, 700 rows) from their uploads; the reconstruction
      accuracy is the share of reconstructions the evaluator reads as their true digit
      (chance 1/7). The target is the first party. The uploads attacked are the parties'
      reductions, so the numbers hold for any integration (the paper shows them beside
      KTI+TSL).

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    X_train : array-like of shape (n_samples, n_features)
        Rows of the anchor, the parties and the evaluator, disjoint in every trial; at least
        ``n_per_class`` per class plus ``n_participants * n_rows`` more, plus the evaluator's.
    y_train : array-like of shape (n_samples,)
        Their labels.
    X_test : array-like of shape (n_test, n_features)
        Test rows; each trial draws ``n_participants * n_rows`` of them (all when fewer).
    y_test : array-like of shape (n_test,)
        Their labels.
    reductions : sequence of {"PCA", "K-PCA", "UMAP"}, default=("PCA", "K-PCA", "UMAP")
        The parties' reductions (rows of the tables).
    widths : sequence of int, default=(4, 16, 64)
        The widths ``d~`` (columns of the tables).
    n_trials : int, default=30
        Trials (the paper's ``N_seed = 30``).
    n_participants : int, default=10
        Parties ``K``.
    n_rows : int, default=100
        Training rows per party ``n(k)``.
    n_per_class : int, default=100
        Anchor rows per class.
    leaked_classes : sequence, default=(0, 1, 2)
        Classes whose raw anchor rows leak; the reconstruction accuracy is measured on the
        anchor rows of the other classes.
    n_evaluator : int, default=5000
        Rows the evaluator is trained on at most (the authors' code: up to 5,000; fewer when
        the training rows run out after the anchor and the parties).
    attacks : sequence of {"pinv", "lr", "mlp"}, default=("pinv", "lr", "mlp")
        The attacks of Table 3; the strongest is the one with the highest mean.
    random_state : int, default=0
        Seeds the draws of rows, the reductions, the forests and the MLP (per trial).
    progress : bool or "auto", default="auto"
        A progress bar over trials x reductions x widths; ``"auto"`` shows it when stderr is
        a terminal.

    Returns
    -------
    reproduction : Reproduction
        ``table``: one row per cell and quantity, ``table`` (3 or 4), ``reduction``,
        ``width``, ``quantity`` (``LTI``, ``KTI``, ``KTI+TSL``: test accuracy; ``recon PINV``,
        ``recon LR``, ``recon MLP``: reconstruction accuracy; ``recon strongest``: the
        strongest attack's, named in ``attack``), ``mean``, ``ci`` (95 % half-width),
        ``low``, ``high``, ``n_trials``, the paper's ``paper``, ``paper_ci`` and
        ``paper_attack``, ``inside`` (the mean lies in the paper's interval) and ``overlap``
        (the two intervals overlap); ``extra_tables["trials"]``: ``trial``, ``reduction``,
        ``width``, ``quantity``, ``accuracy``; ``details["evaluator_rows"]`` and
        ``details["evaluator_accuracy"]`` (the evaluator's mean test accuracy on clean rows);
        the figure: measured against the paper's accuracy, per reduction.

    Raises
    ------
    ValueError
        When ``X_train`` cannot give the anchor, the parties and at least one evaluator row
        per class, or a reduction name is unknown.

    See Also
    --------
    reproduce_kti : Fig. 3 of the same paper.
    skdc.attacks.AnchorRegressionAttack : The PINV, LR and MLP attacks.

    {references}

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from skdc.experiments import reproduce_kti_tables
    >>> X, y = load_digits(return_X_y=True)
    >>> rep = reproduce_kti_tables(X[:1000] / 16, y[:1000], X[1000:] / 16, y[1000:],
    ...                            reductions=["PCA"], widths=[4], n_trials=1,
    ...                            n_participants=3, n_rows=40, n_per_class=20,
    ...                            attacks=["pinv", "lr"], progress=False)
    >>> rep.table["quantity"].tolist()
    ['LTI', 'KTI', 'KTI+TSL', 'recon PINV', 'recon LR', 'recon strongest']
    >>> bool(rep.table["mean"].between(0, 1).all())
    True
    """
    import pandas as pd

    X_train, X_test = np.asarray(X_train, dtype=np.float64), np.asarray(X_test, np.float64)
    y_train, y_test = np.asarray(y_train), np.asarray(y_test)
    reductions, widths = [str(r) for r in reductions], [int(w) for w in widths]
    attacks = [str(a).lower() for a in attacks]
    bad = sorted({*reductions} - set(_REDUCTIONS)) + sorted({*attacks} - set(_ATTACKS))
    if bad:
        raise ValueError(f"unknown reduction or attack {bad}; reductions are "
                         f"{list(_REDUCTIONS)}, attacks {list(_ATTACKS)}.")
    classes = np.unique(y_train)
    short = [c for c in classes if np.sum(y_train == c) < n_per_class]
    spare = X_train.shape[0] - n_per_class * classes.size - n_participants * n_rows
    if short or spare < classes.size:
        raise ValueError(
            f"the tables need {n_per_class} anchor rows per class, {n_participants} x "
            f"{n_rows} party rows and evaluator rows beyond them; X_train has "
            f"{X_train.shape[0]} rows" + (f" (classes {short} have too few)" if short else "")
            + ". Lower n_per_class, n_participants or n_rows."
        )
    data = (X_train, y_train, X_test, y_test)
    total = n_trials * len(reductions) * len(widths)
    bar = progress_bar(range(total), progress, desc="kti-tables", unit="cell", total=total)
    steps = iter(bar)
    next(steps, None)
    rows, evaluator_acc, n_eval = [], [], 0
    for trial in range(n_trials):
        cells, acc, n_eval = _tables_trial(
            trial, random_state, data, reductions, widths, attacks,
            (n_participants, n_rows, n_per_class, n_evaluator), leaked_classes,
            lambda: next(steps, None))
        evaluator_acc.append(acc)
        rows += [{"trial": trial, **row} for row in cells]
    trials = pd.DataFrame(rows)
    table = _tables_summary(trials, attacks)
    return Reproduction(
        "kti-tables", table, extra_tables={"trials": trials},
        details={"evaluator_rows": n_eval, "evaluator_accuracy": float(np.mean(evaluator_acc))},
        figure=_tables_figure,
        title=f"KTI paper, Table 4 (MNIST rows): measured ({n_trials} trial(s)) vs paper")


def _tables_summary(trials, attacks):
    """The long table of both tables: the measured intervals, the paper's and the strongest
    attack per cell."""
    import pandas as pd

    table = _summarise(trials, ("reduction", "width", "quantity"))
    strongest = []
    recon = table[table["quantity"].str.startswith("recon ")]
    for _, group in recon.groupby(["reduction", "width"], sort=False):
        best = group.loc[group["mean"].idxmax()].copy()
        best["attack"] = best["quantity"].split(" ", 1)[1]
        best["quantity"] = "recon strongest"
        strongest.append(best)
    table = pd.concat([table, pd.DataFrame(strongest)], ignore_index=True)
    order = {(r, w): i for i, (r, w) in enumerate(
        dict.fromkeys(zip(trials["reduction"], trials["width"])))}
    kinds = [*_TABLE_METHODS, *(f"recon {a.upper()}" for a in attacks), "recon strongest"]
    table["_cell"] = [order[r, w] for r, w in zip(table["reduction"], table["width"])]
    table["_kind"] = [kinds.index(q) for q in table["quantity"]]
    table = table.sort_values(["_cell", "_kind"]).drop(columns=["_cell", "_kind"])
    table.insert(0, "table", [4 if q in _TABLE_METHODS else 3 for q in table["quantity"]])
    paper, paper_ci, paper_attack = [], [], []
    for red, w, q in zip(table["reduction"], table["width"], table["quantity"]):
        got = (np.nan, np.nan, None)
        if q in _TABLE_METHODS and (red, w) in _PAPER_TABLE4:
            got = (*_PAPER_TABLE4[red, w][_TABLE_METHODS.index(q)], None)
        elif q == "recon strongest" and (red, w) in _PAPER_TABLE3:
            got = _PAPER_TABLE3[red, w]
        paper.append(got[0])
        paper_ci.append(got[1])
        paper_attack.append(got[2])
    table["paper"], table["paper_ci"], table["paper_attack"] = paper, paper_ci, paper_attack
    if "attack" not in table:
        table["attack"] = None
    agree = [_agreement(row) for _, row in table.iterrows()]
    table["inside"] = [a for a, _ in agree]
    table["overlap"] = [b for _, b in agree]
    cols = ["table", "reduction", "width", "quantity", "attack", "mean", "ci", "low", "high",
            "n_trials", "paper", "paper_ci", "paper_attack", "inside", "overlap"]
    return table[cols].reset_index(drop=True)


def _mechanism(reduction, K, width, anchor, seed):
    from ..mechanisms import KernelPCAMechanism, PCAMechanism, UMAPMechanism

    cls = {"PCA": PCAMechanism, "K-PCA": KernelPCAMechanism, "UMAP": UMAPMechanism}[reduction]
    return cls(K, n_components=width, anchor=anchor, random_state=seed)


def _tables_trial(trial, seed, data, reductions, widths, attacks, sizes, leaked, step):
    """One trial of Tables 3-4: the rows' draw, the evaluator, then every reduction and
    width. Returns ``(rows, evaluator test accuracy, evaluator rows)``."""
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier

    from ..alignment import KTIAligner, LTIAligner
    from ..anchors import SMOTEAnchor
    from ..attacks import AnchorRegressionAttack, collusion_view

    X_tr, y_tr, X_te, y_te = data
    K, n_k, n_per_class, n_evaluator = sizes
    rng = np.random.RandomState([seed, trial])
    # the real anchor: n_per_class rows of every class, no SMOTE (Section 5.5 of [1])
    anchor_rows = np.concatenate([rng.choice(np.flatnonzero(y_tr == c), n_per_class,
                                             replace=False) for c in np.unique(y_tr)])
    rest = rng.permutation(np.setdiff1d(np.arange(y_tr.size), anchor_rows))
    party_rows, eval_rows = rest[: K * n_k], rest[K * n_k: K * n_k + n_evaluator]
    test = _draw(rng, X_te.shape[0], K * n_k)
    part, part_te = np.arange(party_rows.size) % K, np.arange(test.size) % K
    Xa, ya, Xb, yb = X_tr[party_rows], y_tr[party_rows], X_te[test], y_te[test]
    s = int(rng.randint(2**31 - 1))
    evaluator = RandomForestClassifier(random_state=s).fit(X_tr[eval_rows], y_tr[eval_rows])
    evaluator_acc = float(evaluator.score(X_te, y_te))
    # every anchor row is a source: SMOTEAnchor returns exactly these rows, with their labels
    anchor = SMOTEAnchor(anchor_rows.size, X_tr[anchor_rows], y_tr[anchor_rows],
                         n_source=anchor_rows.size, random_state=s)
    # Table 2 of [1]: RBF gamma = 1, lambda = 1, mu = 1, k_nn = 10; C = I, no centering
    aligners = {"LTI": LTIAligner(), "KTI": KTIAligner(gamma=1.0, alpha=1.0),
                "KTI+TSL": KTIAligner(gamma=1.0, alpha=1.0, graph="tsl", mu=1.0,
                                      n_neighbors=10)}
    rf = RandomForestClassifier(random_state=s)
    rows = []
    for reduction in reductions:
        for width in widths:
            cell = {"reduction": reduction, "width": width}
            mech = _mechanism(reduction, K, width, anchor, s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                U_tr = mech.fit_transform(Xa, participant=part)
                U_te = mech.transform(Xb, participant=part_te)
                for name, aligner in aligners.items():
                    aligner = clone(aligner)
                    clf = clone(rf).fit(aligner.fit_transform(U_tr), ya)
                    rows.append({**cell, "quantity": name,
                                 "accuracy": clf.score(aligner.transform(U_te), yb)})
                # the attacks of Section 5.5 of [1]: leaked pairs of the classes in `leaked`,
                # the other anchor rows reconstructed from the target's (party 0's) uploads
                leak = np.isin(mech.anchor_y_, leaked)
                E, y_E = mech.anchor_[~leak], mech.anchor_y_[~leak]
                view = collusion_view(mech, E, colluder=1 % K if K > 1 else 0, target=0,
                                      participant=np.zeros(len(E), dtype=int))
                for name in attacks:
                    X_hat = AnchorRegressionAttack(name, anchor_rows=leak,
                                                   random_state=s).reconstruct(view).X
                    rows.append({**cell, "quantity": f"recon {name.upper()}",
                                 "accuracy": float(np.mean(evaluator.predict(X_hat) == y_E))})
            step()
    return rows, evaluator_acc, int(eval_rows.size)


def _tables_figure(rep):
    """Table 4: measured accuracy (95 % intervals) against the paper's, per reduction."""
    import matplotlib.pyplot as plt

    table = rep.table[rep.table["table"] == 4]
    reductions = list(dict.fromkeys(table["reduction"]))
    fig, axes = plt.subplots(1, len(reductions), figsize=(4.2 * len(reductions), 3.8),
                             layout="constrained", squeeze=False)
    for ax, red in zip(axes[0], reductions):
        sub = table[table["reduction"] == red]
        widths = list(dict.fromkeys(sub["width"]))
        for j, method in enumerate(_TABLE_METHODS):
            m = sub[sub["quantity"] == method]
            x = np.arange(len(widths)) + (j - 1) * 0.25
            ax.errorbar(x, m["mean"], yerr=m["ci"].fillna(0.0), fmt="o", color=f"C{j}",
                        capsize=3, label=f"{method} (measured)")
            ax.errorbar(x + 0.08, m["paper"], yerr=m["paper_ci"], fmt="x", color=f"C{j}",
                        alpha=0.6, capsize=2, label=f"{method} (paper)")
        ax.set_xticks(range(len(widths)), [f"d={w}" for w in widths])
        ax.set_ylim(0, 1)
        ax.set_title(red)
        ax.set_ylabel("test accuracy")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(rep.title, fontsize=9)
    return fig
