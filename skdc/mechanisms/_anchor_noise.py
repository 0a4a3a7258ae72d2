"""Anchor noise: what each participant adds to its anchor upload before it leaves home.

Def 4.1 of [1]_: ``B_i = A O_i + 1 Psi_i^T + v W_i`` with ``W_i`` i.i.d. standard normal,
independent across participants. Participant ``i``'s noise is drawn from its own stream,
``numpy.random.default_rng([seed, i])``, so a participant running alone (deployment) and the
simulated pipeline (:class:`~skdc.alignment.GOPPAligner` adding it on the participants' behalf)
produce the same upload from the same seed.

References
----------
.. [1] Nosaka et al., "Geometric Data Perturbation with Noisy-Anchor Alignment for
   Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["add_anchor_noise"]


@validate_params(
    {
        "anchor_upload": ["array-like"],
        "v": [Interval(Real, 0, None, closed="left")],
        "seed": [Interval(Integral, 0, None, closed="left")],
        "participant": [Interval(Integral, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def add_anchor_noise(anchor_upload, v, *, seed, participant):
    """Return ``anchor_upload + v * W`` with ``W`` drawn from participant ``participant``'s stream.

    Parameters
    ----------
    anchor_upload : array-like of shape (n_anchors, n_components)
        The clean anchor upload ``B_i``.
    v : float
        Standard deviation of the anchor noise.
    seed : int
        The collaboration's anchor-noise seed (each participant's stream also uses its id).
    participant : int
        The participant's id.

    Returns
    -------
    noisy_upload : ndarray of shape (n_anchors, n_components)
        The upload the analyst receives.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.mechanisms import add_anchor_noise
    >>> B = np.zeros((3, 2))
    >>> noisy = add_anchor_noise(B, 0.1, seed=0, participant=1)
    >>> noisy.shape, bool(np.array_equal(noisy, add_anchor_noise(B, 0.1, seed=0, participant=1)))
    ((3, 2), True)
    """
    B = np.array(anchor_upload, dtype=np.float64)
    if v == 0:
        return B
    return B + v * np.random.default_rng([seed, participant]).standard_normal(B.shape)
