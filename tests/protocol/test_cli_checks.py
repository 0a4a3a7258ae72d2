"""The deployment command line refuses bad paths and files in one line, and says what it did.

Everything runs in process (``skdc.__main__.main``) on a small three-participant deployment;
the separate-processes round trip lives in ``test_cli.py``.
"""

import argparse
import json
import os

import numpy as np
import pytest

from skdc.__main__ import main
from skdc.protocol import register_commands

from .conftest import D, P, deploy, run_cli, upload_argv


def one_line_error(argv, capsys, *words):
    status, out, err = run_cli(argv, capsys)
    assert status == 2, (out, err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site")
    ups = deploy(tmp)
    assert main(["analyst", "fit", *ups, "--out", str(tmp / "runA")]) == 0
    assert main(["analyst", "fit", *ups, "--model-param", "C=0.01",
                 "--out", str(tmp / "runB")]) == 0
    return tmp


def test_upload_refuses_to_overwrite_the_secret_unless_forced(site, capsys):
    before = {p: (site / p).read_bytes() for p in ("secret0.npz", "uploads/upload_0.npz")}
    one_line_error(upload_argv(site, 0), capsys, "secret0.npz", "--secret-out",
                   "already exists", "--force")
    # nothing was written: the old secret still matches the old upload
    assert {p: (site / p).read_bytes() for p in before} == before
    status, out, _ = run_cli(upload_argv(site, 0, **{"--secret-out": site / "s_new.npz",
                                                      "--out": site / "uploads/upload_0.npz"}),
                             capsys)
    assert status == 2 and not (site / "s_new.npz").exists()
    status, out, err = run_cli(upload_argv(site, 0, **{"--secret-out": site / "forced.npz",
                                                      "--out": site / "forced_up.npz"})
                               + ["--force"], capsys)
    assert status == 0 and "rows uploaded to" in out
    status, out, err = run_cli(upload_argv(site, 0, **{"--secret-out": site / "forced.npz",
                                                      "--out": site / "forced_up.npz"})
                               + ["--force"], capsys)
    assert status == 0, err


@pytest.mark.parametrize("where", ["missing folder", "existing folder", "fifo", "same file"])
def test_upload_output_paths_are_checked_before_writing(site, capsys, tmp_path, where):
    secret = tmp_path / "secret.npz"
    out = {"missing folder": tmp_path / "nope" / "u.npz", "existing folder": tmp_path,
           "fifo": tmp_path / "pipe", "same file": secret}[where]
    if where == "fifo":
        os.mkfifo(out)
    words = {"missing folder": "does not exist", "existing folder": "is an existing folder",
             "fifo": "named pipe", "same file": "the same file"}[where]
    one_line_error(upload_argv(site, 1, **{"--secret-out": secret, "--out": out}), capsys,
                   "--out", words)
    assert not secret.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == (["pipe"] if where == "fifo" else [])


def test_analyst_out_that_is_a_file_is_one_line(site, capsys, tmp_path):
    (tmp_path / "f").write_text("x")
    one_line_error(["analyst", "fit", site / "uploads/upload_0.npz", "--out", tmp_path / "f"],
                   capsys, "--out", "is a file, not a folder")
    one_line_error(["analyst", "fit", site / "uploads/upload_0.npz", "--out",
                    tmp_path / "f" / "sub"], capsys, "--out", "lies under", "which is a file")


def test_anchor_noise_needs_an_anchor_and_zero_warns_in_flag_words(site, capsys, tmp_path):
    one_line_error(upload_argv(site, 1, **{"--anchor": None, "--secret-out": tmp_path / "s",
                                           "--out": tmp_path / "u"}),
                   capsys, "--anchor-noise 0.05 without --anchor")
    assert not (tmp_path / "s").exists()
    status, out, err = run_cli(upload_argv(site, 1, **{"--anchor-noise": 0,
                                                      "--secret-out": tmp_path / "s",
                                                      "--out": tmp_path / "u"}), capsys)
    assert status == 0
    lines = err.splitlines()
    assert len(lines) == 1 and "warning: --anchor-noise is 0" in lines[0], err
    assert "(v=0)" not in err and "UserWarning" not in err


@pytest.mark.parametrize("case, words", [
    ("1-D", ["--data", "must be a 2-D array", "got shape (20,)"]),
    ("NaN", ["--data", "1 NaN or infinite value(s)", "first in data row 4, column 2"]),
    ("CSV", ["--data", "is not a .npy file", "CSV"]),
    ("huge header", ["--data", "header declares", "safety limit"]),
    ("pickle", ["--data", "dtype object"]),
    ("strings", ["--data", "must hold numbers"]),
])
def test_bad_data_is_one_line_naming_file_and_flag(site, capsys, tmp_path, case, words):
    path = tmp_path / "X.npy"
    X = np.random.RandomState(0).rand(20, D)
    if case == "1-D":
        np.save(path, X[:, 0])
    elif case == "NaN":
        X[3, 1] = np.nan
        np.save(path, X)
    elif case == "CSV":
        np.savetxt(path, X, delimiter=",")
    elif case == "huge header":
        with open(path, "wb") as fh:
            fh.write(b"\x93NUMPY\x02\x00" + (20000).to_bytes(4, "little") + b" " * 20000)
    elif case == "pickle":
        np.save(path, np.array([object()] * 3), allow_pickle=True)
    else:
        np.save(path, np.array([["a"] * D] * 20))
    err = one_line_error(upload_argv(site, 1, **{"--data": path, "--labels": None,
                                                 "--secret-out": tmp_path / "s",
                                                 "--out": tmp_path / "u"}),
                         capsys, str(path), *words)
    assert ("pickled" not in err or case == "pickle") and "array([" not in err and "[[" not in err
    # the same reader serves predict
    one_line_error(["participant", "predict", "--secret", site / "secret2.npz", "--map",
                    site / "runA/map_2.npz", "--model", site / "runA/model.npz",
                    "--data", path, "--out", tmp_path / "p.npy"], capsys, str(path), *words)


def test_bad_labels_are_one_line(site, capsys, tmp_path):
    np.save(tmp_path / "y.npy", np.arange(7))
    one_line_error(upload_argv(site, 1, **{"--labels": tmp_path / "y.npy",
                                           "--secret-out": tmp_path / "s",
                                           "--out": tmp_path / "u"}),
                   capsys, "--labels", "holds 7 labels for the 20 rows")


@pytest.mark.parametrize("flag", ["--data", "--secret", "--map", "--model"])
@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "fifo"])
def test_device_files_and_pipes_are_refused_without_hanging(site, capsys, tmp_path, flag,
                                                             target):
    link = tmp_path / "hostile"
    if target == "fifo":
        os.mkfifo(link)
    else:
        os.symlink(target, link)
    files = {"--secret": site / "secret2.npz", "--map": site / "runA/map_2.npz",
             "--model": site / "runA/model.npz", "--data": site / "X_test.npy"}
    files[flag] = link
    argv = ["participant", "predict"]
    for k, v in files.items():
        argv += [k, v]
    one_line_error(argv + ["--out", tmp_path / "p.npy"], capsys, flag, str(link),
                   "named pipe" if target == "fifo" else "character device",
                   "not a regular file")
    assert not (tmp_path / "p.npy").exists()


