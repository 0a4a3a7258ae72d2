"""``python -m skdc demo``: the README's main job.

On scikit-learn's digits, ten participants obfuscate their rows; the table compares the test
balanced accuracy of C-GDP, unaligned I-GDP, reference-aligned I-GDP and noisy-anchor GOPP
alignment at a few anchor-noise levels, with the GOPP solver's diagnostics.
"""

# Licence: BSD 3 clause

import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from .alignment import GOPPAligner, ReferenceAligner, v_phase_transition
from .mechanisms import CGDP, IGDP

__all__ = ["register", "run_demo"]


def _pipelines(n_participants, noise_levels, seed):
    def clf():
        return LogisticRegression(max_iter=3000)

    yield "C-GDP", None, Pipeline([("gdp", CGDP(n_participants, random_state=seed)),
                                   ("clf", clf())])
    yield "I-GDP (unaligned)", None, Pipeline([("gdp", IGDP(n_participants, random_state=seed)),
                                              ("clf", clf())])
    yield "I-GDP + reference", None, Pipeline([("gdp", IGDP(n_participants, random_state=seed)),
                                               ("align", ReferenceAligner()), ("clf", clf())])
    for v in noise_levels:
        yield "I-GDP + GOPP", v, Pipeline([
            ("gdp", IGDP(n_participants, random_state=seed)),
            ("align", GOPPAligner(v=v, random_state=seed)),
            ("clf", clf()),
        ])


def run_demo(n_participants=10, noise_levels=(0.0, 0.02, 0.05, 0.1, 0.2, 0.4), seed=0,
             file=None):
    """Print the accuracy table of the demo and return its rows as dicts."""
    X, y = load_digits(return_X_y=True)
    X = StandardScaler().fit_transform(X) / np.sqrt(X.shape[1])
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=seed)
    d = X.shape[1]
    v_pt = v_phase_transition(n_participants, d, 4 * d)
    print(f"digits: {X_tr.shape[0]} train / {X_te.shape[0]} test rows, d={d}, "
          f"{n_participants} participants, anchor 4d={4 * d} rows, v_PT={v_pt:.4f}", file=file)
    header = f"{'method':<20} {'v':>6} {'v/v_PT':>7} {'bal.acc':>8} {'iters':>6} {'conv':>5}"
    print(header, file=file)
    print("-" * len(header), file=file)
    rows = []
    for name, v, pipe in _pipelines(n_participants, noise_levels, seed):
        start = time.perf_counter()
        with warnings.catch_warnings():
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


def _run(args):
    run_demo(n_participants=args.participants, seed=args.seed)


def register(subparsers):
    """Add the ``demo`` sub-command."""
    p = subparsers.add_parser(
        "demo", help="accuracy of C-GDP, I-GDP and aligned I-GDP on digits",
        description="On digits: C-GDP, unaligned I-GDP, reference and GOPP alignment at a few "
                    "anchor-noise levels.",
    )
    p.add_argument("--participants", type=int, default=10, help="number of participants")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.set_defaults(func=_run)
