"""The GaussMix paper's Figures 1, 2 and 4, reproduced on the regression data available offline.

* :func:`reproduce_gaussmix_noise`: Figure 1 of [1]_, the scale ``(lambda_min + sigma^2) /
  C^2`` needed for ``(epsilon, delta)``-DP by Lemma 1 with the RDP conversion of
  Proposition 1, against Sheffet's bound (Algorithm 1 of [2]_ as App. H.2 of [1]_ gives
  it), and the ratio of the epsilons the two analyses grant at equal noise;
* :func:`reproduce_gaussmix_regression`: Figures 2 and 4 of [1]_, test MSE against epsilon
  of Linear Mixing (Algorithm 2 of [1]_), AdaSSP (App. H.1 of [1]_) and Sheffet's method
  (App. H.2 of [1]_), with the authors' 95% intervals ``1.96 std / sqrt(repeats)``.

The paper prints no table for these figures; what it states is their shape (Lemma 1 needs
far less noise than Sheffet's bound; Linear Mixing improves on AdaSSP and Sheffet). Beside
the three methods the regression reproduction runs a fourth, labelled as not private: Linear
Mixing whose adaptive noise reads ``lambda_min(X^T X)`` of the features alone, as the authors'
public code does, although the sketched matrix is ``[X, y]`` and Lemma 1 needs
``lambda_min([X, y]^T [X, y])``. It shows where the published improvement comes from.

References
----------
.. [1] Lev, Srinivasan, Shenfeld, Ligett, Sekhari and Wilson, "The Gaussian Mixing Mechanism:
   Renyi Differential Privacy via Gaussian Sketches", arXiv:2505.24603, 2025.
.. [2] Sheffet, "Differentially private ordinary least squares", ICML 2017.
"""

# Licence: BSD 3 clause

import math
from numbers import Integral, Real

import numpy as np

from ..utils._progress import progress_bar
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._reproduce import Reproduction

__all__ = ["reproduce_gaussmix_noise", "reproduce_gaussmix_regression"]

_METHODS = ("Linear Mixing", "AdaSSP", "Sheffet", "Linear Mixing, lambda_min of X only")
_NOT_PRIVATE = _METHODS[3]


