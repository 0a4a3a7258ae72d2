"""Scorers of the provable reconstruction floor, beside the attack scorers.

The reconstruction bound of :mod:`skdc.privacy` says that no attack reconstructs a record with
a ratio ``rho = sqrt(E||z - z_hat||^2 / tr Sigma)`` below ``rho*(gamma)``, where ``gamma`` is
the release's leakage in bits (Corollary 3.7 of [1]_). These scorers put that floor next to the
attack scorers of :func:`make_attack_scorer` in one ``GridSearchCV(scoring={...})`` dict:
:func:`make_bound_scorer` returns the floor of a fitted pipeline's mechanism,
:func:`make_slack_scorer` and :func:`bound_slack_score` an attack's error minus that floor
(negative on average only with a bug or an invalid attack), and
:func:`reconstruction_ratio_score` an attack's empirical ``rho``.

References
----------
.. [1] Bourne and Allison, "From Pixels to Privacy-Sensitive Features: An Information-Theoretic
   Framework for Reconstruction Bounds", arXiv:2610.13768, 2026.
"""

# Licence: BSD 3 clause

import math
from numbers import Real

import numpy as np

from ..privacy import mechanism_leakage_bits
from ..utils._reconstruction import reconstruction_ratio
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params

__all__ = [
    "bound_slack_score",
    "make_bound_scorer",
    "make_slack_scorer",
    "reconstruction_ratio_score",
]


@validate_params(
    {
        "Z_true": ["array-like"],
        "Z_hat": ["array-like"],
        "trace": [Interval(Real, 0, None, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def reconstruction_ratio_score(Z_true, Z_hat, trace):
    """Empirical ``rho`` of an attack: ``sqrt(mean ||z - z_hat||^2 / trace)`` (lower: stronger).

    Read more in the :ref:`User Guide <floor_tightness>`.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.metrics import reconstruction_ratio_score
    >>> reconstruction_ratio_score(np.ones((2, 2)), np.zeros((2, 2)), 8.0)
    0.5
    """
    return reconstruction_ratio(Z_true, Z_hat, trace)


@validate_params(
    {"attack_error": [Real, "array-like", callable], "bound": [Real, "array-like", callable]},
    prefer_skip_nested_validation=True,
)
def bound_slack_score(attack_error, bound):
    """An attack's error minus the provable floor; a negative *mean* signals a bug.

    Read more in the :ref:`User Guide <floor_and_attacks>`.

    Parameters
    ----------
    attack_error : float, array-like, or callable
        The attack's error (``rho`` or RMSE; the same units as ``bound``), several errors, or a
        scorer-like callable ``() -> error``.
    bound : float, array-like, or callable
        The floor in the same units, or a callable ``() -> floor``.

    Returns
    -------
    slack : float or ndarray

    Examples
    --------
    >>> from skdc.metrics import bound_slack_score
    >>> round(bound_slack_score([0.9, 0.8], 0.6), 2)
    0.25
    """
    a = attack_error() if callable(attack_error) else attack_error
    b = bound() if callable(bound) else bound
    slack = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if slack.ndim:
        slack = float(slack.mean())
    return float(slack)


def _find_mechanism(estimator):
    steps = getattr(estimator, "steps", None)
    if steps is None:
        return estimator
    for _, step in steps:
        if hasattr(step, "noise") or hasattr(step, "leakage_bits"):
            return step
    raise TypeError("the pipeline has no mechanism step with a noise level or leakage_bits().")


@validate_params(
    {
        "bound": [HasMethods(["rho_star", "mse_floor"])],
        "radius": [Interval(Real, 0, None, closed="left")],
        "units": [StrOptions({"rho", "rmse"})],
    },
    prefer_skip_nested_validation=True,
)
def make_bound_scorer(bound, *, radius, units="rho"):
    """Scorer giving the provable error floor of a fitted pipeline's mechanism.

    Read more in the :ref:`User Guide <floor_and_attacks>`.

    The returned callable has the scorer signature ``(estimator, X, y=None) -> float``, so it
    sits next to the attack scorers in ``GridSearchCV(scoring={...})``. It finds the mechanism
    (the first step with a ``noise`` level or ``leakage_bits()``), bounds its per-record leakage
    and returns ``bound.rho_star(gamma)`` (``units="rho"``) or the per-row RMSE floor
    ``sqrt(mse_floor / n_features)`` (``units="rmse"``) for the evaluation rows' population.

    Parameters
    ----------
    bound : ReconstructionBound
        Fitted on the population of the evaluation rows (pixel or feature space).
    radius : float
        Public bound on the norm of a row around its known centre (e.g. the anchor centre).
    units : {"rho", "rmse"}, default="rho"
        Output units.

    Returns
    -------
    scorer : callable

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import CGDP
    >>> from skdc.metrics import make_bound_scorer
    >>> from skdc.privacy import ReconstructionBound
    >>> X = np.random.RandomState(0).rand(40, 3)
    >>> mech = CGDP(2, noise=5.0, random_state=0).fit(X)
    >>> bound = ReconstructionBound([{"k": 1, "nu2": 0.2, "h_lb": 2.0}])
    >>> scorer = make_bound_scorer(bound, radius=1.0)
    >>> round(scorer(mech, X), 4)
    0.8367
    """
    def scorer(estimator, X, y=None):
        gamma = mechanism_leakage_bits(_find_mechanism(estimator), radius)
        if not np.isfinite(gamma):
            return 0.0
        if units == "rho":
            return bound.rho_star(gamma)[0]
        return math.sqrt(bound.mse_floor(gamma) / np.asarray(X).shape[1])

    scorer.__name__ = "bound_floor"
    return scorer


@validate_params(
    {"attack_scorer": [callable], "bound_scorer": [callable], "attack_sign": [Real]},
    prefer_skip_nested_validation=True,
)
def make_slack_scorer(attack_scorer, bound_scorer, *, attack_sign=1.0):
    """Scorer ``(estimator, X, y) -> attack error - provable floor`` for model selection.

    Read more in the :ref:`User Guide <floor_and_attacks>`.

    Parameters
    ----------
    attack_scorer : callable
        A scorer ``(estimator, X, y) -> error`` of an attack (same units as the floor).
    bound_scorer : callable
        A scorer from :func:`make_bound_scorer`.
    attack_sign : float, default=1.0
        Multiplies the attack scorer's output: pass ``-1`` for a scikit-learn scorer built with
        ``greater_is_better=False``, which returns the negated error.

    Returns
    -------
    scorer : callable
        A negative mean over folds signals a bug or an invalid attack.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import CGDP
    >>> from skdc.metrics import make_bound_scorer, make_slack_scorer
    >>> from skdc.privacy import ReconstructionBound
    >>> X = np.random.RandomState(0).rand(40, 3)
    >>> mech = CGDP(2, noise=5.0, random_state=0).fit(X)
    >>> floor = make_bound_scorer(ReconstructionBound([{"k": 1, "nu2": 0.2, "h_lb": 2.0}]),
    ...                           radius=1.0)
    >>> slack = make_slack_scorer(lambda est, X, y=None: 0.9, floor)  # an attack's rho of 0.9
    >>> round(slack(mech, X), 4)
    0.0633
    """

    def scorer(estimator, X, y=None):
        return bound_slack_score(attack_sign * attack_scorer(estimator, X, y),
                                 bound_scorer(estimator, X, y))

    scorer.__name__ = "bound_slack"
    return scorer
