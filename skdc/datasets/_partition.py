"""Partitions of rows among participants, as in the papers' experiments.

``stratified`` deals each class's rows out evenly (the IID split of the GDP paper);
``dirichlet`` draws each class's participant shares from a Dirichlet distribution (label skew);
``quantity`` draws participant sizes from a Dirichlet distribution (quantity skew). The result is
the ``participant`` array to pass as routed metadata (the developer guide, section 3: who is
which participant).
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from ..utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["partition"]


@validate_params(
    {
        "y": ["array-like"],
        "n_participants": [Interval(Integral, 1, None, closed="left")],
        "strategy": [StrOptions({"stratified", "dirichlet", "quantity"})],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "min_rows": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def partition(y, n_participants, *, strategy="stratified", alpha=0.5, min_rows=1,
              random_state=None):
    """Assign each row to a participant.

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels (used by the stratified and Dirichlet label-skew splits; only the length is used
        by ``quantity``).
    n_participants : int
        Number of participants.
    strategy : {'stratified', 'dirichlet', 'quantity'}, default='stratified'
        ``stratified``: every participant gets an (almost) equal share of every class (IID).
        ``dirichlet``: class ``k``'s rows are split with shares drawn from
        ``Dirichlet(alpha)`` (label skew; smaller ``alpha`` is more skewed).
        ``quantity``: participant sizes are drawn from ``Dirichlet(alpha)`` (quantity skew).
    alpha : float, default=0.5
        Concentration of the Dirichlet draws.
    min_rows : int, default=1
        Every participant gets at least this many rows (rows are moved from the largest
        participants when needed).
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    participant : ndarray of int of shape (n_samples,)
        The participant of each row, ids ``0 .. n_participants - 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.datasets import partition
    >>> y = np.repeat([0, 1], 6)
    >>> ids = partition(y, 3, random_state=0)
    >>> np.bincount(ids).tolist(), np.bincount(ids[y == 0]).tolist()
    ([4, 4, 4], [2, 2, 2])
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D with one label per row; got shape {y.shape}.")
    n = y.shape[0]
    p = n_participants
    if n < p * max(min_rows, 1):
        raise ValueError(
            f"{n} rows cannot give each of the {p} participants at least "
            f"{max(min_rows, 1)} row(s). Lower n_participants or min_rows."
        )
    rng = check_random_state(random_state)
    out = np.empty(n, dtype=np.intp)
    if strategy == "quantity":
        shares = rng.dirichlet(np.full(p, alpha))
        order = rng.permutation(n)
        cuts = np.floor(np.cumsum(shares)[:-1] * n).astype(int)
        for i, rows in enumerate(np.split(order, cuts)):
            out[rows] = i
    else:
        offset = 0
        for k in np.unique(y):
            rows = rng.permutation(np.flatnonzero(y == k))
            if strategy == "stratified":
                # deal rows round-robin, starting where the last class stopped (balanced sizes)
                out[rows] = (offset + np.arange(rows.size)) % p
                offset = (offset + rows.size) % p
            else:
                shares = rng.dirichlet(np.full(p, alpha))
                cuts = np.floor(np.cumsum(shares)[:-1] * rows.size).astype(int)
                for i, part in enumerate(np.split(rows, cuts)):
                    out[part] = i
    _ensure_min_rows(out, p, max(min_rows, 1), rng)
    return out


def _ensure_min_rows(out, p, min_rows, rng):
    counts = np.bincount(out, minlength=p)
    for i in np.flatnonzero(counts < min_rows):
        need = min_rows - counts[i]
        donor = int(np.argmax(counts))
        moved = rng.choice(np.flatnonzero(out == donor), size=need, replace=False)
        out[moved] = i
        counts[donor] -= need
        counts[i] += need
