"""``python -m skdc bound`` (skdc/privacy/_cli.py): the floor of a data set from files."""

import os
import re

import numpy as np
import pytest
from sklearn.datasets import load_digits

from skdc.__main__ import main
from skdc.privacy import (
    BlockEntropyLowerBound,
    DPSGDLeakageAccountant,
    ReconstructionBound,
)
from tests._fuzz import CASES, deadline, npy_declaring

GRID = ["--block-sizes", "4,8", "--nu2", "0.8,1.6"]


@pytest.fixture(scope="module")
def digit_files(tmp_path_factory):
    """Disjoint calibration (100) and estimation (1,200) rows of the digits, as .npy files."""
    X = load_digits().data.astype(np.float64)
    X = X[np.random.RandomState(0).permutation(X.shape[0])]
    folder = tmp_path_factory.mktemp("bound")
    np.save(folder / "perp.npy", X[:100])
    np.save(folder / "est.npy", X[100:1300])
    return folder, X[100:1300], X[:100]


def _run(argv, capsys):
    status = main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err


def _rhos(out):
    return [float(m) for m in re.findall(r"^\S.*?\s+[\d.e+-]+\s+([01]\.\d{4})\s", out, re.M)]


def test_bound_prints_the_library_floor(digit_files, capsys):
    folder, X, X_perp = digit_files
    status, out, err = _run(["bound", "--data", str(folder / "est.npy"), "--perp",
                             str(folder / "perp.npy"), *GRID, "--no-progress",
                             "--gamma", "0.1", "--gamma", "1", "--dpsgd", "0.02", "0.5", "100",
                             "--dpsgd", "1", "2", "1"], capsys)
    assert status == 0, err
    ent = BlockEntropyLowerBound(block_sizes=[4, 8], nu2=(0.8, 1.6), progress=False,
                                 device="cpu").fit(X, X_perp=X_perp)
    bound = ReconstructionBound(ent)
    gamma = DPSGDLeakageAccountant().add_run(0.02, 0.5, 100).add_run(1.0, 2.0, 1).leakage_bits_
    expected = [bound.rho_star(g)[0] for g in (0.1, 1.0, gamma)]
    assert _rhos(out) == pytest.approx(expected, abs=5e-5)
    assert expected[0] > expected[1] > 0  # the floor falls with the leakage and is not vacuous
    assert "2 DP-SGD run(s)" in out and f"{gamma:.5g}" in out


def test_bound_solves_for_the_noise_and_resumes_from_its_checkpoint(digit_files, tmp_path,
                                                                    capsys):
    folder, X, X_perp = digit_files
    grid = tmp_path / "grid.json"
    argv = ["bound", "--data", str(folder / "est.npy"), "--perp", str(folder / "perp.npy"),
            *GRID, "--no-progress", "--checkpoint", str(grid), "--target-rho", "0.3",
            "--q", "0.02", "--steps", "100"]
    status, first, err = _run(argv, capsys)
    assert status == 0, err
    sigma = float(re.search(r"noise multiplier >= ([\d.e+-]+)", first).group(1))
    ent = BlockEntropyLowerBound(block_sizes=[4, 8], nu2=(0.8, 1.6), progress=False,
                                 device="cpu").fit(X, X_perp=X_perp)
    acct = DPSGDLeakageAccountant()
    gamma = ReconstructionBound(ent).max_leakage(0.3)
    assert sigma == pytest.approx(acct.calibrate_sigma(gamma, 0.02, 100), rel=1e-5)
    # the run at that sigma leaks what the floor allows: rho* there is the target
    leak = acct.leakage_bits(0.02, sigma, 100)
    assert ReconstructionBound(ent).rho_star(leak)[0] == pytest.approx(0.3, abs=1e-4)
    assert grid.exists()
    status, again, _ = _run(argv, capsys)
    assert status == 0 and again.splitlines()[1:] == first.splitlines()[1:]