def test_predict_says_what_it_wrote(site, capsys, tmp_path):
    status, out, err = run_cli(["participant", "predict", "--secret", site / "secret1.npz",
                                "--map", site / "runA/map_1.npz", "--model",
                                site / "runA/model.npz", "--data", site / "X_test.npy",
                                "--out", tmp_path / "p.npy", "--transform-out", tmp_path / "Z.npy"],
                               capsys)
    assert status == 0, err
    assert out.count("\n") == 1
    assert f"5 predictions to {tmp_path / 'p.npy'}" in out
    assert f"aligned rows (5 x {D}) to {tmp_path / 'Z.npy'}" in out
    assert np.load(tmp_path / "p.npy").shape == (5,)


def test_map_and_model_of_different_runs_are_refused(site, capsys, tmp_path):
    runs = {r: json.loads((site / r / "summary.json").read_text()) for r in ("runA", "runB")}
    assert runs["runA"]["files"] == runs["runB"]["files"]
    for i in range(P):
        one_line_error(["participant", "predict", "--secret", site / f"secret{i}.npz",
                        "--map", site / f"runA/map_{i}.npz", "--model", site / "runB/model.npz",
                        "--data", site / "X_test.npy", "--out", tmp_path / "p.npy"],
                       capsys, f"runA/map_{i}.npz", "field 'run_id'",
                       "different `analyst fit` runs")
        status, _, err = run_cli(["participant", "predict", "--secret", site / f"secret{i}.npz",
                                  "--map", site / f"runB/map_{i}.npz", "--model",
                                  site / "runB/model.npz", "--data", site / "X_test.npy",
                                  "--out", tmp_path / f"p{i}.npy"], capsys)
        assert status == 0, err


