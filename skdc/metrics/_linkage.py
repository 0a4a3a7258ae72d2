"""Semantic leakage: can reconstructions be linked to their sources, or labelled?

* :func:`linkage_accuracy`: the GDP paper's exact-source linkage (its MNIST protocol, section
  5.2.1): each reconstructed record queries a gallery of its true source and
  ``n_candidates - 1`` distinct same-label distractors, embedded by a frozen auditor; the
  candidate of largest cosine similarity is the prediction. Chance is ``1 / n_candidates``.
* :func:`identity_linkage_accuracy`: the GDP paper's cross-image identity linkage (its CelebA
  protocol, section 5.3.1): one reconstruction per identity queries fixed lineups of a
  different, reserved clean image of the same identity and reserved images of other
  identities, after clamping the reconstruction to the image range.
* :func:`reconstruction_label_accuracy`: the KTI paper's reconstruction accuracy (its Section
  5.5, computed as its reference code does): a classifier trained on clean data labels the
  reconstructions.

All three are leakage scores: higher means less private.
"""

# Licence: BSD 3 clause

import hashlib
from numbers import Integral

import numpy as np
from sklearn.decomposition import PCA
from sklearn.metrics import accuracy_score
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references, kti_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._reconstruction import _check_pair

__all__ = [
    "LinkageScore",
    "identity_linkage_accuracy",
    "linkage_accuracy",
    "reconstruction_label_accuracy",
]


class LinkageScore(float):
    """A linkage accuracy (a float) carrying its chance level and ranks.

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
    lineups : ndarray of shape (n_queries, n_lineups, n_candidates) or None
        Identity linkage only: the reference indices of each lineup, in lineup order (-1 pads
        a lineup shortened by too few references).
    queries : ndarray of shape (n_queries,) or None
        Identity linkage only: the rows of ``X_hat`` used as queries.
    """

    def __new__(cls, accuracy, *, chance, ranks, lineups=None, queries=None):
        obj = super().__new__(cls, accuracy)
        obj.chance = float(chance)
        obj.ranks = ranks
        obj.n_queries = int(len(ranks))
        obj.lineups = lineups
        obj.queries = queries
        return obj

    def __repr__(self):
        return f"LinkageScore({float(self)!r}, chance={self.chance!r})"

    def __reduce__(self):
        return (_rebuild_linkage_score,
                (float(self), self.chance, self.ranks, self.lineups, self.queries))


