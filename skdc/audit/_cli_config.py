"""The audit command's config file: ``skdc audit --config audit.toml`` and ``--example``.

A TOML file's ``[audit]`` table gives the settings the flags would (flags given on the command
line win); ``skdc audit --example`` prints a commented one (``_EXAMPLE``). Every key is checked
before any work: an unknown key, a value of the wrong type (lists element by element) or a
file that is no audit config is one line naming the file, the key and its flag. A key renamed
with its flag (``participants``, now ``n_participants``) still works for one release, after
one warning line. Paths in the file are relative to it.
"""

# Licence: BSD 3 clause

from pathlib import Path

from ..utils._deprecation import renamed_message
from ..utils._help import print_warning

_EXAMPLE = """\
# skdc audit config: python -m skdc audit --config THIS_FILE (flags override these keys)
[audit]
data = "X.npy"             # rows: .npy, or .csv/.parquet with a header (relative to this file)
labels = "y.npy"           # their labels (.npy), or the name of a column of the table
n_participants = 5         # parties the rows are split into (or partition = "ids.npy")
mechanism = "igdp"         # "igdp" (with aligner "gopp") or "cgdp" (with aligner "none")
aligner = "gopp"
attack = ["procrustes", "alignment_map"]   # omit for every attack that applies
max_linkage = 0.15         # largest acceptable exact-source linkage (chance 0.1 + 0.05)
# target_error = 0.5       # acceptable relative reconstruction error (default: not judged)
# sensitive = "age"        # a sensitive column (name or 0-based index): the report says how
                           # much better the attacker predicts it from the reconstructions
# max_sensitive_gain = 0.1 # ... and judges that gain (default: reported, not judged)
confidence = 0.95
criterion = "order"        # distribution-free; or "clopper-pearson", "normal" (Gaussian)
# draws = 19               # most deployments per calibrated value (default: the fewest the
                           # criterion needs, 19 at 95%)
grid = 10                  # noise values of the frontier grid
grid_draws = 2
# range = [0.0, 0.3]       # the noise range (default: 0 to 3 v_PT for anchor noise)
model = "logistic"         # or "ridge"; with an imbalanced label (smallest class below 40%
                           # of two) its classes are weighted alike (class_weight=balanced)
# model_param = ["C=0.5", "class_weight=null"]   # the model's settings, as analyst fit's
                                                 # --model-param takes them
# n_anchors = 64           # anchor rows (default: 4 per feature); more raise v_PT
# images = true            # the rows are square images: the report draws a few as pictures
                           # (default: a few rows beside their reconstructions, as a table)
colluder = 0
# target = 1               # the attacked participant (you; default 1, or 0 if colluder = 1)
seed = 0
n_jobs = 1
out = "audit-report"
# compare = ["all"]        # compare options side by side instead: local, central, igdp,
                           # cgdp, kti, gaussmix (each at its calibrated or stated setting;
                           # drop attack and range, which a single audit takes)
# epsilon = [1.0, 8.0]     # the budgets at which gaussmix runs
# nonlinear = "kpca"       # the kti option's reduction: "kpca" or "umap"
"""

# config key -> (argparse dest, type); lists say what they hold
_KEYS = {"data": ("data", str), "labels": ("labels", str),
         "n_participants": ("n_participants", int),
         "partition": ("partition", str), "mechanism": ("mechanism", str),
         "aligner": ("aligner", str), "attack": ("attack", (list, str)),
         "target_error": ("target_error", float), "max_linkage": ("max_linkage", float),
         "sensitive": ("sensitive", str), "max_sensitive_gain": ("max_sensitive_gain", float),
         "confidence": ("confidence", float),
         "criterion": ("criterion", str), "draws": ("draws", int), "grid": ("grid", int),
         "grid_draws": ("grid_draws", int), "range": ("range", (list, float)),
         "xtol": ("xtol", float), "model": ("model", str),
         "model_param": ("model_param", (list, str)), "n_anchors": ("n_anchors", int),
         "images": ("images", bool), "colluder": ("colluder", int),
         "target": ("target", int), "seed": ("seed", int), "n_jobs": ("n_jobs", int),
         "backend": ("backend", str), "scheduler": ("scheduler", str), "out": ("out", str),
         "compare": ("compare", (list, str)), "epsilon": ("epsilon", (list, float)),
         "nonlinear": ("nonlinear", str), "row_bound": ("row_bound", float),
         "measure": ("measure", int)}
