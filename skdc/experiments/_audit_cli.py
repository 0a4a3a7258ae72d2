"""Command line of the audit: ``skdc audit --data X.npy --labels y.npy ... --out report/``.

Runs :func:`skdc.experiments.audit` on ``.npy`` files and writes ``report.html`` and the CSV
tables into ``--out``. Settings come from flags or from the ``[audit]`` table of a TOML file
(``--config``; flags given on the command line win); ``skdc audit --example`` prints one.
Finished draws are checkpointed under ``OUT/checkpoint``, so rerunning an interrupted command
resumes it. Draws run on joblib: ``--backend dask --scheduler ADDRESS`` spreads them over a
Dask cluster. Heavy imports happen inside the command, so ``skdc --help`` stays fast.
"""

# Licence: BSD 3 clause

from pathlib import Path

__all__ = ["register"]

_EXAMPLE = """\
# skdc audit config: python -m skdc audit --config THIS_FILE (flags override these keys)
[audit]
data = "X.npy"             # rows: .npy, or .csv/.parquet with a header (relative to this file)
labels = "y.npy"           # their labels (.npy), or the name of a column of the table
participants = 5           # parties the rows are split into (or partition = "ids.npy")
mechanism = "igdp"         # "igdp" (with aligner "gopp") or "cgdp" (with aligner "none")
aligner = "gopp"
attack = ["procrustes", "alignment_map"]   # omit for every attack that applies
target_error = 0.5         # acceptable relative reconstruction error
confidence = 0.95
draws = 8                  # noise draws per calibrated value
grid = 10                  # noise values of the frontier grid
grid_draws = 2
# range = [0.0, 0.3]       # the noise range (default: 0 to 3 v_PT for anchor noise)
model = "logistic"         # or "ridge"
colluder = 0
seed = 0
n_jobs = 1
out = "audit-report"
"""

# config key -> (argparse dest, type)
_KEYS = {"data": ("data", str), "labels": ("labels", str), "participants": ("participants", int),
         "partition": ("partition", str), "mechanism": ("mechanism", str),
         "aligner": ("aligner", str), "attack": ("attack", list),
         "target_error": ("target_error", float), "confidence": ("confidence", float),
         "draws": ("draws", int), "grid": ("grid", int), "grid_draws": ("grid_draws", int),
         "range": ("range", list), "xtol": ("xtol", float), "model": ("model", str),
         "colluder": ("colluder", int), "participant": ("participant", int),
         "seed": ("seed", int), "n_jobs": ("n_jobs", int), "backend": ("backend", str),
         "scheduler": ("scheduler", str), "out": ("out", str)}
_DEFAULTS = {"participants": 5, "mechanism": "igdp", "aligner": "gopp", "target_error": 0.5,
             "confidence": 0.95, "draws": 8, "grid": 10, "grid_draws": 2, "model": "logistic",
             "colluder": 0, "seed": 0, "backend": "loky", "out": "audit-report"}
_PATHS = ("data", "labels", "partition", "out")
# the values a flag (or config key) may take: listed by --help, checked after --config is read
_CHOICES = {"mechanism": ("igdp", "cgdp"), "aligner": ("gopp", "none"),
            "model": ("logistic", "ridge"), "backend": ("loky", "threading", "dask")}
# every attack audit() applies to some deployment (the attacks of its _DEPLOYMENTS)
_ATTACKS = ("mp", "procrustes", "alignment_map", "known_secret")
# audit() parameter names that open its error messages -> the flag to name instead
_AUDIT_FLAGS = {"attack": "--attack", "target_error": "--target-error", "colluder": "--colluder",
                "participant must": "--participant", "partition": "--partition",
                "n_participants": "--participants", "bounds": "--range", "xtol": "--xtol",
                "No value": "--range"}


def _flag(dest):
    return "--" + dest.replace("_", "-")


def _config(args):
    """Fill the flags not given on the command line from ``--config``, then the defaults."""
    given = {k for k in _KEYS if getattr(args, k) is not None}
    if args.config is not None:
        from ._cli import _load_config

        path = Path(args.config)
        if not path.is_file():
            raise FileNotFoundError(f"--config {path}: no such file; `skdc audit --example` "
                                    "prints one.")
        try:
            config = _load_config(path)
        except (ValueError, ImportError) as exc:
            raise ValueError(f"--config {path}: {exc}") from exc
        extra = sorted(set(config) - {"audit"})
        table = config.get("audit")
        if extra or not isinstance(table, dict):
            raise ValueError(f"--config {path}: needs one [audit] table (got "
                             f"{sorted(config)}); `skdc audit --example` prints one.")
        unknown = sorted(set(table) - set(_KEYS))
        if unknown:
            raise ValueError(f"--config {path}: unknown keys {unknown} in [audit]; allowed: "
                             f"{sorted(_KEYS)}.")
        for key, value in table.items():
            dest, kind = _KEYS[key]
            if dest in given:
                continue
            ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
            if kind is float and isinstance(value, int) and not isinstance(value, bool):
                value, ok = float(value), True
            if not ok:
                raise ValueError(f"--config {path}: [audit] {key} must be a "
                                 f"{kind.__name__}; got {value!r}.")
            if key in _PATHS and not Path(value).is_absolute():
                beside = path.resolve().parent / value
                # labels may name a column of a data table rather than a file
                value = value if key == "labels" and not beside.exists() else str(beside)
            setattr(args, dest, value)
    for key, value in _DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def _load(path, flag):
    import numpy as np

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{flag} {path}: no such file.")
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(f"{flag} {path}: not a readable .npy array ({msg}).") from exc
    if not hasattr(arr, "shape"):
        raise ValueError(f"{flag} {path}: holds several arrays (.npz); save one array with "
                         "numpy.save.")
    return arr


