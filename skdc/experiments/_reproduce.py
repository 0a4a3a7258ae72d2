"""The papers' experiments, reproduced on the rows you give.

Each function takes training and test rows and the experiment's settings (the papers' by
default), runs it, and returns a :class:`Reproduction`: its tables, the numbers the paper
reports beside them, and its figure (:meth:`Reproduction.plot`, :meth:`Reproduction.save`).
``skdc reproduce NAME`` is one call each, on MNIST (or digits) read from local files.

* :func:`reproduce_mnist_equivalence`: Proposition 2.12 of [1]_ (C-GDP and anchor-aligned
  I-GDP hand the analyst the same matrix) and the noiseless utility controls of its Section
  5.2.2 (on MNIST, 90.96% balanced accuracy for both, 56.37% for unaligned I-GDP, the analyst
  matrices 6.0e-14 apart);
* :func:`reproduce_mnist_sweep`: the privacy-utility sweeps of Section 5.2 of [1]_ (Figures 2,
  4 and 5): private-data noise of C-GDP against anchor noise of AA-I-GDP, each attacked under
  analyst-participant collusion, and the utility each keeps at 12.4% exact-source linkage
  (59.2% against 15.1%, the paper's headline);
* :func:`sweep_private_and_anchor_noise`: those two sweeps for any pair of pipelines (``skdc
  demo`` runs them on digits);
* :func:`reproduce_kti` and :func:`reproduce_kti_tables` (in ``_reproduce_kti``): the KTI
  paper's [2]_ Fig. 3 (its Section 5.2) and Tables 3 and 4 (its Section 5.5).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with
   Noisy-Anchor Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749,
   2026.
.. [2] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
   Data Collaboration Analysis", arXiv:2605.27219, 2026.
"""

# Licence: BSD 3 clause

import io
import time
from numbers import Integral, Real

import numpy as np

from ..utils._deprecation import renamed_argument
from ..utils._docstring import Substitution
from ..utils._folders import write_outputs
from ..utils._progress import progress_bar
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params

__all__ = [
    "Reproduction",
    "reproduce_mnist_equivalence",
    "reproduce_mnist_sweep",
    "sweep_private_and_anchor_noise",
]

# the attacks that apply to each kind of noise under collusion (Section 5.2 of the GDP paper:
# the known-secret inversion of C-GDP, the known-anchor attacks of anchor noise)
_PRIVATE_ATTACKS = ("known_secret",)
_ANCHOR_ATTACKS = ("mp", "procrustes", "alignment_map")
# the paper's headline (abstract; Fig. 5): utility at 12.4% exact-source linkage, read off
# splines of utility on linkage, the OP attack for anchor noise, known-secret for C-GDP
_HEADLINE_LINKAGE = 0.124
_HEADLINE = (("AA-I-GDP (anchor noise)", "procrustes_linkage", "anchor noise (OP attack)",
              "59.2% (band 58.4-60.0%)"),
             ("C-GDP (private noise)", "known_secret_linkage", "private-data noise",
              "15.1% (band 13.9-16.4%)"))
_DATA = {"X_train": ["array-like"], "y_train": ["array-like"], "X_test": ["array-like"],
         "y_test": ["array-like"]}
_RUN = {"random_state": ["random_state"], "progress": ["boolean", StrOptions({"auto"})]}
_COUNT = [Interval(Integral, 1, None, closed="left")]


