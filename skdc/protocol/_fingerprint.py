"""The audited settings of a deployment, their fingerprint and the commands that deploy them.

An audit (:func:`skdc.audit.compare_options`) recommends the settings each participant runs,
writes them as ``skdc participant upload`` flags in the commands every party runs
(:func:`deployment_commands`), and prints a fingerprint of them.
``skdc analyst fit --audit-fingerprint`` reads the settings each upload declares in its public
header and refuses the uploads whose fingerprint differs, so what was audited is what is
deployed. Both sides compute the fingerprint here, from the same fields:

* ``mechanism``: the mechanism's class (``"IGDP"`` or ``"CGDP"``);
* ``n_participants``, ``n_features``: the collaboration's size and the rows' width;
* ``noise``: the private-data noise ``sigma``; ``translation_scale``: the secret shift's scale;
* ``anchor_noise``: the anchor noise ``v``; ``n_anchors``: the anchor's rows (0: no anchor).

Seeds are not settings: each participant draws its own, privately. The fingerprint is the
SHA-256 of the fields as canonical JSON (sorted keys, floats as Python writes them, which
read back to the same float), so a flag written from the audited value declares it exactly.

The fingerprint is the protocol's (it lived in ``skdc/utils``, the ground floor, before): the
audit imports it from :mod:`skdc.protocol`.
"""

# Licence: BSD 3 clause

import hashlib
import json
import math
import re
import shlex

from ..utils._files import FileError, is_int, read_text

__all__ = ["DEPLOYED_FIELDS", "deployment_commands", "read_audit_fingerprint",
           "settings_fingerprint", "upload_settings"]

DEPLOYED_FIELDS = {"mechanism": str, "n_participants": int, "n_features": int, "noise": float,
                   "translation_scale": float, "anchor_noise": float, "n_anchors": int}
_HEX = re.compile(r"[0-9a-f]{64}")
_MAX_BYTES = 1 << 20  # a deployment file is a few hundred bytes


def _canonical(settings, where, error):
    """The settings with exactly :data:`DEPLOYED_FIELDS`, each of its type (ints are no
    booleans, floats finite and not negative)."""
    if not isinstance(settings, dict):
        raise error(f"{where}: the settings must be an object; got {type(settings).__name__}.")
    keys = set(settings)
    if keys != set(DEPLOYED_FIELDS):
        missing, extra = sorted(set(DEPLOYED_FIELDS) - keys), sorted(keys - set(DEPLOYED_FIELDS))
        raise error(f"{where}: the settings must name {sorted(DEPLOYED_FIELDS)}; missing "
                    f"{missing}, unknown {extra}.")
    out = {}
    for key, kind in DEPLOYED_FIELDS.items():
        value = settings[key]
        if kind is str:
            ok = isinstance(value, str) and 0 < len(value) <= 64
        elif kind is int:
            ok = is_int(value) and 0 <= value <= 2**31
        else:
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
                  and math.isfinite(value) and value >= 0)
        if not ok:
            raise error(f"{where}: setting {key!r} must be {_KIND_WORDS[kind]}; got "
                        f"{value!r:.60}.")
        out[key] = kind(value)
    return out


_KIND_WORDS = {str: "a short string", int: "an integer >= 0", float: "a finite number >= 0"}


