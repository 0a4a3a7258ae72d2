"""The audited settings of a deployment and their fingerprint, shared by the audit and the analyst.

An audit (:func:`skdc.experiments.compare_options`) recommends the settings each participant
runs, writes them as ``skdc participant upload`` flags, and prints a fingerprint of them.
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

from ..utils._files import FileError, is_int, read_text

__all__ = ["DEPLOYED_FIELDS", "read_audit_fingerprint", "settings_fingerprint",
           "upload_settings"]

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
