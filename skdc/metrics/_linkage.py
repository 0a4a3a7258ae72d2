"""Exact-source linkage: can a reconstruction be linked to its own source record?

* :func:`linkage_accuracy`: the GDP paper's exact-source linkage (its MNIST protocol, section
  5.2.1): each reconstructed record queries a gallery of its true source and
  ``n_candidates - 1`` distinct same-label distractors, embedded by a frozen auditor; the
  candidate of largest cosine similarity is the prediction. Chance is ``1 / n_candidates``.
  The attacker may pick another matcher (``matcher=``): Euclidean or cosine in the row space,
  the PCA embedding, Mahalanobis with the covariance of its own rows, or the best of them. On
  more than ``max_queries`` records (2,000) a random subset of that many queries, with a Wilson
  interval for the rate, keeps the cost linear in the records.
* :class:`LinkageScore`: the score both linkage protocols return, a float carrying its chance
  level, ranks and interval; and the frozen auditor both embed with (the paper's CNN
  ``skdc.nn.LinkageAuditor``, or a PCA).

The paper's other protocol, cross-image identity linkage of faces, is in
``_identity_linkage.py``; the KTI paper's reconstruction label accuracy in
``_label_accuracy.py``. Linkage is a leakage score: higher means less private.
"""

# Licence: BSD 3 clause

import hashlib
from numbers import Integral

import numpy as np
from sklearn.decomposition import PCA
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._reconstruction import _check_pair

__all__ = ["LinkageScore", "linkage_accuracy"]


class LinkageScore(float):
    """A linkage accuracy (a float: the top-1 rate) carrying its chance level, ranks and the
    protocol's other summaries.

    Attributes
    ----------
    chance : float
        Expected accuracy of a random guess, ``mean_k 1 / |gallery_k|``.
    n_queries : int
        Number of queries.
    ranks : ndarray of shape (n_queries,) or (n_queries, n_lineups)
        Rank of the true candidate in each gallery or lineup (1 = linked). Exact-source
        linkage counts ties against the query; identity linkage breaks them as ``argmax``
        does, by lineup position.
    top3 : float
        Fraction of galleries or lineups whose true candidate ranks in the first three.
    mrr : float
        Mean reciprocal rank, ``mean 1 / rank``.
    mean_rank : float
        Mean rank.
    ci95 : tuple of (float, float) or None
        Identity linkage: the 95% percentile interval of the top-1 rate from a bootstrap
        over identities (each identity's top-1 rate over its lineups is one observation);
        None when no bootstrap was asked for. Exact-source linkage: the Wilson score 95%
        interval of the rate over ``n_queries`` queries (with ``galleries='all'`` each query
        contributes its probability of being linked, a value in [0, 1] whose variance is at
        most that of a coin with the same mean, so the interval is conservative).
    lineups : ndarray of shape (n_queries, n_lineups, n_candidates) or None
        Identity linkage only: the reference indices of each lineup, in lineup order (-1 pads
        a lineup shortened by too few references).
    queries : ndarray of shape (n_queries,) or None
        The rows of ``X_hat`` used as queries (exact-source linkage: None when every row
        queried).
    n_records : int or None
        Exact-source linkage only: the records the queries were drawn from (the gallery pool).
    galleries : ndarray of shape (n_queries, n_candidates) or None
        Exact-source linkage only: each query's gallery as indices of ``X_true``, its true
        source first (-1 pads a gallery shortened by a small label); every matcher reads the
        same galleries.
    matcher : str or None
        Exact-source linkage only: the matcher that linked (with ``matcher='best'``, the one
        that won).
    matcher_scores : dict of str to float or None
        Exact-source linkage with ``matcher='best'`` only: each matcher tried and its accuracy
        on the same galleries, in the order tried.
    """

    def __new__(cls, accuracy, *, chance, ranks, lineups=None, queries=None, ci95=None,
                galleries=None, matcher=None, matcher_scores=None, n_records=None):
        obj = super().__new__(cls, accuracy)
        obj.chance = float(chance)
        obj.ranks = ranks
        obj.n_queries = int(len(ranks))
        obj.lineups = lineups
        obj.queries = queries
        obj.ci95 = None if ci95 is None else (float(ci95[0]), float(ci95[1]))
        obj.galleries = galleries
        obj.matcher = matcher
        obj.matcher_scores = None if matcher_scores is None else dict(matcher_scores)
        obj.n_records = None if n_records is None else int(n_records)
        return obj

    @property
    def top3(self):
        return float(np.mean(np.asarray(self.ranks) <= 3))

    @property
    def mrr(self):
        return float(np.mean(1.0 / np.asarray(self.ranks)))

    @property
    def mean_rank(self):
        return float(np.mean(self.ranks))

    def __repr__(self):
        matcher = "" if self.matcher is None else f", matcher={self.matcher!r}"
        return f"LinkageScore({float(self)!r}, chance={self.chance!r}{matcher})"

    def __reduce__(self):
        return (_rebuild_linkage_score,
                (float(self), self.chance, self.ranks, self.lineups, self.queries, self.ci95,
                 self.galleries, self.matcher, self.matcher_scores, self.n_records))


