"""Command line of the audit: ``skdc audit --data X.npy --labels y.npy ... --out report/``.

Runs :func:`skdc.audit.audit` on ``.npy`` files or a table (``_inputs`` reads them) and writes
``report.html`` and the CSV tables into ``--out``. Settings come from flags or from the
``[audit]`` table of a TOML file (``--config``, read by ``_cli_config``; flags given on the
command line win); ``skdc audit --example`` prints one.
Finished draws are checkpointed under ``OUT/checkpoint``, so rerunning an interrupted command
resumes it. Draws run on joblib: ``--backend dask --scheduler ADDRESS`` spreads them over a
Dask cluster, for the single audit and every option of ``--compare`` alike. Every stage shows
its draws done out of draws planned, the time spent and an estimate (tqdm bars on a terminal,
else one line per stage, per setting decided and per minute of draws, for a log file), and
after the first draws the command prints its estimate of the whole run and how to shorten it.
Heavy imports happen inside the command, so ``skdc --help`` stays fast.

With ``--compare OPTION ...`` it runs :func:`skdc.audit.compare_options` instead: every
option side by side (Local, Central, I-GDP, C-GDP, the KTI route, GaussMix at ``--epsilon``),
written as ``report.html``, ``comparison.csv`` and, for the chosen option, the ``skdc
participant upload`` flags (``deployment.txt``) and their fingerprint (``deployment.json``).

Every setting is type-checked and bounded before any work (one line naming the flag or the
config key); ``--fresh`` removes only the checkpoint files skdc wrote (a checkpoint folder
holding anything else is refused, nothing removed); warnings print as one line that names the
flags to change.

The report's folder keeps a record of the audit that wrote it (``OUT/skdc-run.json``: its
settings and the SHA-256 of its data): rerunning the same audit resumes and replaces its own
report, while an ``--out`` holding another audit's report (or report files no record
describes) is refused before any work unless ``--force``, which removes exactly that audit's
files, naming them.
"""

# Licence: BSD 3 clause

import os
import sys

from ..utils._help import add_renamed_flag, print_warning
from ..utils._params import parse_model_params
from ._cli_config import _EXAMPLE, _KEYS, _config
from ._inputs import _read_inputs

__all__ = ["register_commands"]

# the largest counts a setting takes (an allocation beyond them is a typo, not an audit)
_LIMITS = {"n_participants": (2, 10_000), "draws": (2, 100_000), "grid": (1, 10_000),
           "grid_draws": (1, 10_000), "colluder": (0, 9_999), "target": (0, 9_999),
           "seed": (0, 2**32 - 1), "n_jobs": (-4096, 4096), "measure": (1, 1000),
           "n_anchors": (2, 1_000_000)}
_CHOICES = {"mechanism": ("igdp", "cgdp"), "aligner": ("gopp", "none"),
            "model": ("logistic", "ridge"), "backend": ("loky", "threading", "dask"),
            "criterion": ("order", "clopper-pearson", "normal"), "nonlinear": ("kpca", "umap")}
# the options of --compare (skdc.audit.compare_options), "all" for every one
_COMPARE = ("local", "central", "igdp", "cgdp", "kti", "gaussmix")
# what a single audit takes and a comparison does not (each option has its own range)
_NOT_WITH_COMPARE = ("attack", "range", "xtol", "images")
# audit() parameter names that open its error messages -> the flag to name instead
_AUDIT_FLAGS = {"attack": "--attack", "target_error": "--target-error",
                "max_linkage": "--max-linkage", "Nothing is judged": "--max-linkage",
                "sensitive": "--sensitive", "max_sensitive_gain": "--max-sensitive-gain",
                "y holds one class": "--labels", "colluder": "--colluder",
                "target": "--target", "partition": "--partition",
                "n_participants": "--n-participants", "bounds": "--range", "xtol": "--xtol",
                "No value": "--range", "criterion": "--criterion", "n_draws": "--draws",
                "random_state": "--seed", "confidence": "--confidence",
                "options": "--compare", "epsilons": "--epsilon", "row_bound": "--row-bound",
                "n_measure": "--measure", "nonlinear": "--nonlinear",
                "max_components": "--nonlinear", "model_params": "--model-param",
                "n_anchors": "--n-anchors", "images": "--images"}
