"""Shared by the protocol's tests: a guard against hanging readers (tests/_fuzz.py), the command
line run in process, and a small deployment made through it."""

import numpy as np

from skdc.__main__ import main
from tests._fuzz import deadline

__all__ = ["D", "P", "deadline", "deploy", "run_cli", "upload_argv"]

P, D = 3, 4  # participants and features of the command-line deployments


def run_cli(argv, capsys, *, seed_warning=False):
    """``skdc ARGV`` in process, under the deadline: ``(status, stdout, stderr)``.

    The test deployments upload with chosen seeds (bit-for-bit tests), about which the analyst
    warns; that warning's line is left out of ``stderr`` unless ``seed_warning``.
    """
    with deadline():
        status = main([str(a) for a in argv])
    out = capsys.readouterr()
    err = out.err
    if not seed_warning:
        err = "".join(ln for ln in err.splitlines(keepends=True) if CHOSEN_SEED not in ln)
    return status, out.out, err


#: What the analyst's warning about an upload made with a chosen seed says.
CHOSEN_SEED = "made with a chosen seed"


def upload_argv(site, i, **over):
    """``participant upload`` of participant ``i`` of the deployment in the folder ``site``.

    ``over`` (``**{"--out": path}``) replaces a flag's value, adds a flag, or drops one
    (``None``).
    """
    args = {"--id": i, "--n-participants": P, "--data": site / f"X{i}.npy",
            "--labels": site / f"y{i}.npy", "--anchor": site / "anchor.npy",
            "--anchor-noise": 0.05, "--secret-out": site / f"secret{i}.npz",
            "--out": site / "uploads" / f"upload_{i}.npz"}
    args.update(over)
    argv = ["participant", "upload"]
    for k, v in args.items():
        if v is not None:
            argv += [k, v]
    return argv


def deploy(site, *, n_rows=20, labels=None, seeds=None):
    """A deployment made by the command line in the folder ``site``; the upload paths.

    Each participant ``i`` gets ``n_rows`` random rows ``X{i}.npy`` and their labels
    ``y{i}.npy`` (random, or ``labels(X)``); then ``X_test.npy``, the shared ``anchor.npy`` and
    each participant's ``secret{i}.npz`` and ``uploads/upload_{i}.npz`` (secret seed
    ``seeds[i]`` when given).
    """
    rng = np.random.RandomState(0)
    for i in range(P):
        X = rng.rand(n_rows, D)
        np.save(site / f"X{i}.npy", X)
        np.save(site / f"y{i}.npy", rng.randint(2, size=n_rows) if labels is None else labels(X))
    np.save(site / "X_test.npy", rng.rand(5, D))
    assert main(["anchor", "make", "--n-features", str(D), "--seed", "1",
                 "--out", str(site / "anchor.npy")]) == 0
    (site / "uploads").mkdir()
    for i in range(P):
        seed = ({} if seeds is None else
                {"--seed": seeds[i], "--noise-seed": seeds[i] + 1000})
        assert main([str(a) for a in upload_argv(site, i, **seed)]) == 0
    return [str(site / "uploads" / f"upload_{i}.npz") for i in range(P)]
