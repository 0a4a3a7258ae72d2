"""Identity-level partitions of face data and the public dimensional-reduction pool.

The CelebA study of [1]_ (its Section 5.3) keeps every image of an identity in one place:
a public pool of images (identities disjoint from every participant's) fits the public
rank-reducing projection; each participant gets its own identities, split 70/15/15 into
train/validation/test at the identity level; and one image per participant identity is
reserved as the clean reference for linkage, never uploaded nor trained on. Participant
identities are allocated greedily so that participant x split buckets are balanced in image
counts and in the prevalence of a binary label (CelebA's ``Smiling``).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from numbers import Integral

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["identity_split", "public_reduction_pool"]

SPLIT_NAMES = ("train", "val", "test")


def _check_identity(identity):
    identity = np.asarray(identity)
    if identity.ndim != 1 or identity.size == 0:
        raise ValueError(
            f"identity must be a non-empty 1-D array, one identity per image; got shape "
            f"{identity.shape}."
        )
    return identity


@validate_params(
    {
        "identity": ["array-like"],
        "n_images": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def public_reduction_pool(identity, n_images=10000, *, random_state=None):
    """Choose the public pool: exactly ``n_images`` images of whole, randomly ordered identities.

    Identities are taken in a random order (the reference code's hash order) until the pool
    holds ``n_images`` images; the last identity taken contributes only the images needed,
    and its remaining images are left out of every later use (see ``excluded``), so public and
    participant identities stay disjoint.

    Read more in the :ref:`User Guide <threat_model>`.

    Parameters
    ----------
    identity : array-like of shape (n_samples,)
        Identity of each image.
    n_images : int, default=10000
        Pool size (the paper's 10,000).
    random_state : int, RandomState instance or None, default=None
        Source of the identity order.

    Returns
    -------
    pool : :class:`~sklearn.utils.Bunch`
        ``mask`` (n_samples,) bool, the pool images; ``identities`` those identities;
        ``excluded`` (n_samples,) bool, every image of a pool identity (pass it to
        :func:`identity_split` as ``exclude``).

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.datasets import public_reduction_pool
    >>> identity = np.repeat(np.arange(6), 3)
    >>> pool = public_reduction_pool(identity, 7, random_state=0)
    >>> int(pool.mask.sum()), int(pool.excluded.sum()), len(pool.identities)
    (7, 9, 3)
    """
    identity = _check_identity(identity)
    if n_images > identity.size:
        raise ValueError(
            f"The pool needs {n_images} images but only {identity.size} are given; lower "
            "n_images."
        )
    rng = check_random_state(random_state)
    ids = rng.permutation(np.unique(identity))
    mask = np.zeros(identity.size, dtype=bool)
    taken = []
    need = n_images
    for ident in ids:
        rows = np.flatnonzero(identity == ident)
        take = rows[: min(need, rows.size)]
        mask[take] = True
        taken.append(ident)
        need -= take.size
        if need == 0:
            break
    excluded = np.isin(identity, taken)
    return Bunch(mask=mask, identities=np.array(taken), excluded=excluded)


def _split_counts(k, split_sizes):
    sizes = np.asarray(split_sizes, dtype=float)
    raw = sizes / sizes.sum() * k
    counts = np.floor(raw).astype(int)
    # largest remainders get the identities left over, so the counts sum to k
    for j in np.argsort(-(raw - counts), kind="stable")[: k - counts.sum()]:
        counts[j] += 1
    return counts


@validate_params(
    {
        "identity": ["array-like"],
        "n_participants": [Interval(Integral, 1, None, closed="left")],
        "identities_per_participant": [Interval(Integral, 1, None, closed="left")],
        "split_sizes": [tuple],
        "min_images": [Interval(Integral, 1, None, closed="left")],
        "exclude": ["array-like", None],
        "balance": ["array-like", None],
        "reserve_reference": ["boolean"],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def identity_split(identity, n_participants, *, identities_per_participant=100,
                   split_sizes=(0.7, 0.15, 0.15), min_images=2, exclude=None, balance=None,
                   reserve_reference=True, random_state=None):
    """Give each participant its own identities, split train/val/test at the identity level.

    Eligible identities have at least ``min_images`` images and none in ``exclude`` (the
    public pool). ``n_participants * identities_per_participant`` of them are drawn at random,
    then allocated greedily, largest first, to the participant x split bucket that stays most
    balanced: the bucket's images per identity slot, plus (with ``balance``) the distance of
    its positive rate from the overall rate. Each participant gets exactly
    ``identities_per_participant`` identities, divided by ``split_sizes``. With
    ``reserve_reference`` one image per allocated identity is the clean linkage reference.

    Read more in the :ref:`User Guide <threat_model>`.

    Parameters
    ----------
    identity : array-like of shape (n_samples,)
        Identity of each image.
    n_participants : int
        Number of participants.
    identities_per_participant : int, default=100
        Identities of each participant (the paper's 100).
    split_sizes : tuple of float, default=(0.7, 0.15, 0.15)
        Train/validation/test shares of each participant's identities.
    min_images : int, default=2
        Minimum images of an eligible identity (one is reserved, one at least is uploaded).
    exclude : array-like of bool of shape (n_samples,) or None, default=None
        Images whose identities may not be used (e.g. ``public_reduction_pool(...).excluded``).
    balance : array-like of shape (n_samples,) or None, default=None
        Binary label per image (CelebA ``Smiling``) whose prevalence is balanced.
    reserve_reference : bool, default=True
        Reserve one random image per allocated identity as its clean reference.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    split : :class:`~sklearn.utils.Bunch`
        ``participant`` (n_samples,) int, -1 for images no participant holds; ``split``
        (n_samples,) int, 0/1/2 for train/val/test, -1 elsewhere; ``reference``
        (n_samples,) bool; ``protocol`` (n_samples,) bool, the images uploaded
        (``participant >= 0`` and not reference); ``split_names`` ``('train', 'val',
        'test')``; ``identities`` (n_participants, identities_per_participant) the allocation.

    See Also
    --------
    skdc.metrics.identity_linkage_accuracy : Links reconstructions to the reserved references.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.datasets import identity_split
    >>> identity = np.repeat(np.arange(30), 4)
    >>> s = identity_split(identity, 2, identities_per_participant=10, random_state=0)
    >>> np.bincount(s.split[s.participant == 0] + 1).tolist()  # -1 (none), train, val, test
    [0, 28, 8, 4]
    >>> int(s.reference.sum()), int(s.protocol.sum())
    (20, 60)
    """
    identity = _check_identity(identity)
    n = identity.size
    _check_split_inputs(n, split_sizes, exclude, balance)
    rng = check_random_state(random_state)
    ids, inverse, counts = np.unique(identity, return_inverse=True, return_counts=True)
    chosen = _draw_identities(ids, inverse, counts, n_participants,
                              identities_per_participant, min_images, exclude, rng)
    pos = None
    if balance is not None:
        pos = np.bincount(inverse, weights=np.asarray(balance, dtype=float), minlength=ids.size)
    capacity = np.tile(_split_counts(identities_per_participant, split_sizes),
                       n_participants).astype(float)  # bucket b = 3 * i + j
    bucket_of = _allocate_greedily(chosen, counts.astype(float), pos, capacity)
    participant_of_id = np.full(ids.size, -1)
    split_of_id = np.full(ids.size, -1)
    participant_of_id[chosen] = bucket_of // 3
    split_of_id[chosen] = bucket_of % 3
    participant = participant_of_id[inverse]
    split = split_of_id[inverse]
    reference = np.zeros(n, dtype=bool)
    if reserve_reference:
        for c in chosen:
            reference[rng.choice(np.flatnonzero(inverse == c))] = True
    allocation = _allocation_table(ids, chosen, bucket_of, n_participants,
                                   identities_per_participant)
    return Bunch(participant=participant, split=split, reference=reference,
                 protocol=(participant >= 0) & ~reference, split_names=SPLIT_NAMES,
                 identities=allocation)


def _check_split_inputs(n, split_sizes, exclude, balance):
    if len(split_sizes) != 3 or min(split_sizes) < 0 or sum(split_sizes) <= 0:
        raise ValueError(
            f"split_sizes must be three non-negative shares (train, val, test); got "
            f"{split_sizes}."
        )
    for name, arr in (("exclude", exclude), ("balance", balance)):
        if arr is not None and np.asarray(arr).shape != (n,):
            raise ValueError(
                f"{name} must have one entry per image ({n}); got shape "
                f"{np.asarray(arr).shape}."
            )


def _draw_identities(ids, inverse, counts, n_participants, k, min_images, exclude, rng):
    """``n_participants * k`` eligible identities (indices into ``ids``) drawn at random,
    largest first (stable, so ties keep the random order)."""
    eligible = counts >= min_images
    if exclude is not None:
        blocked = np.zeros(ids.size, dtype=bool)
        blocked[inverse[np.asarray(exclude, dtype=bool)]] = True
        eligible &= ~blocked
    need = n_participants * k
    if eligible.sum() < need:
        raise ValueError(
            f"{n_participants} participants x {k} identities need {need} eligible identities "
            f"(at least {min_images} images, not excluded); only {int(eligible.sum())} are. "
            "Lower n_participants or identities_per_participant."
        )
    chosen = rng.permutation(np.flatnonzero(eligible))[:need]
    return chosen[np.argsort(-counts[chosen], kind="stable")]


def _allocate_greedily(chosen, n_img, pos, capacity):
    """The bucket of each chosen identity: the open bucket whose images per identity slot
    (plus, with the positives ``pos``, the distance of its positive rate from the overall
    rate) stays smallest."""
    if pos is not None:
        rate = pos[chosen].sum() / n_img[chosen].sum()
    left = capacity.copy()
    load = np.zeros(capacity.size)
    load_pos = np.zeros(capacity.size)
    mean_size = n_img[chosen].mean()
    bucket_of = np.empty(chosen.size, dtype=int)
    for t, c in enumerate(chosen):
        open_ = left > 0
        cost = (load + n_img[c]) / np.maximum(capacity, 1) / mean_size
        if pos is not None:
            cost = cost + np.abs((load_pos + pos[c]) / (load + n_img[c]) - rate)
        cost[~open_] = np.inf
        b = int(np.argmin(cost))
        bucket_of[t] = b
        left[b] -= 1
        load[b] += n_img[c]
        if pos is not None:
            load_pos[b] += pos[c]
    return bucket_of


def _allocation_table(ids, chosen, bucket_of, n_participants, k):
    """``(n_participants, k)``: each participant's identities, in allocation order."""
    allocation = np.full((n_participants, k), -1, dtype=ids.dtype if ids.dtype.kind in "iu"
                         else object)
    fill = np.zeros(n_participants, dtype=int)
    for c, b in zip(chosen, bucket_of):
        i = b // 3
        allocation[i, fill[i]] = ids[c]
        fill[i] += 1
    return allocation
