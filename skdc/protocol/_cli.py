"""``python -m skdc anchor|participant|analyst ...``: a deployment from the command line.

::

    python -m skdc anchor make --n-features 64 --out anchor.npy    # once, to participants
    python -m skdc participant upload --id 0 --data X.npy --labels y.npy \\
        --anchor anchor.npy --anchor-noise 0.05 --secret-out secret.npz --out upload_0.npz
    python -m skdc analyst fit uploads/*.npz --aligner gopp --out model/
    python -m skdc participant predict --secret secret.npz --map model/map_0.npz \\
        --model model/model.npz --data X_new.npy --out y_pred.npy

Every file is read without unpickling, and only if it is a regular file (never a pipe, a
device or a link to one); errors and warnings are one line naming the file and the flag or
field. Output paths are checked before anything is written, and no output is written
through a link. No output replaces one of the command's inputs (by device and inode) or an skdc
file of another kind (a secret, an upload, a map, a model, an anchor, told by its bytes), not
even with ``--force``; an existing output is replaced only with ``--force``. ``participant
upload`` creates the secret and the upload exclusively (with ``--force``, racing runs take
turns), so the pair left behind always belongs together. ``analyst fit`` refuses an ``--out``
folder holding an earlier run's maps and model unless ``--force``, and then removes that run's
stale maps (and says which). Maps and model of one ``analyst fit`` share a run fingerprint, and
each map records the digest of the upload it was fitted on: ``participant predict`` refuses a
map and a model of different runs, and a map fitted on another upload than its secret made.
Secrets, maps, the model and the anchor are written owner-only (``0o600``).
"""

# Licence: BSD 3 clause

import contextlib
import functools
import json
import os
import re
import sys
import warnings

import numpy as np

from ..utils._folders import check_folder, ensure_folder, remove_written
from ..utils._help import add_renamed_flag, print_warning
from ..utils._input_tracking import declare_inputs
from ..utils._outputs import check_output, output_mode, write_file, written_kind
from ..utils._params import parse_model_params
from ._container import UploadError, is_int, one_line

# scikit-learn, the estimators and the roles are imported inside the commands, so that
# ``--help`` of any command answers before they load

__all__ = ["register_commands"]

_MODEL_CHOICES = {
    "logistic": "sklearn.linear_model.LogisticRegression",
    "linear": "sklearn.linear_model.LinearRegression",
    "ridge": "sklearn.linear_model.Ridge",
    "linear-svc": "sklearn.svm.LinearSVC",
}


def _model(name):
    """The unfitted model of ``--model name``."""
    import importlib

    module, cls = _MODEL_CHOICES[name].rsplit(".", 1)
    return getattr(importlib.import_module(module), cls)()


# -- one-line errors and warnings ----------------------------------------------------------
def _command(name):
    """Run a sub-command so that every error and warning is one line naming file and flag.

    Errors a user can fix leave as one-line ``ValueError`` (``python -m skdc`` prints them);
    operating-system errors (a folder in the way, a full disk) and ``MemoryError`` become such
    lines too; warnings are printed as ``skdc NAME: warning: ...``, one line each.
    """
    def decorate(func):
        @functools.wraps(func)
        def run(args):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                # developer-facing, not something a command-line user can act on
                warnings.simplefilter("ignore", DeprecationWarning)
                warnings.simplefilter("ignore", PendingDeprecationWarning)
                try:
                    status = func(args, caught)
                except (ValueError, TypeError) as exc:
                    raise ValueError(one_line(exc, limit=1000)) from None
                except OSError as exc:
                    where = f"{exc.filename}: " if exc.filename else ""
                    raise ValueError(
                        f"{where}{exc.strerror or one_line(exc)}; check the paths given."
                    ) from None
                except MemoryError:
                    raise ValueError(
                        "out of memory; check the sizes of the files given."
                    ) from None
                finally:
                    _print_warnings(name, caught)
            return status
        return run
    return decorate


def _print_warnings(name, caught):
    for line in dict.fromkeys(one_line(w.message, limit=1000) for w in caught):
        print_warning(name, line)
    caught.clear()


# -- inputs ---------------------------------------------------------------------------------
def _load_inputs(data, labels, id_column=None):
    """``(X, y, names, ids)`` of ``--data``, ``--labels`` and ``--id-column``, read by
    :func:`skdc.datasets.load_rows` (``.npy`` arrays, or a table with a label column or a
    labels file); ``X`` as float64. ``names`` are the feature columns' names from the table's
    header (``None`` for a ``.npy``: no names), ``ids`` the id column's values."""
    from ..datasets import load_rows, table_format

    if id_column is not None and table_format(data) in (None, "npy"):
        raise UploadError(
            f"{data}: --id-column {id_column!r} names a column of a table with a header "
            "(.csv, .parquet); --data is a .npy, without column names. Give the table, or "
            "drop --id-column.")
    try:
        rows = load_rows(data, label=labels, what="--data", label_what="--labels",
                         id_column=id_column)
    except ValueError as exc:  # the Python name, as the flag
        raise UploadError(str(exc).replace("(id_column=", "(--id-column ")) from None
    names = None if table_format(data) in (None, "npy") else rows.feature_names.tolist()
    return np.asarray(rows.data, dtype=np.float64), rows.target, names, rows.ids


