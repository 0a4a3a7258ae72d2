"""What a comparison returns: one :class:`ComparedOption` per option, the held-out rows
they were scored on, and the :class:`Comparison` with its tables, figure and report."""

# Licence: BSD 3 clause

from dataclasses import dataclass, field

from ..utils._folders import write_outputs
from ._split import HeldOut

__all__ = ["ComparedOption", "Comparison"]


# ----------------------------------------------------------------------------- results


@dataclass(eq=False)
class ComparedOption:
    """One option of a :func:`compare_options` comparison, at its setting.

    Read more in the :ref:`User Guide <safety>`.

    Attributes
    ----------
    name : str
        ``"local"``, ``"central"``, ``"igdp"``, ``"cgdp"``, ``"kti"`` or ``"gaussmix@EPS"``.
    label : str
        The option in words.
    protection : str
        ``"nothing shared"``, ``"none"`` (raw rows), ``"empirical"`` (attack-relative) or
        ``"formal"`` (``(epsilon, delta)``-DP).
    setting : str
        The setting in words (``"anchor noise v = 0.19"``; ``""`` when there is none).
    value : float
        The setting's value (the anchor noise, the private-data noise, the dimension or
        epsilon); NaN for Local and Central.
    utility : float
        Mean balanced accuracy on the held-out rows.
    utility_interval : tuple of (float, float)
        Its interval at the comparison's confidence: Student-t over the deployments drawn, or,
        for Local and Central (nothing random), a percentile bootstrap over the held-out rows.
    interval_over : str
        What the interval is over.
    n_draws : int
        Simulated deployments at the setting.
    attack : str or None
        The strongest attack (the binding one at the setting); ``None`` when none applies.
    attack_error : float
        Its error that a fresh deployment exceeds at the comparison's confidence (the
        criterion's lower bound over the draws); 0 for Central; NaN when no attack applies.
    attack_error_median : float
        Its median error over the draws.
    linkage : float
        Exact-source linkage accuracy of the strongest attack's reconstructions (chance in
        ``linkage_chance``); NaN when not measured.
    linkage_chance : float
        A random guess's linkage accuracy.
    inference : float
        Label accuracy of a clean-data classifier on the reconstructions (the KTI paper's
        ReconAcc); NaN when not measured.
    inference_chance : float
        The target's majority-label share (guessing the commonest label). The labels reach
        the analyst in every option, so label inference is no risk measure of its own.
    sensitive_gain : float
        How much better the strongest attack predicts the ``sensitive`` column from the
        reconstructions than from what it already holds (median over the deployments at the
        setting, ``1 - MSE(reconstruction) / MSE(own guess)``); NaN when no column was
        named.
    epsilon, delta : float
        The formal guarantee (GaussMix only; NaN otherwise).
    meets : bool or None
        Whether the option meets the target at the confidence (``None``: not measured, or
        nothing shared).
    calibration : NoiseCalibration or None
        The calibration of a calibrated option.
    draws : pandas.DataFrame
        The option's draws (calibration and measurement), column ``stage`` telling which.
    extra : dict
        What the option's own report section needs: each attack's measured ``(linkage,
        inference)`` and the pipeline of a calibrated option; the KTI route's ``top`` and
        ``dimension``; GaussMix's sketch rows ``k``, ``scale`` (gamma), ``noise`` (sigma),
        ``row_bound``, ``row_bound_z`` and the share of rows ``clipped``.
    """

    name: str
    label: str
    protection: str
    setting: str
    value: float
    utility: float
    utility_interval: tuple
    interval_over: str
    n_draws: int
    attack: object = None
    attack_error: float = float("nan")
    attack_error_median: float = float("nan")
    linkage: float = float("nan")
    linkage_chance: float = float("nan")
    inference: float = float("nan")
    inference_chance: float = float("nan")
    sensitive_gain: float = float("nan")
    epsilon: float = float("nan")
    delta: float = float("nan")
    meets: object = None
    calibration: object = field(default=None, repr=False)
    draws: object = field(default=None, repr=False)
    extra: dict = field(default_factory=dict, repr=False)


