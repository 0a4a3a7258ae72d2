"""The audited-settings fingerprint (skdc/protocol/_fingerprint.py): what it fingerprints and
what it refuses. Both sides use it: the audit writing it (tests/experiments/test_compare.py)
and ``analyst fit --audit-fingerprint`` checking it (tests/protocol/test_analyst_screen.py)."""

import hashlib
import json

import pytest

from skdc.protocol import (
    DEPLOYED_FIELDS,
    UploadError,
    read_audit_fingerprint,
    settings_fingerprint,
    upload_settings,
)

SETTINGS = {"mechanism": "IGDP", "n_participants": 5, "n_features": 4, "noise": 0.0,
            "translation_scale": 1.0, "anchor_noise": 0.05, "n_anchors": 16}


def test_the_fingerprint_is_the_sha256_of_the_canonical_json():
    text = json.dumps(SETTINGS, sort_keys=True)
    assert settings_fingerprint(SETTINGS) == hashlib.sha256(text.encode()).hexdigest()
    assert settings_fingerprint({**SETTINGS, "noise": 0}) == settings_fingerprint(SETTINGS)


@pytest.mark.parametrize("change, message", [
    ({"seed": 3}, "unknown \\['seed'\\]"),
    ({"noise": -1.0}, "'noise' must be a finite number >= 0"),
    ({"n_anchors": True}, "'n_anchors' must be an integer >= 0"),
])
def test_the_fingerprint_refuses_settings_it_does_not_know(change, message):
    with pytest.raises(UploadError, match=message):
        settings_fingerprint({**SETTINGS, **change}, error=UploadError)


def test_an_upload_header_declares_the_fields():
    header = {"mechanism": {"kind": "IGDP", "n_participants": 5, "n_features_in": 4,
                            "noise": 0.0, "translation_scale": 1.0},
              "anchor_noise": 0.05, "n_anchors": 16}
    assert upload_settings(header) == SETTINGS
    assert set(upload_settings(header)) == set(DEPLOYED_FIELDS)


def test_an_audit_file_must_fingerprint_its_settings(tmp_path):
    good = tmp_path / "deployment.json"
    good.write_text(json.dumps({"fingerprint": settings_fingerprint(SETTINGS),
                                "settings": SETTINGS}))
    assert read_audit_fingerprint(str(good)) == (settings_fingerprint(SETTINGS), SETTINGS)
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps({"fingerprint": settings_fingerprint(SETTINGS),
                                  "settings": {**SETTINGS, "noise": 0.5}}))
    with pytest.raises(UploadError, match="the file was edited"):
        read_audit_fingerprint(str(edited), error=UploadError)