# the Python parameter names in warnings -> the flags a command-line user changes
_WARNING_FLAGS = {"bounds=": "--range", "target_error=": "--target-error",
                  "max_linkage=": "--max-linkage", "max_sensitive_gain=": "--max-sensitive-gain",
                  "min_error=": "--target-error", "confidence=": "--confidence",
                  "n_draws=": "--draws", "criterion='order'": "--criterion order",
                  "criterion='normal'": "--criterion normal", "n_anchors=": "--n-anchors",
                  "model_params=": "--model-param", "sensitive=": "--sensitive",
                  "epsilons=": "--epsilon", "n_participants=": "--n-participants",
                  "images=True": "--images"}


def _flag(dest):
    return "--" + dest.replace("_", "-")


def _command_line(args):
    """The resolved settings as one explicit, shell-quoted command line (the report prints
    it)."""
    import shlex

    words = ["audit"]
    for dest, _ in _KEYS.values():
        value = getattr(args, dest)
        if value is None or dest in ("n_jobs", "backend", "scheduler"):
            continue
        if dest == "n_participants" and args.partition is not None:
            continue  # the partition's parties are the participants
        if dest in ("nonlinear", "measure") and not args.compare:
            continue  # the comparison's settings
        if dest == "images":
            words += ["--images"] if value else []
        elif dest in ("attack", "epsilon", "model_param"):
            for item in value:
                words += [_flag(dest), str(item)]
        elif dest == "compare":
            words += ["--compare", *value]
        elif dest == "range":
            words += ["--range", *map(str, value)]
        else:
            words += [_flag(dest), str(value)]
    return "python -m skdc " + " ".join(shlex.quote(a) for a in words)


def _check_settings(args):
    """The flags' types, ranges and choices (from the command line or the config alike), each
    error naming its flag."""
    import math

    for dest, (least, most) in _LIMITS.items():
        value = getattr(args, dest)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or not least <= value <= most:
            raise ValueError(f"{_flag(dest)} must be an integer from {least} to {most}; got "
                             f"{value!r}.")
    if args.n_jobs == 0:
        raise ValueError("--n-jobs must not be 0 (1 runs draws one by one, -1 on every core).")
    if not (math.isfinite(args.confidence) and 0 < args.confidence < 1):
        raise ValueError(f"--confidence must lie strictly between 0 and 1; got "
                         f"{args.confidence}.")
    if args.target_error is not None and not (math.isfinite(args.target_error)
                                              and args.target_error >= 0):
        raise ValueError(f"--target-error must be a finite error >= 0 (a relative distance); "
                         f"got {args.target_error}.")
    if not (math.isfinite(args.max_linkage) and 0 <= args.max_linkage <= 1):
        raise ValueError(f"--max-linkage must be a linkage accuracy from 0 to 1 (chance is 0.1 "
                         f"with ten-way galleries); got {args.max_linkage:g}.")
    if args.max_sensitive_gain is not None:
        if args.sensitive is None:
            raise ValueError("--max-sensitive-gain judges the column --sensitive names; add "
                             "--sensitive COLUMN.")
        if not (math.isfinite(args.max_sensitive_gain) and 0 <= args.max_sensitive_gain <= 1):
            raise ValueError(f"--max-sensitive-gain must be a gain from 0 to 1; got "
                             f"{args.max_sensitive_gain:g}.")
    if args.attack:
        from ._deployments import _DEPLOYMENTS

        known = list(dict.fromkeys(a for _, names in _DEPLOYMENTS.values() for a in names))
        bad = [a for a in args.attack if a not in known]
        if bad:
            raise ValueError(f"--attack takes {', '.join(known)}; got {', '.join(bad)}.")
    if args.range is not None:
        low, high = (float(v) for v in args.range)
        if not (math.isfinite(low) and math.isfinite(high) and 0 <= low < high):
            raise ValueError(f"--range must be LOW HIGH with 0 <= LOW < HIGH, both finite (a "
                             f"noise scale is not negative); got {low:g} {high:g}.")
    if args.xtol is not None and not (math.isfinite(args.xtol) and args.xtol > 0):
        raise ValueError(f"--xtol must be a positive number; got {args.xtol}.")
    for dest, choices in _CHOICES.items():
        if getattr(args, dest) not in choices:
            raise ValueError(f"{_flag(dest)} must be one of {', '.join(choices)}; got "
                             f"{getattr(args, dest)!r}.")
    if args.backend == "dask" and not args.scheduler:
        raise ValueError("--backend dask needs --scheduler ADDRESS (e.g. tcp://host:8786).")
    _check_compare(args)


