"""Cross-image identity linkage: can a reconstructed face be linked to its identity?

:func:`identity_linkage_accuracy` is the GDP paper's CelebA protocol (its section 5.3.1): one
reconstruction per identity queries fixed lineups of a different, reserved clean image of the
same identity and the reserved images of impostor identities, after clamping the
reconstruction (and, in the reference code's primary condition, projecting and decoding the
references) to the image range; top-1, top-3, mean reciprocal rank and a bootstrap interval
over identities. It returns the :class:`~skdc.metrics.LinkageScore` and embeds with the frozen
auditor of ``_linkage.py``, the paper's other protocol (exact-source linkage, MNIST).

A leakage score: higher means less private.
"""

# Licence: BSD 3 clause

from numbers import Integral

import numpy as np
from sklearn.utils import check_array, check_random_state
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import HasMethods, Interval, StrOptions, validate_params
from ._linkage import LinkageScore, _embed, _fitted_auditor

__all__ = ["identity_linkage_accuracy"]


def _lineups(query_identity, reference_identity, n_lineups, n_candidates, rng):
    """For each query, ``n_lineups`` lineups: the reference of its identity and the references
    of ``n_candidates - 1`` impostor identities drawn without replacement from all other
    reference identities (fewer when fewer exist), in a random order. There is one reference
    per identity, so no lineup holds two images of one impostor."""
    ids = np.unique(reference_identity)
    ref_of = np.empty(ids.size, dtype=np.intp)
    ref_of[np.searchsorted(ids, reference_identity)] = np.arange(reference_identity.size)
    n_q = len(query_identity)
    lineups = np.full((n_q, n_lineups, n_candidates), -1, dtype=np.intp)
    true_pos = np.zeros((n_q, n_lineups), dtype=np.intp)
    for k, ident in enumerate(query_identity):
        j = int(np.searchsorted(ids, ident))
        genuine, others = ref_of[j], np.delete(ref_of, j)
        m = min(n_candidates - 1, others.size)
        for t in range(n_lineups):
            line = rng.permutation(np.r_[genuine, rng.choice(others, size=m, replace=False)])
            lineups[k, t, : m + 1] = line
            true_pos[k, t] = int(np.flatnonzero(line == genuine)[0])
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
    ids, counts = np.unique(reference_identity, return_counts=True)
    if (counts > 1).any():
        raise ValueError(
            f"identity linkage takes one reserved reference per identity (a lineup holds one "
            f"image per identity), but identity {ids[counts > 1][0]!r} has "
            f"{counts[counts > 1][0]} references ({int((counts > 1).sum())} identities have "
            "several). Keep one per identity, e.g. from skdc.datasets.identity_split(..., "
            "reserve_reference=True)."
        )
    missing = np.setdiff1d(identity, reference_identity)
    if missing.size:
        raise ValueError(
            f"{missing.size} query identities have no reserved reference image (e.g. "
            f"{missing[:3].tolist()}): identity linkage needs one per identity. Reserve them "
            "with skdc.datasets.identity_split(..., reserve_reference=True)."
        )
    if ids.size < 2:
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


def _decoded_references(references, decoder, clip):
    """The reference code's primary condition: each clean reference projected by the public
    reduction, decoded and clamped like the reconstructions (``decoder=None``: raw)."""
    if decoder is None:
        return references
    if hasattr(decoder, "fit"):
        check_is_fitted(decoder)
    R = np.asarray(decoder.inverse_transform(decoder.transform(references)), dtype=np.float64)
    if R.shape != references.shape:
        raise ValueError(
            f"reference_decoder must map the references back to their space, shape "
            f"{references.shape}; its inverse_transform(transform(references)) has shape "
            f"{R.shape}. Pass the public reduction (e.g. a fitted TruncatedSVD)."
        )
    return R if clip is None else np.clip(R, clip[0], clip[1])


def _group_codes(values):
    return np.unique(values, return_inverse=True)[1].ravel()


def _queries(identity, split, one_per_identity, rng):
    """The rows that query: one per identity within each split, drawn at random (the reference
    code's seeded order), ordered by split, then identity; or every row."""
    if not one_per_identity:
        return np.arange(identity.shape[0])
    key = _group_codes(identity)
    if split is not None:
        key = _group_codes(split) * (key.max() + 1) + key
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(key[order]) != 0])
    sizes = np.diff(np.r_[starts, key.size])
    return order[starts + np.array([rng.randint(n) for n in sizes], dtype=np.intp)]


def _identity_bootstrap(successes, query_identity, n_bootstrap, rng, batch=500):
    """95% percentile interval of the top-1 rate, resampling identities with replacement; an
    identity's observation is its top-1 rate over all its lineups."""
    inv = _group_codes(query_identity)
    per = (np.bincount(inv, weights=successes.sum(axis=1))
           / (np.bincount(inv) * successes.shape[1]))
    means = []
    for start in range(0, n_bootstrap, batch):
        draws = rng.randint(per.size, size=(min(batch, n_bootstrap - start), per.size))
        means.append(per[draws].mean(axis=1))
    return tuple(np.quantile(np.concatenate(means), [0.025, 0.975]))


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
        "reference_decoder": [None, HasMethods(["transform", "inverse_transform"])],
        "split": [None, "array-like"],
        "n_lineups": [Interval(Integral, 1, None, closed="left")],
        "n_candidates": [Interval(Integral, 2, None, closed="left")],
        "one_per_identity": ["boolean"],
        "clip": [None, tuple],
        "n_bootstrap": [Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references)
