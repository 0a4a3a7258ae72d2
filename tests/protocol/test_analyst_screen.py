"""What the analyst refuses before training: anchor uploads far from the consensus, uploads of
different collaborations, values that would overflow float64."""

import json
import os
import warnings

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from scipy.stats import chi2

from skdc import Uploads
from skdc.alignment import GOPPAligner, ReferenceAligner
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import Analyst, Participant, UploadError, load_uploads
from skdc.protocol._container import write_container
from skdc.protocol._screen import FALSE_ALARM, screen_anchor_uploads
from tests._fuzz import CASES

from .conftest import deploy, run_cli, upload_argv

P, D, R = 3, 4, 16


# -- the residual's scale, from the noise model alone -----------------------------------------
def _anchor_uploads(p, d, r, v, seed):
    """Each participant's ``B_i + v_i W_i`` and planted rotations ``O_i`` (mechanism's)."""
    A = orthonormal_anchor(r, d, random_state=seed)
    mech = IGDP(p, anchor=A, random_state=seed, noise_random_state=seed + 1)
    mech.fit(np.zeros((p, d)), participant=np.arange(p))
    Y = mech.transform(np.zeros((p, d)), participant=np.arange(p))
    v = np.broadcast_to(v, (p,))
    B = np.stack([b + vi * w for b, vi, w in zip(Y.anchors, v, Y.unit_anchor_noise)])
    return B, mech.rotations_


def test_residual_at_the_planted_rotations_has_the_chi_square_scale():
    # E||E_i||^2 = (r - 1) d (v_i^2 (1 - 2/p) + sum_j v_j^2 / p^2) at R_i = O_i^T: the mean
    # ratio over independent draws is 1 within three standard errors (independent of GOPP)
    v = np.array([0.01, 0.05, 0.1])
    ratios = []
    for seed in range(150):
        B, O = _anchor_uploads(P, D, R, v, seed)
        ratios.append(screen_anchor_uploads(B, np.swapaxes(O, 1, 2), v).ratios)
    ratios = np.array(ratios)
    se = np.sqrt(2 / ((R - 1) * D) / len(ratios))  # chi-square over its dof
    assert np.all(np.abs(ratios.mean(axis=0) - 1) < 3 * se), ratios.mean(axis=0)


def test_threshold_is_the_chi_square_quantile():
    B, O = _anchor_uploads(P, D, R, 0.05, 0)
    s = screen_anchor_uploads(B, np.swapaxes(O, 1, 2), [0.05] * P)
    dof = (R - 1) * D
    assert s.threshold == pytest.approx(chi2.isf(FALSE_ALARM / P, dof) / dof, rel=1e-12)
    assert s.declared and s.noise == pytest.approx([0.05] * P, rel=1e-12)


def _hostile(B, kind, rng, v):
    B = B.copy()
    if kind == "permuted":
        B[1] = B[1][rng.permutation(B.shape[1])]
    elif kind == "rank-1":  # the upload's leading direction only, plus honest-looking noise
        c = B[1] - B[1].mean(axis=0)
        U, s, Vt = np.linalg.svd(c, full_matrices=False)
        B[1] = B[1].mean(axis=0) + s[0] * np.outer(U[:, 0], Vt[0])
        B[1] += v * rng.standard_normal(B[1].shape)
    elif kind == "another anchor":
        B[1] = orthonormal_anchor(*B[1].shape, random_state=99) + v * rng.standard_normal(
            B[1].shape)
    return B


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # hostile, v=0
@pytest.mark.parametrize("p, d, r", [(3, 4, 16), (5, 10, 40)])
@pytest.mark.parametrize("v", [0.0, 0.01, 0.05])
def test_honest_uploads_pass_and_a_hostile_one_is_named(p, d, r, v):
    # measured: honest ratios 0.88 +- 0.18 at (3, 4, 16), threshold 2.18; permuted >= 14.8
    # and rank-1 >= 10.8 at v = 0.05 (20 draws each)
    for seed in range(3):
        rng = np.random.RandomState(seed)
        B, _ = _anchor_uploads(p, d, r, v, seed)
        for kind in (None, "permuted", "rank-1", "another anchor"):
            Bk = B if kind is None else _hostile(B, kind, rng, v)
            Y = Uploads(np.zeros((p, d)), np.arange(p), anchors=list(Bk))
            gopp = GOPPAligner(v=0).fit(Y)
            s = screen_anchor_uploads(gopp.anchor_uploads_, gopp.rotations_, [v] * p)
            if kind is None:
                assert s.ratios.max() < s.threshold, (seed, s.ratios)
            else:
                CASES["anchor screen"] += 1
                assert np.argmax(s.ratios) == 1 and s.ratios[1] > s.threshold, (kind, s.ratios)