def _rebuild_linkage_score(accuracy, chance, ranks, lineups=None, queries=None, ci95=None,
                           galleries=None, matcher=None, matcher_scores=None, n_records=None):
    return LinkageScore(accuracy, chance=chance, ranks=ranks, lineups=lineups, queries=queries,
                        ci95=ci95, galleries=galleries, matcher=matcher,
                        matcher_scores=matcher_scores, n_records=n_records)


def _wilson_interval(rate, n, z=1.959963984540054):
    """Wilson score interval of a binomial rate ``rate`` over ``n`` trials (95% by default):
    ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` (Wilson, "Probable inference,
    the law of succession, and statistical inference", JASA 22, 1927)."""
    if n == 0:
        return (0.0, 1.0)
    p, z2 = float(rate), z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


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


def _fitted_auditor(auditor, X_clean):
    """The auditor to embed with: ``'pca'`` fits a PCA on the clean records ``X_clean``;
    an estimator must already be fitted (it stays frozen)."""
    if isinstance(auditor, str):
        return _pca_auditor(X_clean)
    if hasattr(auditor, "fit"):
        check_is_fitted(auditor)
    return auditor


def _galleries(y, n_candidates, rng, queries=None):
    """Row j: the true source ``queries[j]`` (``j`` when every record queries), then up to
    n_candidates - 1 distinct same-label distractors. Memory is linear in the queries; each
    query's draw reads its label's records once."""
    n = len(y)
    queries = np.arange(n) if queries is None else np.asarray(queries, dtype=np.intp)
    row_of = np.full(n, -1, dtype=np.intp)
    row_of[queries] = np.arange(queries.size)
    gallery = np.full((queries.size, n_candidates), -1, dtype=np.intp)
    gallery[:, 0] = queries
    for label in np.unique(y):
        members = np.flatnonzero(y == label)
        m = min(n_candidates - 1, len(members) - 1)
        if m <= 0:
            continue
        for k in members[row_of[members] >= 0]:
            others = members[members != k]
            gallery[row_of[k], 1 : m + 1] = rng.choice(others, size=m, replace=False)
    return gallery


def _unit(E):
    return E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-300)


def _embed(auditor, X):
    return _unit(np.asarray(auditor.transform(X), dtype=np.float64).reshape(len(X), -1))