class Reproduction:
    """What a reproduced experiment measured: its tables, its numbers and its figure.

    Returned by :func:`reproduce_mnist_equivalence`, :func:`reproduce_mnist_sweep`,
    :func:`reproduce_kti` and :func:`reproduce_kti_tables`.

    Parameters
    ----------
    name : str
        The experiment (``"mnist-equivalence"``, ``"mnist-sweep"``, ``"kti"``): the stem of the
        files :meth:`save` writes.
    table : pandas.DataFrame
        Its main table, written as ``<name>.csv``.
    extra_tables : dict of str to pandas.DataFrame, default=None
        Further tables, written as ``<name>-<key>.csv`` before the main one.
    details : dict, default=None
        The numbers the experiment reports beside its table, each documented by the function
        that returns it.
    figure : callable, default=None
        ``figure(reproduction) -> matplotlib.figure.Figure``, the experiment's figure.
    title : str, default=None
        The figure's title, where it has one.

    See Also
    --------
    reproduce_mnist_equivalence, reproduce_mnist_sweep, reproduce_kti, reproduce_kti_tables
    """

    def __init__(self, name, table, *, extra_tables=None, details=None, figure=None,
                 title=None):
        self.name = name
        self.table = table
        self.extra_tables = extra_tables
        self.details = details
        self.figure = figure
        self.title = title

    def __repr__(self):
        return f"Reproduction({self.name!r}, table of {len(self.table)} rows)"

    def plot(self):
        """The experiment's figure.

        Returns
        -------
        fig : matplotlib.figure.Figure
            The figure (close it with ``matplotlib.pyplot.close`` when done).
        """
        if self.figure is None:
            raise ValueError(f"the {self.name} reproduction has no figure.")
        return self.figure(self)

    def save(self, out_dir):
        """Write the tables (CSV) and the figure (PNG) into the folder ``out_dir``.

        The folder is created when missing; every file is written whole through a temporary
        file beside it, never through a link at its name (a link there is replaced), with
        the permission bits of an ordinary shared file.

        Parameters
        ----------
        out_dir : str or path-like
            The folder.

        Returns
        -------
        files : dict of str to str
            ``{file name: path}`` of the files written, in the order written: the extra
            tables, the main table, the figure.
        """
        names = [f"{self.name}-{key}.csv" for key in self.extra_tables or {}]
        tables = [*(self.extra_tables or {}).values(), self.table]
        outputs = {name: (name, table.to_csv(index=False))
                   for name, table in zip([*names, f"{self.name}.csv"], tables)}
        if self.figure is not None:
            import matplotlib.pyplot as plt

            fig = self.plot()
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=120)
            plt.close(fig)
            outputs[f"{self.name}.png"] = (f"{self.name}.png", buf.getvalue())
        return write_outputs(out_dir, outputs, f"the {self.name} reproduction")


# ----------------------------------------------------------------------------- equivalence