def _command(args):
    """The resolved settings as one explicit command line (the report prints it)."""
    words = ["audit"]
    for dest, _ in _KEYS.values():
        value = getattr(args, dest)
        if value is None or dest in ("n_jobs", "backend", "scheduler"):
            continue
        if dest == "attack":
            for name in value:
                words += ["--attack", name]
        elif dest == "range":
            words += ["--range", *map(str, value)]
        else:
            words += [_flag(dest), str(value)]
    return words


def _read_inputs(args):
    """``(X, y, partition)`` from the ``.npy`` files of ``--data``, ``--labels`` and
    ``--partition`` (``None`` without it), each checked against ``--data``."""
    import numpy as np

    from ..datasets import load_table, table_format

    if table_format(args.data) in (None, "npy") and table_format(args.labels) in (None, "npy"):
        X, y = _load(args.data, "--data"), _load(args.labels, "--labels")
    else:  # a table (CSV, Parquet) with its label column or a labels file
        X, y = load_table(args.data, label=args.labels, return_X_y=True, what="--data",
                          label_what="--labels")
    if X.ndim != 2 or X.dtype.kind not in "biuf":
        raise ValueError(f"--data {args.data}: must be a 2-D numeric array (rows x features); "
                         f"got shape {X.shape}, dtype {X.dtype}.")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"--data {args.data}: holds NaN or infinite values; clean them first.")
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"--labels {args.labels}: must hold one label per row of --data "
                         f"({X.shape[0]}); got shape {y.shape}.")
    partition = None
    if args.partition is not None:
        partition = _load(args.partition, "--partition")
        if partition.shape != (X.shape[0],) or partition.dtype.kind not in "iu":
            raise ValueError(f"--partition {args.partition}: must hold one integer party id "
                             f"per row of --data ({X.shape[0]}); got shape {partition.shape}, "
                             f"dtype {partition.dtype}.")
    return X, y, partition


def _check_settings(args):
    """The flags' ranges and choices, each error naming its flag."""
    checks = [("participants", 2), ("draws", 2), ("grid", 1), ("grid_draws", 1),
              ("colluder", 0), ("seed", 0)]
    for dest, least in checks:
        if getattr(args, dest) < least:
            raise ValueError(f"{_flag(dest)} must be at least {least}; got "
                             f"{getattr(args, dest)}.")
    if not 0 < args.confidence < 1:
        raise ValueError(f"--confidence must lie strictly between 0 and 1; got "
                         f"{args.confidence}.")
    if args.range is not None:
        if len(args.range) != 2 or not float(args.range[0]) < float(args.range[1]):
            raise ValueError(f"--range must be LOW HIGH with LOW < HIGH; got {args.range}.")
    for dest, choices in _CHOICES.items():
        if getattr(args, dest) not in choices:
            raise ValueError(f"{_flag(dest)} must be one of {', '.join(choices)}; got "
                             f"{getattr(args, dest)!r}.")
    if args.backend == "dask" and not args.scheduler:
        raise ValueError("--backend dask needs --scheduler ADDRESS (e.g. tcp://host:8786).")


def _checkpoint_folder(args):
    """``(out, checkpoint)``: the output folder and its checkpoint folder (emptied with
    ``--fresh``)."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out}: exists and is not a folder.")
    checkpoint = out / "checkpoint"
    if args.fresh and checkpoint.is_dir():
        import shutil

        shutil.rmtree(checkpoint)
    return out, checkpoint


def _audit_kwargs(args, partition, checkpoint):
    """The arguments of :func:`audit` the flags give, with the command line to reprint."""
    import shlex

    command = "python -m skdc " + " ".join(shlex.quote(a) for a in _command(args))
    return dict(
        n_participants=args.participants, mechanism=args.mechanism, aligner=args.aligner,
        attacks=args.attack or None, target_error=args.target_error,
        confidence=args.confidence, colluder=args.colluder, participant=args.participant,
        partition=partition, model=args.model, n_draws=args.draws, n_grid=args.grid,
        grid_draws=args.grid_draws,
        bounds=None if args.range is None else tuple(map(float, args.range)), xtol=args.xtol,
        random_state=args.seed, checkpoint=checkpoint, progress="auto",
        command_line=command,
    )


def _flagged(exc):
    """The audit's ``ValueError`` as one line that names the flag it comes from."""
    import re

    msg = str(exc).replace("\n", " ")
    if msg.startswith("checkpoint"):
        return f"{msg} (or rerun with --fresh)"
    # validate_params says "The 'xtol' parameter of audit must be ..."
    named = re.match(r"The '(\w+)' parameter of ", msg)
    head = f"{named.group(1)} must" if named else msg
    for word, flag in _AUDIT_FLAGS.items():
        if head.startswith(word):
            return f"{flag}: {msg}"
    return msg


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
    import sys

    cal = report.calibration
    if cal.value == cal.value:  # not NaN
        print(f"recommended {cal.param} = {cal.value:.4g} (bracket {cal.bracket[0]:.4g} .. "
              f"{cal.bracket[1]:.4g}); binding attack {cal.binding_attack}; balanced accuracy "
              f"{cal.utility:.3f}")
    else:
        print(f"no {cal.param} in range meets the target error; see the report",
              file=sys.stderr)
    print(f"wrote {files['report']} and {len(files) - 1} CSV tables in {out}")