def test_undeclared_noise_is_estimated_from_the_others():
    rng = np.random.RandomState(0)
    B, _ = _anchor_uploads(4, D, R, 0.05, 0)
    for kind in (None, "permuted"):
        Bk = B if kind is None else _hostile(B, kind, rng, 0.05)
        gopp = GOPPAligner(v=0).fit(Uploads(np.zeros((4, D)), np.arange(4), anchors=list(Bk)))
        s = screen_anchor_uploads(gopp.anchor_uploads_, gopp.rotations_, [None] * 4)
        assert not s.declared
        assert (s.ratios.max() > s.threshold) == (kind == "permuted"), s.ratios
    # two participants declaring nothing: nothing to compare against
    assert screen_anchor_uploads(B[:2], np.stack([np.eye(D)] * 2), None) is None


# -- the analyst, on files ----------------------------------------------------------------------
def _site(tmp, v=(0.05, 0.05, 0.05), n_participants=None, seed=0):
    """Three participants' upload files (declared anchor noise ``v``)."""
    rng = np.random.RandomState(seed)
    A = orthonormal_anchor(R, D, random_state=seed)
    paths = []
    for i in range(P):
        p = P if n_participants is None else n_participants[i]
        me = Participant(i, IGDP(p, random_state=seed + 10 * i, noise_random_state=seed + i),
                         v=v[i])
        X = rng.rand(40, D)
        up = me.upload(X, (X[:, 0] > 0.5).astype(int), anchor=A)
        paths.append(me.save_upload(os.path.join(tmp, f"u{i}.npz"), up))
    return paths


def _rewrite(path, **arrays):
    """A participant with skdc, re-writing its upload (valid checksum and digests)."""
    with np.load(path, allow_pickle=False) as z:
        header = json.loads(z["header"].tobytes())
        old = {k: z[k] for k in z.files if k not in ("header", "checksum")}
    old.update({k: f(old) for k, f in arrays.items()})
    kind = header.pop("format")
    return write_container(path, kind, header, old, mode=0o644, header_digests=True)


def test_analyst_refuses_a_permuted_anchor_upload_naming_its_file(tmp_path):
    paths = _site(str(tmp_path))
    Analyst().fit(paths)  # honest: fits
    perm = np.random.RandomState(1).permutation(R)
    _rewrite(paths[1], anchor_upload=lambda a: a["anchor_upload"][perm])
    for aligner in (GOPPAligner(), ReferenceAligner()):
        with pytest.raises(UploadError) as info:
            Analyst(aligner).fit(paths)
        msg = str(info.value)
        assert msg.startswith(f"{paths[1]}: field 'anchor_upload' lies ") and "\n" not in msg
        assert "declared anchor noise (v = 0.05" in msg and "participant 1" in msg, msg
        CASES["anchor screen"] += 1
    with pytest.warns(UserWarning, match="u1.npz: field 'anchor_upload' lies"):
        a = Analyst(outliers="warn").fit(paths)
    assert np.argmax(a.anchor_residual_ratios_) == 1
    assert a.anchor_residual_ratios_[1] > a.anchor_residual_threshold_
    with pytest.raises(ValueError, match="outliers must be 'refuse' or 'warn'"):
        Analyst(outliers="ignore").fit(paths)