# config keys renamed with their flag -> the key now; the old one works, after a warning
_RENAMED_KEYS = {"participants": "n_participants"}
_DEFAULTS = {"n_participants": 5, "mechanism": "igdp", "aligner": "gopp", "max_linkage": 0.15,
             "confidence": 0.95, "criterion": "order", "grid": 10, "grid_draws": 2,
             "model": "logistic", "colluder": 0, "seed": 0, "backend": "loky",
             "out": "audit-report", "nonlinear": "kpca", "measure": 5}
_PATHS = ("data", "labels", "partition", "out")


def _config(args):
    """Fill the flags not given on the command line from ``--config``, then the defaults."""
    given = {k for k in _KEYS if getattr(args, k) is not None}
    if args.config is not None:
        path = Path(args.config)
        table = _config_table(path)
        for key, value in table.items():
            dest, kind = _KEYS[key]
            if dest in given:
                continue
            value = _config_value(path, key, value, kind)
            if key in _PATHS and not Path(value).is_absolute():
                beside = path.resolve().parent / value
                # labels may name a column of a data table rather than a file
                value = value if key == "labels" and not beside.exists() else str(beside)
            setattr(args, dest, value)
    for key, value in _DEFAULTS.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    return args


def _config_table(path):
    """The ``[audit]`` table of ``--config``, its keys checked."""
    from ..utils._config import _load_config

    if not path.is_file():
        raise FileNotFoundError(f"--config {path}: no such file; `skdc audit --example` "
                                "prints one.")
    try:
        config = _load_config(path)
    except (ValueError, ImportError) as exc:
        raise ValueError(f"--config {path}: {exc}") from exc
    except RecursionError:
        raise ValueError(f"--config {path}: nested too deeply to be an audit config.") \
            from None
    extra = sorted(set(config) - {"audit"})
    table = config.get("audit")
    if extra or not isinstance(table, dict):
        raise ValueError(f"--config {path}: needs one [audit] table (got "
                         f"{sorted(config)}); `skdc audit --example` prints one.")
    unknown = sorted(set(table) - set(_KEYS) - set(_RENAMED_KEYS))
    if unknown:
        raise ValueError(f"--config {path}: unknown keys {unknown} in [audit]; allowed: "
                         f"{sorted(_KEYS)}.")
    for old, new in _RENAMED_KEYS.items():
        if old in table:
            if new in table:
                raise ValueError(f"--config {path}: [audit] gives {new} and its deprecated "
                                 f"spelling {old}; keep {new} only.")
            print_warning("audit", renamed_message(f"[audit] {old}", new))
            table[new] = table.pop(old)
    return table


def _is(value, kind):
    """Whether a decoded TOML value is of ``kind`` (booleans are no numbers; an int is a
    float)."""
    if isinstance(value, bool):
        return kind is bool
    if kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, kind)


def _config_value(path, key, value, kind):
    """One ``[audit]`` value, type-checked (lists element by element), in one line naming
    the key and its flag."""
    where = f"--config {path}: [audit] {key} (--{key.replace('_', '-')})"
    if key == "sensitive" and _is(value, int):  # a column's index
        value = str(value)
    if isinstance(kind, tuple):
        _, item = kind
        if key != "range" and _is(value, item):
            value = [value]
        ok = isinstance(value, list) and all(_is(v, item) for v in value) \
            and (key != "range" or len(value) == 2)
        if not ok:
            shape = {"range": "[LOW, HIGH], two numbers", "attack": "a list of attack names",
                     "compare": "a list of option names",
                     "model_param": "a list of \"KEY=VALUE\" strings",
                     "epsilon": "a list of numbers"}[key]
            raise ValueError(f"{where} must be {shape}; got {_short(value)}.")
        return [float(v) for v in value] if item is float else list(value)
    if not _is(value, kind):
        name = {int: "an integer", float: "a number", str: "a string",
                bool: "true or false"}[kind]
        raise ValueError(f"{where} must be {name}; got {_short(value)}.")
    return float(value) if kind is float else value


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