def settings_fingerprint(settings, *, where="the settings", error=FileError):
    """The SHA-256 (hex) of a deployment's settings, as canonical JSON.

    Parameters
    ----------
    settings : dict
        Exactly the fields of :data:`DEPLOYED_FIELDS`.
    where : str, default="the settings"
        What the settings are, for messages.
    error : type, default=FileError
        The exception raised when a field is missing or of the wrong type.

    Returns
    -------
    fingerprint : str
        64 hexadecimal digits.

    Examples
    --------
    >>> from skdc.protocol import settings_fingerprint
    >>> s = {"mechanism": "IGDP", "n_participants": 5, "n_features": 4, "noise": 0,
    ...      "translation_scale": 1.0, "anchor_noise": 0.05, "n_anchors": 16}
    >>> settings_fingerprint(s) == settings_fingerprint({**s, "noise": 0.0})
    True
    >>> settings_fingerprint(s) == settings_fingerprint({**s, "anchor_noise": 0.0500001})
    False
    """
    text = json.dumps(_canonical(settings, where, error), sort_keys=True, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def upload_settings(header, where="the upload", error=FileError):
    """The settings an upload declares in its public header (``skdc participant upload``).

    Parameters
    ----------
    header : dict
        The upload's public header (its ``mechanism`` description, ``anchor_noise`` and
        ``n_anchors``).
    where : str, default="the upload"
        The file, for messages.
    error : type, default=FileError
        The exception raised when the header does not declare a setting.

    Returns
    -------
    settings : dict
        The fields of :data:`DEPLOYED_FIELDS`.
    """
    mech = header.get("mechanism") if isinstance(header, dict) else None
    if not isinstance(mech, dict):
        raise error(f"{where}: declares no mechanism, so its settings cannot be checked "
                    "against the audit; make it with `skdc participant upload`.")
    anchor_noise = header.get("anchor_noise")
    settings = {
        "mechanism": mech.get("kind"), "n_participants": mech.get("n_participants"),
        "n_features": mech.get("n_features_in"), "noise": mech.get("noise"),
        "translation_scale": mech.get("translation_scale"),
        "anchor_noise": 0.0 if anchor_noise is None else anchor_noise,
        "n_anchors": header.get("n_anchors"),
    }
    return _canonical(settings, f"{where} (declared settings)", error)


def read_audit_fingerprint(value, what="--audit-fingerprint", error=FileError):
    """``(fingerprint, settings)`` from 64 hexadecimal digits, or from the ``deployment.json``
    an audit wrote (``settings`` is then the audited settings, else ``None``).

    The file is read through the boundary (a regular file of at most 1 MiB); its
    ``fingerprint`` must be the fingerprint of its ``settings``.

    Parameters
    ----------
    value : str
        The digits, or the file's path.
    what : str, default="--audit-fingerprint"
        The flag, for messages.
    error : type, default=FileError
        The exception raised.

    Returns
    -------
    fingerprint : str
        64 hexadecimal digits.
    settings : dict or None
        The audited settings the file fingerprints; ``None`` when ``value`` is the digits.

    Examples
    --------
    >>> from skdc.protocol import read_audit_fingerprint
    >>> read_audit_fingerprint("AB" * 32) == ("ab" * 32, None)
    True
    """
    text = str(value).strip().lower()
    if _HEX.fullmatch(text):
        return text, None
    raw = read_text(value, what, max_bytes=_MAX_BYTES, error=error)
    try:
        doc = json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:
        raise error(f"{value}: {what} is neither 64 hexadecimal digits nor a deployment.json "
                    f"an audit wrote ({str(exc).splitlines()[0][:80]}).") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("fingerprint"), str) \
            or not _HEX.fullmatch(doc["fingerprint"]):
        raise error(f"{value}: {what} must hold a 'fingerprint' of 64 hexadecimal digits and "
                    "the 'settings' it fingerprints (the deployment.json of `skdc audit "
                    "--compare`).")
    settings = _canonical(doc.get("settings"), f"{value}: {what}", error)
    if settings_fingerprint(settings, error=error) != doc["fingerprint"]:
        raise error(f"{value}: {what}: its 'fingerprint' is not the fingerprint of its "
                    "'settings' (the file was edited); use the file the audit wrote.")
    return doc["fingerprint"], settings


def _refuse_constant(name):
    raise ValueError(f"{name} is not a number")


# -- the commands that deploy the audited settings --------------------------------------------
#: The ``--mechanism`` choice of each deployed mechanism; I-GDP aligns its uploads with GOPP
#: on the shared anchor, C-GDP's participants share one secret and upload no anchor.
_MECHANISM_FLAGS = {"IGDP": "igdp", "CGDP": "cgdp"}


