"""The audited-settings fingerprint (skdc/protocol/_fingerprint.py): what it fingerprints and
what it refuses, and the commands that deploy the settings. Both sides use it: the audit
writing it (tests/audit/test_compare.py) and ``analyst fit --audit-fingerprint`` checking it
(tests/protocol/test_analyst_screen.py)."""

import hashlib
import json
import shlex

import pytest

from skdc.protocol import (
    DEPLOYED_FIELDS,
    UploadError,
    deployment_commands,
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


def test_the_deployment_commands_declare_the_audited_settings():
    d = deployment_commands(SETTINGS, label="I-GDP + GOPP at v = 0.05", model="logistic",
                            model_params={"max_iter": 1000, "class_weight": "balanced"})
    assert d["fingerprint"] == settings_fingerprint(SETTINGS)
    anchor, *uploads, fit = d["commands"]
    assert anchor[3:] == ["anchor", "make", "--n-features", "4", "--n-anchors", "16",
                          "--out", "anchor.npy"]
    assert len(uploads) == SETTINGS["n_participants"]
    for i, words in enumerate(uploads):
        assert words[3:7] == ["participant", "upload", "--id", str(i)]
        assert words[7:7 + len(d["flags"])] == d["flags"] and "--seed" not in words
        assert words[-4:] == ["--secret-out", f"secret_{i}.npz", "--out", f"upload_{i}.npz"]
    flags = dict(zip(d["flags"][::2], d["flags"][1::2]))
    assert flags == {"--n-participants": "5", "--mechanism": "igdp", "--noise": "0.0",
                     "--translation-scale": "1.0", "--anchor": "anchor.npy",
                     "--anchor-noise": "0.05"}
    assert fit[3:] == ["analyst", "fit", *[f"upload_{i}.npz" for i in range(5)], "--aligner",
                       "gopp", "--model", "logistic", "--model-param", "max_iter=1000",
                       "--model-param", "class_weight=balanced", "--audit-fingerprint",
                       "deployment.json", "--out", "model/"]
    lines = d["text"].splitlines()
    assert lines[:2] == ["# The audited deployment: I-GDP + GOPP at v = 0.05.",
                         f"# Fingerprint of its settings: {d['fingerprint']}"]
    assert [shlex.join(c) for c in d["commands"]] == [ln for ln in lines if ln[:1] not in "#"
                                                       and ln]


def test_c_gdp_shares_one_seed_and_uploads_no_anchor():
    cgdp = {**SETTINGS, "mechanism": "CGDP", "anchor_noise": 0.0, "n_anchors": 0}
    d = deployment_commands(cgdp)
    *uploads, fit = d["commands"]
    assert [c[3:5] for c in uploads] == [["participant", "upload"]] * 5
    assert all(c[c.index("--seed") + 1] == "SHARED_SEED" for c in uploads)
    assert "--anchor" not in d["flags"] and fit[fit.index("--aligner") + 1] == "none"
    assert "--model" not in fit and "participant new-seed" in d["text"]
    assert d["text"].startswith("# The audited deployment.\n")


@pytest.mark.parametrize("change, message", [
    ({"mechanism": "PCA"}, "runs the mechanism IGDP or CGDP; got 'PCA'"),
    ({"noise": float("nan")}, "'noise' must be a finite number >= 0"),
    ({"seed": 3}, "unknown \\['seed'\\]"),
])
def test_the_deployment_commands_refuse_settings_no_deployment_runs(change, message):
    with pytest.raises(ValueError, match=message):
        deployment_commands({**SETTINGS, **change})
