"""The anchor file: the shared anchor, made once and given to the participants only.

The anchor is a plain ``.npy`` (made once with :func:`make_anchor`, distributed to the
participants out of band, never to the analyst), whose header names its kind in a comment
(``# skdc-kind: skdc-anchor``; ``numpy.load`` ignores it), so that no command's output replaces
it unasked. :func:`load_anchor` reads it without unpickling (:func:`~skdc.protocol._container.
read_npy`) and refuses an anchor that cannot align (:func:`check_anchor`).
"""

# Licence: BSD 3 clause

import os
import warnings
from numbers import Integral

import numpy as np

from ..anchors import orthonormal_anchor, uniform_anchor
from ..utils._docstring import Substitution
from ..utils._outputs import write_npy
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._container import UploadError, atomic_file, check_values, max_magnitude, read_npy
from ._screen import rank_deficient

__all__ = ["load_anchor", "make_anchor"]

_ANCHOR = "skdc-anchor"

# anchors whose centered version has a larger condition number amplify the anchor noise
_ANCHOR_COND_WARN = 1e6

_ANCHOR_MAKERS = {"orthonormal": orthonormal_anchor, "uniform": uniform_anchor}


@validate_params(
    {
        "path": [str, os.PathLike],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "n_anchors": [Interval(Integral, 2, None, closed="left"), None],
        "kind": [StrOptions(set(_ANCHOR_MAKERS))],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references)
def make_anchor(path, n_features, *, n_anchors=None, kind="orthonormal", random_state=None):
    """Make the shared anchor once and write it as a ``.npy`` file.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        Output ``.npy`` file, written owner-only (``0o600``). Distribute it to the
        participants only, over a private channel (never to the analyst).
    n_features : int
        Width ``d`` of the participants' data.
    n_anchors : int, default=None
        Anchor rows ``r``; ``None`` means ``4 * n_features`` (the papers' choice). At least
        ``n_features + 1``.
    kind : {'orthonormal', 'uniform'}, default='orthonormal'
        The centered orthonormal anchor of eq. (22) of [1]_, or uniform entries.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor written.

    {references}

    Examples
    --------
    >>> import os, tempfile
    >>> from skdc.protocol import load_anchor, make_anchor
    >>> path = os.path.join(tempfile.mkdtemp(), "anchor.npy")
    >>> make_anchor(path, 3, random_state=0).shape
    (12, 3)
    >>> load_anchor(path).shape
    (12, 3)
    """
    r = 4 * n_features if n_anchors is None else n_anchors
    A = _ANCHOR_MAKERS[kind](r, n_features, random_state=random_state)
    # owner-only: the raw anchor with one clean anchor upload reveals that participant's
    # secret; a link, pipe or device at ``path`` is replaced, never written through, and so is
    # an earlier anchor, but never another kind of skdc file (a secret) nor a command's input
    with atomic_file(path, 0o600, what="the anchor", kind=_ANCHOR) as fh:
        write_npy(fh, A, kind=_ANCHOR)
    return A


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def load_anchor(path):
    """Read an anchor ``.npy`` (never unpickling) and check it can align.

    Raises :class:`UploadError` for an unreadable, non-float, non-2-D or non-finite file and for
    too few rows or a rank-deficient centered anchor; warns when the centered anchor is
    ill-conditioned (the anchor noise is then amplified).

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    path : str or path-like
        The anchor file.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor, float64.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.protocol import UploadError, load_anchor
    >>> path = os.path.join(tempfile.mkdtemp(), "anchor.npy")
    >>> np.save(path, np.ones((6, 2)))  # every row alike: its centered version is zero
    >>> try:
    ...     load_anchor(path)
    ... except UploadError as exc:
    ...     print(str(exc).split(": ", 1)[1][:37])
    the centered anchor is rank-deficient
    """
    path = os.fspath(path)
    A = read_npy(path, "the anchor")
    if A.ndim != 2 or A.dtype.kind not in "fiu":
        raise UploadError(
            f"{path}: an anchor is a 2-D numeric array (n_anchors, n_features); got "
            f"{getattr(A, 'shape', None)} of {getattr(A, 'dtype', type(A).__name__)}."
        )
    return check_anchor(A.astype(np.float64), path)


def check_anchor(A, where):
    """Refuse anchors that cannot align; warn on ill-conditioned ones (what to change)."""
    if not np.isfinite(A).all():
        raise UploadError(f"{where}: the anchor contains NaN or infinity; make a new one.")
    # refused before any arithmetic on it (an SVD of entries near 1e300 overflows)
    check_values(A, where, "the anchor", max_magnitude(A.size))
    r, d = A.shape
    if r < d + 1:
        raise UploadError(
            f"{where}: the anchor has {r} rows for {d} features; alignment needs at least "
            f"n_features + 1 = {d + 1} (the papers use {4 * d}). Make it with more rows."
        )
    s = np.linalg.svd(A - A.mean(axis=0), compute_uv=False)
    if rank_deficient(s):
        raise UploadError(
            f"{where}: the centered anchor is rank-deficient (singular values {s[0]:.3g} .. "
            f"{s[-1]:.3g}): alignment cannot identify the rotations. Make it with "
            "`skdc anchor make` (orthonormal)."
        )
    if s[0] / s[-1] > _ANCHOR_COND_WARN:
        warnings.warn(
            f"{where}: the centered anchor is ill-conditioned (condition number "
            f"{s[0] / s[-1]:.3g} > {_ANCHOR_COND_WARN:.0g}): anchor noise and rounding are "
            "amplified in the alignment. Use the orthonormal anchor (`skdc anchor make`), "
            "whose condition number is 1.",
            UserWarning,
        )
    return A
