"""Semantic leakage: can reconstructions be linked to their sources, or labelled?

* :func:`linkage_accuracy`: the GDP paper's exact-source linkage (spec section 5.6): each
  reconstructed record queries a gallery of its true source and ``n_candidates - 1`` distinct
  same-label distractors, embedded by a frozen auditor; the candidate of largest cosine
  similarity is the prediction. Chance is ``1 / n_candidates``.
* :func:`reconstruction_label_accuracy`: the KTI paper's reconstruction accuracy (spec kti
  section 5.3): a classifier trained on clean data labels the reconstructions.

Both are leakage scores: higher means less private.
"""

# Licence: BSD 3 clause

import hashlib
from numbers import Integral

import numpy as np
from sklearn.decomposition import PCA
from sklearn.metrics import accuracy_score
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._reconstruction import _check_pair

__all__ = ["LinkageScore", "linkage_accuracy", "reconstruction_label_accuracy"]


class LinkageScore(float):
    """A linkage accuracy (a float) carrying its chance level and ranks.

    Attributes
    ----------
    chance : float
        Expected accuracy of a random guess, ``mean_k 1 / |gallery_k|``.
    n_queries : int
        Number of queries.
    ranks : ndarray of shape (n_queries,)
        Rank of the true source in each gallery (1 = linked; ties count against).
    """

    def __new__(cls, accuracy, *, chance, ranks):
        obj = super().__new__(cls, accuracy)
        obj.chance = float(chance)
        obj.ranks = ranks
        obj.n_queries = int(len(ranks))
        return obj

    def __repr__(self):
        return f"LinkageScore({float(self)!r}, chance={self.chance!r})"

    def __reduce__(self):
        return (_rebuild_linkage_score, (float(self), self.chance, self.ranks))


def _rebuild_linkage_score(accuracy, chance, ranks):
    return LinkageScore(accuracy, chance=chance, ranks=ranks)


_AUDITOR_CACHE = {}
_AUDITOR_CACHE_SIZE = 4


def _default_auditor(X_true, y):
    """The paper's frozen CNN auditor when skdc.nn is available, else a PCA embedding.

    The CNN is trained once per set of clean records and then reused (frozen), so a grid
    search scoring many candidates on the same evaluation rows trains it once.
    """
    try:
        from ..nn import LinkageAuditor
    except ImportError:  # torch/skorch or skdc.nn missing: cheap fallback
        LinkageAuditor = None
    if LinkageAuditor is None or y is None:
        return _pca_auditor(X_true)
    X_true = np.ascontiguousarray(X_true, dtype=np.float64)
    key = hashlib.blake2b(X_true.tobytes() + np.asarray(y).tobytes(), digest_size=16).digest()
    if key not in _AUDITOR_CACHE:
        if len(_AUDITOR_CACHE) >= _AUDITOR_CACHE_SIZE:
            _AUDITOR_CACHE.pop(next(iter(_AUDITOR_CACHE)))
        _AUDITOR_CACHE[key] = LinkageAuditor(random_state=0).fit(X_true, np.asarray(y))
    return _AUDITOR_CACHE[key]


def _pca_auditor(X_true):
    n_components = int(min(32, X_true.shape[0], X_true.shape[1]))
    return PCA(n_components=n_components, random_state=0).fit(X_true)


def _galleries(y, n_candidates, rng):
    """Row k: the true source k, then up to n_candidates - 1 distinct same-label distractors."""
    n = len(y)
    gallery = np.full((n, n_candidates), -1, dtype=np.intp)
    gallery[:, 0] = np.arange(n)
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        m = min(n_candidates - 1, len(members) - 1)
        if m <= 0:
            continue
        for k in members:
            others = members[members != k]
            gallery[k, 1 : m + 1] = rng.choice(others, size=m, replace=False)
    return gallery


def _embed(auditor, X):
    E = np.asarray(auditor.transform(X), dtype=np.float64).reshape(len(X), -1)
    return E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-300)


