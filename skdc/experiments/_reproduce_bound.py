"""The reconstruction-bound paper's MNIST attack experiment (Tables 3 and 6, Figures 6 and 9).

:func:`reproduce_bound_attack` splits 8-bit images into the partitions of App. F.4 of [1]_
(``D_perp`` fixes the rotation and the reference scale, ``D_est`` carries the entropy bound,
``D_shadow`` is the attack's candidate prior, 100 held-out targets), estimates the entropy
lower bound and the floor ``rho*`` (Theorem 5.1 of [1]_), and attacks a DP-SGD release of a
linear layer at matched leakage with the prior-aware likelihood attack of App. G.5, one
full-batch step (``q = 1``) and a subsampled trajectory (``q = 0.02``, ``T = 100``). It
returns Table 3's reference scale, Table 6's attack errors beside the bound, Figure 6's
per-target spread and Figure 9's reconstructions.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np

from ..utils._progress import progress_bar
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._reproduce import Reproduction

__all__ = ["reproduce_bound_attack"]

# Figure 9's leakages (bits); Table 6 reports the four of them marked in _TABLE6
_LEAKAGES = (0.2, 0.72, 2.89, 8.01, 30.0, 72.13, 500.0)
# Table 6 of [1], MNIST pixel: rho of the attack at q = 1 and at (q, T) = (0.02, 100), and the
# bound rho*, over 100 targets (bootstrap standard errors 0.013-0.024)
_TABLE6 = {0.72: (0.987, 1.006, 0.831), 2.89: (0.948, 0.984, 0.673),
           8.01: (0.848, 0.921, 0.397), 72.13: (0.620, 0.690, 0.0)}
_TABLE6_SE = 0.024  # the largest bootstrap standard error the paper reports for Table 6
# Figure 9 of [1], MNIST pixel: the single-step attack's rho (mean over 100 targets), as
# printed above each column (two decimals)
_FIG9 = {0.2: 1.00, 0.72: 0.99, 2.89: 0.95, 8.01: 0.85, 30.0: 0.65, 72.13: 0.62, 500.0: 0.62}
# Table 3 of [1], MNIST pixel: tr Sigma, the UCB margin and RMSE_prior / sqrt(d) (grey levels)
_TABLE3 = {"trace": 3.43e6, "ucb_margin": 0.025, "rmse_per_pixel": 66.2}
_CONFIGS = ((1.0, 1), (0.02, 100))


@validate_params(
    {"X": ["array-like"], "leakages": ["array-like"],
     "n_targets": [Interval(Integral, 2, None, closed="left")],
     "n_perp": [Interval(Integral, 4, None, closed="left")],
     "n_est": [Interval(Integral, 2, None, closed="left")],
     "block_sizes": ["array-like"], "nu2": ["array-like"],
     "max_grad_norm": [Interval(Real, 0, None, closed="neither")],
     "n_bootstrap": [Interval(Integral, 2, None, closed="left")],
     "random_state": ["random_state"], "progress": ["boolean", StrOptions({"auto"})]},
    prefer_skip_nested_validation=True,
)
def reproduce_bound_attack(X, *, leakages=_LEAKAGES, n_targets=100, n_perp=1000, n_est=2000,
                           block_sizes=(1, 4, 14, 28), nu2=(0.2, 0.8, 3.2), max_grad_norm=0.3,
                           n_bootstrap=1000, random_state=0, progress="auto"):
    """The bound against the attack on MNIST pixels (Tables 3 and 6, Figs 6 and 9 of [1]_).

    The rows are split at random into ``n_targets`` held-out targets, a calibration sample
    ``D_perp`` of ``n_perp`` rows and the rest, the shadow sample ``D_shadow`` (the attack's
    candidates and centring mean); the entropy is estimated on the first ``n_est`` shadow rows
    (``D_est`` may overlap ``D_shadow`` and the targets may not, App. F.4 of [1]_).

    * Table 3: ``tr Sigma_hat`` on ``D_perp``, its empirical-Bernstein upper confidence bound
      (App. G.2, :func:`~skdc.privacy.trace_ucb` with ``B = 255^2 d``) as a margin over the
      point estimate, and ``RMSE_prior / sqrt(d) = sqrt(tr Sigma_hat / d)``.
    * The floor ``rho*(gamma)``: :class:`~skdc.privacy.BlockEntropyLowerBound` on ``D_est``
      with the rotation and scale of ``D_perp`` and the grid ``block_sizes x nu2`` (fixed
      before any estimate), then :class:`~skdc.privacy.ReconstructionBound`.
    * Table 6 and Figs 6 and 9: at each leakage ``gamma`` the noise multiplier that makes
      Theorem 4.1 charge the target ``gamma`` bits (:class:`~skdc.privacy.DPSGDLeakageAccountant`)
      for ``(q, T) = (1, 1)`` and ``(0.02, 100)``, the release of each target's clipped
      gradient (``C = 0.3``) and the posterior-mean attack on it
      (:class:`~skdc.attacks.PriorAwareLikelihoodAttack`, App. G.5); ``rho`` is the root of
      the mean squared error over ``tr Sigma_hat`` of Table 3, with a bootstrap standard
      error over the targets, the 10-90th percentiles of the per-target ratio and the share
      of targets below the bound (Fig. 6).

    Read more in the :ref:`User Guide <reproductions>`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Images on the raw 8-bit grid (grey levels 0-255), flattened.
    leakages : array-like of float, default=(0.2, 0.72, 2.89, 8.01, 30, 72.13, 500)
        Leakages ``gamma`` in bits (Fig. 9's; Table 6 reports 0.72, 2.89, 8.01 and 72.13).
    n_targets : int, default=100
        Held-out targets (the paper's 100).
    n_perp : int, default=1000
        Calibration rows ``D_perp`` (at least ``n_features`` for the eigenbasis rotation;
        the paper's 10,000).
    n_est : int, default=2000
        Estimation rows ``D_est`` (the paper's 59,000; the plug-in's cost grows as its square).
    block_sizes : array-like of int, default=(1, 4, 14, 28)
        Block sizes of the entropy grid (the paper's divisors of 784 up to 32).
    nu2 : array-like of float, default=(0.2, 0.8, 3.2)
        Dither levels of the grid (the paper's 0.2, 0.4, ..., 6.4).
    max_grad_norm : float, default=0.3
        The clipping norm ``C`` (App. G.5).
    n_bootstrap : int, default=1000
        Bootstrap resamples of the targets for the standard error of ``rho``.
    random_state : int, default=0
        Seeds the split, the entropy estimate and the releases.
    progress : bool or "auto", default="auto"
        A progress bar over leakages x configurations.

    Returns
    -------
    reproduction : Reproduction
        ``table``: one row per leakage and configuration: ``gamma``, ``q``, ``T``, ``sigma``,
        ``rho``, ``se``, ``low``/``high`` (``rho +- 1.96 se``), ``p10``/``p90`` of the
        per-target ratio, ``below_bound`` (share of targets under ``rho*``), ``bound``, and
        the paper's ``paper_rho`` (Table 6, else Fig. 9's two decimals at ``q = 1``) and
        ``paper_bound`` (NaN where it reports none); ``extra_tables["table3"]``: the
        reference scale beside Table 3; ``details["gallery"]``: six targets and their
        ``q = 1`` reconstructions at each leakage (Fig. 9); the figure: the per-target spread
        (Fig. 6) above the reconstructions (Fig. 9).

    References
    ----------
    .. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An
       Information-Theoretic Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.experiments import reproduce_bound_attack
    >>> X = np.random.RandomState(0).randint(0, 256, size=(120, 16)).astype(float)
    >>> rep = reproduce_bound_attack(X, leakages=[8.01], n_targets=10, n_perp=30, n_est=40,
    ...                              block_sizes=[1], nu2=[0.2], n_bootstrap=20,
    ...                              progress=False)
    >>> rep.table[["gamma", "q", "T"]].values.tolist()
    [[8.01, 1.0, 1.0], [8.01, 0.02, 100.0]]
    """
    import pandas as pd

    from ..privacy import DPSGDLeakageAccountant

    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n_targets + n_perp + 2 > n:
        raise ValueError(f"n_targets={n_targets} and n_perp={n_perp} leave no shadow rows of "
                         f"the {n} given; lower them.")
    seed = int(random_state) if random_state is not None else 0
    targets, perp, shadow, est = _partitions(X, n_targets, n_perp, n_est, seed)
    trace, ucb, table3 = _reference_scale(perp, seed)
    bound = _entropy_floor(est, perp, block_sizes, nu2, seed)
    acct = DPSGDLeakageAccountant()
    rng = np.random.RandomState(seed)
    boots = rng.randint(0, n_targets, size=(n_bootstrap, n_targets))
    gallery_rows = np.arange(min(6, n_targets))
    gallery = {"targets": targets[gallery_rows], "leakages": [], "images": [], "rho": []}
    rows = []
    jobs = [(float(g), q, T) for g in np.atleast_1d(leakages) for q, T in _CONFIGS]
    for gamma, q, T in progress_bar(jobs, progress, desc="bound-attack", unit="attack"):
        sigma = acct.calibrate_sigma(gamma, q=q, steps=T)
        X_hat = _release_and_attack(targets, shadow, sigma, q, T, max_grad_norm, seed)
        rows.append(_attack_row(gamma, q, T, sigma, targets, X_hat, trace, boots,
                                bound.rho_star(gamma)[0]))
        if q == 1.0:
            gallery["leakages"].append(gamma)
            gallery["images"].append(X_hat[gallery_rows])
            gallery["rho"].append(rows[-1]["rho"])
    table = pd.DataFrame(rows)
    details = {"gallery": gallery, "trace": trace, "trace_ucb": ucb, "sizes": {
        "targets": n_targets, "perp": len(perp), "shadow": len(shadow), "est": len(est)},
        "grid": (list(block_sizes), list(nu2)), "paper_se": _TABLE6_SE}
    return Reproduction("bound-attack", table, extra_tables={"table3": table3},
                        details=details, figure=_bound_figure,
                        title="Attack vs bound on MNIST pixels (Tables 3, 6; Figs 6, 9)")


def _partitions(X, n_targets, n_perp, n_est, seed):
    """The random split of App. F.4 of the paper: the held-out targets, ``D_perp``, ``D_shadow``
    (the rest) and ``D_est`` (the first ``n_est`` shadow rows)."""
    perm = np.random.RandomState(seed).permutation(X.shape[0])
    targets = X[perm[:n_targets]]
    perp = X[perm[n_targets:n_targets + n_perp]]
    shadow = X[perm[n_targets + n_perp:]]
    return targets, perp, shadow, shadow[:n_est]


def _reference_scale(perp, seed):
    """Table 3: ``tr Sigma_hat`` on ``D_perp``, its empirical-Bernstein UCB (App. G.2 of the
    paper) and the table beside the paper's numbers."""
    import pandas as pd

    from ..privacy import trace_ucb

    d = perp.shape[1]
    trace = float(np.trace(np.cov(perp, rowvar=False)))
    ucb = trace_ucb(perp, diameter_sq=255.0**2 * d, random_state=seed)
    table3 = pd.DataFrame([
        {"quantity": "tr Sigma_hat", "measured": trace, "paper": _TABLE3["trace"]},
        {"quantity": "UCB margin", "measured": ucb / trace - 1, "paper": _TABLE3["ucb_margin"]},
        {"quantity": "RMSE_prior / sqrt(d)", "measured": np.sqrt(trace / d),
         "paper": _TABLE3["rmse_per_pixel"]},
    ])
    return trace, ucb, table3


def _entropy_floor(est, perp, block_sizes, nu2, seed):
    """The floor ``rho*`` of Theorem 5.1 of the paper: the block entropy lower bound on ``D_est``,
    with the rotation and scale of ``D_perp``, over the grid ``block_sizes x nu2``."""
    from ..privacy import BlockEntropyLowerBound, ReconstructionBound

    ent = BlockEntropyLowerBound(block_sizes=[int(k) for k in block_sizes],
                                 nu2=tuple(float(v) for v in nu2), device="cpu",
                                 diameter_sq=255.0**2 * est.shape[1], random_state=seed,
                                 progress=False).fit(est, X_perp=perp)
    return ReconstructionBound(ent)


def _release_and_attack(targets, shadow, sigma, q, T, max_grad_norm, seed):
    """Each target's DP-SGD release at noise multiplier ``sigma`` and the prior-aware
    likelihood attack's reconstruction of it, the shadow rows its prior (App. G.5 of the paper)."""
    from ..attacks import PriorAwareLikelihoodAttack

    attack = PriorAwareLikelihoodAttack(sigma, max_grad_norm=max_grad_norm, sample_rate=q,
                                        steps=T, random_state=seed).fit(shadow)
    return attack.release_and_attack(targets)


def _attack_row(gamma, q, T, sigma, targets, X_hat, trace, boots, floor):
    """Table 6's row of one leakage and configuration: ``rho``, the root of the targets' mean
    squared error over ``tr Sigma_hat``, its bootstrap standard error, Fig. 6's spread, the
    share below the bound ``floor``, and the paper's numbers."""
    err = np.sum((targets - X_hat) ** 2, axis=1) / trace
    rho = float(np.sqrt(err.mean()))
    se = float(np.std(np.sqrt(err[boots].mean(axis=1)), ddof=1))
    per = np.sqrt(err)
    paper = _TABLE6.get(round(gamma, 2))
    paper_rho = (paper[0] if q == 1.0 else paper[1]) if paper else (
        _FIG9.get(round(gamma, 2), np.nan) if q == 1.0 else np.nan)
    return {"gamma": gamma, "q": q, "T": T, "sigma": sigma, "rho": rho, "se": se,
            "low": rho - 1.96 * se, "high": rho + 1.96 * se,
            "p10": float(np.percentile(per, 10)), "p90": float(np.percentile(per, 90)),
            "below_bound": float(np.mean(per < floor)), "bound": floor,
            "paper_rho": paper_rho, "paper_bound": paper[2] if paper else np.nan}


def _bound_figure(rep):
    """Fig. 6 (per-target spread against the bound) above Fig. 9 (reconstructions)."""
    import matplotlib.pyplot as plt

    t = rep.table
    gal = rep.details["gallery"]
    fig = plt.figure(figsize=(9, 8), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 1.1])
    ax = top.subplots()
    for (q, T), d in t.groupby(["q", "T"], sort=False):
        label = "single step (q=1)" if q == 1.0 else f"subsampled (q={q:g}, T={T:g})"
        line = ax.plot(d["gamma"], d["rho"], "o-" if q == 1.0 else "x--", label=label)[0]
        ax.fill_between(d["gamma"], d["p10"], d["p90"], color=line.get_color(), alpha=0.15)
    b = t.drop_duplicates("gamma")
    ax.plot(b["gamma"], b["bound"], "k-", lw=2, label="bound rho*")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.2)
    ax.set_xlabel("leakage gamma (bits)")
    ax.set_ylabel("rho (shaded: 10-90th percentile)")
    ax.set_title(rep.title, fontsize=10)
    ax.legend(fontsize=8)
    side = int(round(np.sqrt(gal["targets"].shape[1])))
    if side * side == gal["targets"].shape[1] and gal["images"]:
        rows = []
        for i in range(gal["targets"].shape[0]):
            cells = [gal["targets"][i]] + [img[i] for img in gal["images"]]
            rows.append(np.hstack([np.clip(c, 0, 255).reshape(side, side) for c in cells]))
        axg = bottom.subplots()
        axg.imshow(np.vstack(rows), cmap="gray", vmin=0, vmax=255)
        axg.set_xticks([side * (j + 0.5) for j in range(len(gal["images"]) + 1)])
        axg.set_xticklabels(["target"] + [f"g={g:g}\nrho={r:.2f}" for g, r in
                                          zip(gal["leakages"], gal["rho"])], fontsize=7)
        axg.set_yticks([])
    return fig