@Substitution(references=gdp_paper_references)
@validate_params(
    {**_DATA, "model": [StrOptions({"logistic", "cnn"})], "n_participants": _COUNT,
     "n_anchors": _COUNT, "n_components": _COUNT, **_RUN},
    prefer_skip_nested_validation=True,
)
def reproduce_mnist_equivalence(X_train, y_train, X_test, y_test, *, model="logistic",
                                n_participants=10, n_anchors=400, n_components=100,
                                random_state=0, progress="auto"):
    """C-GDP and anchor-aligned I-GDP give the analyst the same matrix (Prop. 2.12 of [1]_).

    Every participant projects its rows by one public Gaussian projection ``F`` (784 to 100
    features on MNIST, Section 5.1 of [1]_), then C-GDP (one common secret), I-GDP (a secret
    each, unaligned) and AA-I-GDP (I-GDP aligned on the shared anchor by
    :class:`~skdc.alignment.ReferenceAligner`) upload it. The C-GDP secret is the reference
    participant's I-GDP secret, so by Proposition 2.12 of [1]_ the analyst's matrices of
    C-GDP and AA-I-GDP coincide (the paper measures a relative discrepancy of 6.0e-14), and
    so do the classifiers trained on them; unaligned I-GDP falls behind (Section 5.2.2 of
    [1]_: 90.96% and 56.37% balanced accuracy on MNIST, with the CNN of its Table 2).

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    X_train : array-like of shape (n_samples, n_features)
        Training rows (MNIST scaled to [0, 1] and flattened in the paper).
    y_train : array-like of shape (n_samples,)
        Their labels.
    X_test : array-like of shape (n_test, n_features)
        Held-out rows.
    y_test : array-like of shape (n_test,)
        Their labels.
    model : {"logistic", "cnn"}, default="logistic"
        The utility model: a logistic regression, or the paper's CNN and recipe
        (:class:`~skdc.nn.RepresentationCNN`, Table 2 of [1]_: batch 256, 15 epochs; needs
        ``skdc[nn]``).
    n_participants : int, default=10
        Participants ``p``.
    n_anchors : int, default=400
        Rows ``r`` of the orthonormal anchor.
    n_components : int, default=100
        Features after the public projection ``F``.
    random_state : int, default=0
        Seeds the projection, the secrets, the anchor and the CNN.
    progress : bool or "auto", default="auto"
        A progress bar over the three fits; ``"auto"`` shows it when stderr is a terminal.

    Returns
    -------
    reproduction : Reproduction
        ``table``: ``method`` (C-GDP, AA-I-GDP, I-GDP), ``balanced_accuracy`` on the test rows
        and ``discrepancy``; ``details["discrepancy"]``: the relative Frobenius distance of
        the C-GDP and AA-I-GDP analyst matrices (``details["holds"]``: below 1e-10); the
        figure: balanced accuracy per method.

    See Also
    --------
    reproduce_mnist_sweep : The same protocols with noise, attacked.

    {references}

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdc.experiments import reproduce_mnist_equivalence
    >>> X, y = make_classification(n_samples=300, n_features=20, n_informative=8,
    ...                            random_state=0)
    >>> rep = reproduce_mnist_equivalence(X[:200], y[:200], X[200:], y[200:],
    ...                                   n_participants=3, n_anchors=30, n_components=10,
    ...                                   progress=False)
    >>> rep.details["holds"], rep.table["method"].tolist()
    (True, ['C-GDP', 'AA-I-GDP', 'I-GDP'])
    >>> acc = rep.table.set_index("method")["balanced_accuracy"]
    >>> bool(acc["C-GDP"] == acc["AA-I-GDP"])
    True
    """
    import pandas as pd
    from sklearn.metrics import balanced_accuracy_score

    pipes = _mnist_pipelines(model, n_participants, n_anchors, n_components, random_state)
    # Prop 2.12 of [1]: C-GDP's uploads and AA-I-GDP's aligned matrix are the same matrix (the
    # C-GDP secret is I-GDP's participant-0 secret, the reference participant)
    Z_c = pipes["C-GDP"][:-1].fit_transform(X_train, y_train)
    Z_a = pipes["AA-I-GDP"][:-1].fit_transform(X_train, y_train)
    disc = float(np.linalg.norm(np.asarray(Z_c) - Z_a) / np.linalg.norm(Z_c))
    rows = []
    for name in progress_bar(("C-GDP", "AA-I-GDP", "I-GDP"), progress,
                             desc="mnist-equivalence", unit="fit"):
        pipe = pipes[name].fit(X_train, y_train)
        rows.append({"method": name,
                     "balanced_accuracy": balanced_accuracy_score(y_test, pipe.predict(X_test)),
                     "discrepancy": disc})
    return Reproduction("mnist-equivalence", pd.DataFrame(rows), figure=_equivalence_figure,
                        details={"discrepancy": disc, "holds": disc < 1e-10},
                        title="C-GDP = anchor-aligned I-GDP (Prop 2.12)")


def _equivalence_figure(rep):
    table = rep.table.rename(columns={"balanced_accuracy": "mean"})
    return _bar_figure(table, rep.title, "test balanced accuracy")


