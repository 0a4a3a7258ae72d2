"""``python -m skdc demo``: the README's main job.

On scikit-learn's digits, ten participants obfuscate their rows. First a table compares the test
balanced accuracy of C-GDP, unaligned I-GDP, reference-aligned I-GDP and noisy-anchor GOPP
alignment at a few anchor-noise levels, with the GOPP solver's diagnostics. Then two
privacy-utility sweeps, one per kind of noise, as in the noisy-anchor paper's study: C-GDP with
private-data noise ``sigma`` (attacked by the known-secret inversion) and I-GDP with GOPP
alignment under anchor noise ``v`` (attacked by the MP, Procrustes and alignment-map
estimators), each over a grid of noise levels with several draws per level. Each draw trains its
own classifier and runs each attack once, scored twice: by the paper's metric, linkage privacy
(one minus the exact-source linkage accuracy of the reconstructions, Section 5.2.1 of the GDP
paper), and by the relative reconstruction error. The summary table is printed and
``frontier.png`` shows utility against the strongest attack in both metrics.

Rerunning the demo replaces its own picture: ``frontier.png`` carries a mark in its PNG
metadata (``Software: skdc demo``) by which a later run knows it. Any other file at ``--out``
(a photo, a figure of another program or of ``skdc sweep``) is refused in one line before any
work, unless ``--force``.
"""

# Licence: BSD 3 clause

import io
import os
import textwrap
import time
import warnings

import numpy as np

from .utils._files import peek_regular
from .utils._help import add_renamed_flag
from .utils._outputs import check_output, write_output

__all__ = ["register_commands", "run_demo", "run_demo_sweeps"]

_N_LEVELS, _N_DRAWS = 8, 3
# the demo's own figure says so in its PNG metadata: a rerun replaces it without --force
_MARK_KEY, _MARK = "Software", "skdc demo"
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_HEAD_BYTES = 1 << 16  # the metadata chunks matplotlib writes lie before the image data
# the two sweeps: private-data noise of C-GDP, anchor noise of I-GDP with GOPP alignment
_LABELS = ("C-GDP + private noise", "I-GDP + GOPP (anchor noise)")


def _grid(high, n_draws):
    """``n_draws`` evenly spaced noise levels in ``(0, high]`` (the noiseless control apart)."""
    return np.linspace(0.0, high, n_draws + 1)[1:]


def _clf():
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=3000)


def _pipelines(n_participants, noise_levels, seed):
    from sklearn.pipeline import Pipeline

    from .alignment import GOPPAligner, ReferenceAligner
    from .mechanisms import CGDP, IGDP

    yield "C-GDP", None, Pipeline([("gdp", CGDP(n_participants, random_state=seed)),
                                   ("clf", _clf())])
    yield "I-GDP (unaligned)", None, Pipeline([("gdp", IGDP(n_participants, random_state=seed)),
                                              ("clf", _clf())])
    yield "I-GDP + reference", None, Pipeline([("gdp", IGDP(n_participants, random_state=seed)),
                                               ("align", ReferenceAligner()), ("clf", _clf())])
    for v in noise_levels:
        yield "I-GDP + GOPP", v, Pipeline([
            ("gdp", IGDP(n_participants, random_state=seed)),
            ("align", GOPPAligner(v=v)),
            ("clf", _clf()),
        ])


def _digits(seed):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X) / np.sqrt(X.shape[1])
    return train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)


