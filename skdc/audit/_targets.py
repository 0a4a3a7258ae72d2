"""Who is who in a calibrated deployment (the colluder, the attacked party, the partition of
the rows) and what its attacks are judged against (error ratios, linkage, the sensitive
column's inference)."""

# Licence: BSD 3 clause

import math
from functools import partial
from numbers import Integral, Real

import numpy as np

from ._criteria import _SENSITIVE, _UNLINKED

# ----------------------------------------------------------------------------- who is who


def _n_participants(estimator):
    """The mechanism's ``n_participants`` (``None`` without a mechanism)."""
    params = estimator.get_params(deep=True)
    keys = [k for k in params if k == "n_participants" or k.endswith("__n_participants")]
    return int(params[keys[0]]) if keys else None


def _resolve_target(colluder, target, n_participants):
    """The attacked participant, checked against the colluder(s) and the participants.

    The one place both :func:`calibrate_noise` and the audit resolve the roles: ``None``
    gives the smallest id that is not a colluder (1, or 0 when participant 1 colludes); the
    ids are checked by :func:`skdc.attacks.check_colluders`.

    Examples
    --------
    >>> from skdc.audit._targets import _resolve_target
    >>> _resolve_target(0, None, 3), _resolve_target(1, None, 3), _resolve_target([0, 1], 2, 3)
    (1, 0, 2)
    """
    from ..attacks import check_colluders

    if target is None:
        colluders = check_colluders(colluder, n_participants=n_participants)
        target = next(i for i in range(len(colluders) + 1) if i not in colluders)
        if n_participants is not None and target >= n_participants:
            raise ValueError("every participant colludes; leave one to attack.")
    check_colluders(colluder, target=target, n_participants=n_participants)
    return int(target)


def _check_ids(ids, n_rows, n_participants, what):
    """Participant ids of ``n_rows`` rows as an int array, each in ``0 .. n - 1``."""
    ids = np.asarray(ids)
    if ids.shape != (n_rows,) or ids.dtype.kind not in "iu":
        raise ValueError(f"{what} must hold one integer participant id per row ({n_rows}); "
                         f"got shape {ids.shape}, dtype {ids.dtype}.")
    if ids.size and (ids.min() < 0 or (n_participants is not None
                                       and ids.max() >= n_participants)):
        top = "" if n_participants is None else f" .. {n_participants - 1}"
        raise ValueError(f"{what} must hold ids 0{top}; got ids from {ids.min()} to "
                         f"{ids.max()}.")
    return ids.astype(np.int64)


def _fixed_partition(estimator, X_train, y_train, X_test):
    """``(ids of the training rows, ids of the held-out rows)`` as the pipeline's own
    mechanism assigns them (its keyed hash under its ``random_state``), computed once so that
    a draw redrawing the mechanism's seeds keeps the partition; ``(None, None)`` without a
    mechanism step."""
    from sklearn.base import clone

    from ..mechanisms import BaseMechanism

    steps = getattr(estimator, "steps", None)
    if steps is None:
        return None, None
    k = next((j for j, (_, s) in enumerate(steps) if isinstance(s, BaseMechanism)), None)
    if k is None:
        return None, None
    X_tr, X_te = X_train, X_test
    for _, step in steps[:k]:
        if step is None or step == "passthrough":
            continue
        step = clone(step)
        X_tr = step.fit_transform(X_tr, y_train)
        X_te = step.transform(X_te)
    mech = clone(steps[k][1]).fit(X_tr)
    return (np.asarray(mech.transform(X_tr).participant),
            np.asarray(mech.transform(X_te).participant))


# ----------------------------------------------------------------------------- attacks, targets