def _run_audit(args):
    if args.example:
        print(_EXAMPLE, end="")
        return 0
    args = _config(args)
    if args.data is None or args.labels is None:
        raise ValueError("give --data (X.npy, or a .csv / .parquet table) and --labels (y.npy, "
                         "or the table's label column) or a --config file naming them; `skdc "
                         "audit --example` prints a config.")
    X, y, partition = _read_inputs(args)
    _check_settings(args)
    out, checkpoint = _checkpoint_folder(args)

    from joblib import parallel_config

    from ._audit import audit

    kwargs = _audit_kwargs(args, partition, checkpoint)
    client = _dask_client(args)
    try:
        with parallel_config(backend=args.backend):
            try:
                report = audit(X, y, n_jobs=args.n_jobs if args.n_jobs is not None
                               else (-1 if client is not None else None), **kwargs)
            except ValueError as exc:
                raise ValueError(_flagged(exc)) from exc
    finally:
        if client is not None:
            client.close()
    _print_result(report, report.save(out), out)
    return 0


def register(subparsers):
    """Add the ``audit`` sub-command."""

    a = subparsers.add_parser(
        "audit", help="calibrated noise and a self-contained HTML audit report",
        description="Audit a data collaboration on your own rows before joining: simulate "
                    "the parties, run the applicable attacks, calibrate the noise for a target "
                    "attack error and write OUT/report.html with its CSV tables. Rerunning an "
                    "interrupted command resumes it (checkpoints in OUT/checkpoint).",
    )
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
    a.add_argument("--participants", type=int, default=None,
                   help="parties the rows are split into (default: 5)")
    a.add_argument("--partition", default=None,
                   help="party id of each row (.npy) (default: the mechanism's keyed hash "
                        "of each row splits the rows into --participants parties)")
    a.add_argument("--mechanism", default=None, choices=_CHOICES["mechanism"],
                   help="the participants' mechanism (default: igdp)")
    a.add_argument("--aligner", default=None, choices=_CHOICES["aligner"],
                   help="the analyst's aligner: gopp with igdp, none with cgdp (default: gopp)")
    a.add_argument("--attack", action="append", default=None, choices=_ATTACKS,
                   help="an attack to run, repeatable: mp, procrustes, alignment_map with igdp; "
                        "known_secret with cgdp (default: every applicable one)")
    a.add_argument("--target-error", type=float, default=None,
                   help="acceptable relative reconstruction error (default: 0.5)")
    a.add_argument("--confidence", type=float, default=None,
                   help="confidence of the calibration (default: 0.95)")
    a.add_argument("--draws", type=int, default=None,
                   help="noise draws per calibrated value (default: 8)")
    a.add_argument("--grid", type=int, default=None,
                   help="noise values of the frontier grid (default: 10)")
    a.add_argument("--grid-draws", type=int, default=None,
                   help="draws per grid value (default: 2)")
    a.add_argument("--range", nargs=2, type=float, default=None, metavar=("LOW", "HIGH"),
                   help="noise range (default: 0 to 3 v_PT, or 4 RMS for cgdp)")
    a.add_argument("--xtol", type=float, default=None,
                   help="bracket width of the calibration (default: range / 32)")
    a.add_argument("--model", default=None, choices=_CHOICES["model"],
                   help="the utility model (default: logistic)")
    a.add_argument("--colluder", type=int, default=None,
                   help="colluding participant (default: 0)")
    a.add_argument("--participant", type=int, default=None,
                   help="attacked participant (default: 1, or 0 when the colluder is 1)")
    a.add_argument("--seed", type=int, default=None, help="the audit's one seed (default: 0)")
    a.add_argument("--n-jobs", type=int, default=None,
                   help="parallel draws, joblib n_jobs (default: one, or every worker with "
                        "--backend dask)")
    a.add_argument("--backend", default=None, choices=_CHOICES["backend"],
                   help="joblib backend (default: loky)")
    a.add_argument("--scheduler", default=None,
                   help="Dask scheduler address, for --backend dask (default: none)")
    a.add_argument("--out", default=None, help="output folder (default: audit-report)")
    a.add_argument("--fresh", action="store_true",
                   help="discard the checkpoint in OUT and start afresh")
    a.set_defaults(func=_run_audit)