def _bar_figure(table, title, ylabel):
    """A bar chart of ``table``'s mean column per method (``std`` as error bars)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(max(4.0, 0.9 * len(table) + 1.5), 3.6),
                           layout="constrained")
    yerr = table["std"] if "std" in table else None
    ax.bar(table["method"], table["mean"], yerr=yerr, color="0.6", capsize=3)
    ax.set_ylim(0, 1)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.tick_params(axis="x", labelrotation=30)
    return fig


def _classifier(model, seed):
    if model == "logistic":
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(max_iter=1000)
    try:
        from ..nn import RepresentationCNN
    except ImportError as exc:
        raise ImportError(
            f"model='cnn' needs skdc.nn.RepresentationCNN and torch ({exc}); install the nn "
            "extra (pip install 'skdc[nn]') or use the logistic model."
        ) from exc
    # the paper's recipe (batch 256, 15 epochs; Table 2 of the GDP paper), not the small-data
    # default batch size
    return RepresentationCNN(batch_size=256, max_epochs=15, random_state=seed)


def _mnist_pipelines(model, p, r, h, s):
    """The four protocols of the GDP paper's MNIST experiments, each behind the public
    projection ``F`` (``h`` features) shared by everyone (Section 5.1 of [1])."""
    from sklearn.pipeline import Pipeline
    from sklearn.random_projection import GaussianRandomProjection

    from ..alignment import GOPPAligner, ReferenceAligner
    from ..mechanisms import CGDP, IGDP

    def proj():
        return GaussianRandomProjection(n_components=h, random_state=s,
                                        compute_inverse_components=True)

    gdp = {"n_anchors": r, "random_state": s}
    return {
        "C-GDP": Pipeline([("proj", proj()), ("gdp", CGDP(p, **gdp)),
                           ("clf", _classifier(model, s))]),
        "I-GDP": Pipeline([("proj", proj()), ("gdp", IGDP(p, **gdp)),
                           ("clf", _classifier(model, s))]),
        "AA-I-GDP": Pipeline([("proj", proj()), ("gdp", IGDP(p, **gdp)),
                              ("align", ReferenceAligner()), ("clf", _classifier(model, s))]),
        "AA-I-GDP (anchor noise)": Pipeline([("proj", proj()), ("gdp", IGDP(p, **gdp)),
                                             ("align", GOPPAligner()),
                                             ("clf", _classifier(model, s))]),
    }


# ----------------------------------------------------------------------------- noise sweeps


@Substitution(references=gdp_paper_references)
@validate_params(
    {"private": [HasMethods(["fit"])], "anchor": [HasMethods(["fit"])], **_DATA,
     "noise_values": ["array-like", HasMethods(["rvs"]), None],
     "v_values": ["array-like", HasMethods(["rvs"]), None], "n_draws": [*_COUNT, None],
     "attacks": ["boolean"], "auditor": [StrOptions({"pca"}), HasMethods(["transform"])],
     "labels": [tuple, list], "n_jobs": [Integral, None], **_RUN,
     "private_values": ["array-like", HasMethods(["rvs"]), None],
     "anchor_values": ["array-like", HasMethods(["rvs"]), None]},
    prefer_skip_nested_validation=True,
)
def sweep_private_and_anchor_noise(private, anchor, X_train, y_train, X_test, y_test, *,
                                   noise_values=None, v_values=None, n_draws=None,
                                   attacks=True, auditor="pca",
                                   labels=("C-GDP (private noise)", "AA-I-GDP (anchor noise)"),
                                   random_state=0, n_jobs=None, progress="auto",
                                   private_values=None, anchor_values=None):
    """Private-data noise against anchor noise, each attacked as under collusion ([1]_, 5.2).

    Two :func:`~skdc.experiments.privacy_utility_sweep` runs over the same rows: ``private``
    (C-GDP, its ``gdp__noise`` swept over ``noise_values``), attacked by the known-secret
    inversion, and ``anchor`` (I-GDP with GOPP alignment, its ``align__v`` swept over
    ``v_values``), attacked by the Moore-Penrose, orthogonal-Procrustes and
    alignment-map estimators (Section 5.2 of [1]_). Each attack is scored twice: by the
    relative reconstruction error (column ``<attack>``) and by linkage privacy, one minus the
    exact-source linkage accuracy (``<attack>_linkage``), both higher = more private; the
    strongest attack of each draw gives ``strongest`` and ``strongest_linkage``. The paper's
    claim is that anchor noise keeps more accuracy at matched linkage (its Fig. 5).

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    private : estimator
        A pipeline whose ``gdp`` step adds private-data noise (C-GDP).
    anchor : estimator
        A pipeline whose ``align`` step takes the anchor noise ``v`` (I-GDP and GOPP).
    X_train : array-like of shape (n_samples, n_features)
        Training rows.
    y_train : array-like of shape (n_samples,)
        Their labels.
    X_test : array-like of shape (n_test, n_features)
        Held-out rows; the attacks reconstruct them.
    y_test : array-like of shape (n_test,)
        Their labels.
    noise_values : array-like or distribution
        The private-data noise values (the mechanisms' ``noise``, sigma), or a frozen
        ``scipy.stats`` distribution. Required.
    v_values : array-like or distribution
        The anchor noise values (the aligner's ``v``), or a frozen ``scipy.stats``
        distribution. Required.
    n_draws : int, default=None
        Draws from a distribution, or draws per value (as
        :func:`~skdc.experiments.privacy_utility_sweep` takes it).
    attacks : bool, default=True
        Run the attacks; ``False`` measures utility only.
    auditor : "pca" or fitted estimator, default="pca"
        The embedding of the linkage metric (see
        :func:`~skdc.metrics.make_attack_scorer`): a PCA of the target's clean rows, or a
        fitted auditor such as :class:`~skdc.nn.LinkageAuditor`, shared by every draw.
    labels : tuple of two str, default=("C-GDP (private noise)", "AA-I-GDP (anchor noise)")
        The ``method`` of each sweep's rows.
    random_state : int, default=0
        Seeds the draws.
    n_jobs : int, default=None
        Parallel draws, as in joblib.
    progress : bool or "auto", default="auto"
        A progress bar per sweep; ``"auto"`` shows it when stderr is a terminal.
    private_values : array-like or distribution, default=None
        Deprecated spelling of ``noise_values``.

        .. deprecated:: 0.2
           ``private_values`` is renamed ``noise_values`` and will be removed in 0.3.
    anchor_values : array-like or distribution, default=None
        Deprecated spelling of ``v_values``.

        .. deprecated:: 0.2
           ``anchor_values`` is renamed ``v_values`` and will be removed in 0.3.

    Returns
    -------
    results : pandas.DataFrame
        Both sweeps' rows (private noise first), as
        :func:`~skdc.experiments.privacy_utility_sweep` returns them, with ``strongest`` and
        ``strongest_linkage`` when ``attacks``.

    See Also
    --------
    reproduce_mnist_sweep : These sweeps in the paper's MNIST setting.
    plot_frontier : Utility against the strongest attack.

    {references}

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import Pipeline
    >>> from skdc import CGDP, IGDP, GOPPAligner
    >>> from skdc.experiments import sweep_private_and_anchor_noise
    >>> X, y = make_classification(n_samples=300, n_features=6, random_state=0)
    >>> private = Pipeline([("gdp", CGDP(3, random_state=0)), ("clf", LogisticRegression())])
    >>> anchor = Pipeline([("gdp", IGDP(3, random_state=0)), ("align", GOPPAligner()),
    ...                    ("clf", LogisticRegression())])
    >>> results = sweep_private_and_anchor_noise(
    ...     private, anchor, X[:200], y[:200], X[200:], y[200:], noise_values=[0.5],
    ...     v_values=[0.05], progress=False)
    >>> results[["method", "param", "value"]].values.tolist()
    [['C-GDP (private noise)', 'gdp__noise', 0.5], ['AA-I-GDP (anchor noise)', 'align__v', 0.05]]
    >>> results[["strongest", "strongest_linkage"]].notna().all().tolist()
    [True, True]
    """
    import pandas as pd

    from ._sweep import privacy_utility_sweep

    noise_values, v_values = _sweep_values(noise_values, v_values, private_values, anchor_values)
    names = (_PRIVATE_ATTACKS, _ANCHOR_ATTACKS) if attacks else ((), ())
    common = dict(test_data=(X_test, y_test), n_draws=n_draws, random_state=random_state,
                  n_jobs=n_jobs, progress=progress)
    sweeps = [privacy_utility_sweep(pipe, X_train, y_train, param=param, values=values,
                                    attacks=_attack_scorers(attack_names, auditor),
                                    label=label, **common)
              for pipe, param, values, attack_names, label in (
                  (private, "gdp__noise", noise_values, names[0], labels[0]),
                  (anchor, "align__v", v_values, names[1], labels[1]))]
    results = pd.concat(sweeps, ignore_index=True)
    cols = [*names[0], *names[1]]
    if cols:
        # the strongest attack of each draw, in each metric (higher = more private)
        results["strongest"] = results[cols].min(axis=1)
        results["strongest_linkage"] = results[[f"{c}_linkage" for c in cols]].min(axis=1)
    return results


def _sweep_values(noise_values, v_values, private_values, anchor_values):
    """The two sweeps' values, given under their names or their deprecated spellings."""
    noise_values = renamed_argument("private_values", private_values, "noise_values",
                                    noise_values)
    v_values = renamed_argument("anchor_values", anchor_values, "v_values", v_values)
    missing = [repr(name) for name, value in (("noise_values", noise_values),
                                              ("v_values", v_values)) if value is None]
    if missing:
        raise TypeError("sweep_private_and_anchor_noise() missing required keyword "
                        f"argument{'s' if len(missing) > 1 else ''}: {' and '.join(missing)}")
    return noise_values, v_values


def _attack_scorers(names, auditor):
    """Each attack scored twice: relative error (``name``) and linkage (``name_linkage``),
    the latter with the fitted ``auditor`` (or ``'pca'``)."""
    if not names:
        return {}
    from ..metrics import make_attack_scorer

    linkage = {"random_state": 0, "auditor": auditor}
    return {**{name: make_attack_scorer(name) for name in names},
            **{f"{name}_linkage": make_attack_scorer(name, metric="linkage",
                                                    metric_params=linkage) for name in names}}


# ----------------------------------------------------------------------------- MNIST sweep


@Substitution(references=gdp_paper_references)
@validate_params(
    {**_DATA, "n_draws": _COUNT, "n_levels": [*_COUNT, None], "attacks": ["boolean"],
     "auditor": [StrOptions({"auto", "pca"})], "model": [StrOptions({"logistic", "cnn"})],
     "n_participants": _COUNT, "n_anchors": _COUNT, "n_components": _COUNT,
     "v_max": [Interval(Real, 0, None, closed="neither")],
     "sigma_max": [Interval(Real, 0, None, closed="neither")], "n_jobs": [Integral, None],
     **_RUN},
    prefer_skip_nested_validation=True,
)
def reproduce_mnist_sweep(X_train, y_train, X_test, y_test, *, n_draws=200, n_levels=None,
                          attacks=True, auditor="auto", model="logistic", n_participants=10,
                          n_anchors=400, n_components=100, v_max=0.5, sigma_max=50.0,
                          random_state=0, n_jobs=None, progress="auto"):
    """The privacy-utility sweeps of the GDP paper on MNIST (Section 5.2, Figs. 2, 4, 5 of [1]_).

    C-GDP with private-data noise ``sigma ~ U[0, min(4 RMS, sigma_max)]`` (RMS of the
    projected training rows) against AA-I-GDP with anchor noise ``v ~ U[0, v_max]``, each
    behind the public projection ``F`` and attacked under collusion (the known-secret
    inversion, and the Moore-Penrose, orthogonal-Procrustes and alignment-map attacks), as
    :func:`sweep_private_and_anchor_noise` runs them. Linkage is measured by the paper's
    auditor CNN (Table 3 of [1]_), trained once on the clean training rows and then frozen
    (``auditor="auto"`` with ``skdc[nn]``), or by a PCA of the target's clean rows. The
    headline reads the balanced accuracy each kind of noise keeps at 12.4% exact-source
    linkage off cubic splines of accuracy on linkage with 95% bootstrap bands (Fig. 5 of
    [1]_: 59.2% for anchor noise under the OP attack, 15.1% for private-data noise).

    Read more in the :ref:`User Guide <mnist_on_real_images>`.

    Parameters
    ----------
    X_train : array-like of shape (n_samples, n_features)
        Training rows (MNIST scaled to [0, 1] and flattened in the paper).
    y_train : array-like of shape (n_samples,)
        Their labels.
    X_test : array-like of shape (n_test, n_features)
        Held-out rows; the attacks reconstruct them.
    y_test : array-like of shape (n_test,)
        Their labels.
    n_draws : int, default=200
        Noise draws per kind of noise (the paper's 200), or per level with ``n_levels``.
    n_levels : int, default=None
        Evenly spaced noise levels in ``(0, upper]``, ``n_draws`` draws each, instead of the
        paper's uniform draws.
    attacks : bool, default=True
        Run the attacks; ``False`` measures utility only.
    auditor : {"auto", "pca"}, default="auto"
        The linkage metric's embedding: ``"auto"`` trains the paper's CNN auditor once when
        ``skdc[nn]`` is installed (else PCA, saying why in ``details["auditor_note"]``).
    model : {"logistic", "cnn"}, default="logistic"
        The utility model (``"cnn"``: the paper's Table 2 CNN and recipe, needs ``skdc[nn]``).
    n_participants : int, default=10
        Participants ``p``.
    n_anchors : int, default=400
        Rows ``r`` of the orthonormal anchor.
    n_components : int, default=100
        Features after the public projection ``F``.
    v_max : float, default=0.5
        The largest anchor noise (the paper's 0.5).
    sigma_max : float, default=50.0
        The largest private-data noise, capped at four times the RMS of the projected rows.
        skdc's projection ``F`` has entries of variance ``1 / 100``, so its ``sigma`` is the
        paper's divided by 10: on MNIST the cap, about 3.8, is about 38 in the paper's units,
        short of the paper's ``sigma = 50``, whose end of Fig. 4(a) is therefore not
        comparable.
    random_state : int, default=0
        Seeds the deployment, the draws and the auditor.
    n_jobs : int, default=None
        Parallel draws, as in joblib.
    progress : bool or "auto", default="auto"
        Progress bars; ``"auto"`` shows them when stderr is a terminal.

    Returns
    -------
    reproduction : Reproduction
        ``table``: both sweeps' draws (:func:`sweep_private_and_anchor_noise`); ``details``:
        ``summary`` (mean balanced accuracy and strongest attacks per method), ``auditor``
        (``"cnn"`` or ``"pca"``), for the CNN ``auditor_rows``, ``auditor_epoch``,
        ``auditor_seconds`` and ``auditor_accuracy`` (clean test balanced accuracy), else
        ``auditor_note`` (why not, or ``None``), and with attacks ``headline``: per kind of
        noise a dict of ``label``, ``paper``, ``fit``, ``low``, ``high`` and ``span`` (the
        observed linkage range), or ``fit=None`` with too few draws; the figure: the noise
        curves and, with attacks, the frontiers in linkage and in relative error.

    See Also
    --------
    sweep_private_and_anchor_noise : The two sweeps for any pipelines.
    reproduce_mnist_equivalence : The noiseless controls.

    {references}

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from skdc.experiments import reproduce_mnist_sweep
    >>> X, y = make_classification(n_samples=300, n_features=20, n_informative=8,
    ...                            random_state=0)
    >>> rep = reproduce_mnist_sweep(X[:200], y[:200], X[200:], y[200:], n_draws=1,
    ...                             n_levels=1, attacks=False, n_participants=3, n_anchors=30,
    ...                             n_components=10, v_max=0.05, progress=False)
    >>> rep.table[["method", "param"]].values.tolist()
    [['C-GDP (private noise)', 'gdp__noise'], ['AA-I-GDP (anchor noise)', 'align__v']]
    """
    pipes = _mnist_pipelines(model, n_participants, n_anchors, n_components, random_state)
    details = {}
    fitted = _frozen_auditor(auditor if attacks else "pca", X_train, y_train, X_test, y_test,
                             random_state, details)
    rms = float(np.sqrt(np.mean(pipes["C-GDP"][:1].fit_transform(X_train) ** 2)))
    results = sweep_private_and_anchor_noise(
        pipes["C-GDP"], pipes["AA-I-GDP (anchor noise)"], X_train, y_train, X_test, y_test,
        noise_values=_noise_values(n_levels, min(4 * rms, sigma_max)),
        v_values=_noise_values(n_levels, v_max), n_draws=n_draws, attacks=attacks,
        auditor=fitted, random_state=random_state, n_jobs=n_jobs, progress=progress)
    shown = ["balanced_accuracy", *(["strongest", "strongest_linkage"] if attacks else [])]
    details["summary"] = results.groupby("method")[shown].mean()
    details["v_max"] = v_max
    if attacks:
        details["headline"] = _headline(results, random_state)
    return Reproduction("mnist-sweep", results, details=details, figure=_sweep_figure)


def _noise_values(n_levels, upper):
    """The paper's ``U[0, upper]`` draws, or ``n_levels`` evenly spaced levels in
    ``(0, upper]``."""
    if n_levels is None:
        from scipy import stats

        return stats.uniform(0, upper)
    return np.linspace(0.0, upper, n_levels + 1)[1:]


def _frozen_auditor(auditor, X_tr, y_tr, X_te, y_te, seed, details):
    """The linkage auditor: with ``"auto"`` the paper's CNN (Table 3) trained once on the clean
    training images and then frozen, shared by every draw and attack; ``"pca"`` (a PCA fitted
    on each draw's clean target rows) otherwise, or without skdc.nn. What was chosen, and
    how the CNN did, goes into ``details``."""
    details.update(auditor="pca", auditor_note=None)
    if auditor == "pca":
        return "pca"
    try:
        from ..nn import LinkageAuditor
    except ImportError as exc:
        details["auditor_note"] = f"the CNN auditor needs skdc[nn]: {exc}"
        return "pca"
    from sklearn.metrics import balanced_accuracy_score

    start = time.perf_counter()
    fitted = LinkageAuditor(random_state=seed).fit(X_tr, y_tr)
    details.update(auditor="cnn", auditor_rows=len(X_tr), auditor_epoch=fitted.best_epoch_,
                   auditor_seconds=time.perf_counter() - start,
                   auditor_accuracy=balanced_accuracy_score(y_te, fitted.predict(X_te)))
    return fitted


def _headline(results, seed):
    """The utility each kind of noise keeps at the paper's 12.4% linkage (Fig. 5)."""
    rows = []
    for method, column, label, paper in _HEADLINE:
        got = _utility_at_linkage(results, method, column, _HEADLINE_LINKAGE, seed)
        fit, low, high, span = got if got is not None else (None, None, None, None)
        rows.append({"label": label, "paper": paper, "level": _HEADLINE_LINKAGE, "fit": fit,
                     "low": low, "high": high, "span": span})
    return rows


def _utility_at_linkage(results, method, column, level, seed):
    """``(fit, low, high, span)``: the spline of balanced accuracy on linkage (min-max
    normalised, 10,000 resamples; Fig. 5 of the noisy-anchor paper) at ``level``, and the
    observed linkage range; None without draws."""
    from ._spline import fit_spline_band

    rows = results[results["method"] == method]
    linkage = 1.0 - rows[column].to_numpy(dtype=float)  # the table holds 1 - linkage
    acc = rows["balanced_accuracy"].to_numpy(dtype=float)
    keep = np.isfinite(linkage) & np.isfinite(acc)
    if keep.sum() < 3:
        return None
    band = fit_spline_band(linkage[keep], acc[keep], y_range=(0.0, 1.0), random_state=seed)
    low = float(np.interp(level, band.grid, band.lower[:, 0]))
    high = float(np.interp(level, band.grid, band.upper[:, 0]))
    fit = float(np.clip(band.predict(level)[0], 0.0, 1.0))
    return fit, low, high, (float(linkage[keep].min()), float(linkage[keep].max()))


def _sweep_figure(rep):
    """The noise curves of both sweeps and, with attacks, the two frontiers."""
    import matplotlib.pyplot as plt

    from ._plot import plot_frontier, plot_noise_curves

    results, v_max = rep.table, rep.details["v_max"]
    cg = results[results["param"] == "gdp__noise"]
    aa = results[results["param"] == "align__v"]
    attacks = [c for c in _ANCHOR_ATTACKS if c in aa]
    cols = "strongest" in results
    fig, axes = plt.subplots(1, 4 if cols else 2, figsize=(19 if cols else 10, 4.2),
                             layout="constrained")
    plot_noise_curves(cg, "balanced_accuracy", x_range=(0, cg["value"].max()), ax=axes[0])
    axes[0].set_xlabel("private-data noise sigma")
    axes[0].set_ylabel("test balanced accuracy")
    plot_noise_curves(aa, ["balanced_accuracy", *attacks], x_range=(0, v_max), y_range=None,
                      ax=axes[1])
    axes[1].set_xlabel("anchor noise v")
    if cols:
        plot_frontier(results, "strongest_linkage", "balanced_accuracy", ax=axes[2])
        axes[2].set_xlabel("strongest attack's linkage privacy (1 - linkage accuracy)")
        axes[2].set_title("frontier in the paper's metric (linkage)")
        plot_frontier(results, "strongest", "balanced_accuracy", ax=axes[3])
        axes[3].set_xlabel("strongest attack's relative error")
        axes[3].set_title("frontier in relative reconstruction error")
        for ax in axes[2:]:
            ax.set_ylabel("test balanced accuracy")
    return fig