def _attack_scorers(attack, colluder, target, test_participant=None):
    """Attack scorers as ``{name: scorer}``; names through ``make_attack_scorer`` built with
    ``colluder`` and ``target``. With ``test_participant``, the named attacks read the
    held-out rows' participants from it (the fixed partition), not from the mechanism."""
    if isinstance(attack, str) or callable(attack):
        attack = [attack]
    if isinstance(attack, dict):
        items = list(attack.items())
    else:
        items = [(a if isinstance(a, str) else getattr(a, "__name__", None), a)
                 for a in attack]
    if not items:
        raise ValueError("attack is empty; pass at least one attack name or scorer.")
    out = {}
    for k, (name, a) in enumerate(items):
        if isinstance(a, str):
            from ..metrics import make_attack_scorer

            a = make_attack_scorer(a, colluder=colluder, target=target)
            if test_participant is not None:
                a = partial(a, participant=test_participant)
        elif not callable(a):
            raise TypeError(
                "Each attack must be a name of skdc.metrics.make_attack_scorer or a scorer "
                f"callable scorer(fitted, X, y) -> float; got {type(a).__name__}."
            )
        name = name or f"attack{k}"
        if name in out:
            raise ValueError(f"Two attacks are named {name!r}; pass a dict to name them.")
        out[name] = a
    return out


# The default linkage target: exact-source linkage at most chance (0.1 with ten-way
# galleries) + 0.05, the GDP paper's standard (its MNIST headline at 12.4 % linkage)
_MAX_LINKAGE = 0.15


def _attack_of(column):
    """The attack behind a judged column (``"mp unlinked"`` -> ``"mp"``)."""
    for suffix in (_UNLINKED, _SENSITIVE):
        if column.endswith(suffix):
            return column[:-len(suffix)]
    return column


def _linkage_params():
    """The attacker's matcher of exact-source linkage, defined once for the calibration, the
    audit and the comparison: the best of the matchers :mod:`skdc.metrics` offers
    (``matcher="best"``: Euclidean, cosine, PCA embedding and Mahalanobis under the
    colluder's covariance; not the CNN auditor, which is for images), its expected accuracy
    over every ten-way gallery (``galleries='all'``: exact, so no gallery draw adds noise to
    a deployment's linkage); on a target of more than 2,000 rows, 2,000 of them query, the
    same ones in every draw (``random_state=0``), so the cost stays linear in the rows."""
    return {"matcher": "best", "auditor": "pca", "galleries": "all", "random_state": 0}


def _named(attack):
    """``{column: attack name}`` of the attacks given by name (a scorer callable has no
    reconstruction to link or read a column from)."""
    if isinstance(attack, str):
        return {attack: attack}
    if isinstance(attack, dict):
        return {k: a for k, a in attack.items() if isinstance(a, str)}
    if callable(attack):
        return {}
    return {a: a for a in attack if isinstance(a, str)}


class _Sensitive:
    """How much worse than the attacker's own guess the reconstructions predict a sensitive
    column (higher = more private): ``MSE(reconstruction) / MSE(prior guess)``, the prior
    guess of a target row being the mean of the column over the colluders' rows of its label
    (the labels reach the analyst in every option; the colluders' rows are the attacker's
    own). 1 - this ratio is how much better the attacker predicts the column from the
    reconstructions than from what it already holds (at most 1: an exact reconstruction);
    the ratio is capped at 1e6."""

    def __init__(self, attack, column, colluder, target, participant=None):
        self.attack, self.column = attack, int(column)
        self.colluder, self.target, self.participant = colluder, target, participant

    def __call__(self, estimator, X, y=None):
        from ..attacks import collusion_view, make_attack

        view = collusion_view(estimator, X, colluder=self.colluder, target=self.target,
                              participant=self.participant)
        rec = make_attack(self.attack).reconstruct(view)
        j = self.column
        y = None if y is None else np.asarray(y)
        prior = _prior_guess(view.colluder_X_input[:, j],
                             None if y is None else y[view.colluder_rows],
                             None if y is None else y[view.target_rows],
                             len(view.target_rows))
        return _error_ratio(view.truth.X[:, j], rec.X[:, j], prior)


def _prior_guess(x_colluder, y_colluder, y_target, n_target):
    """The attacker's guess of a column without the reconstructions: the colluders' mean of
    it among their rows of the target row's label (their overall mean for a label they lack,
    or without labels)."""
    overall = float(np.mean(x_colluder)) if x_colluder.size else 0.0
    guess = np.full(n_target, overall)
    if y_colluder is None or y_target is None:
        return guess
    for label in np.unique(y_target):
        own = y_colluder == label
        if own.any():
            guess[y_target == label] = float(np.mean(x_colluder[own]))
    return guess