def _rebuild_linkage_score(accuracy, chance, ranks, lineups=None, queries=None):
    return LinkageScore(accuracy, chance=chance, ranks=ranks, lineups=lineups, queries=queries)


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
@Substitution(references=gdp_paper_references)
def linkage_accuracy(X_true, X_hat, y=None, *, auditor=None, n_candidates=10,
                     random_state=None):
    """Exact-source linkage accuracy of reconstructions (the GDP paper's MNIST protocol).

    Each reconstruction ``X_hat[k]`` is a query against a gallery of its true source
    ``X_true[k]`` and ``n_candidates - 1`` distinct other records of ``X_true`` with the same
    label (any records when ``y`` is None; fewer when a label has fewer records). Query and
    candidates are embedded by the auditor (each record once), L2-normalised, and the query is
    linked when its true source has the strictly largest cosine similarity. Higher means more
    leakage (less private); compare with ``result.chance``. This is the protocol of Section
    5.2.1 of [1]_.

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
        components) fitted on ``X_true``.
    n_candidates : int, default=10
        Gallery size (the paper's ten-way gallery).
    random_state : int, RandomState instance or None, default=None
        Draws the distractors.

    Returns
    -------
    accuracy : LinkageScore
        The fraction of linked queries, a float with ``chance``, ``ranks`` and ``n_queries``.

    {references}

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
    else:
        auditor = _fitted_auditor(auditor, X_true)
    gallery = _galleries(y, n_candidates, check_random_state(random_state))
    E_true = _embed(auditor, X_true)  # each record embedded once
    E_hat = _embed(auditor, X_hat)
    valid = gallery >= 0
    sims = np.einsum("kd,kcd->kc", E_hat, E_true[np.where(valid, gallery, 0)])
    sims[~valid] = -np.inf
    ranks = 1 + (sims[:, 1:] >= sims[:, :1]).sum(axis=1)
    chance = float(np.mean(1.0 / valid.sum(axis=1)))
    return LinkageScore(float(np.mean(ranks == 1)), chance=chance, ranks=ranks)


def _lineups(query_identity, reference_identity, n_lineups, n_candidates, rng):
    """For each query: ``n_lineups`` lineups of one reference of its identity (at a random
    position) and up to ``n_candidates - 1`` distinct references of other identities."""
    n_q = len(query_identity)
    lineups = np.full((n_q, n_lineups, n_candidates), -1, dtype=np.intp)
    true_pos = np.zeros((n_q, n_lineups), dtype=np.intp)
    for k, ident in enumerate(query_identity):
        same = np.flatnonzero(reference_identity == ident)
        others = np.flatnonzero(reference_identity != ident)
        m = min(n_candidates - 1, others.size)
        for t in range(n_lineups):
            line = np.empty(m + 1, dtype=np.intp)
            pos = rng.randint(m + 1)
            line[pos] = same[rng.randint(same.size)]
            line[np.arange(m + 1) != pos] = rng.choice(others, size=m, replace=False)
            lineups[k, t, : m + 1] = line
            true_pos[k, t] = pos
    return lineups, true_pos


def _check_lineup_inputs(X_hat, identity, references, reference_identity, clip):
    """The arrays of an identity linkage, checked against each other; ``X_hat`` clamped to
    ``clip`` (as the reference code clamps faces to the image range before the embedder)."""
    X_hat = check_array(X_hat, dtype=np.float64, ensure_all_finite=False)
    references = check_array(references, dtype=np.float64)
    identity = check_array(identity, ensure_2d=False, dtype=None)
    reference_identity = check_array(reference_identity, ensure_2d=False, dtype=None)
    if identity.shape != (X_hat.shape[0],):
        raise ValueError(
            f"identity must have one entry per reconstruction, shape ({X_hat.shape[0]},); got "
            f"{identity.shape}."
        )
    if reference_identity.shape != (references.shape[0],):
        raise ValueError(
            f"reference_identity must have one entry per reference, shape "
            f"({references.shape[0]},); got {reference_identity.shape}."
        )
    if X_hat.shape[1] != references.shape[1]:
        raise ValueError(
            f"X_hat and references must be images of the same size; got {X_hat.shape[1]} and "
            f"{references.shape[1]} features. Decode the reconstructions to the image space."
        )
    missing = np.setdiff1d(identity, reference_identity)
    if missing.size:
        raise ValueError(
            f"{missing.size} query identities have no reserved reference image (e.g. "
            f"{missing[:3].tolist()}): identity linkage needs one per identity. Reserve them "
            "with skdc.datasets.identity_split(..., reserve_reference=True)."
        )
    if np.unique(reference_identity).size < 2:
        raise ValueError(
            "identity linkage needs references of at least two identities (the query's and an "
            "impostor's)."
        )
    if clip is not None:
        if len(clip) != 2 or not clip[0] < clip[1]:
            raise ValueError(f"clip must be a (low, high) pair with low < high; got {clip}.")
        X_hat = np.clip(X_hat, clip[0], clip[1])
    if not np.isfinite(X_hat).all():
        raise ValueError(
            "X_hat holds NaN or infinite values (after clamping): the attack diverged, and the "
            "linkage of such a reconstruction is undefined. Check the attack's output."
        )
    return X_hat, identity, references, reference_identity


def _queries(identity, one_per_identity):
    """The rows that query: the first of each identity in row order, or every row."""
    if one_per_identity:
        _, first = np.unique(identity, return_index=True)
        return np.sort(first)
    return np.arange(identity.shape[0])


def _lineup_ranks(E_query, E_ref, lineups, true_pos):
    """Rank of the true reference in each lineup by cosine similarity, ties broken as
    ``argmax`` breaks them: a tie placed before the true candidate beats it."""
    valid = lineups >= 0
    sims = np.einsum("kd,ktcd->ktc", E_query, E_ref[np.where(valid, lineups, 0)])
    sims[~valid] = -np.inf
    s_true = np.take_along_axis(sims, true_pos[..., None], axis=2)
    before = np.arange(lineups.shape[2]) < true_pos[..., None]
    return 1 + (sims > s_true).sum(axis=2) + ((sims == s_true) & before).sum(axis=2)


@validate_params(
    {
        "X_hat": ["array-like"],
        "identity": ["array-like"],
        "references": ["array-like"],
        "reference_identity": ["array-like"],
        "auditor": [StrOptions({"pca"}), HasMethods(["transform"])],
        "n_lineups": [Interval(Integral, 1, None, closed="left")],
        "n_candidates": [Interval(Integral, 2, None, closed="left")],
        "one_per_identity": ["boolean"],
        "clip": [None, tuple],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references)
def identity_linkage_accuracy(X_hat, identity, references, reference_identity, *,
                              auditor="pca", n_lineups=10, n_candidates=10,
                              one_per_identity=True, clip=(0.0, 1.0), random_state=0):
    """Cross-image identity linkage of reconstructed faces (the GDP paper's CelebA protocol).

    Section 5.3.1 of [1]_: a reconstruction of an uploaded image queries a lineup of
    ``n_candidates`` clean reserved images, one of the query's identity (a *different* image
    from the query's source: reserved images are never uploaded) and ``n_candidates - 1`` of
    other identities, drawn without replacement from all ``references``. Each query meets
    ``n_lineups`` lineups, fixed by ``random_state`` so that every attack and every draw faces
    the same ones. The reconstruction is clamped to ``clip`` (the reference code clamps faces
    to [0, 1] before the embedder), query and candidates are embedded by the frozen
    ``auditor`` and L2-normalised, and the prediction is the ``argmax`` of the cosine
    similarities, so ties go to the earlier lineup position. The score is the fraction of
    linked episodes; chance is ``1 / n_candidates``. Higher means more leakage (less private).
    :func:`linkage_accuracy` is the paper's other protocol (MNIST, exact source).

    Read more in the :ref:`User Guide <linkage_on_faces>`.

    The reserved references and the identity-level split come from
    :func:`skdc.datasets.identity_split` (``X[split.reference]``,
    ``identity[split.reference]``).

    Parameters
    ----------
    X_hat : array-like of shape (n_samples, n_features)
        Reconstructions of uploaded images (decoded to the image space).
    identity : array-like of shape (n_samples,)
        The identity of each reconstructed image.
    references : array-like of shape (n_references, n_features)
        The clean reserved images of all active participants' identities.
    reference_identity : array-like of shape (n_references,)
        Their identities; every query identity needs at least one reference.
    auditor : fitted transformer or 'pca', default='pca'
        The frozen embedder: any fitted transformer (e.g. wrapping a pretrained face network;
        the paper uses Inception-ResNet-v1 trained on VGGFace2), or ``'pca'``: a PCA (at most
        32 components) fitted on ``references``, never on the reconstructions.
    n_lineups : int, default=10
        Lineups per query (the paper's 10).
    n_candidates : int, default=10
        Lineup size (the paper's 10); shorter when fewer other references exist.
    one_per_identity : bool, default=True
        Query with one reconstruction per identity (the first in row order), as the paper does
        (100 queries x 10 lineups = 1,000 episodes); False queries with every row.
    clip : tuple of (float, float) or None, default=(0.0, 1.0)
        Range the reconstructions are clamped to before embedding; None feeds them unclamped.
    random_state : int, RandomState instance or None, default=0
        Draws the lineups; an int keeps them fixed across methods and draws.

    Returns
    -------
    accuracy : LinkageScore
        The fraction of linked episodes, with ``chance``, ``ranks`` (n_queries, n_lineups),
        ``lineups`` and ``queries``.

    See Also
    --------
    linkage_accuracy : Exact-source linkage against same-label distractors.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.datasets import identity_split, make_identity_images
    >>> from skdc.metrics import identity_linkage_accuracy
    >>> faces = make_identity_images(40, 3, image_shape=(1, 8, 8), random_state=0)
    >>> s = identity_split(faces.identity, 2, identities_per_participant=20, random_state=0)
    >>> X, ident = faces.data[s.protocol], faces.identity[s.protocol]
    >>> refs, ref_ident = faces.data[s.reference], faces.identity[s.reference]
    >>> acc = identity_linkage_accuracy(X, ident, refs, ref_ident)
    >>> acc.n_queries, acc.ranks.shape, round(acc.chance, 2), float(acc) > 0.5
    (40, (40, 10), 0.1, True)
    >>> noise = np.random.RandomState(0).rand(*X.shape)
    >>> float(identity_linkage_accuracy(noise, ident, refs, ref_ident)) < 0.3
    True
    """
    X_hat, identity, references, reference_identity = _check_lineup_inputs(
        X_hat, identity, references, reference_identity, clip)
    queries = _queries(identity, one_per_identity)
    auditor = _fitted_auditor(auditor, references)
    lineups, true_pos = _lineups(identity[queries], reference_identity, n_lineups,
                                 n_candidates, check_random_state(random_state))
    E_ref = _embed(auditor, references)  # each image embedded once
    ranks = _lineup_ranks(_embed(auditor, X_hat[queries]), E_ref, lineups, true_pos)
    chance = float(np.mean(1.0 / (lineups >= 0).sum(axis=2)))
    return LinkageScore(float(np.mean(ranks == 1)), chance=chance, ranks=ranks,
                        lineups=lineups, queries=queries)


@validate_params(
    {"X_hat": ["array-like"], "y": ["array-like"], "classifier": [HasMethods(["predict"])]},
    prefer_skip_nested_validation=True,
)
@Substitution(references=kti_paper_references)
def reconstruction_label_accuracy(X_hat, y, classifier):
    """Reconstruction accuracy of the KTI paper: a clean-data classifier labels reconstructions.

    ``ReconAcc = mean_k 1[classifier.predict(X_hat)[k] = y_k]``, the privacy-risk measure of
    Section 5.5 of [1]_ as its reference code computes it. The classifier must be fitted on
    clean records independent of the target's (e.g. the colluder's). Higher means more leakage
    (less private).

    Read more in the :ref:`User Guide <nonlinear_privacy>`; the example
    :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` reports it across reductions.

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

    {references}

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
