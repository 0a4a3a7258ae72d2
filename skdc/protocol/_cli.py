"""``python -m skdc anchor|participant|analyst ...``: a deployment from the command line.

::

    python -m skdc anchor make --n-features 64 --out anchor.npy            # once, shared
    python -m skdc participant upload --id 0 --data X.npy --labels y.npy \\
        --anchor anchor.npy --anchor-noise 0.05 --secret-out secret.npz --out upload_0.npz
    python -m skdc analyst fit uploads/*.npz --aligner gopp --out model/
    python -m skdc participant predict --secret secret.npz --map model/map_0.npz \\
        --model model/model.npz --data X_new.npy --out y_pred.npy

Every file is read without unpickling; errors are one line naming the file and the field.
"""

# Licence: BSD 3 clause

import json
import os
import warnings

import numpy as np
from sklearn import linear_model, svm

from ..alignment import GOPPAligner, ReferenceAligner
from ..mechanisms import CGDP, IGDP
from ._files import _dump_json, load_anchor, make_anchor
from ._format import UploadError
from ._roles import Analyst, Participant

__all__ = ["register"]

_MODEL_CHOICES = {
    "logistic": linear_model.LogisticRegression,
    "linear": linear_model.LinearRegression,
    "ridge": linear_model.Ridge,
    "linear-svc": svm.LinearSVC,
}


def _load_npy(path, what):
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise UploadError(f"{path}: cannot read {what} as a .npy array ({exc}).") from None
    if not isinstance(arr, np.ndarray):
        raise UploadError(f"{path}: {what} must be a single .npy array, not an archive.")
    return arr


def _save_npy(path, arr):
    try:
        with open(path, "wb") as fh:
            np.save(fh, np.asarray(arr), allow_pickle=False)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write ({exc.strerror}).") from None


def _anchor_make(args):
    A = make_anchor(args.out, args.n_features, n_anchors=args.n_anchors, kind=args.kind,
                    random_state=args.seed)
    print(f"anchor {A.shape[0]} x {A.shape[1]} written to {args.out}; give it to every "
          "participant, never to the analyst")


def _participant_upload(args):
    X = _load_npy(args.data, "--data")
    y = None if args.labels is None else _load_npy(args.labels, "--labels")
    anchor = None if args.anchor is None else load_anchor(args.anchor)
    p = args.n_participants if args.n_participants is not None else args.id + 1
    kind = {"igdp": IGDP, "cgdp": CGDP}[args.mechanism]
    mech = kind(p, noise=args.noise, translation_scale=args.translation_scale,
                anchor=None if anchor is None else "orthonormal", random_state=args.seed,
                noise_random_state=args.anchor_noise_seed)
    me = Participant(args.id, mech, anchor_noise=args.anchor_noise)
    up = me.upload(X, y, anchor=anchor)
    me.save_secret(args.secret_out)
    me.save_upload(args.out, up)
    print(f"participant {args.id}: {up.shape[0]} rows uploaded to {args.out}; secret kept in "
          f"{args.secret_out} (owner-only)")


def _participant_predict(args):
    me = Participant.load_secret(args.secret)
    X = _load_npy(args.data, "--data")
    if args.transform_out:
        _save_npy(args.transform_out, me.transform(X, args.map))
    if args.out:
        _save_npy(args.out, me.predict(X, args.map, args.model))
    if not (args.out or args.transform_out):
        raise ValueError("nothing to write: give --out (predictions) or --transform-out.")


def _parse_params(items):
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"--model-param takes key=value; got {item!r}.")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def _analyst_fit(args):
    aligner = {
        "gopp": lambda: GOPPAligner(v=0.0, tol=args.tol, max_iter=args.max_iter),
        "reference": lambda: ReferenceAligner(reference=args.reference),
        "none": lambda: "none",
    }[args.aligner]()
    model = _MODEL_CHOICES[args.model]().set_params(**_parse_params(args.model_param))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        analyst = Analyst(aligner, model).fit(args.uploads)
    for w in caught:
        print(f"skdc analyst fit: warning: {w.message}")
    paths = analyst.export(args.out)
    summary = {"n_participants": analyst.n_participants_, "aligner": args.aligner,
               "model": args.model, "files": [os.path.basename(p) for p in paths]}
    a = analyst.aligner_
    if isinstance(a, GOPPAligner):
        summary.update(n_iter=int(a.n_iter_), converged=bool(a.converged_),
                       relative_gopp_residual=float(a.relative_gopp_residual_),
                       v_phase_transition=float(a.v_phase_transition_))
    _dump_json(os.path.join(args.out, "summary.json"), summary)
    print(f"analyst: {analyst.n_participants_} participants aligned ({args.aligner}); maps "
          f"and model written to {args.out}")