@contextlib.contextmanager
def _flag(flag, path):
    """Name the flag in front of an error about the file ``path`` (which names only the file)."""
    try:
        yield
    except UploadError as exc:
        msg = str(exc)
        raise UploadError(f"{flag} {msg}" if msg.startswith(os.fspath(path)) else msg) from None


# -- outputs --------------------------------------------------------------------------------
# Every output goes through the file boundary (skdc.utils._files): checked up front, before
# anything is read or written, then written whole through a temporary file, never through a
# link (a link at the path is replaced; with exclusive creation, refused).
def _check_output(path, flag, *, exclusive=False, kind=None, why=""):
    """Refuse an output file path before anything is written (one line, naming path and flag):
    one of the command's inputs or an skdc file of another kind always, an existing file when
    ``exclusive`` (no ``--force``; ``why`` says what replacing it costs)."""
    try:
        check_output(path, flag, exclusive=exclusive, kind=kind, error=UploadError)
    except UploadError as exc:
        if exclusive and os.path.lexists(path) and "--force" not in str(exc):
            raise UploadError(f"{exc} Pass --force to overwrite it{why}.") from None
        raise


def _save_npy(path, arr, flag, mode, *, exclusive=False):
    """Write ``arr`` as ``.npy`` at ``path`` with permission bits ``mode`` (never via a link)."""
    with write_file(path, flag, mode=mode, exclusive=exclusive, error=UploadError) as fh:
        np.save(fh, np.asarray(arr), allow_pickle=False)


@_command("participant")
def _participant_new_seed(args, caught):
    from ..utils._random import fresh_seed

    print(fresh_seed())
    print("a fresh seed of 128 bits from the operating system: C-GDP's participants pass it "
          "as --seed (their common secret); never give it to the analyst", file=sys.stderr)
    return 0


@_command("anchor")
def _anchor_make(args, caught):
    # another kind of skdc file (a secret) never; an existing anchor only with --force
    _check_output(args.out, "--out", exclusive=not args.force, kind="skdc-anchor",
                  why=" (participants holding the old anchor can no longer be aligned with "
                      "those holding the new one)")
    for flag, value, low in (("--n-features", args.n_features, 1),
                             ("--n-anchors", args.n_anchors, 2)):
        if value is not None and value < low:
            raise ValueError(f"{flag} must be >= {low}; got {value}.")
    from ._anchor import make_anchor

    A = make_anchor(args.out, args.n_features, n_anchors=args.n_anchors, kind=args.kind,
                    random_state=args.seed)
    print(f"anchor {A.shape[0]} x {A.shape[1]} written to {args.out}; give it to every "
          "participant, never to the analyst")


_CLEAN_ANCHOR = (
    "--anchor-noise is 0: the anchor upload leaves home clean, so with one colluding "
    "participant the analyst recovers this participant's secret exactly (Prop 3.1 of the GDP "
    "paper). Pass --anchor-noise > 0 (e.g. 0.05)."
)