def _check_compare(args):
    """``--compare``'s options, ``--epsilon`` and ``--row-bound``, and the single audit's
    flags that a comparison does not take."""
    import math

    if args.compare is None:
        for dest in ("epsilon", "row_bound"):
            if getattr(args, dest) is not None:
                raise ValueError(f"{_flag(dest)} applies to --compare (GaussMix); add "
                                 "--compare ... gaussmix or drop it.")
        return
    names = list(_COMPARE) if "all" in args.compare else list(dict.fromkeys(args.compare))
    bad = [n for n in names if n not in _COMPARE]
    if bad:
        raise ValueError(f"--compare takes options among {', '.join(_COMPARE)} (or all); got "
                         f"{', '.join(bad)}.")
    args.compare = names
    for dest in _NOT_WITH_COMPARE:
        if getattr(args, dest) is not None:
            raise ValueError(f"{_flag(dest)} applies to a single audit; with --compare every "
                             "option runs its own attacks over its own range. Drop it.")
    from ._options import _MIN_EPSILON

    for eps in args.epsilon or []:
        if not (math.isfinite(eps) and _MIN_EPSILON <= eps <= 1000):
            raise ValueError(f"--epsilon must be a privacy budget in [{_MIN_EPSILON:g}, 1000] "
                             f"(below, GaussMix's model is at chance: balanced accuracy 0.5); "
                             f"got {eps:g}. Give a larger --epsilon.")
    if args.epsilon is not None and len(args.epsilon) > 16:
        raise ValueError(f"--epsilon is given {len(args.epsilon)} times; at most 16.")
    if "gaussmix" not in names and args.epsilon is not None:
        raise ValueError("--epsilon applies to the gaussmix option; add it to --compare.")
    if args.row_bound is not None and not (math.isfinite(args.row_bound)
                                           and args.row_bound > 0):
        raise ValueError(f"--row-bound must be a positive number; got {args.row_bound:g}.")


_CHECKPOINTS = ("calibration.jsonl", "grid.jsonl")


def _checkpoint_folder(args):
    """``(out, checkpoint)``: the output folder and its checkpoint folder. With ``--fresh``
    only the checkpoint files skdc wrote there are removed; a folder holding anything else,
    or a checkpoint that is a file or a link, is refused."""
    from ..utils._checkpoint import is_checkpoint
    from ..utils._folders import ensure_folder, remove_written

    out = ensure_folder(args.out, "--out")
    checkpoint = os.path.join(out, "checkpoint")
    if os.path.islink(checkpoint) or (os.path.lexists(checkpoint)
                                      and not os.path.isdir(checkpoint)):
        kind = "a link" if os.path.islink(checkpoint) else "a file"
        raise ValueError(f"{checkpoint}: --out's checkpoint folder is {kind}, not a folder; "
                         "skdc keeps its checkpoints in a real folder there. Move it away or "
                         "choose another --out.")
    if args.fresh:
        from ._options import CHECKPOINT_FILES

        remove_written(checkpoint, _CHECKPOINTS + CHECKPOINT_FILES,
                       "--out's checkpoint folder (--fresh)", is_ours=is_checkpoint)
    return out, ensure_folder(checkpoint, "--out's checkpoint folder", allow_link=False)