def deployment_commands(settings, *, label=None, model=None, model_params=None):
    """The command lines that deploy audited settings, and the text of ``deployment.txt``.

    Every participant uploads with the same flags, which declare the settings in its upload's
    public header, and the analyst fits with ``--audit-fingerprint deployment.json`` (the
    settings and their fingerprint, as an audit writes them), which refuses any upload whose
    declared settings differ. I-GDP makes the shared anchor once (``anchor make``) and aligns
    with GOPP; C-GDP's participants share one secret seed (``SHARED_SEED``, printed by
    ``participant new-seed``), upload no anchor and are not aligned. No other seed is written:
    each participant draws its own from the operating system.

    Parameters
    ----------
    settings : dict
        The audited settings: exactly the fields of :data:`DEPLOYED_FIELDS`, with
        ``mechanism`` ``"IGDP"`` or ``"CGDP"``.
    label : str, default=None
        What was audited, for the text's first line (``"I-GDP + GOPP at v = 0.1"``).
    model : str, default=None
        The ``analyst fit --model`` choice (``"logistic"``, ...); ``None`` writes no model
        flag (the command's default model).
    model_params : dict, default=None
        Parameters of ``model``, each written as ``--model-param KEY=VALUE`` (the value as
        JSON, a string as it is), in order.

    Returns
    -------
    deployment : dict
        ``fingerprint``: the settings' fingerprint (:func:`settings_fingerprint`);
        ``flags``: the ``participant upload`` flags that declare the settings; ``commands``:
        each command as a list of words, in the order they run (I-GDP's ``anchor make``, each
        participant's ``participant upload``, the analyst's ``analyst fit``); ``text``: the
        commands with what each party does, as an audit writes ``deployment.txt``.

    See Also
    --------
    settings_fingerprint : The fingerprint the analyst checks.
    read_audit_fingerprint : How ``analyst fit`` reads ``deployment.json``.

    Examples
    --------
    >>> from skdc.protocol import deployment_commands
    >>> s = {"mechanism": "IGDP", "n_participants": 2, "n_features": 4, "noise": 0.0,
    ...      "translation_scale": 1.0, "anchor_noise": 0.05, "n_anchors": 16}
    >>> d = deployment_commands(s, model="logistic", model_params={"max_iter": 1000})
    >>> [" ".join(c[3:5]) for c in d["commands"]]
    ['anchor make', 'participant upload', 'participant upload', 'analyst fit']
    >>> " ".join(d["flags"][-4:])
    '--anchor anchor.npy --anchor-noise 0.05'
    >>> print(d["text"].splitlines()[-1].split(" --model")[0])
    python -m skdc analyst fit upload_0.npz upload_1.npz --aligner gopp
    """
    settings = _canonical(settings, "settings", ValueError)
    if settings["mechanism"] not in _MECHANISM_FLAGS:
        raise ValueError(f"settings: a deployment runs the mechanism IGDP or CGDP; got "
                         f"{settings['mechanism']!r}.")
    igdp = settings["mechanism"] == "IGDP"
    p = settings["n_participants"]
    flags = ["--n-participants", str(p), "--mechanism", _MECHANISM_FLAGS[settings["mechanism"]],
             "--noise", repr(settings["noise"]), "--translation-scale",
             repr(settings["translation_scale"])]
    if igdp:
        flags += ["--anchor", "anchor.npy", "--anchor-noise", repr(settings["anchor_noise"])]
    anchor = (["python", "-m", "skdc", "anchor", "make", "--n-features",
               str(settings["n_features"]), "--n-anchors", str(settings["n_anchors"]),
               "--out", "anchor.npy"] if igdp else None)
    seeds = ([] if igdp else ["--seed", "SHARED_SEED"])
    uploads = [["python", "-m", "skdc", "participant", "upload", "--id", str(i), *flags,
                *seeds, "--data", f"X_{i}.npy", "--labels", f"y_{i}.npy", "--secret-out",
                f"secret_{i}.npz", "--out", f"upload_{i}.npz"]
               for i in range(p)]
    fit = ["python", "-m", "skdc", "analyst", "fit", *[f"upload_{i}.npz" for i in range(p)],
           "--aligner", "gopp" if igdp else "none", *_model_flags(model, model_params),
           "--audit-fingerprint", "deployment.json", "--out", "model/"]
    fingerprint = settings_fingerprint(settings)
    commands = ([anchor] if igdp else []) + uploads + [fit]
    return {"fingerprint": fingerprint, "flags": flags, "commands": commands,
            "text": _deployment_text(label, fingerprint, anchor, uploads, fit)}


def _model_flags(model, model_params):
    """``--model NAME`` and one ``--model-param KEY=VALUE`` per parameter (none without
    ``model``)."""
    if model is None:
        return []
    return ["--model", model, *(w for k, v in (model_params or {}).items()
                                for w in ("--model-param",
                                          f"{k}={v if isinstance(v, str) else json.dumps(v)}"))]


def _deployment_text(label, fingerprint, anchor, uploads, fit):
    """The text of ``deployment.txt``: the commands in order, each party's step explained
    (``anchor`` is ``None`` for C-GDP, which shares one secret and uploads no anchor)."""
    lines = [f"# The audited deployment{'' if label is None else ': ' + label}.",
             f"# Fingerprint of its settings: {fingerprint}",
             "# `skdc analyst fit --audit-fingerprint deployment.json` refuses any upload "
             "whose declared settings differ.", ""]
    if anchor is not None:
        lines += ["# 1. Once, by one participant; give anchor.npy to every participant, "
                  "never to the analyst:", shlex.join(anchor), ""]
    lines += [f"# {'2' if anchor is not None else '1'}. Each participant at home, on its own "
              "rows (X_i.npy, y_i.npy)."]
    if anchor is not None:
        lines += ["#    No --seed: each draws its own private seeds from the operating "
                  "system."]
    else:
        lines += ["#    C-GDP shares one secret: one participant runs `python -m skdc "
                  "participant new-seed` (128 bits from the operating system) and gives its "
                  "output to every participant, never to the analyst; each passes it as "
                  "SHARED_SEED. Each draws its own noise seed from the operating system."]
    lines += [shlex.join(u) for u in uploads] + [""]
    lines += [f"# {'3' if anchor is not None else '2'}. The analyst:", shlex.join(fit), ""]
    return "\n".join(lines)