@_command("participant")
def _participant_upload(args, caught):
    from ..mechanisms import CGDP, IGDP
    from ._anchor import load_anchor
    from ._participant import Participant

    # every output is checked before anything is read or written, never one of the inputs
    # nor another kind of skdc file; without --force both are created exclusively (of racing
    # runs, one writes the pair, the others refuse)
    declare_inputs([(args.data, "--data"), (args.labels, "--labels"),
                    (args.anchor, "--anchor")])
    orphaned = " (an upload made with the old secret is then orphaned)"
    _check_output(args.secret_out, "--secret-out", exclusive=not args.force,
                  kind="skdc-secret", why=orphaned)
    _check_output(args.out, "--out", exclusive=not args.force, kind="skdc-upload",
                  why=orphaned)
    if os.path.abspath(args.out) == os.path.abspath(args.secret_out):
        raise ValueError(f"{args.out}: --out and --secret-out are the same file; the upload "
                         "and the secret go to different files.")
    for flag, value in (("--anchor-noise", args.anchor_noise), ("--noise", args.noise),
                        ("--translation-scale", args.translation_scale)):
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{flag} must be a finite number >= 0; got {value:g}.")
    if args.id < 0:
        raise ValueError(f"--id must be >= 0 (ids run 0 .. n_participants - 1); got {args.id}.")
    if args.n_participants is not None and not args.id < args.n_participants:
        raise ValueError(f"--id {args.id} needs --n-participants > {args.id}; got "
                         f"{args.n_participants}. Give the collaboration's size.")
    if args.anchor is None and args.anchor_noise != 0:
        raise ValueError(
            f"--anchor-noise {args.anchor_noise:g} without --anchor: there is no anchor upload "
            "to add noise to. Pass the shared anchor with --anchor, or drop --anchor-noise."
        )
    X, y, names, _ = _load_inputs(args.data, args.labels, args.id_column)  # ids stay home
    with _flag("--anchor", args.anchor or ""):
        anchor = None if args.anchor is None else load_anchor(args.anchor)
    if anchor is not None and args.anchor_noise == 0:
        print_warning("participant", _CLEAN_ANCHOR)
    p = args.n_participants if args.n_participants is not None else args.id + 1
    kind = {"igdp": IGDP, "cgdp": CGDP}[args.mechanism]
    mech = kind(p, noise=args.noise, translation_scale=args.translation_scale,
                anchor=None if anchor is None else "orthonormal", random_state=args.seed,
                noise_random_state=args.noise_seed)
    me = Participant(args.id, mech, v=args.anchor_noise)
    me._declares_size = args.n_participants is not None  # the upload declares no size
    up = me.upload(X, y, anchor=anchor, feature_names=names)
    if anchor is not None and args.anchor_noise == 0:
        # said above, in the command line's words (the flag, not the Python parameter)
        caught[:] = [w for w in caught if "clean anchor upload" not in str(w.message)]
    me.save(args.out, args.secret_out, up, overwrite=args.force)
    columns = (f"its {len(names)} columns' names recorded" if names is not None else
               f"{X.shape[1]} columns without names (a .npy: checked by count only)")
    print(f"participant {args.id}: {up.shape[0]} rows uploaded to {args.out}; secret kept in "
          f"{args.secret_out} (owner-only); {columns}")


@_command("participant")
def _participant_predict(args, caught):
    from ._participant import Participant

    if not (args.out or args.transform_out):
        raise ValueError("nothing to write: give --out (predictions) or --transform-out.")
    declare_inputs([(args.secret, "--secret"), (args.map, "--map"), (args.model, "--model"),
                    (args.data, "--data")])
    for path, flag in ((args.out, "--out"), (args.transform_out, "--transform-out")):
        if path:
            _check_output(path, flag, exclusive=not args.force)
    if args.out and args.transform_out and (os.path.abspath(args.out)
                                            == os.path.abspath(args.transform_out)):
        raise ValueError(f"{args.out}: --out and --transform-out are the same file.")
    # the format by the suffix, before anything is read (after the rules that keep inputs)
    out_format = args.out and _prediction_format(args.out, args.id_column)
    with _flag("--secret", args.secret):
        me = Participant.load_secret(args.secret)
    X, _, names, ids = _load_inputs(args.data, None, args.id_column)
    X, unchecked = _in_uploaded_order(X, names, me, args)
    written = []
    if args.transform_out:
        with _flag("--map", args.map):
            Z = me.transform(X, args.map)
        # owner-only: own rows in the collaboration frame, which a map and one colluder's
        # secret turn back into the raw rows
        _save_npy(args.transform_out, Z, "--transform-out", 0o600, exclusive=not args.force)
        written.append(f"aligned rows ({Z.shape[0]} x {Z.shape[1]}) to {args.transform_out}")
    if args.out:
        with _flag("--map", args.map), _flag("--model", args.model):
            pred = me.predict(X, args.map, args.model)
        _save_predictions(args.out, out_format, pred, ids, args.id_column, args.force)
        carried = "" if ids is None else f" (with the id column {args.id_column!r})"
        written.append(f"{pred.shape[0]} predictions to {args.out}{carried}")
    print(f"participant {me.participant_id}: wrote {' and '.join(written)}"
          + ("" if unchecked is None else f"; columns checked by count only ({unchecked})"))


#: The formats ``participant predict --out`` writes, by suffix.
_PREDICTION_FORMATS = {".csv": "csv", ".parquet": "parquet", ".npy": "npy"}