@validate_params(
    {"k_values": ["array-like"], "epsilons": ["array-like", None],
     "delta": [Interval(Real, 0, 1, closed="neither")]},
    prefer_skip_nested_validation=True,
)
def reproduce_gaussmix_noise(k_values=(25, 250), epsilons=None, *, delta=1e-6):
    """The noise GaussMix needs for ``(epsilon, delta)``-DP against Sheffet's (Fig. 1 of [1]_).

    For each sketch size ``k`` and target ``epsilon``: the smallest dimensionless scale
    ``gamma = (lambda_min + sigma^2) / C^2`` whose GaussMix release is ``(epsilon,
    delta)``-DP by Lemma 1 of [1]_ and the RDP conversion of its Proposition 1
    (:func:`~skdc.privacy.smallest_scale` of :func:`~skdc.privacy.gaussmix_epsilon`), and the
    scale Sheffet's analysis needs, ``w^2 / C^2 = (4 / epsilon) (sqrt(2 k ln(8/delta)) + 2
    ln(8/delta))`` (step 2 of Algorithm 1 of [2]_ in the form of App. H.2 of [1]_,
    :func:`~skdc.linear_model.sheffet_w2`); their ratio (Fig. 1(a)); and, at the GaussMix
    scale, the ratio of the epsilon Sheffet's analysis grants to the one Lemma 1 grants
    (Fig. 1(b)), which is the same number because Sheffet's ``w^2`` is proportional to
    ``1 / epsilon``.

    Read more in the :ref:`User Guide <reproductions>`.

    Parameters
    ----------
    k_values : array-like of int, default=(25, 250)
        Sketch sizes ``k``.
    epsilons : array-like of float, default=None
        Targets ``epsilon`` (default: 13 log-spaced values from 0.1 to 10).
    delta : float, default=1e-6
        The ``delta`` of every target.

    Returns
    -------
    reproduction : Reproduction
        ``table``: ``k``, ``epsilon``, ``gaussmix_scale``, ``sheffet_scale``,
        ``scale_ratio`` (Sheffet over GaussMix; Sheffet's ``w^2`` is proportional to
        ``1 / epsilon``, so this is also the ratio of the epsilons the two analyses grant at
        equal noise, Fig. 1(b)); the figure: both panels of Fig. 1.

    References
    ----------
    .. [1] Lev et al., "The Gaussian Mixing Mechanism: Renyi Differential Privacy via
       Gaussian Sketches", arXiv:2505.24603, 2025.
    .. [2] Sheffet, "Differentially private ordinary least squares", ICML 2017.

    Examples
    --------
    >>> from skdc.experiments import reproduce_gaussmix_noise
    >>> rep = reproduce_gaussmix_noise(k_values=[25], epsilons=[1.0])
    >>> row = rep.table.iloc[0]
    >>> round(row["gaussmix_scale"], 2), round(row["sheffet_scale"], 2)
    (24.41, 239.92)
    """
    import pandas as pd

    from ..linear_model import sheffet_w2
    from ..privacy import gaussmix_epsilon, smallest_scale

    eps_grid = np.logspace(-1, 1, 13) if epsilons is None else np.asarray(epsilons, float)
    rows = []
    for k in (int(k) for k in np.atleast_1d(k_values)):
        for eps in eps_grid:
            gamma = smallest_scale(lambda g, k=k: gaussmix_epsilon(k, g, delta)[0], float(eps))
            w2 = sheffet_w2(k, float(eps), delta, 1.0)
            # Sheffet's w^2 is proportional to 1 / epsilon: at the scale gamma it grants
            # epsilon * w2 / gamma, so the epsilon ratio at equal noise is w2 / gamma too
            rows.append({"k": k, "epsilon": float(eps), "gaussmix_scale": gamma,
                         "sheffet_scale": w2, "scale_ratio": w2 / gamma})
    table = pd.DataFrame(rows)
    return Reproduction("gaussmix-noise", table, figure=_noise_figure,
                        details={"delta": delta},
                        title=f"GaussMix (Lemma 1) vs Sheffet: noise for (eps, {delta:g})-DP")


def _noise_figure(rep):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), layout="constrained")
    for k, d in rep.table.groupby("k"):
        line = axes[0].plot(d["epsilon"], d["gaussmix_scale"], "o-",
                            label=f"Lemma 1 + Prop. 1, k={k}")[0]
        axes[0].plot(d["epsilon"], d["sheffet_scale"], "s--", color=line.get_color(),
                     label=f"Sheffet, k={k}")
        axes[1].plot(d["epsilon"], d["scale_ratio"], "o-", label=f"k={k}")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("epsilon_DP")
    axes[0].set_yscale("log")
    axes[0].set_ylabel("(lambda_min + sigma^2) / C^2 needed")
    axes[1].set_ylabel("epsilon of Sheffet's analysis / Lemma 1's, equal noise")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    fig.suptitle(rep.title, fontsize=10)
    return fig


# ----------------------------------------------------------------------------- regression


def _split(X, y, rng):
    """The authors' protocol (their public code): a random 80/20 split, features standardised
    with the training statistics, rows scaled by the largest training row norm (so ``C_X =
    1``), labels by the largest training ``|y|`` (``C_Y = 1``); test rows get the same maps.
    Both scalings read the training rows, which no method's accounting covers
    (as in the paper)."""
    perm = rng.permutation(len(y))
    n = int(0.8 * len(y))
    tr, te = perm[:n], perm[n:]
    Xtr, Xte, ytr, yte = X[tr], X[te], y[tr].astype(float), y[te].astype(float)
    mean, std = Xtr.mean(axis=0), Xtr.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    Xtr, Xte = (Xtr - mean) / std, (Xte - mean) / std
    scale = np.linalg.norm(Xtr, axis=1).max()
    cy = np.abs(ytr).max()
    return Xtr / scale, Xte / scale, ytr / cy, yte / cy


