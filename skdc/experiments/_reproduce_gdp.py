"""The GDP paper's solver convergence counts, reproduced from the anchors and the noise alone.

:func:`reproduce_gopp_convergence` counts how many anchor-noise draws the generalized power
method (GPM) brings to the paper's stopping rule (``10^-7`` within 500 iterations) and where
the transition lies, beside the empirical reference ``v_PT`` of eq. (51) of [1]_: Figure 4(b)
(MNIST sizes), Figure 9 (CelebA sizes) and the participant-count study of Figure 11. The GOPP
sees only the noisy anchor uploads ``B_i = A O_i + 1 Psi_i^T + v W_i``, so no data set is
needed: the counts depend on ``p``, ``h``, ``r`` and the draws of ``v``.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with
   Noisy-Anchor Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749,
   2026.
"""

# Licence: BSD 3 clause

import time
from numbers import Integral, Real

import numpy as np

from ..utils._docstring import Substitution
from ..utils._progress import progress_bar
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._reproduce import Reproduction

__all__ = ["reproduce_gopp_convergence"]

# the paper's settings (Sections 5.2.3, 5.3.2 and 5.3.3 of [1]): participants, width h after
# the public projection, anchor rows r, draws and the range of v ~ U(0, v_max)
_SETTINGS = {
    "mnist": {"figure": "Fig. 4(b)", "p": (10,), "h": 100, "r": 400, "draws": 200,
              "v_max": 0.5},
    "celeba": {"figure": "Fig. 9", "p": (10,), "h": 400, "r": 1600, "draws": 200,
               "v_max": 0.25},
    "participants": {"figure": "Fig. 11", "p": (2, 5, 10, 20, 50), "h": 400, "r": 1600,
                     "draws": 100, "v_max": 0.1},
}
# what the paper reports per participant count: converged of the draws, the largest converged
# and smallest capped v (Sec. 5.2.3: MNIST; Sec. 5.3.2: CelebA) and, for Fig. 11, the
# converged counts and the capped runs below v_PT (Sec. 5.3.3)
_PAPER = {
    "mnist": {10: {"converged": 50, "draws": 200, "largest_converged_v": 0.0809,
                   "smallest_capped_v": 0.0801, "v_pt": 0.0977, "capped_below_v_pt": None}},
    "celeba": {10: {"converged": 84, "draws": 200, "largest_converged_v": 0.0395,
                    "smallest_capped_v": 0.0390, "v_pt": None, "capped_below_v_pt": None}},
    "participants": {
        p: {"converged": c, "draws": 100, "largest_converged_v": None,
            "smallest_capped_v": None, "v_pt": v, "capped_below_v_pt": b}
        for p, c, v, b in zip((2, 5, 10, 20, 50), (23, 26, 32, 34, 40),
                              (0.03785, 0.04676, 0.05297, 0.05833, 0.06383),
                              (7, 12, 12, 19, 15))
    },
}


def _one_draw(A, p, v, seed):
    """One anchor-noise draw: the centered noisy uploads of ``p`` participants, solved by the
    plain GPM with the paper's stopping rule."""
    from ..alignment import solve_gopp
    from ..utils import haar_orthogonal

    rng = np.random.RandomState(seed)
    r, h = A.shape
    B = np.empty((p, r, h))
    for i in range(p):
        O = haar_orthogonal(h, random_state=rng)
        B[i] = A @ O + rng.standard_normal(h) + v * rng.standard_normal((r, h))
    B -= B.mean(axis=1, keepdims=True)  # the analyst centres each upload (eq. (26) of [1])
    start = time.perf_counter()
    res = solve_gopp(B, tol=1e-7, max_iter=500, acceleration=None)
    return {"v": v, "converged": bool(res.converged), "n_iter": int(res.n_iter),
            "fixed_point_residual": float(res.fixed_point_residual),
            "seconds": time.perf_counter() - start}


