"""Seeds of secrets: at least 128 bits of operating-system entropy, unless a seed is chosen.

A secret (a participant's rotation and shift, its anchor noise, its private-data noise, a
release's noise) is only as hard to guess as the seed it derives from: anyone holding an upload
can try candidate seeds against it (the developer guide, "Randomness"). So every seed that
protects something is drawn here:

* ``random_state=None``: a fresh seed of :data:`SECRET_BITS` bits from the operating system
  (:func:`fresh_seed`), and every purpose (secret, anchor, noise, hash key) gets its own child
  stream of the same width (:func:`draw_seeds`, :class:`numpy.random.SeedSequence`);
* an int of at least ``2**32`` (what a secret file stores): the same wide derivation, so the
  secret is re-derived from the file bit for bit;
* an int below ``2**32`` or a ``RandomState``: a **chosen seed**, for bit-for-bit tests only;
  it keeps the streams of earlier skdc versions (31-bit child seeds), which a search over that
  space recovers.
"""

# Licence: BSD 3 clause

import secrets
from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from ._sklearn_compat import Interval

__all__ = ["SECRET_BITS", "SECRET_SEED", "draw_seeds", "fresh_seed", "is_wide_seed",
           "secret_stream", "seed_bytes", "seeded_rng"]

#: Bits of operating-system entropy in a fresh secret seed.
SECRET_BITS = 128
#: Chosen (test-only) seeds lie below this bound; wider ints are derived as entropy.
_CHOSEN_BOUND = 2**32
#: Width of a chosen seed's child seeds (the streams of earlier versions).
_LEGACY_SEED_MAX = 2**31 - 1
#: ``_parameter_constraints`` entry of a ``random_state`` that seeds a secret: sklearn's
#: ``"random_state"`` (None, an int below ``2**32``, a RandomState) or a wide int (a secret
#: file's seed, :func:`fresh_seed`).
SECRET_SEED = ["random_state", Interval(Integral, _CHOSEN_BOUND, None, closed="left")]


def fresh_seed():
    """A fresh secret seed: :data:`SECRET_BITS` bits from the operating system.

    The bit above them is set, so the seed is an int in ``[2**128, 2**129)``: it is never taken
    for a chosen seed, and it fits the JSON header of a secret file as it is.

    Returns
    -------
    seed : int
        A Python int with :data:`SECRET_BITS` bits of entropy.

    Examples
    --------
    >>> from skdc.utils._random import fresh_seed
    >>> fresh_seed().bit_length()
    129
    """
    return (1 << SECRET_BITS) | secrets.randbits(SECRET_BITS)


def is_wide_seed(seed):
    """Whether ``seed`` is an int derived as entropy (at least ``2**32``), not a chosen seed."""
    return isinstance(seed, Integral) and not isinstance(seed, bool) and seed >= _CHOSEN_BOUND


def _words_to_int(words):
    return sum(int(w) << (32 * k) for k, w in enumerate(words)) | (1 << SECRET_BITS)


def draw_seeds(random_state, n):
    """``n`` seeds for ``n`` purposes, each as wide as the root seed allows.

    Parameters
    ----------
    random_state : None, int or RandomState
        ``None`` draws a fresh seed (:func:`fresh_seed`); an int of at least ``2**32`` is
        entropy (each child seed is :data:`SECRET_BITS` bits wide, from its own
        :class:`~numpy.random.SeedSequence` child); an int below ``2**32`` or a
        ``RandomState`` is a chosen seed: ``n`` draws of ``randint(2**31 - 1)``, the streams of
        earlier skdc versions (for bit-for-bit tests only).
    n : int
        Number of seeds.

    Returns
    -------
    seeds : list of int
        One seed per purpose; wide ones lie in ``[2**128, 2**129)``.

    Examples
    --------
    >>> from skdc.utils._random import draw_seeds
    >>> [s.bit_length() for s in draw_seeds(None, 2)]
    [129, 129]
    >>> draw_seeds(0, 2)
    [209652396, 398764591]
    """
    if random_state is None:
        random_state = fresh_seed()
    if is_wide_seed(random_state):
        children = np.random.SeedSequence(int(random_state)).spawn(n)
        return [_words_to_int(c.generate_state(SECRET_BITS // 32)) for c in children]
    rng = check_random_state(random_state)
    return [int(s) for s in rng.randint(_LEGACY_SEED_MAX, size=n)]


def secret_stream(random_state):
    """A generator for a secret and a function that draws one more seed after it.

    For estimators that draw their secret from one ``RandomState`` and then a noise seed.

    Parameters
    ----------
    random_state : None, int or RandomState
        As in :func:`draw_seeds`. A chosen seed gives ``check_random_state(random_state)`` and
        ``randint(2**31 - 1)`` draws from it (the streams of earlier versions); otherwise the
        generator and every further seed come from their own
        :class:`~numpy.random.SeedSequence` children, :data:`SECRET_BITS` bits wide.

    Returns
    -------
    rng : RandomState
        The secret's generator.
    next_seed : callable
        ``next_seed() -> int``: one more seed, a new one at each call.

    Examples
    --------
    >>> from skdc.utils._random import secret_stream
    >>> rng, next_seed = secret_stream(None)
    >>> next_seed().bit_length()
    129
    """
    if random_state is not None and not is_wide_seed(random_state):
        rng = check_random_state(random_state)
        return rng, lambda: int(rng.randint(_LEGACY_SEED_MAX))
    root = np.random.SeedSequence(int(fresh_seed() if random_state is None else random_state))

    def next_seed():
        return _words_to_int(root.spawn(1)[0].generate_state(SECRET_BITS // 32))

    return seeded_rng(next_seed()), next_seed


def seeded_rng(seed):
    """A ``RandomState`` seeded with all the bits of ``seed`` (an int >= 0).

    Below ``2**32`` it is ``RandomState(seed)``, as in earlier versions; a wider seed is split
    into 32-bit words, all of which seed the generator.
    """
    seed = int(seed)
    if seed < _CHOSEN_BOUND:
        return np.random.RandomState(seed)
    words = [(seed >> (32 * k)) & 0xFFFFFFFF for k in range((seed.bit_length() + 31) // 32)]
    return np.random.RandomState(np.array(words, dtype=np.uint32))


def seed_bytes(seed):
    """The bytes of a seed, as a hash key: 8 bytes below ``2**64`` (as earlier versions),
    else as many as it needs."""
    seed = int(seed)
    return seed.to_bytes(max(8, (seed.bit_length() + 7) // 8), "little")