def _prediction_format(path, id_column):
    """The format of ``--out`` from its suffix, refused (before anything is read) when it is
    none of ``.csv``, ``.parquet``, ``.npy``, or a ``.npy`` asked to carry ids."""
    suffix = os.path.splitext(os.fspath(path))[1]
    fmt = _PREDICTION_FORMATS.get(suffix.lower())
    if fmt is None:
        raise UploadError(
            f"{path}: --out must end in .csv, .parquet or .npy (the predictions are written in "
            f"the format its suffix names); got {repr(suffix) if suffix else 'no suffix'}. "
            "Rename --out.")
    if fmt == "npy" and id_column is not None:
        raise UploadError(
            f"{path}: --out is a .npy, which holds no id column for --id-column "
            f"{id_column!r}; write the predictions to a .csv or .parquet, or drop --id-column.")
    if fmt == "parquet":
        import importlib.util

        if importlib.util.find_spec("pyarrow") is None:
            raise ImportError(f"{path}: --out as Parquet needs pyarrow: pip install pyarrow "
                              "(or write a .csv).")
    return fmt


def _save_predictions(path, fmt, pred, ids, id_column, force):
    """Write the predictions at ``--out`` in ``fmt``: a ``.npy`` array, or a table with a
    ``prediction`` column (after the id column, when ``--id-column`` is given)."""
    if fmt == "npy":
        _save_npy(path, pred, "--out", output_mode(0o644), exclusive=not force)
        return
    import io

    import pandas as pd

    frame = pd.DataFrame({} if ids is None else {id_column: ids})
    frame["prediction" if id_column != "prediction" else "predicted"] = pred
    buffer = io.BytesIO()
    if fmt == "csv":
        frame.to_csv(buffer, index=False)
    else:
        frame.to_parquet(buffer, index=False)
    with write_file(path, "--out", mode=output_mode(0o644), exclusive=not force,
                    error=UploadError) as fh:
        fh.write(buffer.getvalue())


def _in_uploaded_order(X, names, me, args):
    """The rows of ``--data`` in the columns of the upload its secret made.

    Where both the table and the secret name their columns, the names must be the uploaded
    ones (refused otherwise, naming the first differing column); the same names in another
    order are put in the uploaded order, which one warning line says. Otherwise only the
    count of columns is checked; the second value then says why (for the final line).
    """
    from ._upload import match_columns

    recorded = me.feature_names_in_
    if names is not None and recorded is not None:
        order = match_columns(recorded, names, f"{args.data}: --data",
                              f"the secret {args.secret} (the uploaded table)")
        if order is not None:
            moved = next(n for k, n in enumerate(names) if recorded[k] != n)
            print_warning("participant", (
                f"{args.data}: --data has the uploaded columns in another order (first moved: "
                f"{moved!r}); reordered them by name to the upload's order."))
            X = X[:, order]
        return X, None
    if X.shape[1] != me.n_features_in_:
        raise UploadError(
            f"{args.data}: --data has {X.shape[1]} columns but the secret {args.secret} was "
            f"made for {me.n_features_in_}; predict rows of the uploaded data's schema."
        )
    why = ("--data is a .npy, without column names" if names is None else
           "the secret records no column names: its upload was made from a .npy")
    return X, why


def _iteration_advice(model, Z, y):
    """The ``--model-param max_iter=...`` that lets ``model`` converge on ``(Z, y)``, checked."""
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning

    max_iter = model.get_params().get("max_iter")
    if not is_int(max_iter):
        return "standardize the data before the mechanism"
    for factor in (10, 100):
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always", ConvergenceWarning)
            clone(model).set_params(max_iter=factor * max_iter).fit(Z, y)
        if not any(issubclass(w.category, ConvergenceWarning) for w in again):
            return f"rerun with --model-param max_iter={factor * max_iter} (checked: it converges)"
    return (f"it had not converged at max_iter={100 * max_iter} either: standardize the data "
            "before the mechanism, or try --model-param C=... (stronger regularization)")


@_command("analyst")
def _analyst_fit(args, caught):
    from ._analyst import Analyst
    from ._upload_set import load_uploads

    check_folder(args.out, "--out", error=UploadError)
    declare_inputs([(path, "an upload") for path in args.uploads]
                   + [(args.audit_fingerprint, "--audit-fingerprint")])
    earlier = _check_fit_outputs(args)
    aligner, model = _fit_settings(args)
    noise_range = _noise_range(args)
    audited = _audited(args.audit_fingerprint)
    loaded = load_uploads(args.uploads)
    if audited is not None:
        _check_audited(audited, args.uploads)
    try:
        analyst = Analyst(aligner, model, outliers=args.outliers,
                          v_range=noise_range).fit(loaded)
    except UploadError as exc:  # the Python name, as the flag a command-line user changes
        raise UploadError(str(exc).replace("v_range=(LOW, HIGH)",
                                           "--anchor-noise-range LOW HIGH").replace(
            "(v_range)", "(--anchor-noise-range)")) from None
    _warn_unconverged(args, analyst, loaded, caught)
    _print_warnings("analyst", caught)
    # owner-only, like the maps and the model in it, whatever the umask
    ensure_folder(args.out, "--out", mode=0o700, error=UploadError)
    stale = _remove_stale_maps(args.out, earlier, analyst.n_participants_)
    summary = _fit_summary(args, analyst, loaded, analyst.export(args.out))
    with write_file(os.path.join(args.out, "summary.json"), "the summary",
                    mode=output_mode(0o644), error=UploadError) as fh:
        fh.write(json.dumps(summary, indent=2, sort_keys=True).encode())
    _print_fit(args, analyst, loaded, stale, summary)