def _error_ratio(truth, guess, prior):
    """``MSE(guess) / MSE(prior)`` of a column (1 when both are exact; at most 1e6; a NaN
    guess counts as exact, failing the target as NaN errors do)."""
    mse = float(np.mean((np.asarray(truth) - np.asarray(guess)) ** 2))
    base = float(np.mean((np.asarray(truth) - np.asarray(prior)) ** 2))
    if math.isnan(mse):
        return 0.0
    if base <= 0.0:
        return 1.0 if mse <= 0.0 else 1e6
    return float(min(mse / base, 1e6))


def _judged(attack, colluder, target, test_participant, min_error, max_linkage, sensitive,
            max_sensitive_gain, n_features=None):
    """``(attacks, targets, errors)``: every column a draw scores (each attack's relative
    error; for the attacks given by name, ``"NAME unlinked"``, one minus its exact-source
    linkage accuracy, when ``max_linkage`` is given, and ``"NAME sensitive"``, the error
    ratio of the sensitive column, when ``sensitive`` is), the target of each judged column
    (higher is more private: 1 - ``max_linkage``, 1 - ``max_sensitive_gain``) and the names
    of the relative-error columns."""
    from ..metrics import make_attack_scorer

    attacks = _attack_scorers(attack, colluder, target, test_participant)
    named = _named(attack)
    targets = {} if min_error is None else _targets(min_error, list(attacks))
    if max_linkage is not None:
        if not named:
            if min_error is None:
                raise ValueError("max_linkage= judges the attacks given by name; the attacks "
                                 "are scorer callables. Name them, or give min_error=.")
        link = _linkage_params()
        for col, name in named.items():
            s = make_attack_scorer(name, metric="linkage", colluder=colluder, target=target,
                                   metric_params=link)
            if test_participant is not None:
                s = partial(s, participant=test_participant)
            attacks[col + _UNLINKED] = s
            targets[col + _UNLINKED] = 1.0 - float(max_linkage)
    if sensitive is not None:
        if isinstance(sensitive, bool) or not isinstance(sensitive, Integral) or not (
                0 <= sensitive < (n_features if n_features is not None else sensitive + 1)):
            raise ValueError(f"sensitive must be a column index from 0 to {n_features - 1}; "
                             f"got {sensitive!r}.")
        for col, name in named.items():
            attacks[col + _SENSITIVE] = _Sensitive(name, sensitive, colluder, target,
                                                   test_participant)
            if max_sensitive_gain is not None:
                targets[col + _SENSITIVE] = 1.0 - float(max_sensitive_gain)
    elif max_sensitive_gain is not None:
        raise ValueError("max_sensitive_gain= is a target for the sensitive column; name it "
                         "with sensitive=.")
    if not targets:
        raise ValueError("Nothing is judged: give a linkage target (max_linkage=) or an error "
                         "target (min_error=).")
    return attacks, targets, list(named)


def _targets(min_error, names):
    """One target error per attack: finite and not negative (an error is a distance)."""
    if isinstance(min_error, dict):
        unknown = sorted(set(min_error) - set(names))
        lacking = [n for n in names if n not in min_error]
        if unknown or lacking:
            raise ValueError(
                f"min_error names the attacks {sorted(min_error)}, the attacks are "
                f"{list(names)}; give one target per attack (or one float for all)."
            )
        targets = dict(min_error)
    else:
        targets = dict.fromkeys(names, min_error)
    for name, t in targets.items():
        if not isinstance(t, (Real, np.floating)) or isinstance(t, (bool, np.bool_)):
            raise TypeError(f"min_error must be a float or a dict {{attack: float}}; got "
                            f"{t!r} for {name}.")
        if not (math.isfinite(t) and t >= 0):
            raise ValueError(f"min_error must be a finite error >= 0 (an attack error is a "
                             f"distance); got {t!r} for {name}.")
    return {n: float(t) for n, t in targets.items()}
