"""The one train/held-out split of the audit, the comparison and the calibration: the rows,
their labels and their participants, as one :class:`HeldOut`."""

# Licence: BSD 3 clause

from dataclasses import dataclass

import numpy as np

from ..utils._draw_jobs import _is_classification
from ._targets import _fixed_partition

__all__ = ["HeldOut"]


@dataclass
class HeldOut:
    """One train/held-out split of the rows and their participants (``None`` when not given):
    the audit's, the comparison's (every option uses it) and a calibration's.

    Attributes
    ----------
    X_train, y_train, participant_train : ndarray
        The training rows, their labels and participants.
    X_test, y_test, participant_test : ndarray
        The held-out rows (utility; the attacks read the training rows too).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    participant_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    participant_test: np.ndarray


def _split_parties(X, y, parties, test_size, rng, pipe):
    """The audit's and the comparison's one split (stratified on the parties when the user
    gives them, else on the labels), the parties of its rows computed once: the user's
    partition, or the mechanism's keyed hash under the audit's seed."""
    from sklearn.model_selection import train_test_split

    seed = rng.randint(2**31 - 1)
    if parties is None:
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, stratify=y,
                                                  random_state=seed)
        p_tr, p_te = _fixed_partition(pipe, X_tr, y_tr, X_te)
        return HeldOut(X_tr, y_tr, p_tr, X_te, y_te, p_te)
    X_tr, X_te, y_tr, y_te, p_tr, p_te = train_test_split(
        X, y, parties, test_size=test_size, stratify=parties, random_state=seed)
    return HeldOut(X_tr, y_tr, p_tr, X_te, y_te, p_te)


def _split_rows(X, y, participant, test_size, test_data, rng):
    """The :class:`HeldOut` split of a calibration: ``test_data`` as given, else one split drawn
    from ``rng`` (stratified on a classification ``y``), the ids split alongside."""
    from sklearn.model_selection import train_test_split

    if test_data is not None:
        if len(test_data) not in (2, 3):
            raise ValueError("test_data must be (X_test, y_test) or (X_test, y_test, "
                             f"participant_test); got a tuple of {len(test_data)}.")
        X_te, y_te, p_te = (*test_data, None)[:3]
        if participant is not None and p_te is None:
            raise ValueError("participant= gives the training rows' ids; with test_data pass "
                             "the held-out rows' ids too: test_data=(X_test, y_test, "
                             "participant_test).")
        return HeldOut(X, y, participant, X_te, y_te, p_te)
    arrays = [X] + ([] if y is None else [y]) + ([] if participant is None else [participant])
    stratify = y if y is not None and _is_classification(y) else None
    parts = train_test_split(*arrays, test_size=test_size, stratify=stratify,
                             random_state=rng.randint(2**31 - 1))
    X_tr, X_te = parts[0], parts[1]
    y_tr, y_te = (parts[2], parts[3]) if y is not None else (None, None)
    p_tr, p_te = (parts[-2], parts[-1]) if participant is not None else (None, None)
    return HeldOut(X_tr, y_tr, p_tr, X_te, y_te, p_te)