def _fit_settings(args):
    """The aligner and the model of ``analyst fit``'s flags, each checked in one line naming
    its flag."""
    from ..alignment import GOPPAligner, ReferenceAligner

    if not (np.isfinite(args.tol) and args.tol > 0):
        raise ValueError(f"--tol must be a finite number > 0; got {args.tol:g}.")
    if args.max_iter < 1:
        raise ValueError(f"--max-iter must be >= 1; got {args.max_iter}.")
    if args.aligner == "reference" and not 0 <= args.reference < len(args.uploads):
        raise ValueError(f"--reference {args.reference} is not a participant: the "
                         f"{len(args.uploads)} uploads have ids 0 .. {len(args.uploads) - 1}.")
    aligner = {
        "gopp": lambda: GOPPAligner(v=0.0, tol=args.tol, max_iter=args.max_iter),
        "reference": lambda: ReferenceAligner(reference=args.reference),
        "none": lambda: "none",
    }[args.aligner]()
    return aligner, _model(args.model).set_params(**parse_model_params(args.model_param))


def _warn_unconverged(args, analyst, loaded, caught):
    """Replace the model's own ``ConvergenceWarning`` (not skdc's) by one line saying which
    ``--model-param max_iter=...`` converges."""
    from sklearn.exceptions import ConvergenceWarning

    model_warned = [w for w in caught if issubclass(w.category, ConvergenceWarning)
                    and not os.path.abspath(w.filename).startswith(_SKDC_DIR)]
    if not model_warned:
        return
    caught[:] = [w for w in caught if w not in model_warned]
    a = analyst.aligner_
    Z = np.asarray(loaded.uploads) if a is None else a.transform(loaded.uploads)
    print_warning("analyst", f"the {args.model} model did not converge in max_iter="
                  f"{analyst.model_.get_params().get('max_iter')} iterations; "
                  f"{_iteration_advice(analyst.model_, Z, loaded.y)}.")


def _fit_summary(args, analyst, loaded, paths):
    """The fields of ``summary.json``: the run, the aligner's diagnostics, the anchor screen,
    the column names checked and the anchor noise against ``v_PT``."""
    from ..alignment import GOPPAligner

    summary = {"n_participants": analyst.n_participants_, "aligner": args.aligner,
               "model": args.model, "files": [os.path.basename(p) for p in paths]}
    a = analyst.aligner_
    if isinstance(a, GOPPAligner):
        summary.update(n_iter=int(a.n_iter_), converged=bool(a.converged_),
                       relative_gopp_residual=float(a.relative_gopp_residual_),
                       v_phase_transition=float(a.v_phase_transition_))
    if analyst.anchor_residual_ratios_ is not None:
        summary.update(anchor_residual_ratios=analyst.anchor_residual_ratios_.tolist(),
                       anchor_residual_threshold=analyst.anchor_residual_threshold_)
    unnamed = [os.path.basename(loaded.paths[k]) for k in analyst.unnamed_uploads_]
    summary.update(feature_names=analyst.feature_names_in_, feature_names_checked=not unnamed,
                   uploads_without_feature_names=unnamed)
    summary.update(_anchor_noise_against_v_pt(analyst, loaded))
    return summary


def _print_fit(args, analyst, loaded, stale, summary):
    """What ``analyst fit`` did, in a line or three: stale maps removed, the uploads aligned
    and written, and the column names it could not check."""
    n = analyst.n_participants_
    if stale:
        print(f"analyst: removed {', '.join(stale)} of an earlier run in {args.out} (stale: "
              f"this run has {n} participant{'s' if n != 1 else ''})")
    print(f"analyst: {n} participant{'s' if n != 1 else ''} aligned ({args.aligner}); maps "
          f"and model written to {args.out}")
    unnamed = summary["uploads_without_feature_names"]
    if unnamed:
        which = ("the uploads carry none" if len(unnamed) == n else
                 "for " + ", ".join(loaded.paths[k] for k in analyst.unnamed_uploads_))
        print(f"analyst: column names not checked ({which}: made from a .npy, without names); "
              "columns compared by count only (summary.json: feature_names_checked false)")