@pytest.mark.parametrize("extra, match", [
    (["--target-rho", "0.5"], "--target-rho needs the run's --q and --steps"),
    (["--dpsgd", "0.1", "one", "5"], "--dpsgd takes Q SIGMA STEPS"),
    (["--nu2", "0.2,x"], "--nu2 must be a comma-separated list"),
    (["--block-sizes", "3"], "block sizes must divide the dimension"),
    (["--gamma", "-1"], "gamma_bits must be a finite number >= 0"),
])
def test_bound_bad_input_is_one_line(digit_files, extra, match, capsys):
    folder, _, _ = digit_files
    status, _, err = _run(["bound", "--data", str(folder / "est.npy"), "--perp",
                           str(folder / "perp.npy"), "--block-sizes", "4", "--nu2", "0.8",
                           "--no-progress", *extra], capsys)
    assert status == 2
    assert len(err.strip().splitlines()) == 1 and match in err


def test_bound_missing_or_wrong_files(digit_files, tmp_path, capsys):
    folder, _, _ = digit_files
    status, _, err = _run(["bound", "--data", str(tmp_path / "nope.npy"), "--perp",
                           str(folder / "perp.npy")], capsys)
    assert status == 2 and "no such file (--data)" in err
    np.save(tmp_path / "flat.npy", np.zeros(5))
    status, _, err = _run(["bound", "--data", str(tmp_path / "flat.npy"), "--perp",
                           str(folder / "perp.npy")], capsys)
    assert status == 2 and "--data must be a 2-D array (rows x features)" in err


def test_bound_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bound", "--help"])
    assert exc.value.code == 0
    assert "--checkpoint" in capsys.readouterr().out


def test_bound_says_why_a_floor_is_vacuous(digit_files, capsys):
    folder, X, X_perp = digit_files
    status, out, err = _run(["bound", "--data", str(folder / "est.npy"), "--perp",
                             str(folder / "perp.npy"), *GRID, "--no-progress",
                             "--gamma", "0.1", "--gamma", "500"], capsys)
    assert status == 0, err
    rows = _rhos(out)
    assert rows[0] > 0 and rows[1] == 0
    note = [ln for ln in out.splitlines() if ln.startswith("note:")]
    assert len(note) == 1 and "vacuous" in note[0] and "500 bits" in note[0]
    assert "0.1 bits" not in note[0] and "--target-rho" in note[0]
    # the floor vanishes where the entropy term of eq. (13) meets the dither of every pair:
    # gamma_0 = max over pairs of h_lb - (k / 2) log2(2 pi e nu2 / k)
    ent = BlockEntropyLowerBound(block_sizes=[4, 8], nu2=(0.8, 1.6), progress=False,
                                 device="cpu").fit(X, X_perp=X_perp)
    gamma_0 = max(r["h_lb"] - r["k"] / 2 * np.log2(2 * np.pi * np.e * r["nu2"] / r["k"])
                  for r in ent.pairs_)
    edge = float(re.search(r"only up to ([\d.e+]+) bits", note[0]).group(1))
    assert edge == pytest.approx(gamma_0, rel=1e-3)


@pytest.mark.parametrize("shape, kind", [((10**7, 10**6), "huge header"), ((50, 8), "truncated")])
def test_bound_refuses_a_npy_declaring_more_than_it_holds(digit_files, tmp_path, capsys, shape,
                                                          kind):
    """A hundred bytes declaring 10**13 floats: refused in one line from the header, before
    numpy allocates the array (it used to raise MemoryError, a traceback)."""
    CASES["npy header"] += 1
    folder, _, _ = digit_files
    (tmp_path / "bad.npy").write_bytes(npy_declaring(shape, bytes(64)))
    status, _, err = _run(["bound", "--data", str(tmp_path / "bad.npy"), "--perp",
                           str(folder / "perp.npy")], capsys)
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--data declares shape {shape}" in err and "but the file holds 64" in err


def test_bound_reads_only_regular_files(digit_files, tmp_path, capsys):
    folder, _, _ = digit_files
    os.mkfifo(tmp_path / "fifo.npy")
    (tmp_path / "dir.npy").mkdir()
    for name, kind in (("fifo.npy", "a named pipe"), ("dir.npy", "a directory")):
        CASES["non-regular file (bound)"] += 1
        with deadline():
            status, _, err = _run(["bound", "--data", str(tmp_path / name), "--perp",
                                   str(folder / "perp.npy")], capsys)
        assert status == 2 and len(err.strip().splitlines()) == 1 and kind in err, err