def test_rank_deficient_anchor_upload_is_refused(tmp_path):
    paths = _site(str(tmp_path))

    def rank_one(a):
        b = a["anchor_upload"]
        return b.mean(axis=0) + np.outer(b[:, 0] - b[:, 0].mean(), np.ones(D))

    _rewrite(paths[2], anchor_upload=rank_one)
    with pytest.raises(UploadError, match=r"u2.npz: field 'anchor_upload' is rank-deficient"):
        Analyst().fit(paths)
    CASES["anchor screen"] += 1


def test_two_participants_disagreeing_are_both_named(tmp_path):
    paths = _site(str(tmp_path))[:2]
    _rewrite(paths[1], anchor_upload=lambda a: a["anchor_upload"][::-1])
    with pytest.raises(UploadError) as info:
        Analyst().fit(paths)
    msg = str(info.value)
    assert msg.startswith(f"{paths[0]} and {paths[1]}: field 'anchor_upload'")
    assert "cannot tell which one is off" in msg
    CASES["anchor screen"] += 1


@pytest.mark.filterwarnings("ignore:.*(clean anchor|declare no anchor noise):UserWarning")
def test_honest_participants_with_different_noise_pass_within_the_named_range(tmp_path):
    paths = _site(str(tmp_path), v=(0.0, 0.02, 0.1))
    for noise_range in ((0.0, 0.1), [0, np.inf]):
        a = Analyst(v_range=noise_range).fit(paths)
        assert a.anchor_residual_ratios_.max() < a.anchor_residual_threshold_
    with pytest.raises(UploadError, match=r"u1.npz, .*u2.npz: declare anchor noise 0.02, "
                                          r"0.1, where 1 other upload declares 0; "):
        Analyst().fit(paths)  # no majority: the least of the tied values stands as agreed


def _poison(path, declared, perm):
    """An attacker re-writing its upload with skdc: anchor rows permuted, ``declared`` noise."""
    _rewrite(path, anchor_upload=lambda a: a["anchor_upload"][perm])
    with np.load(path, allow_pickle=False) as z:
        header = json.loads(z["header"].tobytes())
        arrays = {k: z[k] for k in z.files if k not in ("header", "checksum")}
    header["anchor_noise"] = declared
    write_container(path, header.pop("format"), header, arrays, mode=0o644,
                    header_digests=True)


@pytest.mark.parametrize("declared", [0.5, 2.0])
def test_a_poisoned_upload_declaring_more_anchor_noise_is_refused(tmp_path, declared):
    # issue 31: permuted anchor rows declared at 0.5 or 2.0 (the others 0.05) passed the
    # screen (ratio 0.008 - 0.12 of the threshold) and cost the honest participants accuracy
    paths = _site(str(tmp_path))
    _poison(paths[2], declared, np.random.RandomState(1).permutation(R))
    with pytest.raises(UploadError) as info:
        Analyst().fit(paths)
    msg = str(info.value)
    assert msg.startswith(f"{paths[2]}: declares anchor noise {declared:g}, where 2 other "
                          "uploads declare 0.05; every upload must declare the collaboration's "
                          "agreed anchor noise") and "\n" not in msg, msg
    assert "Ask participant 2 to upload with the agreed anchor noise" in msg
    assert "v_range=(LOW, HIGH)" in msg
    CASES["anchor screen (declared noise)"] += 1
    # a range the analyst names: outside it, refused; the agreed value alone, refused
    for noise_range in ((0.05, 0.1), (0.05, 0.05)):
        with pytest.raises(UploadError, match=rf"u2.npz: declares anchor noise {declared:g}, "
                                              r"outside the accepted 0.05 .. 0.1?"):
            Analyst(v_range=noise_range).fit(paths)
        CASES["anchor screen (declared noise)"] += 1
    # what no declared-noise screen sees: a range that admits the lie admits the poisoned rows
    a = Analyst(v_range=(0.0, declared)).fit(paths)
    assert a.anchor_residual_ratios_[2] < a.anchor_residual_threshold_