def _anchor_noise_against_v_pt(analyst, loaded):
    """The summary's fields on the declared anchor noise against ``v_PT`` of these uploads
    (eq. (51) of the GDP paper, :func:`~skdc.alignment.v_phase_transition`), warned on one
    line when the noise exceeds it; none without alignment or with one participant."""
    from ..alignment import v_phase_transition

    anchors = loaded.uploads.anchors
    declared = [h["anchor_noise"] for h in loaded.headers
                if isinstance(h.get("anchor_noise"), (int, float))]
    p = analyst.n_participants_
    if analyst.aligner_ is None or anchors is None or p < 2 or not declared:
        return {}
    r, d = anchors[0].shape
    v_pt, v = v_phase_transition(p, d, r), max(declared)
    above = bool(v > v_pt)
    if above:
        print_warning("analyst", (
            f"the uploads declare anchor noise v = {v:g}, above v_PT = {v_pt:.4g} for these "
            f"uploads ({p} participants, {d} columns, {r} anchor rows; eq. (51) of the GDP "
            f"paper): above it the alignment degrades sharply, and the model with it. Ask the "
            f"participants to upload again with --anchor-noise below {v_pt:.4g}."))
    return {"v_phase_transition": v_pt, "declared_anchor_noise": v,
            "anchor_noise_above_v_pt": above}


def _run_files(out):
    """The names of an earlier ``analyst fit``'s maps and model in the folder ``out``, told by
    their bytes (an skdc map named ``map_<i>.npz``, an skdc model named ``model.npz``)."""
    if not os.path.isdir(out):
        return []
    found = []
    for name in sorted(os.listdir(out)):
        path = os.path.join(out, name)
        if ((name == "model.npz" and written_kind(path) == "skdc-model")
                or (_MAP_NAME.fullmatch(name) and written_kind(path) == "skdc-map")):
            found.append(name)
    return found


_MAP_NAME = re.compile(r"map_(0|[1-9][0-9]*)\.npz")


def _check_fit_outputs(args):
    """Refuse, before any upload is read, an ``--out`` holding an earlier run's maps and model
    (unless ``--force``) and any output that would replace an input or another kind of skdc
    file; return the earlier run's file names."""
    earlier = _run_files(args.out)
    if earlier and not args.force:
        raise UploadError(
            f"{args.out}: --out holds an earlier run's files ({', '.join(earlier)}); refusing "
            "to overwrite them. Pass --force to replace them (that run's stale maps are then "
            "removed), or choose another folder.")
    outputs = [(f"map_{i}.npz", "skdc-map") for i in range(len(args.uploads))]
    for name, kind in outputs + [("model.npz", "skdc-model"), ("summary.json", None)]:
        path = os.path.join(args.out, name)
        if os.path.isdir(args.out):
            _check_output(path, f"--out's {name}", exclusive=not args.force, kind=kind)
    return earlier


def _remove_stale_maps(out, earlier, n_participants):
    """Remove the earlier run's maps that this run does not replace (``map_3.npz`` of a run
    with more participants), only if still skdc maps; return their names."""
    written = {f"map_{i}.npz" for i in range(n_participants)}
    stale = [name for name in earlier if name.startswith("map_") and name not in written]
    return remove_written(out, stale, "--out", keep_others=True, error=UploadError,
                          is_ours=lambda path: written_kind(path) == "skdc-map")


_SKDC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _noise_range(args):
    """``--anchor-noise-range LOW HIGH`` as ``(low, high)`` (``None`` without the flag)."""
    if args.anchor_noise_range is None:
        return None
    low, high = args.anchor_noise_range
    if not (np.isfinite(low) and 0 <= low <= high and not np.isnan(high)):
        raise ValueError(f"--anchor-noise-range must be LOW HIGH with 0 <= LOW <= HIGH (HIGH "
                         f"may be inf); got {low:g} {high:g}.")
    if args.audit_fingerprint is not None:
        raise ValueError("--anchor-noise-range with --audit-fingerprint: the audit pins the "
                         "anchor noise every upload must declare, so no range applies; give "
                         "one of the two.")
    return low, high


def _audited(value):
    """``(fingerprint, settings or None)`` of ``--audit-fingerprint`` (the digits or the
    ``deployment.json`` of ``skdc audit --compare``), read before any upload; ``None``
    without the flag."""
    if value is None:
        return None
    from ._fingerprint import read_audit_fingerprint

    return read_audit_fingerprint(value, "--audit-fingerprint", error=UploadError)