# -- the attacker's matchers ---------------------------------------------------------------
# Each matcher scores every (query, gallery member) pair, higher = closer; the query links when
# its true source (gallery column 0) scores strictly highest, so a tie counts against the query
# whatever the matcher. Every matcher reads the same galleries, drawn once per call.
_MATCHERS = ("embedding", "euclidean", "cosine", "pca", "mahalanobis", "best")
# the matchers matcher='best' tries, in this order; a tie between matchers goes to the earlier
_BEST_ORDER = ("embedding", "pca", "euclidean", "cosine", "mahalanobis")
# ridge added to a singular sample covariance, as a fraction of its average variance
_MAHALANOBIS_RIDGE = 1e-3


def _cosine_scores(U_true, U_hat, gallery):
    """Cosine similarity of each query to its gallery members, from L2-normalised rows."""
    return np.einsum("kd,kcd->kc", U_hat, U_true[np.maximum(gallery, 0)])


def _euclidean_scores(X_true, X_hat, gallery):
    """Minus the squared Euclidean distance of each query to its gallery members."""
    D = X_true[np.maximum(gallery, 0)] - X_hat[:, None, :]
    return -np.einsum("kcd,kcd->kc", D, D)


def _whitener(sample, n_features):
    """``W`` with ``W W^T = S^{-1}`` for the sample covariance ``S`` (the Mahalanobis metric
    ``(q - c)^T S^{-1} (q - c) = ||(q - c) W||^2``). A singular ``S`` (rank below the width,
    e.g. fewer rows than features, or a constant feature) becomes ``S + r I`` with ``r`` a
    fraction ``_MAHALANOBIS_RIDGE`` of its average variance; a zero ``S`` becomes ``I``."""
    sample = check_array(sample, dtype=np.float64, input_name="sample")
    if sample.shape[1] != n_features:
        raise ValueError(
            f"sample must hold rows of the records' {n_features} features (the attacker's own "
            f"rows, in the space of X_true); got {sample.shape[1]} features."
        )
    if sample.shape[0] < 2:
        raise ValueError(
            f"the Mahalanobis matcher estimates a covariance from sample, which needs at "
            f"least 2 rows; got {sample.shape[0]}."
        )
    S = np.cov(sample, rowvar=False, ddof=1).reshape(n_features, n_features)
    w, V = np.linalg.eigh(S)
    top = max(float(w.max()), 0.0)
    if top == 0.0:
        w = np.ones_like(w)
    elif w.min() <= top * n_features * np.finfo(np.float64).eps:  # numerically singular
        w = w + _MAHALANOBIS_RIDGE * float(np.trace(S)) / n_features
    return V / np.sqrt(w)


def _matcher_rows(matcher, X_true, X_hat, *, auditor, y, whitener):
    """The records and the queries as a matcher compares them, and how (``'cosine'`` of
    L2-normalised rows, or ``'euclidean'``)."""
    if matcher == "embedding":
        auditor = (_default_auditor(X_true, y) if auditor is None
                   else _fitted_auditor(auditor, X_true))
        return _embed(auditor, X_true), _embed(auditor, X_hat), "cosine"
    if matcher == "pca":
        auditor = _pca_auditor(X_true)
        return _embed(auditor, X_true), _embed(auditor, X_hat), "cosine"
    if matcher == "cosine":
        return _unit(X_true), _unit(X_hat), "cosine"
    if matcher == "euclidean":
        return X_true, X_hat, "euclidean"
    return X_true @ whitener, X_hat @ whitener, "euclidean"  # mahalanobis


def _matcher_scores(matcher, X_true, X_hat, gallery, **rows):
    """Each query's score against each member of its gallery (higher: closer)."""
    T, Q, how = _matcher_rows(matcher, X_true, X_hat, **rows)
    return (_cosine_scores if how == "cosine" else _euclidean_scores)(T, Q, gallery)


# the score block of galleries='all' holds at most this many (query, record) pairs
_SCORE_BLOCK = 1 << 22


def _score_block(T, Q, how):
    """Scores of the queries ``Q`` against every record ``T`` (higher: closer)."""
    from scipy.spatial.distance import cdist

    return Q @ T.T if how == "cosine" else -cdist(Q, T, "sqeuclidean")