@validate_params(
    {
        "X_true": ["array-like"],
        "X_hat": ["array-like"],
        "y": [None, "array-like"],
        "auditor": [None, StrOptions({"pca"}), HasMethods(["transform"])],
        "n_candidates": [Interval(Integral, 2, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def linkage_accuracy(X_true, X_hat, y=None, *, auditor=None, n_candidates=10,
                     random_state=None):
    """Exact-source linkage accuracy of reconstructions (spec section 5.6 of the GDP paper).

    Each reconstruction ``X_hat[k]`` is a query against a gallery of its true source
    ``X_true[k]`` and ``n_candidates - 1`` distinct other records of ``X_true`` with the same
    label (any records when ``y`` is None; fewer when a label has fewer records). Query and
    candidates are embedded by the auditor (each record once), L2-normalised, and the query is
    linked when its true source has the strictly largest cosine similarity. Higher means more
    leakage (less private); compare with ``result.chance``.

    Parameters
    ----------
    X_true : array-like of shape (n_samples, n_features)
        The true records (the gallery pool).
    X_hat : array-like of shape (n_samples, n_features)
        Their reconstructions, in the same order.
    y : array-like of shape (n_samples,), default=None
        Labels: distractors share the query's label.
    auditor : fitted transformer, 'pca' or None, default=None
        Any fitted transformer whose ``transform`` returns an embedding. ``None`` fits the
        paper's CNN auditor ``skdc.nn.LinkageAuditor`` on ``(X_true, y)`` when skdc.nn and
        torch are available, else falls back to ``'pca'``: a PCA embedding (at most 32
        components) fitted on ``X_true``.
    n_candidates : int, default=10
        Gallery size (the paper's ten-way gallery).
    random_state : int, RandomState instance or None, default=None
        Draws the distractors.

    Returns
    -------
    accuracy : LinkageScore
        The fraction of linked queries, a float with ``chance``, ``ranks`` and ``n_queries``.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.metrics import linkage_accuracy
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(50, 8)
    >>> y = np.repeat([0, 1], 25)
    >>> acc = linkage_accuracy(X, X + 0.01 * rng.randn(50, 8), y, auditor="pca", random_state=0)
    >>> float(acc), round(acc.chance, 3)
    (1.0, 0.1)
    """
    X_true, X_hat = _check_pair(X_true, X_hat)
    n = X_true.shape[0]
    if y is None:
        y = np.zeros(n, dtype=np.intp)
    else:
        y = check_array(y, ensure_2d=False, dtype=None)
        if y.shape != (n,):
            raise ValueError(f"y must have one label per record, shape ({n},); got {y.shape}.")
    if auditor is None:
        auditor = _default_auditor(X_true, y)
    elif isinstance(auditor, str):
        auditor = _pca_auditor(X_true)
    elif hasattr(auditor, "fit"):
        check_is_fitted(auditor)
    gallery = _galleries(y, n_candidates, check_random_state(random_state))
    E_true = _embed(auditor, X_true)  # each record embedded once
    E_hat = _embed(auditor, X_hat)
    valid = gallery >= 0
    sims = np.einsum("kd,kcd->kc", E_hat, E_true[np.where(valid, gallery, 0)])
    sims[~valid] = -np.inf
    ranks = 1 + (sims[:, 1:] >= sims[:, :1]).sum(axis=1)
    chance = float(np.mean(1.0 / valid.sum(axis=1)))
    return LinkageScore(float(np.mean(ranks == 1)), chance=chance, ranks=ranks)


@validate_params(
    {"X_hat": ["array-like"], "y": ["array-like"], "classifier": [HasMethods(["predict"])]},
    prefer_skip_nested_validation=True,
)
def reconstruction_label_accuracy(X_hat, y, classifier):
    """Reconstruction accuracy of the KTI paper: a clean-data classifier labels reconstructions.

    ``ReconAcc = mean_k 1[classifier.predict(X_hat)[k] = y_k]`` (spec kti section 5.3). The
    classifier must be fitted on clean records independent of the target's (e.g. the
    colluder's). Higher means more leakage (less private).

    Parameters
    ----------
    X_hat : array-like of shape (n_samples, n_features)
        Reconstructions.
    y : array-like of shape (n_samples,)
        The true labels of the reconstructed records.
    classifier : fitted classifier
        Trained on clean data.

    Returns
    -------
    accuracy : float
        The fraction of reconstructions labelled correctly.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skdc.metrics import reconstruction_label_accuracy
    >>> clf = KNeighborsClassifier(1).fit([[0.0], [1.0]], [0, 1])
    >>> reconstruction_label_accuracy([[0.1], [0.2]], [0, 1], clf)
    0.5
    """
    check_is_fitted(classifier)
    X_hat = check_array(X_hat, dtype=np.float64)
    return float(accuracy_score(np.asarray(y), classifier.predict(X_hat)))