def _check_audited(audited, paths):
    """Refuse, before any fit, an upload whose declared settings are not the audited ones."""
    from ._container import Container
    from ._fingerprint import settings_fingerprint, upload_settings
    from ._upload import _UPLOAD

    expected, settings = audited
    for path in paths:
        with Container(path, _UPLOAD) as c:
            declared = upload_settings(c.header, c.path, error=UploadError)
        if settings_fingerprint(declared, error=UploadError) == expected:
            continue
        differ = "" if settings is None else ": " + ", ".join(
            f"{k} {declared[k]!r} (audited {settings[k]!r})" for k in sorted(declared)
            if declared[k] != settings[k])
        raise UploadError(
            f"{path}: its declared settings are not the audited ones (--audit-fingerprint "
            f"{expected[:12]}...){differ}. Upload with the flags the audit wrote "
            "(deployment.txt), or audit these settings.")


def register_commands(subparsers):
    """Add the ``anchor``, ``participant`` and ``analyst`` sub-commands of ``python -m skdc``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The sub-commands of the ``skdc`` parser (``parser.add_subparsers()``).

    Examples
    --------
    >>> import argparse
    >>> from skdc.protocol import register_commands
    >>> parser = argparse.ArgumentParser(prog="skdc")
    >>> register_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["anchor", "make", "--n-features", "8", "--out", "A.npy"])
    >>> args.n_features
    8
    """
    _register_anchor_make(_actions(subparsers, "anchor", "make the shared anchor (once)"))
    participant = _actions(subparsers, "participant", "upload, and later predict, at home")
    _register_participant_upload(participant)
    _register_participant_predict(participant)
    participant.add_parser(
        "new-seed", help="print a fresh 128-bit seed: C-GDP's common secret, shared among "
                         "the participants only").set_defaults(func=_participant_new_seed)
    _register_analyst_fit(_actions(subparsers, "analyst", "align the uploads, train, export"))


def _actions(subparsers, name, summary):
    """The ``ACTION`` sub-commands of the command ``name`` (one of them required)."""
    sub = subparsers.add_parser(name, help=summary).add_subparsers(dest="action",
                                                                   metavar="ACTION")
    sub.required = True
    return sub


def _register_anchor_make(sub):
    make = sub.add_parser("make", help="write a new anchor .npy")
    make.add_argument("--n-features", type=int, required=True,
                      help="width of the data (required)")
    make.add_argument("--n-anchors", type=int, default=None,
                      help="anchor rows (default: 4 x --n-features)")
    make.add_argument("--kind", choices=["orthonormal", "uniform"], default="orthonormal",
                      help="centered orthonormal anchor (eq. (22) of the GDP paper) or uniform "
                           "entries (default: %(default)s)")
    make.add_argument("--seed", type=int, default=None,
                      help="random seed (default: fresh from the operating system)")
    make.add_argument("--out", required=True,
                      help="output .npy, written owner-only; never overwritten without --force, "
                           "never onto another kind of skdc file (required)")
    make.add_argument("--force", action="store_true",
                      help="overwrite an existing anchor at --out (default: refuse)")
    make.set_defaults(func=_anchor_make)


def _register_participant_upload(sub):
    up = sub.add_parser("upload", help="obfuscate own rows and the anchor; write the upload")
    up.add_argument("--id", type=int, required=True,
                    help="this participant's id, 0-based (required)")
    up.add_argument("--n-participants", type=int, default=None,
                    help="participants in the collaboration, declared in the upload; the "
                         "analyst refuses uploads declaring different sizes (default: --id + 1, "
                         "declared as unknown)")
    up.add_argument("--data", required=True,
                    help="own rows: .npy of shape (n_samples, n_features), or a .csv / .parquet "
                         "table with a header (required)")
    up.add_argument("--labels", default=None,
                    help="labels: a column of a --data table, or a .npy / one-column .csv file "
                         "(default: none uploaded)")
    up.add_argument("--id-column", default=None, metavar="NAME",
                    help="a column of row ids in the --data table: never a feature, never "
                         "uploaded (default: every column but the label is a feature)")
    up.add_argument("--anchor", default=None,
                    help="the shared anchor .npy (default: none: no anchor upload, so only "
                         "`analyst fit --aligner none` can use the upload)")
    up.add_argument("--anchor-noise", type=float, default=0.0,
                    help="std of the noise added to the anchor upload before it leaves home; "
                         "needs --anchor (default: %(default)s, which warns)")
    up.add_argument("--mechanism", choices=["igdp", "cgdp"], default="igdp",
                    help="GDP mechanism: rotation and shift per participant (igdp) or one "
                         "common secret (cgdp) (default: %(default)s)")
    up.add_argument("--noise", type=float, default=0.0,
                    help="std of the noise added to the private rows (default: %(default)s)")
    up.add_argument("--translation-scale", type=float, default=1.0,
                    help="scale of the secret shift (default: %(default)s)")
    up.add_argument("--seed", type=int, default=None,
                    help="the secret's seed: C-GDP's common secret, printed by "
                         "`participant new-seed` and shared among the participants only; a "
                         "smaller int is for TESTS ONLY: anyone holding the upload can search "
                         "for it (the upload says so) (default: 128 bits fresh from the "
                         "operating system)")
    add_renamed_flag(up, "--noise-seed", "--anchor-noise-seed", type=int, default=None,
                     help="TESTS ONLY: a chosen noise seed for the anchor noise and the "
                          "private-data noise (default: 128 bits fresh from the operating "
                          "system, never derived from --seed)")
    up.add_argument("--secret-out", required=True,
                    help="secret file, written 0600; never overwritten without --force "
                         "(required)")
    up.add_argument("--out", required=True,
                    help="upload file .npz, for the analyst; never overwritten without --force "
                         "(required)")
    up.add_argument("--force", action="store_true",
                    help="overwrite existing --secret-out and --out files (default: refuse)")
    up.set_defaults(func=_participant_upload)


