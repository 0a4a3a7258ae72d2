"""``python -m skdc bound``: the provable reconstruction floor of a data set, from files.

Fits :class:`~skdc.privacy.BlockEntropyLowerBound` on an estimation sample and a disjoint
calibration sample (``.npy`` arrays or tables, read by :func:`skdc.datasets.load_rows`),
optionally checkpointing every grid pair so that a long run can be stopped and resumed, and
prints the floor ``rho*`` for the leakages asked for: given in bits (``--gamma``), charged by
DP-SGD runs (``--dpsgd Q SIGMA STEPS``, composed), or inverted into the noise multiplier that
certifies a target floor (``--target-rho``).
"""

# Licence: BSD 3 clause

import math
import time

__all__ = ["register_commands"]


def _number_list(text, kind, what):
    try:
        values = [kind(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(
            f"{what} must be a comma-separated list of numbers; got {text!r}."
        ) from None
    if not values:
        raise ValueError(f"{what} is empty.")
    return values


def _vacuous_note(bound, vacuous):
    """Why a floor is 0 at these leakages, and which leakage would give a floor above 0."""
    # rho*(gamma) is non-increasing and reaches 0 at a finite leakage (eq. 13 of the bound
    # paper: the entropy term 2^{2(h - gamma)/k} falls below the dither nu2 of every grid pair)
    target = min(1e-3, bound.rho_star(0.0)[0] / 2)  # called only when rho*(0) > 0
    edge = bound.max_leakage(target)
    half = bound.rho_star(edge / 2)[0]
    names = ", ".join(name for name, _ in vacuous)
    return (f"note: the floor is vacuous (rho* = 0: no attack is ruled out) for {names}: the "
            f"bound certifies rho* >= {target:.3g} only up to {edge:.4g} bits of leakage "
            f"(rho* = {half:.4f} at {edge / 2:.4g} bits). To make it informative, leak less: "
            "more DP-SGD noise or fewer steps (--target-rho RHO --q Q --steps T prints the "
            "noise a floor needs); or estimate on more --data rows")


def _dpsgd_accountant(args):
    """The accountant charged with every ``--dpsgd Q SIGMA STEPS`` run."""
    from . import DPSGDLeakageAccountant

    acct = DPSGDLeakageAccountant()
    for run in args.dpsgd or []:
        try:
            q, sigma, steps = float(run[0]), float(run[1]), int(run[2])
        except ValueError:
            raise ValueError(
                f"--dpsgd takes Q SIGMA STEPS (two numbers and an integer); got {' '.join(run)}."
            ) from None
        acct.add_run(q, sigma, steps)
    return acct


def _fit_entropy(args):
    """The entropy grid on ``--data``, calibrated on ``--perp``, with its timing line."""
    from ..datasets import load_rows
    from . import BlockEntropyLowerBound

    # a table, or a 2-D .npy array as saved (skdc.datasets.load_rows: the commands' one loader)
    X = load_rows(args.data, what="--data").data
    X_perp = load_rows(args.perp, what="--perp").data
    ent = BlockEntropyLowerBound(
        block_sizes=("divisors<=32" if args.block_sizes is None
                     else _number_list(args.block_sizes, int, "--block-sizes")),
        nu2=(0.2, 0.4, 0.8, 1.6, 3.2, 6.4) if args.nu2 is None
        else tuple(_number_list(args.nu2, float, "--nu2")),
        alpha=args.alpha, rotation=args.rotation, device=args.device,
        random_state=args.seed,
        progress="auto" if args.progress else False,
    )
    tic = time.perf_counter()
    ent.fit(X, X_perp=X_perp, checkpoint=args.checkpoint)
    print(f"entropy grid: {len(ent.pairs_)} pairs on {ent.n_samples_} x {ent.n_components_} "
          f"rows (padded to {ent.padded_dim_}), device {ent.device_}, "
          f"{time.perf_counter() - tic:.1f} s; confidence {1 - args.alpha:g}; "
          f"tr Sigma = {ent.trace_:.6g}")
    return ent


def _print_floors(bound, ent, leakages):
    """One table row per leakage; returns the leakages whose floor is vacuous."""
    per_feature = math.sqrt(ent.trace_ / ent.n_components_)
    print(f"{'leakage':<22} {'gamma (bits)':>12} {'rho*':>7} {'k*':>4} {'nu2*':>6} "
          f"{'RMSE floor / feature':>21}")
    vacuous = []
    for name, gamma in leakages:
        rho, k, nu2 = bound.rho_star(gamma)
        print(f"{name:<22} {gamma:12.5g} {rho:7.4f} {k or '-':>4} {nu2 or '-':>6} "
              f"{rho * per_feature:21.5g}")
        if rho == 0.0:
            vacuous.append((name, gamma))
    return vacuous


def _run_bound(args):
    from . import ReconstructionBound

    if args.target_rho is not None and (args.q is None or args.steps is None):
        raise ValueError("--target-rho needs the run's --q and --steps to solve for sigma.")
    acct = _dpsgd_accountant(args)
    ent = _fit_entropy(args)
    bound = ReconstructionBound(ent)
    leakages = [(f"{g:g} bits", float(g)) for g in args.gamma or []]
    if args.dpsgd:
        leakages.append((f"{len(args.dpsgd)} DP-SGD run(s)", acct.leakage_bits_))
    if not leakages and args.target_rho is None:
        leakages = [("no leakage", 0.0)]
    vacuous = _print_floors(bound, ent, leakages)
    if bound.rho_star(0.0)[0] == 0.0:
        print(f"note: the floor is 0 even without leakage: on {ent.n_samples_} rows the "
              "confidence margins exceed what the grid certifies; give more --data rows or a "
              "smaller grid")
    elif vacuous:
        print(_vacuous_note(bound, vacuous))
    if args.target_rho is not None:
        gamma = bound.max_leakage(args.target_rho)
        sigma = acct.calibrate_sigma(gamma, args.q, args.steps)
        print(f"a floor of rho* >= {args.target_rho:g} allows {gamma:.5g} bits: DP-SGD at "
              f"q = {args.q:g} for {args.steps} steps needs a noise multiplier >= {sigma:.6g}")


def register_commands(subparsers):
    """Add the ``bound`` sub-command of ``python -m skdc``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The sub-commands of the ``skdc`` parser (``parser.add_subparsers()``).

    Examples
    --------
    >>> import argparse
    >>> from skdc.privacy import register_commands
    >>> parser = argparse.ArgumentParser(prog="skdc")
    >>> register_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["bound", "--data", "X.npy", "--perp", "P.npy"])
    >>> args.perp
    'P.npy'
    """
    b = subparsers.add_parser(
        "bound", help="the provable reconstruction floor of a data set (entropy bound)",
        description="Estimate the block-entropy lower bound on --data (calibrated on the "
                    "disjoint --perp rows) and print the floor rho* on any attack's normalised "
                    "reconstruction error for the given leakages.",
    )
    b.add_argument("--data", required=True,
                   help="estimation rows (n x d): .npy, or a .csv / .parquet table with a header")
    b.add_argument("--perp", required=True,
                   help="calibration rows, disjoint from --data (at least d for eig): .npy, "
                        ".csv or .parquet")
    b.add_argument("--gamma", type=float, action="append",
                   help="a leakage in bits, repeatable (default: none; with no --gamma, --dpsgd "
                        "or --target-rho, the floor at no leakage)")
    b.add_argument("--dpsgd", nargs=3, action="append", metavar=("Q", "SIGMA", "STEPS"),
                   help="a DP-SGD run charged to the data, repeatable; runs compose "
                        "(default: none)")
    b.add_argument("--target-rho", type=float, default=None,
                   help="solve for the noise multiplier that certifies this floor (default: "
                        "none)")
    b.add_argument("--q", type=float, default=None,
                   help="sampling rate of the --target-rho run (default: none; required "
                        "with --target-rho)")
    b.add_argument("--steps", type=int, default=None,
                   help="steps of the --target-rho run (default: none; required with "
                        "--target-rho)")
    b.add_argument("--block-sizes", default=None,
                   help="comma-separated block sizes (default: the divisors of d up to 32)")
    b.add_argument("--nu2", default=None,
                   help="comma-separated dither levels (default: 0.2,0.4,0.8,1.6,3.2,6.4)")
    b.add_argument("--alpha", type=float, default=0.05,
                   help="failure probability of the bound (confidence 1 - alpha)")
    b.add_argument("--rotation", choices=["eig", "signs"], default="eig",
                   help="rotation before blocking: Hadamard times the eigenbasis of the "
                        "--perp covariance (needs >= d --perp rows), or Hadamard times random "
                        "signs (data-free)")
    b.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto",
                   help="where the entropy kernel runs (auto: CUDA when torch sees it)")
    b.add_argument("--checkpoint", default=None,
                   help="JSON file of finished grid pairs: a stopped run resumes from it "
                        "(default: none, no checkpoint)")
    b.add_argument("--no-progress", dest="progress", action="store_false",
                   help="hide the progress bar, which is shown when stderr is a terminal")
    b.add_argument("--seed", type=int, default=0, help="seed of the dithers")
    b.set_defaults(func=_run_bound)