def identity_linkage_accuracy(X_hat, identity, references, reference_identity, *,
                              auditor="pca", reference_decoder=None, split=None, n_lineups=10,
                              n_candidates=10, one_per_identity=True, clip=(0.0, 1.0),
                              n_bootstrap=10000, random_state=0):
    """Cross-image identity linkage of reconstructed faces (the GDP paper's CelebA protocol).

    Section 5.3.1 of [1]_, with the rules of its reference code:

    * **queries**: one reconstruction per identity within each split (``split``), drawn at
      random (the code's seeded order), ordered by split, then identity;
    * **lineups**: each query meets ``n_lineups`` lineups of ``n_candidates`` clean reserved
      images: the reference of its identity (a *different* image from the query's source:
      reserved images are never uploaded) and the references of ``n_candidates - 1`` impostor
      identities drawn without replacement from all other reference identities, shuffled.
      There is one reference per identity, so no lineup shows one impostor twice. The
      lineups depend only on the identities and ``random_state``, so every attack and every
      draw faces the same ones;
    * **conditions**: the reconstructions are clamped to ``clip``; with ``reference_decoder``
      each reference is projected by the public reduction, decoded and clamped too, so
      references and queries are treated alike (the code's primary condition); without it
      the raw references are used (the code's decoded-query/raw-reference diagnostic);
    * **scoring**: query and candidates are embedded by the frozen ``auditor`` and
      L2-normalised; the prediction is the ``argmax`` of the cosine similarities, so ties go
      to the earlier lineup position. The score is the top-1 rate over all episodes (chance
      ``1 / n_candidates``); ``top3``, ``mrr`` (mean reciprocal rank) and ``ci95`` (the 95%
      interval of a bootstrap over identities) come with it.

    Higher means more leakage (less private). :func:`linkage_accuracy` is the paper's other
    protocol (MNIST, exact source).

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
        The clean reserved images of all active participants' identities, one per identity.
    reference_identity : array-like of shape (n_references,)
        Their identities (distinct); every query identity needs its reference.
    auditor : fitted transformer or 'pca', default='pca'
        The frozen embedder: any fitted transformer (e.g. wrapping a pretrained face network;
        the paper uses Inception-ResNet-v1 trained on VGGFace2), or ``'pca'``: a PCA (at most
        32 components) fitted on the references as scored, never on the reconstructions.
    reference_decoder : fitted transformer with ``inverse_transform`` or None, default=None
        The public rank-reducing projection (the code's uncentered public SVD is a fitted
        :class:`~sklearn.decomposition.TruncatedSVD`; a pipeline of the public steps works
        too): references become ``clip(inverse_transform(transform(references)))``, the
        code's primary condition. ``None``: raw references.
    split : array-like of shape (n_samples,) or None, default=None
        The split (e.g. train/val/test) of each reconstructed image: one query per identity
        within each split. ``None``: one per identity (the same under identity-level splits,
        where an identity lies in one split).
    n_lineups : int, default=10
        Lineups per query (the paper's 10).
    n_candidates : int, default=10
        Lineup size (the paper's 10); shorter when fewer other identities exist.
    one_per_identity : bool, default=True
        Query with one reconstruction per identity (per split), as the paper does (100 queries
        x 10 lineups = 1,000 episodes); False queries with every row.
    clip : tuple of (float, float) or None, default=(0.0, 1.0)
        Range the reconstructions (and decoded references) are clamped to before embedding;
        None leaves them unclamped.
    n_bootstrap : int, default=10000
        Bootstrap resamples of the identities for ``ci95`` (the code's 10,000); 0 skips it.
    random_state : int, RandomState instance or None, default=0
        Draws the queries, the lineups and the bootstrap, in that order; an int keeps them
        fixed across methods and draws.

    Returns
    -------
    accuracy : LinkageScore
        The top-1 rate, with ``chance``, ``ranks`` (n_queries, n_lineups), ``top3``, ``mrr``,
        ``mean_rank``, ``ci95``, ``lineups`` and ``queries``.

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
    >>> bool(acc.ci95[0] <= float(acc) <= acc.ci95[1] and acc.top3 >= float(acc))
    True
    >>> noise = np.random.RandomState(0).rand(*X.shape)
    >>> float(identity_linkage_accuracy(noise, ident, refs, ref_ident)) < 0.3
    True
    """
    X_hat, identity, references, reference_identity = _check_lineup_inputs(
        X_hat, identity, references, reference_identity, clip)
    if split is not None:
        split = check_array(split, ensure_2d=False, dtype=None)
        if split.shape != identity.shape:
            raise ValueError(
                f"split must have one entry per reconstruction, shape {identity.shape}; got "
                f"{split.shape}."
            )
    rng = check_random_state(random_state)
    queries = _queries(identity, split, one_per_identity, rng)
    references = _decoded_references(references, reference_decoder, clip)
    auditor = _fitted_auditor(auditor, references)
    lineups, true_pos = _lineups(identity[queries], reference_identity, n_lineups,
                                 n_candidates, rng)
    E_ref = _embed(auditor, references)  # each image embedded once
    ranks = _lineup_ranks(_embed(auditor, X_hat[queries]), E_ref, lineups, true_pos)
    chance = float(np.mean(1.0 / (lineups >= 0).sum(axis=2)))
    ci95 = None
    if n_bootstrap:
        ci95 = _identity_bootstrap(ranks == 1, identity[queries], n_bootstrap, rng)
    return LinkageScore(float(np.mean(ranks == 1)), chance=chance, ranks=ranks,
                        lineups=lineups, queries=queries, ci95=ci95)