def _mixing_x_only(X, y, epsilon, delta, k, rng):
    """Linear Mixing whose adaptive noise reads ``lambda_min(X^T X)`` instead of the sketched
    ``[X, y]``'s (the authors' code); not private at ``epsilon`` (Lemma 1 needs the latter)."""
    from ..mechanisms import calibrate_gaussmix
    from ..privacy import adaptive_threshold

    Z = np.hstack([X, y[:, None]])
    c2 = 2.0  # C_X^2 + C_Y^2
    gamma, eta = calibrate_gaussmix(k, float(epsilon), float(delta), True)
    lam = max(float(np.linalg.eigvalsh(X.T @ X)[0]), 0.0) / c2
    lam_tilde = max(lam + eta * (rng.standard_normal() - adaptive_threshold(delta)), 0.0)
    sigma = math.sqrt(max(gamma - lam_tilde, 0.0) * c2)
    M = rng.standard_normal((k, Z.shape[0])) @ Z + sigma * rng.standard_normal((k, Z.shape[1]))
    return np.linalg.lstsq(M[:, :-1], M[:, -1], rcond=None)[0]


def _fit_all(Xtr, ytr, epsilon, delta, k, seed):
    from ..linear_model import AdaSSPRegressor, LinearMixingRegressor, SheffetSketchRegressor

    common = {"epsilon": epsilon, "delta": delta, "random_state": seed}
    return {
        _METHODS[0]: LinearMixingRegressor(k=k, **common).fit(Xtr, ytr).coef_,
        _METHODS[1]: AdaSSPRegressor(**common).fit(Xtr, ytr).coef_,
        _METHODS[2]: SheffetSketchRegressor(k=k, **common).fit(Xtr, ytr).coef_,
        _METHODS[3]: _mixing_x_only(Xtr, ytr, epsilon, delta, k,
                                    np.random.RandomState(seed)),
    }