def _check_report_files(args, out):
    """Refuse, before the audit runs, an ``--out`` where a report file would replace one of its
    inputs (``--data out/draws.csv``) or an skdc file of another kind (a secret), or that holds
    another audit's report (unless ``--force``: ``args.earlier`` names its files)."""
    from ..utils._outputs import check_output
    from ._audit import _TABLES

    names = (["comparison", "regulator", "draws", "decisions"] if args.compare
             else [*_TABLES, "calibration"])
    extra = ["deployment.json", "deployment.txt"] if args.compare else []
    for name in ["report.html", *(f"{n}.csv" for n in names), *extra]:
        check_output(os.path.join(out, name), f"--out's {name}")
    from ..utils._folders import check_run_folder

    # another audit's report (or one no record describes): refused unless --force
    args.earlier = check_run_folder(out, args.run, _REPORT_FILES, "--out", force=args.force)


# every file name an audit or a comparison writes into --out
_REPORT_FILES = ("report.html", "draws.csv", "attacks.csv", "decisions.csv", "diagnostics.csv",
                 "summary.csv", "calibration.csv", "comparison.csv", "regulator.csv",
                 "deployment.json", "deployment.txt")


def _run_identity(args, X, y, partition):
    """What makes an audit itself, as its report folder's record keeps it: every setting but
    the paths, the output and the workers, the column names and the SHA-256 of the rows,
    labels and partition (a folder holding another audit's report is refused without
    --force; the same audit's is resumed and replaced)."""
    from ._draws import _data_digest

    skip = {"data", "labels", "partition", "out", "n_jobs", "backend", "scheduler"}
    run = {dest: getattr(args, dest) for dest, _ in _KEYS.values() if dest not in skip}
    run.update(images=bool(args.images), columns=args.columns,
               data=_data_digest(X, y, partition))
    # the record keeps the party count's first name: a report written before --n-participants
    # stays this audit's own (resumed and replaced without --force)
    run["participants"] = run.pop("n_participants")
    return run


def _audit_kwargs(args, partition, checkpoint):
    """The arguments of :func:`audit` the flags give, with the command line to reprint."""
    return dict(
        n_participants=args.n_participants, mechanism=args.mechanism, aligner=args.aligner,
        attacks=args.attack or None, target_error=args.target_error,
        max_linkage=args.max_linkage, sensitive=args.sensitive_index,
        max_sensitive_gain=args.max_sensitive_gain,
        confidence=args.confidence, criterion=args.criterion, colluder=args.colluder,
        target=args.target, participant=partition, model=args.model,
        model_params=args.model_params, n_anchors=args.n_anchors, images=bool(args.images),
        n_draws=args.draws,
        n_grid=args.grid,
        grid_draws=args.grid_draws,
        bounds=None if args.range is None else tuple(map(float, args.range)), xtol=args.xtol,
        random_state=args.seed, checkpoint=checkpoint, progress="auto",
        command_line=_command_line(args),
    )


def _compare_kwargs(args, partition, checkpoint):
    """The arguments of :func:`compare_options` the flags give, with the command line."""
    kwargs = dict(
        options=args.compare, n_participants=args.n_participants, participant=partition,
        target_error=args.target_error, max_linkage=args.max_linkage,
        sensitive=args.sensitive_index, max_sensitive_gain=args.max_sensitive_gain,
        confidence=args.confidence, colluder=args.colluder,
        target=args.target, model=args.model, model_params=args.model_params,
        n_anchors=args.n_anchors, n_draws=args.draws, criterion=args.criterion,
        nonlinear=args.nonlinear, row_bound=args.row_bound, n_measure=args.measure,
        random_state=args.seed, checkpoint=checkpoint, progress="auto",
        command_line=_command_line(args))
    if args.epsilon is not None:
        kwargs["epsilons"] = list(args.epsilon)
    return kwargs