@Substitution(references=gdp_paper_references)
@validate_params(
    {"setting": [StrOptions(set(_SETTINGS))], "n_draws": [Interval(Integral, 1, None,
                                                                   closed="left"), None],
     "v_max": [Interval(Real, 0, None, closed="neither"), None],
     "n_participants": ["array-like", Interval(Integral, 2, None, closed="left"), None],
     "n_features": [Interval(Integral, 1, None, closed="left"), None],
     "n_anchors": [Interval(Integral, 2, None, closed="left"), None],
     "random_state": ["random_state"], "progress": ["boolean", StrOptions({"auto"})]},
    prefer_skip_nested_validation=True,
)
def reproduce_gopp_convergence(setting="mnist", *, n_draws=None, v_max=None,
                               n_participants=None, n_features=None, n_anchors=None,
                               random_state=0, progress="auto"):
    """How many anchor-noise draws the GPM solves, beside the GDP paper's counts (Figs 4b, 9, 11).

    Each draw samples ``v ~ U(0, v_max)``, a Haar rotation ``O_i`` and a translation ``Psi_i``
    per participant, uploads ``B_i = A O_i + 1 Psi_i^T + v W_i`` of one centered orthonormal
    anchor ``A`` (eq. (22) of [1]_, drawn once and shared by every draw, as in the paper) and
    runs the plain generalized power method from the spectral start with the paper's stopping
    rule (``||Pi(G R) - R||_F <= 10^-7`` within 500 iterations, Section 5 of [1]_;
    :func:`~skdc.alignment.solve_gopp` with ``acceleration=None``). It counts the draws that
    meet the rule, the largest converged and the smallest capped ``v``, and how they sit
    against the empirical reference ``v_PT`` of eq. (51) of [1]_. The GOPP sees only the
    anchor uploads, so no data set enters.

    Read more in the :ref:`User Guide <reproductions>`.

    Parameters
    ----------
    setting : {"mnist", "celeba", "participants"}, default="mnist"
        The paper's sizes: ``"mnist"`` (Fig. 4(b): ``p = 10``, ``h = 100``, ``r = 400``, 200
        draws of ``v ~ U(0, 0.5)``), ``"celeba"`` (Fig. 9: ``p = 10``, ``h = 400``,
        ``r = 1600``, 200 draws of ``v ~ U(0, 0.25)``) or ``"participants"`` (Fig. 11:
        ``p`` in 2, 5, 10, 20, 50 at the CelebA sizes, 100 draws of ``v ~ U(0, 0.1)`` each,
        paired across ``p`` by draw index).
    n_draws : int, default=None
        Draws per participant count (default: the paper's).
    v_max : float, default=None
        Upper end of the draws of ``v`` (default: the paper's).
    n_participants : int or array-like of int, default=None
        Participant counts (default: the setting's).
    n_features : int, default=None
        Width ``h`` (default: the setting's); smaller widths run the study in shape at a
        fraction of the cost (a capped draw at ``h = 400``, ``r = 1600`` costs about 16 times
        one at ``h = 100``, ``r = 400``).
    n_anchors : int, default=None
        Anchor rows ``r`` (default: the setting's).
    random_state : int, default=0
        Seeds the anchor and the draws (draw ``j`` uses seed ``random_state + j`` for every
        ``p``, so the draws are paired across participant counts as in Fig. 11 of [1]_).
    progress : bool or "auto", default="auto"
        A progress bar over the draws; ``"auto"`` shows it when stderr is a terminal.

    Returns
    -------
    reproduction : Reproduction
        ``table``: one row per participant count: ``p``, ``h``, ``r``, ``draws``, ``v_max``,
        ``converged``, its 95% Wilson interval ``low``/``high`` (as a count), the largest
        converged and smallest capped ``v``, ``v_pt``, the converged draws above ``v_pt``,
        the capped draws below it, and the paper's numbers beside them (``paper_*``, NaN
        where the paper gives none); ``extra_tables["draws"]``: one row per draw (``p``,
        ``v``, ``converged``, ``n_iter``, ``fixed_point_residual``, ``seconds``); the
        figure: iterations against ``v`` per ``p``, ``v_PT`` marked.

    See Also
    --------
    skdc.alignment.solve_gopp : The solver.
    skdc.alignment.v_phase_transition : The reference ``v_PT``.

    {references}

    Examples
    --------
    >>> from skdc.experiments import reproduce_gopp_convergence
    >>> rep = reproduce_gopp_convergence("mnist", n_draws=2, v_max=0.02, n_features=4,
    ...                                  n_anchors=16, progress=False)
    >>> rep.table[["p", "draws", "converged"]].values.tolist()
    [[10, 2, 2]]
    """
    import pandas as pd

    from ..alignment import v_phase_transition
    from ..anchors import orthonormal_anchor

    conf = _SETTINGS[setting]
    ps = conf["p"] if n_participants is None else tuple(
        int(p) for p in np.atleast_1d(n_participants))
    h = conf["h"] if n_features is None else int(n_features)
    r = conf["r"] if n_anchors is None else int(n_anchors)
    draws = conf["draws"] if n_draws is None else int(n_draws)
    v_top = conf["v_max"] if v_max is None else float(v_max)
    seed = int(random_state) if random_state is not None else 0
    A = orthonormal_anchor(r, h, random_state=seed)
    vs = np.random.RandomState(seed).uniform(0.0, v_top, size=draws)
    # largest noise first: the capped draws, the longest, start early (same results)
    jobs = [(p, j) for p in ps for j in np.argsort(-vs, kind="stable")]
    rows = []
    for p, j in progress_bar(jobs, progress, desc="gopp-convergence", unit="draw"):
        rows.append({"p": p, "draw": int(j), **_one_draw(A, p, float(vs[j]), seed + 1 + int(j))})
    per_draw = pd.DataFrame(rows).sort_values(["p", "draw"], kind="stable")
    summary = []
    for p in ps:
        d = per_draw[per_draw["p"] == p]
        v_pt = v_phase_transition(p, h, r)
        conv = d[d["converged"]]
        cap = d[~d["converged"]]
        low, high = _wilson(len(conv), len(d))
        paper = _PAPER[setting].get(p, {}) if (h, r) == (conf["h"], conf["r"]) else {}
        summary.append({
            "p": p, "h": h, "r": r, "draws": len(d), "v_max": v_top,
            "converged": len(conv), "low": low, "high": high,
            "largest_converged_v": conv["v"].max() if len(conv) else np.nan,
            "smallest_capped_v": cap["v"].min() if len(cap) else np.nan,
            "v_pt": v_pt, "converged_above_v_pt": int((conv["v"] > v_pt).sum()),
            "capped_below_v_pt": int((cap["v"] < v_pt).sum()),
            **{f"paper_{key}": (np.nan if paper.get(key) is None else paper[key])
               for key in ("converged", "draws", "largest_converged_v",
                           "smallest_capped_v", "v_pt", "capped_below_v_pt")},
        })
    table = pd.DataFrame(summary)
    return Reproduction("gopp-convergence", table, extra_tables={"draws": per_draw},
                        figure=_convergence_figure,
                        details={"setting": setting, "figure": conf["figure"]},
                        title=f"GPM convergence ({conf['figure']} of the GDP paper, "
                              f"h={h}, r={r})")