def _register_participant_predict(sub):
    pr = sub.add_parser("predict", help="predict own rows with the analyst's map and model")
    pr.add_argument("--secret", required=True, help="this participant's secret file (required)")
    pr.add_argument("--map", required=True,
                    help="this participant's map_<id>.npz, from the same run as --model "
                         "(required)")
    pr.add_argument("--model", required=True, help="the analyst's model.npz (required)")
    pr.add_argument("--data", required=True,
                    help="rows to predict, .npy or a .csv / .parquet table with the uploaded "
                         "data's feature columns; when both it and the uploaded table have a "
                         "header, its columns are matched by name (required)")
    pr.add_argument("--id-column", default=None, metavar="NAME",
                    help="a column of row ids in the --data table, never a feature: written "
                         "beside the predictions (--out .csv or .parquet) (default: none)")
    pr.add_argument("--out", default=None,
                    help="predictions, in the format its suffix names: .csv or .parquet (a "
                         "'prediction' column, after the --id-column) or .npy (default: not "
                         "written)")
    pr.add_argument("--transform-out", default=None,
                    help="aligned representation .npy, written owner-only (default: not "
                         "written)")
    pr.add_argument("--force", action="store_true",
                    help="overwrite existing --out and --transform-out files; never an input "
                         "or another kind of skdc file (default: refuse)")
    pr.set_defaults(func=_participant_predict)


def _register_analyst_fit(sub):
    fit = sub.add_parser("fit", help="load uploads, fit aligner and model, write maps and model")
    fit.add_argument("uploads", nargs="+", help="upload files, one per participant")
    fit.add_argument("--aligner", choices=["gopp", "reference", "none"], default="gopp",
                     help="GOPP (GDP paper), Procrustes onto a reference participant, or none "
                          "(default: %(default)s)")
    fit.add_argument("--reference", type=int, default=0,
                     help="reference participant of --aligner reference (default: %(default)s)")
    fit.add_argument("--tol", type=float, default=1e-7,
                     help="GOPP convergence tolerance (default: %(default)s)")
    fit.add_argument("--max-iter", type=int, default=500,
                     help="GOPP iterations at most (default: %(default)s)")
    fit.add_argument("--model", choices=sorted(_MODEL_CHOICES), default="logistic",
                     help="linear model trained on the aligned rows (default: %(default)s)")
    fit.add_argument("--model-param", action="append", metavar="KEY=VALUE",
                     help="model parameter (JSON value), repeatable, e.g. max_iter=1000 "
                          "(default: the model's defaults)")
    fit.add_argument("--outliers", choices=["refuse", "warn"], default="refuse",
                     help="an anchor upload farther from the others' consensus than its "
                          "declared anchor noise explains (permuted rows, rank-deficient, "
                          "another anchor or secret): refuse to fit, or warn and fit anyway "
                          "(default: %(default)s)")
    fit.add_argument("--out", required=True,
                     help="output folder, created owner-only if missing; maps and model are "
                          "written owner-only (required)")
    fit.add_argument("--force", action="store_true",
                     help="replace an earlier run's maps, model and summary in --out, and "
                          "remove its stale maps (default: refuse)")
    fit.add_argument("--audit-fingerprint", default=None, metavar="FILE_OR_HEX",
                     help="refuse uploads whose declared settings differ from the audited "
                          "ones: the deployment.json of `skdc audit --compare`, or its "
                          "fingerprint (default: not checked)")
    fit.add_argument("--anchor-noise-range", type=float, nargs=2, default=None,
                     metavar=("LOW", "HIGH"),
                     help="the anchor noise an upload may declare; the screen holds each "
                          "anchor upload to the noise it declares, so more would hide a "
                          "poisoned one (default: every upload must declare the same value, "
                          "or the audited one with --audit-fingerprint)")
    fit.set_defaults(func=_analyst_fit)