def register(subparsers):
    """Add the ``anchor``, ``participant`` and ``analyst`` sub-commands."""
    anchor = subparsers.add_parser("anchor", help="make the shared anchor (once)")
    sub = anchor.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    make = sub.add_parser("make", help="write a new anchor .npy")
    make.add_argument("--n-features", type=int, required=True, help="width of the data")
    make.add_argument("--n-anchors", type=int, default=None, help="rows (default 4 x width)")
    make.add_argument("--kind", choices=["orthonormal", "uniform"], default="orthonormal")
    make.add_argument("--seed", type=int, default=None, help="random seed (default: fresh)")
    make.add_argument("--out", required=True, help="output .npy")
    make.set_defaults(func=_anchor_make)

    part = subparsers.add_parser("participant", help="upload, and later predict, at home")
    sub = part.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    up = sub.add_parser("upload", help="obfuscate own rows and the anchor; write the upload")
    up.add_argument("--id", type=int, required=True, help="this participant's id (0-based)")
    up.add_argument("--n-participants", type=int, default=None,
                    help="participants in the collaboration (default id + 1)")
    up.add_argument("--data", required=True, help="own rows, .npy (n_samples, n_features)")
    up.add_argument("--labels", default=None, help="labels .npy (n_samples,)")
    up.add_argument("--anchor", default=None, help="the shared anchor .npy")
    up.add_argument("--anchor-noise", type=float, default=0.0,
                    help="std of the noise added to the anchor upload before it leaves home")
    up.add_argument("--mechanism", choices=["igdp", "cgdp"], default="igdp")
    up.add_argument("--noise", type=float, default=0.0, help="private-data noise std")
    up.add_argument("--translation-scale", type=float, default=1.0)
    up.add_argument("--seed", type=int, default=None,
                    help="own secret seed (default: fresh from the OS; keep it private)")
    up.add_argument("--anchor-noise-seed", type=int, default=None,
                    help="own noise seed: anchor noise and private-data noise (default: derived "
                    "from --seed; keep it private)")
    up.add_argument("--secret-out", required=True, help="secret file (written 0600)")
    up.add_argument("--out", required=True, help="upload file .npz")
    up.set_defaults(func=_participant_upload)
    pr = sub.add_parser("predict", help="predict own rows with the analyst's map and model")
    pr.add_argument("--secret", required=True, help="this participant's secret file")
    pr.add_argument("--map", required=True, help="this participant's map_<id>.npz")
    pr.add_argument("--model", required=True, help="the analyst's model.npz")
    pr.add_argument("--data", required=True, help="rows to predict, .npy")
    pr.add_argument("--out", default=None, help="predictions .npy")
    pr.add_argument("--transform-out", default=None, help="aligned representation .npy")
    pr.set_defaults(func=_participant_predict)

    ana = subparsers.add_parser("analyst", help="align the uploads, train, export")
    sub = ana.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    fit = sub.add_parser("fit", help="load uploads, fit aligner and model, write maps and model")
    fit.add_argument("uploads", nargs="+", help="upload files, one per participant")
    fit.add_argument("--aligner", choices=["gopp", "reference", "none"], default="gopp")
    fit.add_argument("--reference", type=int, default=0, help="reference participant")
    fit.add_argument("--tol", type=float, default=1e-7)
    fit.add_argument("--max-iter", type=int, default=500)
    fit.add_argument("--model", choices=sorted(_MODEL_CHOICES), default="logistic")
    fit.add_argument("--model-param", action="append", metavar="KEY=VALUE",
                     help="model parameter (JSON value), repeatable")
    fit.add_argument("--out", required=True, help="output folder")
    fit.set_defaults(func=_analyst_fit)