def _wilson(k, n, z=1.96):
    """95% Wilson score interval of a count ``k`` of ``n``, as counts."""
    if n == 0:
        return np.nan, np.nan
    phat = k / n
    den = 1 + z**2 / n
    mid = (phat + z**2 / (2 * n)) / den
    half = z * np.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2)) / den
    return float(n * max(mid - half, 0.0)), float(n * min(mid + half, 1.0))


def _convergence_figure(rep):
    import matplotlib.pyplot as plt

    draws = rep.extra_tables["draws"]
    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    for p, d in draws.groupby("p"):
        conv = d["converged"].to_numpy(bool)
        line = ax.plot(d["v"][conv], d["n_iter"][conv], "o", label=f"p={p} converged")[0]
        ax.plot(d["v"][~conv], d["n_iter"][~conv], "o", mfc="none", color=line.get_color(),
                label=f"p={p} capped at 500")
        v_pt = float(rep.table.loc[rep.table["p"] == p, "v_pt"].iloc[0])
        ax.axvline(v_pt, color=line.get_color(), ls=":", lw=1)
    ax.set_xlabel("anchor noise v (dotted: v_PT, eq. (51))")
    ax.set_ylabel("GPM iterations")
    ax.set_yscale("log")
    ax.set_title(rep.title, fontsize=9)
    ax.legend(fontsize=7)
    return fig
