"""Moved: the audited-settings fingerprint is the protocol's, ``skdc/protocol/_fingerprint.py``.

A thin re-export of its public names (:func:`skdc.protocol.settings_fingerprint`,
:func:`skdc.protocol.upload_settings`, :func:`skdc.protocol.read_audit_fingerprint`,
:data:`skdc.protocol.DEPLOYED_FIELDS`), kept only until ``skdc.experiments`` imports them from
:mod:`skdc.protocol` (issue 35); then this module goes. New code imports from
:mod:`skdc.protocol`.
"""

# Licence: BSD 3 clause

from ..protocol import (  # noqa: F401
    DEPLOYED_FIELDS,
    read_audit_fingerprint,
    settings_fingerprint,
    upload_settings,
)

__all__ = ["DEPLOYED_FIELDS", "read_audit_fingerprint", "settings_fingerprint",
           "upload_settings"]