@pytest.mark.parametrize("noise_range", [(0.1, 0.05), (-0.1, 1), (np.nan, 1), (0, np.nan),
                                         (np.inf, np.inf), (0.1,), "0.1", (True, 1), None])
def test_v_range_must_be_two_ordered_numbers(tmp_path, noise_range):
    paths = _site(str(tmp_path))
    if noise_range is None:
        assert Analyst(v_range=None).fit(paths).n_participants_ == P
        return
    with pytest.raises(ValueError, match=r"v_range must be two numbers \(LOW, "
                                         r"HIGH\) with 0 <= LOW <= HIGH"):
        Analyst(v_range=noise_range).fit(paths)


def test_anchor_noise_range_is_a_deprecated_spelling_of_v_range(tmp_path):
    paths = _site(str(tmp_path), v=(0.05, 0.05, 0.1))
    new = Analyst(v_range=(0.05, 0.1)).fit(paths)
    with pytest.warns(FutureWarning, match="anchor_noise_range= is deprecated.*use v_range= "
                                           "instead") as caught:
        old = Analyst(anchor_noise_range=(0.05, 0.1))
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert old.v_range == (0.05, 0.1)
    assert_array_equal(old.fit(paths).anchor_residual_ratios_, new.anchor_residual_ratios_)
    with pytest.warns(FutureWarning, match="Analyst.anchor_noise_range is deprecated"):
        assert new.anchor_noise_range == (0.05, 0.1)
    with pytest.raises(TypeError, match="pass v_range= only"):
        Analyst(v_range=(0.05, 0.1), anchor_noise_range=(0.05, 0.1))


def test_uploads_of_different_collaboration_sizes_are_refused(tmp_path):
    paths = _site(str(tmp_path), n_participants=(3, 4, 3))
    with pytest.raises(UploadError, match=r"u1.npz: field 'mechanism.n_participants' is 4 but "
                                          r".*u0.npz has 3"):
        load_uploads(paths)
    CASES["upload (collaboration)"] += 1


@pytest.mark.parametrize("field", ["data", "anchor_upload"])
def test_values_that_overflow_float64_are_refused_before_any_arithmetic(tmp_path, field):
    paths = _site(str(tmp_path))
    _rewrite(paths[1], **{field: lambda a: a[field] * 1e300})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not one overflow warning before the refusal
        warnings.filterwarnings("ignore", ".*chosen seed")  # _site's uploads: tests only
        with pytest.raises(UploadError) as info:
            Analyst().fit(paths)
    msg = str(info.value)
    assert msg.startswith(f"{paths[1]}: field '{field}' holds ") and "can overflow" in msg, msg
    CASES["upload (values)"] += 1
    # the same limit holds in memory
    Y = IGDP(3, random_state=0).fit_transform(np.random.RandomState(0).rand(30, D),
                                              participant=np.arange(30) % 3)
    big = Uploads(np.asarray(Y) * 1e300, Y.participant, anchors=Y.anchors)
    with pytest.raises(UploadError, match="the in-memory uploads: field 'data' holds"):
        Analyst(ReferenceAligner()).fit(big, np.arange(30) % 2)
    CASES["upload (values)"] += 1