def _print_comparison(comparison, files, out):
    print(_speak_flags(comparison.verdict["sentence"]))
    for w in comparison.verdict["warnings"]:
        print_warning("audit", w)
    for o in comparison.options.values():
        link = "-" if not o.linkage == o.linkage else f"{o.linkage:.2f}"
        print(f"  {o.name:<14} balanced accuracy {o.utility:.3f} [{o.utility_interval[0]:.3f}, "
              f"{o.utility_interval[1]:.3f}]  linkage {link}  "
              f"{o.setting or o.protection}")
    if comparison.deployment is not None:
        dep = comparison.deployment
        lead = ("deploy" if comparison.verdict["decision"] == "collaborate"
                else "should you collaborate anyway, deploy")
        print(f"{lead} {dep['option']}: flags in {files['commands']}, "
              f"fingerprint {dep['fingerprint']}")
    print(f"wrote {files['report']} and {len(files) - 1} more files in {out}")


def _flagged(exc):
    """The audit's ``ValueError`` as one line that names the flag it comes from."""
    import re

    from ..utils._checkpoint import CheckpointError

    msg = " ".join(str(exc).split())
    if isinstance(exc, CheckpointError):
        return f"{msg} (or rerun with --fresh)"
    # validate_params says "The 'xtol' parameter of audit must be ..."
    named = re.match(r"The '(\w+)' parameter of \w+ ", msg)
    if named:
        msg = f"{named.group(1)} {msg[named.end():]}"
    msg = _speak_flags(msg)
    for word, flag in _AUDIT_FLAGS.items():
        if msg.startswith(word):
            rest = msg[len(word):]
            if re.match(r"=?\s", rest):  # "xtol must ...": the flag says it
                return f"{flag} {rest.lstrip('=').lstrip()}"
            return f"{flag}: {msg}"
    return msg