def run_demo(n_participants=10, noise_levels=(0.0, 0.02, 0.05, 0.1, 0.2, 0.4), seed=0,
             file=None):
    """Print the accuracy table of the demo and return its rows as dicts."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import balanced_accuracy_score
    from threadpoolctl import threadpool_limits

    from .alignment import v_phase_transition

    X_tr, X_te, y_tr, y_te = _digits(seed)
    d = X_tr.shape[1]
    v_pt = v_phase_transition(n_participants, d, 4 * d)
    print(f"digits: {X_tr.shape[0]} train / {X_te.shape[0]} test rows, d={d}, "
          f"{n_participants} participants, anchor 4d={4 * d} rows, v_PT={v_pt:.4f}", file=file)
    header = f"{'method':<20} {'v':>6} {'v/v_PT':>7} {'bal.acc':>8} {'iters':>6} {'conv':>5}"
    print(header, file=file)
    print("-" * len(header), file=file)
    rows = []
    for name, v, pipe in _pipelines(n_participants, noise_levels, seed):
        start = time.perf_counter()
        # small matrices: one BLAS thread is as fast and does not oversubscribe shared cores
        with threadpool_limits(limits=1), warnings.catch_warnings():
            # non-convergence above the phase transition is expected; the table shows it
            warnings.simplefilter("ignore", ConvergenceWarning)
            pipe.fit(X_tr, y_tr)
        acc = balanced_accuracy_score(y_te, pipe.predict(X_te))
        align = pipe.named_steps.get("align")
        n_iter = getattr(align, "n_iter_", None)
        conv = getattr(align, "converged_", None)
        rows.append({"method": name, "v": v, "balanced_accuracy": acc, "n_iter": n_iter,
                     "converged": conv, "seconds": time.perf_counter() - start})
        print(f"{name:<20} {'' if v is None else f'{v:.3f}':>6} "
              f"{'' if v is None else f'{v / v_pt:.2f}':>7} {acc:>8.3f} "
              f"{'' if n_iter is None else n_iter:>6} {'' if conv is None else str(conv):>5}",
              file=file)
    return rows


def _attacks_available(file):
    """Whether the attacks can run here (skdc.metrics imports); else say so."""
    try:
        from .metrics import make_attack_scorer  # noqa: F401
    except ImportError:
        print("note: skdc.metrics (the attacks) is not available here, so the sweeps report "
              "utility only and the plot shows utility against the noise.", file=file)
        return False
    return True


def run_demo_sweeps(n_participants=10, n_levels=_N_LEVELS, n_draws=_N_DRAWS, seed=0,
                    out="frontier.png", n_jobs=None, file=None, progress="auto", force=True):
    """Run the demo's two privacy-utility sweeps, print their summary and draw ``out``.

    Each sweep runs ``n_levels`` evenly spaced noise levels with ``n_draws`` draws each
    (:func:`skdc.experiments.sweep_private_and_anchor_noise` on digits). Returns the
    concatenated sweep table, with the columns ``strongest`` (the lowest relative error of
    the draw's attacks) and ``strongest_linkage`` (the lowest linkage privacy). ``out`` is
    written through skdc's file boundary (whole, never through a link); with ``force=False``
    (the command without ``--force``) an existing ``out`` is replaced only when it is a
    figure the demo wrote.
    """
    try:
        import matplotlib  # noqa: F401
        import pandas  # noqa: F401
    except ImportError as exc:
        raise ImportError(f"the demo's sweeps need the experiments extra ({exc}): "
                          "pip install 'skdc[experiments]'") from exc
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.pipeline import Pipeline

    from .alignment import GOPPAligner, v_phase_transition
    from .experiments import sweep_private_and_anchor_noise
    from .mechanisms import CGDP, IGDP

    X_tr, X_te, y_tr, y_te = _digits(seed)
    d = X_tr.shape[1]
    v_pt = v_phase_transition(n_participants, d, 4 * d)
    rms = float(np.sqrt(np.mean(X_tr**2)))
    attacks = _attacks_available(file)
    # private-data noise up to sigma = 4 RMS(X), anchor noise up to 2.5 v_PT (the noisy-anchor
    # paper draws lambda ~ U[0, 4] and v ~ U[0, 0.5], its Section 5.2; with few draws an even
    # grid covers the range better); linkage through a PCA embedding of the target's clean
    # rows: no torch needed, and the same auditor for every draw (the paper's CNN auditor is
    # what `reproduce mnist-sweep` uses)
    results = sweep_private_and_anchor_noise(
        Pipeline([("gdp", CGDP(n_participants, random_state=seed)), ("clf", _clf())]),
        Pipeline([("gdp", IGDP(n_participants, random_state=seed)),
                  ("align", GOPPAligner()), ("clf", _clf())]),
        X_tr, y_tr, X_te, y_te, noise_values=_grid(4 * rms, n_levels),
        v_values=_grid(2.5 * v_pt, n_levels), n_draws=n_draws, attacks=attacks,
        auditor="pca", labels=_LABELS, random_state=seed, n_jobs=n_jobs,
        progress=progress)
    unaligned = Pipeline([("gdp", IGDP(n_participants, random_state=seed)), ("clf", _clf())])
    results.attrs["I-GDP (unaligned)"] = balanced_accuracy_score(
        y_te, unaligned.fit(X_tr, y_tr).predict(X_te))
    _print_summary(results, attacks, v_pt, file)
    if out:
        _plot(results, attacks, v_pt, out, force)
        print(f"wrote {out}", file=file)
    return results


_SHORT = {"balanced_accuracy": "bal.acc", "strongest": "rel.err", "strongest_linkage": "link.pr"}


def _print_summary(results, with_attacks, v_pt, file):
    n_sweeps, n_levels = results["method"].nunique(), results.groupby("method")["value"].nunique()
    n_draws = int(results.groupby(["method", "value"]).size().max())
    print(f"\nprivacy-utility sweeps: {n_sweeps} sweeps x {int(n_levels.max())} noise levels x "
          f"{n_draws} draws = {results.shape[0]} fits, one classifier each; means over the "
          "draws of a level.\n"
          "rel.err: the strongest attack's relative reconstruction error; link.pr: its linkage "
          "privacy,\n1 - exact-source linkage accuracy (a blind guess scores 0.9). Higher = more "
          "private.",
          file=file)
    cols = ["balanced_accuracy", *(["strongest", "strongest_linkage"] if with_attacks else [])]
    header = f"{'method':<28} {'noise':>12} " + " ".join(
        f"{_SHORT[c]:>8}" for c in cols) + f" {'conv':>5}"
    print(header, file=file)
    print("-" * len(header), file=file)
    for method, frame in results.groupby("method", sort=False):
        name = frame["param"].iloc[0].split("__")[-1]
        for value, part in frame.groupby("value"):
            ok = part["converged"].dropna() if "converged" in part else part.iloc[:0]
            conv = f"{ok.astype(float).mean():.0%}" if len(ok) else ""
            print(f"{method:<28} {name + f' {value:.3f}':>12} "
                  + " ".join(_cell(part[c].mean()) for c in cols) + f" {conv:>5}", file=file)
    print(f"(I-GDP unaligned: bal.acc {results.attrs['I-GDP (unaligned)']:.3f}; v_PT = "
          f"{v_pt:.4f}; conv = share of GOPP runs that met the stopping rule)", file=file)


def _cell(value):
    return f"{'':>8}" if np.isnan(value) else f"{value:>8.3f}"


# one colour per sweep in every panel; the references in grey
_PALETTE = dict(zip(_LABELS, ("C0", "C1")))
_CHANCE = "chance accuracy (10 classes)"


def _caption(results, v_pt):
    n_levels = int(results.groupby("method")["value"].nunique().max())
    n_draws = int(results.groupby(["method", "value"]).size().max())
    return (
        f"Digits, {n_levels} noise levels x {n_draws} draws per sweep; a point is one draw "
        "(its own noise and classifier). Lines: cubic splines of the draws, fitted monotone "
        "(accuracy only falls as the noise, and the privacy, grow), with at most half as many "
        "coefficients as noise levels. Shaded: 95% bootstrap bands, the draws resampled "
        "within each noise level.\n"
        f"v_PT = {v_pt:.3f}: the anchor noise above which GOPP's solver often misses the "
        "global alignment (eq. (51) of the GDP paper); accuracy then falls toward the "
        "unaligned baseline."
    )


def _plot(results, with_attacks, v_pt, out, force=True):
    refs = {"I-GDP unaligned (no anchor)": results.attrs["I-GDP (unaligned)"], _CHANCE: 0.1}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from .experiments import plot_frontier, plot_noise_curves

    fig, axes = plt.subplots(1, 3, figsize=(15, 5.6), sharey=True, layout="constrained")
    common = dict(n_boot=500, references=refs, monotone="auto", palette=_PALETTE)
    if with_attacks:
        plot_frontier(results, "strongest_linkage", "balanced_accuracy", ax=axes[0],
                      xlabel="strongest attack's linkage privacy = 1 - linkage accuracy\n"
                             "(higher = more private; a blind guess would score 0.9)",
                      title="frontier in the paper's metric (linkage)", **common)
        plot_frontier(results, "strongest", "balanced_accuracy", ax=axes[1],
                      xlabel="strongest attack's relative reconstruction error\n"
                             "(higher = more private)",
                      title="frontier in relative reconstruction error", **common)
    else:
        plot_noise_curves(results[results["param"] == "gdp__noise"], "balanced_accuracy",
                          ax=axes[0], xlabel="private-data noise sigma",
                          title="C-GDP with private-data noise", **common)
        axes[1].set_visible(False)
    gopp = results[results["param"] == "align__v"]
    # v_PT is labelled where no reference line or curve runs (never on the chance line)
    plot_noise_curves(gopp, "balanced_accuracy", ax=axes[2], x_references={"v_PT": v_pt},
                      xlabel="anchor noise v", title="GOPP alignment against anchor noise",
                      **common)
    handles = {}
    for ax in axes:
        ax.set_ylim(0.0, 1.0)  # accuracy in every panel, on one scale
        ax.set_ylabel("")
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    axes[0].set_ylabel("test balanced accuracy")
    handles[f"v_PT = {v_pt:.3f} (see below)"] = Line2D([], [], color="0.5", linestyle=":")
    handles["shaded: 95% bootstrap band over the draws"] = Patch(facecolor="0.55", alpha=0.35,
                                                                 linewidth=0)
    # one legend for the three panels, above them: it covers no line
    fig.legend(list(handles.values()), list(handles), loc="outside upper center", ncols=3,
               frameon=False, fontsize="small")
    caption = "\n".join(textwrap.fill(part, 190) for part in _caption(results, v_pt).split("\n"))
    fig.supxlabel(caption, fontsize="small", x=0.01, ha="left")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, metadata={_MARK_KEY: _MARK})
    plt.close(fig)
    _check_out(out, force)  # again: a file may have appeared during the sweeps
    write_output(out, buf.getvalue(), "--out")  # whole, never through a link


def _is_demo_figure(path):
    """Whether ``path`` is a regular file (not a link) holding a PNG the demo wrote: its
    metadata before the image data says ``Software: skdc demo``."""
    fh = peek_regular(path)
    if fh is None:
        return False
    with fh:
        head = fh.read(_PNG_HEAD_BYTES)
    if not head.startswith(_PNG_SIGNATURE):
        return False
    at = len(_PNG_SIGNATURE)
    while at + 8 <= len(head):
        size, kind = int.from_bytes(head[at:at + 4], "big"), head[at + 4:at + 8]
        if kind == b"IDAT":
            return False
        if kind == b"tEXt":
            key, _, text = head[at + 8:at + 8 + size].partition(b"\0")
            if key == _MARK_KEY.encode() and text == _MARK.encode():
                return True
        at += 12 + size
    return False


def _check_out(out, force):
    """Refuse an ``--out`` the demo must not write: a folder, one under a file, an input or an
    skdc file of another kind (always), or an existing file that is not the demo's own
    figure (without ``--force``)."""
    check_output(out, "--out")
    if force or not os.path.lexists(out) or _is_demo_figure(out):
        return
    raise ValueError(f"{out}: --out already exists and is not a figure the demo wrote (its PNG "
                     f"metadata lacks '{_MARK_KEY}: {_MARK}'); refusing to replace it. Pass "
                     "--force to replace it, or choose another --out.")


def _run(args):
    for flag, value in (("--levels", args.levels), ("--draws", args.draws)):
        if value < 1:
            raise ValueError(f"{flag} must be at least 1; got {value}.")
    if not args.table_only:
        _check_out(args.out, args.force)  # before any work: a folder under a file, say
    run_demo(n_participants=args.n_participants, seed=args.seed)
    if not args.table_only:
        run_demo_sweeps(n_participants=args.n_participants, n_levels=args.levels,
                        n_draws=args.draws, seed=args.seed, out=args.out, n_jobs=args.n_jobs,
                        force=args.force)


def register_commands(subparsers):
    """Add the ``demo`` sub-command of ``python -m skdc``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The sub-commands of the ``skdc`` parser (``parser.add_subparsers()``).

    Examples
    --------
    >>> import argparse
    >>> from skdc._demo import register_commands
    >>> parser = argparse.ArgumentParser(prog="skdc")
    >>> register_commands(parser.add_subparsers(dest="command"))
    >>> args = parser.parse_args(["demo", "--table-only"])
    >>> args.table_only
    True
    """
    p = subparsers.add_parser(
        "demo", help="digits: accuracy table, privacy-utility sweeps and frontier.png",
        description="On digits: C-GDP, unaligned I-GDP, reference and GOPP alignment at a few "
                    "anchor-noise levels; then sweeps over private-data noise (C-GDP) and "
                    "anchor noise (GOPP), each of LEVELS noise levels x DRAWS draws (with the "
                    f"defaults {_N_LEVELS} x {_N_DRAWS} = {_N_LEVELS * _N_DRAWS} fits per sweep, "
                    f"{2 * _N_LEVELS * _N_DRAWS} in all),"
                    " with the attacks scored in linkage privacy and relative error, a summary "
                    "table and frontier.png.",
    )
    add_renamed_flag(p, "--n-participants", "--participants", type=int, default=10,
                     help="number of participants")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--levels", type=int, default=_N_LEVELS,
                   help="noise levels per sweep (evenly spaced)")
    p.add_argument("--draws", type=int, default=_N_DRAWS,
                   help="draws per noise level, each with its own noise and classifier")
    p.add_argument("--out", default="frontier.png", help="where to write the figure")
    p.add_argument("--n-jobs", type=int, default=-1,
                   help="parallel draws (joblib n_jobs; -1 = all cores)")
    p.add_argument("--table-only", action="store_true",
                   help="print only the accuracy table, no sweeps")
    p.add_argument("--force", action="store_true",
                   help="replace whatever file is at --out; without it only a figure an "
                        "earlier demo wrote is replaced, any other file refused")
    p.set_defaults(func=_run)