@dataclass(eq=False)
class Comparison:
    """The result of :func:`compare_options`: every option side by side, a verdict, the
    deployment of the chosen option and the HTML report.

    Read more in the :ref:`User Guide <safety>`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per option: utility and its interval, the cost against Local and Central,
        the strongest attack's error, exact-source linkage, attribute inference, epsilon,
        whether it meets the target.
    options : dict of {str: ComparedOption}
        Each option's result.
    verdict : dict
        ``decision``: ``"collaborate"`` when an option meets every target under every attack
        and beats each participant alone (Local), else ``"do not collaborate"``; ``sentence``
        (the answer in words, opening with the decision: "Collaborate: ..." or "Do not
        collaborate: ..."), ``meeting`` (the collaborations meeting the targets), ``formal``
        (the options with a formal guarantee), ``best`` (the meeting option of highest
        utility, or ``None``) and ``deploy`` (the meeting option of highest utility that
        ``skdc participant upload`` deploys: I-GDP or C-GDP, or ``None``; when Local does
        better the report offers it only as what to deploy should the participants
        collaborate anyway).
    regulator : pandas.DataFrame
        The risks of the Article 29 Working Party's Opinion 05/2014 on anonymisation
        techniques (singling out, linkability, inference): what measures each, and what is
        not measured.
    deployment : dict or None
        For ``verdict["deploy"]``: the audited ``settings``, their ``fingerprint`` (checked by
        ``skdc analyst fit --audit-fingerprint``), the ``commands`` each party runs, and the
        audited ``draw`` (its seeds) that the flags reproduce bit for bit.
    held_out : HeldOut
        The split and the partition.
    setting : dict
        The comparison's settings in words and numbers.
    html : str
        The self-contained report.
    files : dict of {str: str}
        What :meth:`save` wrote (empty until then).

    Examples
    --------
    >>> import tempfile
    >>> from sklearn.datasets import make_classification
    >>> from skdc.audit import compare_options
    >>> X, y = make_classification(n_samples=200, n_features=5, random_state=0)
    >>> cmp = compare_options(X, y, options=["local", "central", "gaussmix"],
    ...                       epsilons=[4.0], n_participants=2, confidence=0.75,
    ...                       progress=False)
    >>> list(cmp.table["option"])
    ['local', 'central', 'gaussmix@4']
    >>> sorted(cmp.save(tempfile.mkdtemp()))
    ['comparison', 'decisions', 'draws', 'regulator', 'report']
    """

    table: object
    options: dict = field(repr=False)
    verdict: dict = field(repr=False)
    regulator: object = field(repr=False)
    deployment: object = field(repr=False)
    held_out: HeldOut = field(repr=False)
    setting: dict = field(repr=False)
    html: str = field(repr=False)
    files: dict = field(default_factory=dict)

    def save(self, out):
        """Write ``report.html``, the CSV tables and, when an option is deployable,
        ``deployment.json`` and ``deployment.txt`` into the folder ``out``.

        Every file is written whole through a temporary file, never through a link at its
        name, readable by others as an ordinary file would be (``0644`` less the umask).

        Parameters
        ----------
        out : str or Path
            Folder (created when missing; refused when it is, or lies under, a file).

        Returns
        -------
        files : dict of {str: str}
            The files written.
        """
        import json

        import pandas as pd

        draws = pd.concat([o.draws.assign(option=k) for k, o in self.options.items()
                           if o.draws is not None and len(o.draws)], ignore_index=True) \
            if any(o.draws is not None and len(o.draws) for o in self.options.values()) \
            else pd.DataFrame({"option": []})
        draws.insert(0, "option", draws.pop("option"))
        outputs = {"report": ("report.html", self.html),
                   "comparison": ("comparison.csv", self.table.to_csv(index=False)),
                   "regulator": ("regulator.csv", self.regulator.to_csv(index=False)),
                   "draws": ("draws.csv", draws.to_csv(index=False)),
                   "decisions": ("decisions.csv", _decisions(self.options).to_csv(index=False))}
        if self.deployment is not None:
            doc = {k: self.deployment[k] for k in ("option", "settings", "fingerprint",
                                                   "commands")}
            outputs["deployment"] = ("deployment.json", json.dumps(doc, indent=2) + "\n")
            outputs["commands"] = ("deployment.txt", self.deployment["text"])
        self.files = write_outputs(out, outputs, "the comparison", folder_what="--out")
        return self.files

    def plot(self, axes=None):
        """Utility against the strongest attack's error (left) and against epsilon (right).

        Parameters
        ----------
        axes : pair of matplotlib Axes, default=None
            Where to draw; a new figure when ``None``.

        Returns
        -------
        axes : pair of matplotlib Axes
        """
        from ._compare_report import plot_comparison

        return plot_comparison(self, axes)


def _decisions(options):
    """Every calibrated option's decisions, one table (column ``option`` first)."""
    import pandas as pd

    parts = [o.calibration.decisions.assign(option=k) for k, o in options.items()
             if o.calibration is not None]
    if not parts:
        return pd.DataFrame({"option": []})
    table = pd.concat(parts, ignore_index=True)
    table.insert(0, "option", table.pop("option"))
    return table