# -- the command line ---------------------------------------------------------------------------
def test_cli_refuses_or_warns_about_the_hostile_upload(tmp_path, capsys):
    paths = _site(str(tmp_path))
    _rewrite(paths[1], anchor_upload=lambda a: a["anchor_upload"][::-1])
    status, _, err = run_cli(["analyst", "fit", *paths, "--out", tmp_path / "m"], capsys)
    assert status == 2 and err.count("\n") == 1, err
    assert f"{paths[1]}: field 'anchor_upload' lies " in err
    assert not (tmp_path / "m").exists()  # nothing written
    status, _, err = run_cli(["analyst", "fit", *paths, "--outliers", "warn", "--out",
                              tmp_path / "m"], capsys)
    assert status == 0, err
    (line,) = [ln for ln in err.splitlines() if "anchor_upload" in ln]
    assert line.startswith("skdc analyst: warning: ") and "u1.npz" in line
    summary = json.loads((tmp_path / "m" / "summary.json").read_text())
    assert np.argmax(summary["anchor_residual_ratios"]) == 1
    CASES["anchor screen (command line)"] += 2


def test_cli_refuses_an_anchor_of_overflowing_magnitude_in_one_line(tmp_path, capsys):
    A = orthonormal_anchor(R, D, random_state=0) * 1e300
    np.save(tmp_path / "A.npy", A)
    np.save(tmp_path / "X.npy", np.random.RandomState(0).rand(10, D))
    status, _, err = run_cli(["participant", "upload", "--id", 0, "--data",
                              tmp_path / "X.npy", "--anchor", tmp_path / "A.npy",
                              "--anchor-noise", 0.05, "--secret-out", tmp_path / "s.npz",
                              "--out", tmp_path / "u.npz"], capsys)
    assert status == 2 and err.count("\n") == 1, err
    assert "--anchor" in err and "A.npy" in err and "can overflow" in err
    assert sorted(os.listdir(tmp_path)) == ["A.npy", "X.npy"]
    CASES["anchor (values)"] += 1


def test_cli_sizes_declared_differently_are_refused_undeclared_ones_not(tmp_path, capsys):
    rng = np.random.RandomState(0)
    np.save(tmp_path / "A.npy", orthonormal_anchor(R, D, random_state=0))
    for i in range(P):
        X = rng.rand(20, D)
        np.save(tmp_path / f"X{i}.npy", X)
        np.save(tmp_path / f"y{i}.npy", (X[:, 0] > 0.5).astype(int))

    def upload(i, tag, *size):
        return run_cli(["participant", "upload", "--id", i, *size, "--data",
                        tmp_path / f"X{i}.npy", "--labels", tmp_path / f"y{i}.npy",
                        "--anchor", tmp_path / "A.npy", "--anchor-noise", 0.05,
                        "--secret-out", tmp_path / f"s{tag}{i}.npz",
                        "--out", tmp_path / f"u{tag}{i}.npz"], capsys)[0]

    # without --n-participants each upload declares no size (its default, --id + 1, is none)
    assert all(upload(i, "a") == 0 for i in range(P))
    assert run_cli(["analyst", "fit", *[tmp_path / f"ua{i}.npz" for i in range(P)], "--out",
                    tmp_path / "ma"], capsys)[0] == 0
    for i, size in enumerate((3, 4, 3)):
        assert upload(i, "b", "--n-participants", size) == 0
    status, _, err = run_cli(["analyst", "fit", *[tmp_path / f"ub{i}.npz" for i in range(P)],
                              "--out", tmp_path / "mb"], capsys)
    assert status == 2 and err.count("\n") == 1, err
    assert "ub1.npz: field 'mechanism.n_participants' is 4 but" in err
    CASES["upload (collaboration)"] += 1