def _speak_flags(text):
    """``text`` with the Python API's parameter names (``max_linkage=``) as the flags."""
    for word, flag in sorted(_WARNING_FLAGS.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(word, flag)
    return text


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A warning as one line that speaks the command line's flags (no source line)."""
    print_warning("audit", message, flags=_WARNING_FLAGS)


def _dask_client(args):
    """A client of ``--scheduler`` for ``--backend dask``, else ``None``."""
    if args.backend != "dask":
        return None
    try:
        from distributed import Client
    except ImportError as exc:
        raise ImportError("--backend dask needs dask.distributed (pip install "
                          "'dask[distributed]').") from exc
    try:
        return Client(args.scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise ValueError(f"--scheduler {args.scheduler}: cannot connect ({exc}).") from exc


def _print_result(report, files, out):
    from ._words import attack_label

    cal = report.calibration
    noise = report.setting["noise"]
    binding = attack_label(cal.binding_attack)
    if report.decision == "collaborate":
        d = cal.decisions[cal.decisions["value"] == cal.value].iloc[0]
        print(f"collaborate: {noise} = {cal.value:.4g} (bracket "
              f"{cal.bracket[0]:.4g} .. {cal.bracket[1]:.4g}); {d.n_draws - d.n_failed} of "
              f"{d.n_draws} deployments met the targets there; binding attack "
              f"{binding}; balanced accuracy {cal.utility:.3f}; "
              f"{cal.n_draws_run} calibration draws")
    else:
        link = report.setting.get("linkage")
        kept = ("" if link is None else f"; at the largest noise the {link[0]} attack still "
                f"links a median {link[1]:.0%} of the rows")
        print(f"do not collaborate: no {noise} in the range meets the targets (binding attack "
              f"{binding}{kept}); see the report", file=sys.stderr)
    if report.setting.get("learns_nothing"):
        print_warning("audit", report.setting["learns_nothing"])
    print(f"wrote {files['report']} and {len(files) - 1} CSV tables in {out}")


def _run_audit(args):
    if args.example:
        print(_EXAMPLE, end="")
        return 0
    X, y, partition, out, checkpoint = _prepare(args)
    report = _audit_or_compare(args, X, y, partition, checkpoint)
    _write_report(args, report, out, checkpoint)
    return 0


def _prepare(args):
    """``(X, y, partition, out, checkpoint)``: the settings resolved and checked, the inputs
    read, and the output and checkpoint folders checked (and made), all before any work."""
    args = _config(args)
    if args.data is None or args.labels is None:
        raise ValueError("give --data (X.npy, or a .csv / .parquet table) and --labels (y.npy, "
                         "or the table's label column) or a --config file naming them; `skdc "
                         "audit --example` prints a config.")
    _check_settings(args)
    args.model_params = parse_model_params(args.model_param)
    X, y, partition = _read_inputs(args)
    args.run = _run_identity(args, X, y, partition)
    if os.path.isdir(args.out):  # before --fresh touches a checkpoint, or any work
        _check_report_files(args, args.out)
    if args.columns is not None and not args.compare:  # the report's table names its columns
        import pandas as pd

        X = pd.DataFrame(X, columns=args.columns)
    out, checkpoint = _checkpoint_folder(args)
    _check_report_files(args, out)
    return X, y, partition, out, checkpoint


def _audit_or_compare(args, X, y, partition, checkpoint):
    """The report of :func:`audit` (or :func:`compare_options` with ``--compare``), run on
    ``--backend``; its warnings and errors speak the flags."""
    import warnings

    from joblib import parallel_config

    from ._audit import audit
    from ._compare import compare_options

    if args.compare:
        run, kwargs = compare_options, _compare_kwargs(args, partition, checkpoint)
    else:
        run, kwargs = audit, _audit_kwargs(args, partition, checkpoint)
    client = _dask_client(args)
    try:
        with parallel_config(backend=args.backend), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            warnings.simplefilter("default")
            try:
                return run(X, y, n_jobs=args.n_jobs if args.n_jobs is not None
                           else (-1 if client is not None else None), **kwargs)
            except ValueError as exc:
                raise ValueError(_flagged(exc)) from exc
    finally:
        if client is not None:
            client.close()


def _write_report(args, report, out, checkpoint):
    """Write the report into ``out`` (after removing, with ``--force``, another audit's
    files), leave its run record, and print the result."""
    from ..utils._folders import clear_run_folder, write_run_record

    if report.setting["n_resumed"]:
        print(f"skdc audit: resumed from {checkpoint}: {report.setting['n_resumed']} draws "
              "read back, not rerun", file=sys.stderr)
    removed = clear_run_folder(out, args.earlier, "--out")
    if removed:
        print(f"skdc audit: --force: removed another run's files from {out}: "
              f"{', '.join(removed)}", file=sys.stderr)
    files = report.save(out)
    write_run_record(out, args.run, files.values(), "--out")
    if args.compare:
        _print_comparison(report, files, out)
    else:
        _print_result(report, files, out)


def register_commands(subparsers):
    """Add the ``audit`` sub-command of ``python -m skdc``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The sub-commands of the ``skdc`` parser (``parser.add_subparsers()``).

    Examples
    --------
    >>> import argparse
    >>> from skdc.audit import register_commands
    >>> parser = argparse.ArgumentParser(prog="skdc")
    >>> register_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["audit", "--data", "X.npy"])
    >>> args.data
    'X.npy'
    """
    a = subparsers.add_parser(
        "audit", help="calibrated noise and a self-contained HTML audit report",
        description="Audit a data collaboration on your own rows before joining: simulate "
                    "the parties, run the applicable attacks, calibrate the noise for a target "
                    "attack error and write OUT/report.html with its CSV tables. Rerunning an "
                    "interrupted command resumes it (checkpoints in OUT/checkpoint).",
    )
    _add_input_flags(a)
    _add_deployment_flags(a)
    _add_target_flags(a)
    _add_calibration_flags(a)
    _add_model_flags(a)
    _add_run_flags(a)
    _add_compare_flags(a)
    _add_output_flags(a)
    a.set_defaults(func=_run_audit)


def _add_input_flags(a):
    """The rows, their labels and how they split into parties: ``--config`` and ``--example``
    first."""
    a.add_argument("--config", default=None,
                   help="a TOML file with an [audit] table; flags given here win (default: "
                        "none, flags only)")
    a.add_argument("--example", action="store_true", help="print an example config and exit")
    a.add_argument("--data", default=None,
                   help="rows: a 2-D .npy array, or a .csv / .parquet table with a header "
                        "(required, here or in --config)")
    a.add_argument("--labels", default=None,
                   help="class labels: a 1-D .npy array, a column of a --data table, or a "
                        "one-column .csv file (required, here or in --config)")
    add_renamed_flag(a, "--n-participants", "--participants", type=int, default=None,
                     help="parties the rows are split into (default: 5)")
    a.add_argument("--partition", default=None,
                   help="party id of each row (.npy) (default: the mechanism's keyed hash "
                        "of each row splits the rows into --n-participants parties)")


def _add_deployment_flags(a):
    """The simulated deployment: the mechanism, the aligner and the attacks run on it."""
    a.add_argument("--mechanism", default=None, choices=_CHOICES["mechanism"],
                   help="the participants' mechanism (default: igdp)")
    a.add_argument("--aligner", default=None, choices=_CHOICES["aligner"],
                   help="the analyst's aligner: gopp with igdp, none with cgdp (default: gopp)")
    a.add_argument("--attack", action="append", default=None,
                   help="an attack to run, repeatable, among those that apply to the "
                        "mechanism: mp, procrustes, alignment_map, sample_axes, "
                        "joint_likelihood with igdp; known_secret with cgdp (default: every "
                        "applicable one, each deployment judged by the strongest)")


def _add_target_flags(a):
    """What the audit judges: the linkage, the reconstruction error and the sensitive
    column's gain an attacker may reach."""
    a.add_argument("--max-linkage", type=float, default=None,
                   help="largest acceptable exact-source linkage accuracy, the share of your "
                        "rows an attacker singles out among ten (default: 0.15, chance + "
                        "0.05)")
    a.add_argument("--target-error", type=float, default=None,
                   help="acceptable relative reconstruction error, judged with the linkage "
                        "(default: not judged)")
    a.add_argument("--sensitive", default=None, metavar="COLUMN",
                   help="a sensitive column (a --data table's column name, or a 0-based "
                        "index): the report says how much better the attacker predicts it "
                        "from the reconstructions than from what it already holds (default: "
                        "none)")
    a.add_argument("--max-sensitive-gain", type=float, default=None,
                   help="largest acceptable gain on --sensitive, from 0 to 1 (default: "
                        "reported, not judged)")


def _add_calibration_flags(a):
    """How the noise is calibrated: the criterion, its draws and the noise grid."""
    a.add_argument("--confidence", type=float, default=None,
                   help="probability that a fresh deployment meets the target (default: 0.95)")
    a.add_argument("--criterion", default=None, choices=_CHOICES["criterion"],
                   help="how a noise value is judged: order (distribution-free), "
                        "clopper-pearson, or normal (Gaussian) (default: order)")
    a.add_argument("--draws", type=int, default=None,
                   help="most deployments drawn per calibrated value (default: the fewest "
                        "the criterion needs, 19 at 95%% for order)")
    a.add_argument("--grid", type=int, default=None,
                   help="noise values of the frontier grid (default: 10)")
    a.add_argument("--grid-draws", type=int, default=None,
                   help="draws per grid value (default: 2)")
    a.add_argument("--range", nargs=2, type=float, default=None, metavar=("LOW", "HIGH"),
                   help="noise range (default: 0 to 3 v_PT, or 4 RMS for cgdp)")
    a.add_argument("--xtol", type=float, default=None,
                   help="bracket width of the calibration (default: range / 32)")


def _add_model_flags(a):
    """The utility model, the anchor, the report's pictures, and who attacks whom with which
    seed."""
    a.add_argument("--model", default=None, choices=_CHOICES["model"],
                   help="the utility model; with an imbalanced --labels (the smallest class "
                        "below 80%% of an even share, 40%% of two) its classes are weighted "
                        "alike, class_weight=balanced (default: logistic)")
    a.add_argument("--model-param", action="append", default=None, metavar="KEY=VALUE",
                   help="a setting of the model (JSON value), repeatable, as analyst fit's "
                        "--model-param: C=0.5, class_weight=null turns the weighting off "
                        "(default: the model's defaults)")
    a.add_argument("--n-anchors", type=int, default=None,
                   help="anchor rows of the noisy-anchor deployment, as anchor make "
                        "--n-anchors; more raise v_PT (default: 4 per feature)")
    a.add_argument("--images", action="store_true", default=None,
                   help="the rows are square images: the report draws a few beside their "
                        "reconstructions as pictures (default: off, a table of a few rows "
                        "headed by the columns' names)")
    a.add_argument("--colluder", type=int, default=None,
                   help="colluding participant (default: 0)")
    a.add_argument("--target", type=int, default=None,
                   help="attacked participant, you (default: 1, or 0 when the colluder is 1)")
    a.add_argument("--seed", type=int, default=None, help="the audit's one seed (default: 0)")


def _add_run_flags(a):
    """Where the draws run: joblib's workers, or a Dask cluster's."""
    a.add_argument("--n-jobs", type=int, default=None,
                   help="parallel draws, joblib n_jobs (default: one, or every worker with "
                        "--backend dask)")
    a.add_argument("--backend", default=None, choices=_CHOICES["backend"],
                   help="joblib backend (default: loky)")
    a.add_argument("--scheduler", default=None,
                   help="Dask scheduler address, for --backend dask: the draws of the audit, "
                        "or of every option of --compare, run on its workers (default: none)")


def _add_compare_flags(a):
    """``--compare`` and the settings only a comparison takes."""
    a.add_argument("--compare", nargs="+", default=None, metavar="OPTION",
                   help="compare options side by side instead of auditing one: local, "
                        "central, igdp, cgdp, kti, gaussmix, or all (OUT/report.html, "
                        "comparison.csv, and the chosen option's deployment.txt/.json) "
                        "(default: audit one deployment)")
    a.add_argument("--epsilon", type=float, action="append", default=None,
                   help="a privacy budget at which --compare runs gaussmix, repeatable "
                        "(default: 1 and 8)")
    a.add_argument("--nonlinear", default=None, choices=_CHOICES["nonlinear"],
                   help="the kti option's reduction (default: kpca)")
    a.add_argument("--row-bound", type=float, default=None,
                   help="gaussmix's public row-norm bound (default: sqrt(n_features))")
    a.add_argument("--measure", type=int, default=None,
                   help="deployments measuring linkage and inference at each calibrated "
                        "setting of --compare (default: 5)")


def _add_output_flags(a):
    """The report's folder: where it is, and what a rerun may remove or replace there."""
    a.add_argument("--out", default=None, help="output folder (default: audit-report)")
    a.add_argument("--fresh", action="store_true",
                   help="remove skdc's checkpoint files in OUT/checkpoint and start afresh")
    a.add_argument("--force", action="store_true",
                   help="replace the report of another audit in OUT (other settings or data): "
                        "its files are removed first, and named; without it such a folder is "
                        "refused. Rerunning the same audit needs no --force")