def _expected_linkage(matcher, X_true, X_hat, labels, queries, n_candidates, **rows):
    """Each query's probability of being linked in a gallery drawn as :func:`_galleries`
    draws it (its true source and ``m`` distinct same-label others, uniformly), its rank
    among all its same-label records and the chance level.

    With ``N`` same-label others of which ``w`` score strictly below the true source, the
    query is linked exactly when every distractor is among those ``w``:
    ``C(w, m) / C(N, m) = prod_{i < m} (w - i) / (N - i)``, ``m = min(n_candidates - 1, N)``
    (ties count against the query, as in a drawn gallery). The queries are scored in blocks
    of at most ``_SCORE_BLOCK`` (query, record) pairs: memory linear in the records.
    """
    T, Q, how = _matcher_rows(matcher, X_true, X_hat[queries], **rows)
    n_q = queries.size
    _, codes = np.unique(labels, return_inverse=True)
    codes = codes.ravel()
    N = np.empty(n_q, dtype=np.intp)  # same-label others of each query
    w = np.empty(n_q, dtype=np.intp)  # ... that score strictly below its true source
    for c in np.unique(codes[queries]):
        members = np.flatnonzero(codes == c)
        T_c = T[members]
        at = np.flatnonzero(codes[queries] == c)  # these queries, by position
        own_col = np.searchsorted(members, queries[at])
        N[at] = members.size - 1
        step = max(1, _SCORE_BLOCK // max(1, members.size))
        for start in range(0, at.size, step):
            block = at[start : start + step]
            S = _score_block(T_c, Q[block], how)  # the true source's score is among them
            own = S[np.arange(block.size), own_col[start : start + step]][:, None]
            w[block] = np.sum(S < own, axis=1)
    m = np.minimum(n_candidates - 1, N)
    linked = np.ones(n_q)
    for i in range(int(m.max(initial=0))):
        factor = np.where(i < m, (w - i) / np.maximum(N - i, 1), 1.0)
        linked *= np.maximum(factor, 0.0)  # w < m: a zero factor comes first
    return linked, 1 + N - w, float(np.mean(1.0 / (m + 1)))


def _gallery_ranks(scores, gallery):
    """Rank of the true source (column 0) in each gallery; ties count against the query."""
    scores = np.where(gallery >= 0, scores, -np.inf)
    return 1 + (scores[:, 1:] >= scores[:, :1]).sum(axis=1)


@validate_params(
    {
        "X_true": ["array-like"],
        "X_hat": ["array-like"],
        "y": [None, "array-like"],
        "auditor": [None, StrOptions({"pca"}), HasMethods(["transform"])],
        "matcher": [StrOptions(set(_MATCHERS))],
        "sample": [None, "array-like"],
        "n_candidates": [Interval(Integral, 2, None, closed="left")],
        "galleries": [StrOptions({"drawn", "all"})],
        "max_queries": [None, Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references)
def linkage_accuracy(X_true, X_hat, y=None, *, auditor=None, matcher="embedding", sample=None,
                     n_candidates=10, galleries="drawn", max_queries=2000, random_state=None):
    """Exact-source linkage accuracy of reconstructions (the GDP paper's MNIST protocol).

    Each reconstruction ``X_hat[k]`` is a query against a gallery of its true source
    ``X_true[k]`` and ``n_candidates - 1`` distinct other records of ``X_true`` with the same
    label (any records when ``y`` is None; fewer when a label has fewer records). Query and
    candidates are embedded by the auditor (each record once), L2-normalised, and the query is
    linked when its true source has the strictly largest cosine similarity. Higher means more
    leakage (less private); compare with ``result.chance``. This is the protocol of Section
    5.2.1 of [1]_.

    The attacker chooses how to match, so ``matcher`` offers other rules on the same
    galleries (drawn once per call): the Euclidean distance or the cosine in the row space,
    the cosine of a PCA embedding, the Mahalanobis distance under the covariance of the
    attacker's own rows ``sample`` (a same-population sample, e.g. the colluder's), or
    ``'best'``, which keeps the matcher that links most (ties between matchers go to the one
    tried first). Under every matcher the query is linked only when its true source is
    strictly closest: a tie counts against it.

    Read more in the :ref:`User Guide <numbers>`.

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
        components) fitted on ``X_true``. Read by the ``'embedding'`` matcher only (and by
        ``'best'``, which tries it).
    matcher : {'embedding', 'euclidean', 'cosine', 'pca', 'mahalanobis', 'best'}, \
            default='embedding'
        How a query is matched to its gallery:

        * ``'embedding'``: the cosine similarity of the ``auditor``'s embeddings (the paper's
          protocol);
        * ``'euclidean'``: the Euclidean distance between rows;
        * ``'cosine'``: the cosine similarity of the rows;
        * ``'pca'``: the cosine similarity of a PCA embedding (at most 32 components) fitted
          on ``X_true``, whatever ``auditor`` says;
        * ``'mahalanobis'``: the distance ``(q - c)^T S^{-1} (q - c)`` with ``S`` the
          covariance of ``sample``; when ``S`` is singular (fewer rows than features, a
          constant feature) a ridge of ``1e-3`` times its average variance is added to it;
        * ``'best'``: each of ``'embedding'`` (left out when ``auditor='pca'``, the same as
          ``'pca'``), ``'pca'``, ``'euclidean'``, ``'cosine'`` and, when ``sample`` is
          given, ``'mahalanobis'``, in that order; the best accuracy is returned, with the
          winner in ``result.matcher`` and each one's accuracy in ``result.matcher_scores``.
    sample : array-like of shape (n_rows, n_features), default=None
        The attacker's own rows, in the space of ``X_true`` (the colluder's rows): their
        covariance is the Mahalanobis metric. Required by ``matcher='mahalanobis'``; read by
        ``'best'`` when given; ignored by the other matchers.
    n_candidates : int, default=10
        Gallery size (the paper's ten-way gallery).
    galleries : {'drawn', 'all'}, default='drawn'
        ``'drawn'``: one gallery per query, drawn with ``random_state`` (the paper's
        protocol). ``'all'``: the expected accuracy over every gallery that draw could give,
        computed exactly (a query whose true source scores strictly above ``w`` of its ``N``
        same-label others is linked with probability ``C(w, m) / C(N, m)``, ``m =
        n_candidates - 1``), so the gallery draw adds no noise to the estimate; ``ranks``
        are then ranks among all same-label records. Each query is scored against every
        record, in blocks of at most 4,194,304 pairs, never as one ``n_samples`` by
        ``n_samples`` matrix.
    max_queries : int or None, default=2000
        The most queries: with more records, ``max_queries`` of them, drawn without
        replacement with ``random_state``, query (``result.queries``), so the cost is
        ``O(max_queries x n_samples)`` time and linear memory whatever the size. The rate
        then carries the sampling error of the queries (its Wilson 95% interval is
        ``result.ci95``: about +-0.016 at a rate of 0.15 over 2,000 queries). ``None``: every
        record queries (quadratic time in the records).
    random_state : int, RandomState instance or None, default=None
        Draws the queries (when there are more than ``max_queries`` records), then the
        distractors (``galleries='drawn'``). Give an int to score every method and draw on
        the same queries.

    Returns
    -------
    accuracy : LinkageScore
        The fraction of linked queries, a float with ``chance``, ``ranks``, ``n_queries``,
        ``n_records``, ``queries`` (None when every record queried), ``ci95`` (Wilson),
        ``galleries`` (None with ``galleries='all'``), ``matcher`` and (for
        ``matcher='best'``) ``matcher_scores``.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.metrics import linkage_accuracy
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(50, 8)
    >>> y = np.repeat([0, 1], 25)
    >>> acc = linkage_accuracy(X, X + 0.01 * rng.randn(50, 8), y, auditor="pca", random_state=0)
    >>> float(acc), round(acc.chance, 3), acc.n_queries
    (1.0, 0.1, 50)

    On many records a random subset queries, and the interval says what that costs:

    >>> Xb = rng.rand(5000, 8)
    >>> big = linkage_accuracy(Xb, Xb + 0.5 * rng.randn(5000, 8), matcher="euclidean",
    ...                        galleries="all", max_queries=500, random_state=0)
    >>> big.n_queries, big.n_records, bool(big.ci95[0] < float(big) < big.ci95[1])
    (500, 5000, True)

    The attacker keeps its best matcher; the Mahalanobis one reads the attacker's own rows:

    >>> X_hat = X + 0.3 * rng.randn(50, 8)
    >>> best = linkage_accuracy(X, X_hat, y, auditor="pca", matcher="best",
    ...                         sample=rng.rand(40, 8), random_state=0)
    >>> sorted(best.matcher_scores)
    ['cosine', 'euclidean', 'mahalanobis', 'pca']
    >>> float(best) == max(best.matcher_scores.values()) == best.matcher_scores[best.matcher]
    True
    """
    X_true, X_hat = _check_pair(X_true, X_hat)
    n = X_true.shape[0]
    labelled = y is not None  # the CNN auditor trains on labels: unlabelled records get PCA
    if y is None:
        y = np.zeros(n, dtype=np.intp)
    else:
        y = check_array(y, ensure_2d=False, dtype=None)
        if y.shape != (n,):
            raise ValueError(f"y must have one label per record, shape ({n},); got {y.shape}.")
    if matcher == "mahalanobis" and sample is None:
        raise ValueError(
            "matcher='mahalanobis' measures distances under the covariance of the attacker's "
            "own rows: pass them as sample= (e.g. the colluder's rows), or choose another "
            "matcher."
        )
    whitener = None
    if sample is not None and matcher in ("mahalanobis", "best"):
        whitener = _whitener(sample, X_true.shape[1])
    rng = check_random_state(random_state)
    drawn_queries = None
    if max_queries is not None and n > max_queries:
        drawn_queries = np.sort(rng.choice(n, size=max_queries, replace=False))
    queries = np.arange(n) if drawn_queries is None else drawn_queries
    if galleries == "drawn":
        gallery = _galleries(y, n_candidates, rng, queries)  # drawn once
        chance = float(np.mean(1.0 / (gallery >= 0).sum(axis=1)))
    else:
        gallery = None
    if matcher == "best":
        tried = [m for m in _BEST_ORDER
                 if not (m == "embedding" and isinstance(auditor, str))
                 and not (m == "mahalanobis" and sample is None)]
    else:
        tried = [matcher]
    results = {}
    rows = dict(auditor=auditor, y=y if labelled else None, whitener=whitener)
    for m in tried:
        if gallery is None:
            linked, ranks, chance = _expected_linkage(m, X_true, X_hat, y, queries,
                                                      n_candidates, **rows)
            results[m] = (float(np.mean(linked)), ranks)
            continue
        scores = _matcher_scores(m, X_true, X_hat[queries], gallery, **rows)
        ranks = _gallery_ranks(scores, gallery)
        results[m] = (float(np.mean(ranks == 1)), ranks)
    winner = max(tried, key=lambda m: results[m][0])  # the first of equal accuracies
    accuracy, ranks = results[winner]
    scores = {m: acc for m, (acc, _) in results.items()} if matcher == "best" else None
    return LinkageScore(accuracy, chance=chance, ranks=ranks, galleries=gallery,
                        matcher=winner, matcher_scores=scores, queries=drawn_queries,
                        ci95=_wilson_interval(accuracy, queries.size), n_records=n)