def test_cli_refuses_an_upload_declaring_other_anchor_noise_in_one_line(tmp_path, capsys):
    site = tmp_path
    paths = deploy(site)
    odd = site / "uploads" / "odd.npz"
    assert run_cli(upload_argv(site, 2, **{"--anchor-noise": 0.5, "--out": odd,
                                            "--secret-out": site / "odd_secret.npz"}),
                   capsys)[0] == 0
    uploads = [*paths[:2], odd]
    status, _, err = run_cli(["analyst", "fit", *uploads, "--out", site / "m"], capsys)
    (line,) = [ln for ln in err.splitlines() if "error" in ln]
    assert status == 2 and err.endswith(line + "\n") and "Traceback" not in err, err
    assert f"{odd}: declares anchor noise 0.5, where 2 other uploads declare 0.05" in line
    assert "--anchor-noise-range LOW HIGH" in line and "v_range" not in line
    assert not (site / "m").exists()  # nothing written
    CASES["anchor screen (declared noise, command line)"] += 1
    # outside the range the analyst names
    status, _, err = run_cli(["analyst", "fit", *uploads, "--anchor-noise-range", 0.05, 0.1,
                              "--out", site / "m"], capsys)
    (line,) = [ln for ln in err.splitlines() if "error" in ln]
    assert status == 2 and "outside the accepted 0.05 .. 0.1 (--anchor-noise-range)" in line
    assert not (site / "m").exists()
    CASES["anchor screen (declared noise, command line)"] += 1
    # within it, the honest upload of more noise is aligned
    status, _, err = run_cli(["analyst", "fit", *uploads, "--anchor-noise-range", 0.05, 0.5,
                              "--out", site / "m"], capsys)
    assert status == 0, err
    assert (site / "m" / "model.npz").exists()


@pytest.mark.parametrize("flags, words", [
    (["--anchor-noise-range", "0.1", "0.05"], "--anchor-noise-range must be LOW HIGH with "
                                              "0 <= LOW <= HIGH (HIGH may be inf); got 0.1 0.05"),
    (["--anchor-noise-range", "-1", "1"], "--anchor-noise-range must be LOW HIGH"),
    (["--anchor-noise-range", "nan", "1"], "--anchor-noise-range must be LOW HIGH"),
    (["--anchor-noise-range", "0", "nan"], "--anchor-noise-range must be LOW HIGH"),
    (["--anchor-noise-range", "0", "1", "--audit-fingerprint", "0" * 64],
     "--anchor-noise-range with --audit-fingerprint: the audit pins the anchor noise"),
])
def test_cli_anchor_noise_range_is_checked_before_any_upload_is_read(tmp_path, capsys, flags,
                                                                     words):
    status, _, err = run_cli(["analyst", "fit", tmp_path / "missing.npz", *flags, "--out",
                              tmp_path / "m"], capsys)
    assert status == 2 and err.count("\n") == 1 and words in err, err
    assert "missing.npz" not in err and not (tmp_path / "m").exists()
    CASES["anchor screen (declared noise, command line)"] += 1


def test_cli_audit_fingerprint_pins_the_anchor_noise(tmp_path, capsys):
    from skdc.protocol import settings_fingerprint, upload_settings
    from skdc.protocol._container import Container
    from skdc.protocol._upload import _UPLOAD

    paths = deploy(tmp_path)
    with Container(paths[0], _UPLOAD) as c:
        agreed = settings_fingerprint(upload_settings(c.header))
    odd = tmp_path / "uploads" / "odd.npz"
    assert run_cli(upload_argv(tmp_path, 2, **{"--anchor-noise": 2.0, "--out": odd,
                                                "--secret-out": tmp_path / "odd_secret.npz"}),
                   capsys)[0] == 0
    status, _, err = run_cli(["analyst", "fit", *paths[:2], odd, "--audit-fingerprint", agreed,
                              "--out", tmp_path / "m"], capsys)
    (line,) = [ln for ln in err.splitlines() if "error" in ln]
    assert status == 2 and f"{odd}: its declared settings are not the audited ones" in line
    assert run_cli(["analyst", "fit", *paths, "--audit-fingerprint", agreed, "--out",
                    tmp_path / "m"], capsys)[0] == 0
    CASES["anchor screen (declared noise, command line)"] += 1