def test_a_single_upload_warns_that_nothing_is_aligned(site, capsys, tmp_path):
    status, out, err = run_cli(["analyst", "fit", site / "uploads/upload_0.npz", "--aligner",
                                "reference", "--out", tmp_path / "m"], capsys)
    assert status == 0
    assert "1 participant aligned" in out
    (line,) = err.splitlines()
    assert "warning: only 1 participant's upload: there is nothing to align" in line


@pytest.mark.parametrize("aligner", ["reference", "none"])
def test_model_convergence_warning_names_the_max_iter_that_fixes_it(site, capsys, tmp_path,
                                                                     aligner):
    ups = [site / "uploads" / f"upload_{i}.npz" for i in range(P)]
    status, out, err = run_cli(["analyst", "fit", *ups, "--aligner", aligner, "--model-param",
                                "max_iter=1", "--out", tmp_path / "m"], capsys)
    assert status == 0
    lines = [ln for ln in err.splitlines() if "converge" in ln]
    assert len(lines) == 1, err
    assert "did not converge in max_iter=1 iterations; rerun with --model-param max_iter=" in (
        lines[0])
    assert "(checked: it converges)" in lines[0] and "lbfgs" not in err
    fixed = int(lines[0].split("max_iter=")[2].split()[0])
    status, _, err = run_cli(["analyst", "fit", *ups, "--aligner", aligner, "--model-param",
                              f"max_iter={fixed}", "--out", tmp_path / "m2"], capsys)
    assert status == 0 and "converge" not in err


def _protocol_parsers():
    root = argparse.ArgumentParser(prog="skdc")
    register_commands(root.add_subparsers())
    stack, found = [root], []
    while stack:
        parser = stack.pop()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
        if parser.get_default("func") is not None:
            found.append(parser)
    return found


def test_every_protocol_flag_has_help_showing_its_default():
    parsers = _protocol_parsers()
    assert len(parsers) == 5  # anchor make, participant upload/predict/new-seed, analyst fit
    n_flags = 0
    for parser in parsers:
        helps = {}
        for action in parser._actions:
            if (not action.option_strings or action.dest == "help"
                    or action.help is argparse.SUPPRESS):  # a deprecated spelling, hidden
                continue
            n_flags += 1
            assert action.help, f"{parser.prog} {action.option_strings[0]} has no help"
            text = parser._get_formatter()._expand_help(action)
            helps[action.option_strings[0]] = text
            assert "default" in text or "required" in text, (parser.prog, text)
            if action.default not in (None, False) and not action.required:
                assert str(action.default) in text, (parser.prog, text)
        if parser.prog.endswith("fit"):
            for flag in ("--aligner", "--model", "--tol", "--max-iter"):
                assert "default: " in helps[flag]
        if parser.prog.endswith("upload"):
            assert "default: igdp" in helps["--mechanism"]
    assert n_flags >= 30


@pytest.mark.parametrize("flag, value, words", [
    ("--anchor-noise", "-0.1", "--anchor-noise must be a finite number >= 0"),
    ("--noise", "nan", "--noise must be a finite number >= 0"),
    ("--translation-scale", "-1", "--translation-scale must be a finite number >= 0"),
    ("--id", "-1", "--id must be >= 0"),
    ("--n-participants", "1", "--id 1 needs --n-participants > 1"),
    ("--n-participants", str(2**63), "n_participants=9223372036854775808 is above"),
])
def test_bad_upload_numbers_name_the_flag(site, capsys, tmp_path, flag, value, words):
    one_line_error(upload_argv(site, 1, **{flag: value, "--secret-out": tmp_path / "s",
                                           "--out": tmp_path / "u"}), capsys, words)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("extra, words", [
    (["--tol", "0"], "--tol must be a finite number > 0"),
    (["--max-iter", "0"], "--max-iter must be >= 1"),
    (["--aligner", "reference", "--reference", "3"], "--reference 3 is not a participant"),
])
def test_bad_analyst_numbers_name_the_flag(site, capsys, tmp_path, extra, words):
    ups = [site / "uploads" / f"upload_{i}.npz" for i in range(P)]
    one_line_error(["analyst", "fit", *ups, *extra, "--out", tmp_path / "m"], capsys, words)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("flag, value, words", [
    ("--n-features", "0", "--n-features must be >= 1; got 0"),
    ("--n-anchors", "1", "--n-anchors must be >= 2; got 1"),
    ("--n-anchors", "3", "needs n_anchors >= n_features + 1 = 4"),
])
def test_bad_anchor_numbers_name_the_flag(capsys, tmp_path, flag, value, words):
    args = {"--n-features": "3", "--out": tmp_path / "a.npy", flag: value}
    one_line_error(["anchor", "make", *[a for kv in args.items() for a in kv]], capsys, words)
    assert not (tmp_path / "a.npy").exists()