@validate_params(
    {"datasets": [dict], "epsilons": ["array-like", None],
     "n_repeats": [Interval(Integral, 1, None, closed="left")],
     "k_factor": [Interval(Real, 0, None, closed="neither")],
     "random_state": ["random_state"], "progress": ["boolean", StrOptions({"auto"})]},
    prefer_skip_nested_validation=True,
)
def reproduce_gaussmix_regression(datasets, *, epsilons=None, n_repeats=250, k_factor=2.5,
                                  random_state=0, progress="auto"):
    """Linear Mixing against AdaSSP and Sheffet's method, test MSE by epsilon (Figs 2, 4 of [1]_).

    Each repeat splits each data set 80/20 at random, standardises the features with the
    training statistics, scales the rows to norm at most 1 and the labels to ``|y| <= 1``
    (the protocol of the authors' public code), then fits, at each ``epsilon`` with ``delta =
    min(10^-6, 0.01 / n)``: :class:`~skdc.linear_model.LinearMixingRegressor` (Algorithm 2 of
    [1]_ with the corrected adaptive Algorithm 1, ``k = k_factor (d + 1)``),
    :class:`~skdc.linear_model.AdaSSPRegressor` (App. H.1) and
    :class:`~skdc.linear_model.SheffetSketchRegressor` (App. H.2), and, labelled as not
    private, Linear Mixing with its adaptive noise read off ``lambda_min(X^T X)`` of the
    features alone, as the authors' public code does. A non-private least-squares fit is the
    reference. Test MSE is on the held-out 20%.

    Read more in the :ref:`User Guide <reproductions>`.

    Parameters
    ----------
    datasets : dict of str to tuple of (X, y)
        The regression data sets, by name.
    epsilons : array-like of float, default=None
        Targets ``epsilon`` (default: the authors' ``logspace(-1, 1, 5)``).
    n_repeats : int, default=250
        Repeats (random splits and mechanism draws) per data set; the paper's 250.
    k_factor : float, default=2.5
        Sketch rows per sketched column (the paper's ``k / d = 2.5``).
    random_state : int, default=0
        Seeds repeat ``j`` with ``random_state + j``.
    progress : bool or "auto", default="auto"
        A progress bar over data sets x repeats.

    Returns
    -------
    reproduction : Reproduction
        ``table``: ``dataset``, ``n``, ``d``, ``epsilon``, ``method`` (the four above and
        ``OLS (not private)``), ``mse`` (mean over repeats), ``ci`` (``1.96 std /
        sqrt(repeats)``, the paper's interval), ``private``; ``details["scales"]``: per data
        set the mean ``lambda_min`` of ``[X, y]`` and of ``X`` (in units of ``C^2 = 2``)
        against the scale ``gamma`` Linear Mixing targets at each ``epsilon``; the figure:
        one panel per data set.

    References
    ----------
    .. [1] Lev et al., "The Gaussian Mixing Mechanism: Renyi Differential Privacy via
       Gaussian Sketches", arXiv:2505.24603, 2025.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from skdc.experiments import reproduce_gaussmix_regression
    >>> rep = reproduce_gaussmix_regression({"diabetes": load_diabetes(return_X_y=True)},
    ...                                     epsilons=[1.0], n_repeats=2, progress=False)
    >>> sorted(rep.table["method"].unique())[:2]
    ['AdaSSP', 'Linear Mixing']
    """
    import pandas as pd

    from ..mechanisms import calibrate_gaussmix

    eps_grid = np.logspace(-1, 1, 5) if epsilons is None else np.asarray(epsilons, float)
    seed0 = int(random_state) if random_state is not None else 0
    jobs = [(name, j) for name in datasets for j in range(n_repeats)]
    mse = {}
    lams = {}
    for name, j in progress_bar(jobs, progress, desc="gaussmix-regression", unit="repeat"):
        X, y = (np.asarray(a, dtype=float) for a in datasets[name])
        rng = np.random.RandomState(seed0 + j)
        Xtr, Xte, ytr, yte = _split(X, y, rng)
        n, d = Xtr.shape
        delta = min(1e-6, 0.01 / n)
        k = math.ceil(k_factor * (d + 1))
        Z = np.hstack([Xtr, ytr[:, None]])
        lams.setdefault(name, []).append(
            (np.linalg.eigvalsh(Z.T @ Z)[0] / 2, np.linalg.eigvalsh(Xtr.T @ Xtr)[0] / 2))
        ols = np.linalg.lstsq(Xtr, ytr, rcond=None)[0]
        for eps in eps_grid:
            coefs = {**_fit_all(Xtr, ytr, float(eps), delta, k, seed0 + j),
                     "OLS (not private)": ols}
            for method, coef in coefs.items():
                mse.setdefault((name, n, d, float(eps), method), []).append(
                    float(np.mean((Xte @ coef - yte) ** 2)))
    rows = [{"dataset": name, "n": n, "d": d, "epsilon": eps, "method": method,
             "mse": float(np.mean(v)), "ci": float(1.96 * np.std(v) / math.sqrt(len(v))),
             "private": method not in (_NOT_PRIVATE, "OLS (not private)")}
            for (name, n, d, eps, method), v in mse.items()]
    table = pd.DataFrame(rows)
    scales = []
    for name in datasets:
        lam_z, lam_x = np.mean(lams[name], axis=0)
        n, d = (int(table.loc[table["dataset"] == name, c].iloc[0]) for c in ("n", "d"))
        k = math.ceil(k_factor * (d + 1))
        for eps in eps_grid:
            gamma = calibrate_gaussmix(k, float(eps), min(1e-6, 0.01 / n), True)[0]
            scales.append({"dataset": name, "epsilon": float(eps), "gamma": gamma,
                           "lambda_min_Xy": float(lam_z), "lambda_min_X": float(lam_x)})
    return Reproduction("gaussmix-regression", table, figure=_regression_figure,
                        details={"scales": pd.DataFrame(scales), "n_repeats": n_repeats},
                        title="Linear Mixing vs AdaSSP and Sheffet (Figs 2 and 4)")


def _regression_figure(rep):
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(rep.table["dataset"]))
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 3.8),
                             layout="constrained", squeeze=False)
    for ax, name in zip(axes[0], names):
        d = rep.table[rep.table["dataset"] == name]
        for method, m in d.groupby("method", sort=False):
            style = "--" if not m["private"].iloc[0] else "-"
            ax.plot(m["epsilon"], m["mse"], "o" + style, label=method, ms=4)
            ax.fill_between(m["epsilon"], m["mse"] - m["ci"], m["mse"] + m["ci"], alpha=0.2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("epsilon_DP")
        ax.set_ylabel("test MSE")
        ax.set_title(f"{name} (n={int(d['n'].iloc[0])}, d={int(d['d'].iloc[0])})", fontsize=9)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(rep.title, fontsize=10)
    return fig
