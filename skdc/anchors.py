"""Anchor makers: the shared synthetic matrix every participant obfuscates alongside its rows.

The anchor ``A`` is participant-side shared state: it is distributed to all participants and
withheld from the analyst. Anchor-based alignment needs the centered anchor ``Abar = H_r A`` to
have full column rank, which forces ``n_anchors >= n_features + 1``. The centered orthonormal
anchor of eq. (22) in [1]_ (``1^T A = 0`` and ``A^T A = I``) fixes the anchor's scale against the
anchor noise ``v``.

Mechanisms take an ``anchor`` parameter that is one of: a name (``"orthonormal"``,
``"uniform"``), an array, a callable ``f(n_anchors, n_features, random_state)`` returning an
array or an ``(A, anchor_y)`` pair, or an object with a ``make_anchor(n_features,
random_state)`` method returning ``(A, anchor_y)`` (the SMOTE anchor of the DC-integration
papers).

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state

from .utils._docstring import Substitution
from .utils._references import gdp_paper_references
from .utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    validate_estimator_params,
    validate_params,
)

__all__ = [
    "SMOTEAnchor", "check_anchor_covers_rows", "check_full_rank_anchor", "orthonormal_anchor",
    "resolve_anchor", "uniform_anchor",
]

# -- docstring fragments shared by the anchor makers (skdc.utils._docstring.Substitution) ------
_random_state_returns_doc = """random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor.
"""


@validate_params(
    {
        "n_anchors": [Interval(Integral, 2, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(random_state_returns=_random_state_returns_doc, references=gdp_paper_references)
def orthonormal_anchor(n_anchors, n_features, random_state=None):
    """Centered anchor with orthonormal columns, eq. (22) of [1]_ (and its supplement S.5).

    Read more in the :ref:`User Guide <protocols>`.

    A Gaussian matrix is centered and orthonormalised by a sign-corrected thin QR, so that
    ``1^T A = 0``, ``A^T A = I`` and every singular value of ``A`` equals one.

    Parameters
    ----------
    n_anchors : int
        Number of anchor rows ``r``; must be at least ``n_features + 1``.
    n_features : int
        Width ``d``.
    {random_state_returns}

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.anchors import orthonormal_anchor
    >>> A = orthonormal_anchor(12, 3, random_state=0)
    >>> bool(np.allclose(A.T @ A, np.eye(3))), bool(np.allclose(A.sum(0), 0))
    (True, True)
    """
    if n_anchors < n_features + 1:
        raise ValueError(
            f"A centered orthonormal anchor needs n_anchors >= n_features + 1 = "
            f"{n_features + 1}; got n_anchors={n_anchors}. Use more anchor rows (the papers use "
            f"4 * n_features = {4 * n_features})."
        )
    rng = check_random_state(random_state)
    omega = rng.standard_normal((n_anchors, n_features))
    q, r = np.linalg.qr(omega - omega.mean(axis=0))
    signs = np.sign(np.diag(r))
    signs[signs == 0] = 1.0
    return q * signs[None, :]


@validate_params(
    {
        "n_anchors": [Interval(Integral, 2, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "low": [Real],
        "high": [Real],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(random_state_returns=_random_state_returns_doc)
def uniform_anchor(n_anchors, n_features, *, low=0.0, high=1.0, random_state=None):
    """Anchor with i.i.d. uniform entries, the classic data-collaboration choice.

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    n_anchors : int
        Number of anchor rows.
    n_features : int
        Width.
    low, high : float, default=0.0, 1.0
        Range of the entries; use the range of your (scaled) features.
    {random_state_returns}

    Examples
    --------
    >>> from skdc.anchors import uniform_anchor
    >>> uniform_anchor(5, 2, random_state=0).shape
    (5, 2)
    """
    if not high > low:
        raise ValueError(f"uniform_anchor needs high > low; got low={low}, high={high}.")
    rng = check_random_state(random_state)
    return rng.uniform(low, high, size=(n_anchors, n_features))


_NAMED_ANCHORS = {"orthonormal": orthonormal_anchor, "uniform": uniform_anchor}


@validate_params(
    {
        "anchor": [StrOptions(set(_NAMED_ANCHORS)), HasMethods(["make_anchor"]), callable,
                   "array-like"],
        "n_anchors": [None, Interval(Integral, 1, None, closed="left")],
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def resolve_anchor(anchor, n_anchors, n_features, random_state):
    """The anchor ``A`` and its labels from a mechanism's ``anchor`` parameter, validated.

    Every mechanism resolves its ``anchor`` parameter here (the forms are listed in the
    module docstring), so that a name, an array, a callable and an anchor object such as
    :class:`SMOTEAnchor` mean the same everywhere.

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    anchor : {"orthonormal", "uniform"}, callable, anchor object or array-like
        A name of :func:`orthonormal_anchor` or :func:`uniform_anchor`; a callable
        ``f(n_anchors, n_features, random_state)`` returning ``A`` or ``(A, anchor_y)``; an
        object with a ``make_anchor(n_features, random_state)`` method returning
        ``(A, anchor_y)``; or the anchor itself, of shape (n_anchors, n_features).
    n_anchors : int or None
        Rows of a generated anchor; ``None`` means ``4 * n_features``. Ignored for arrays and
        anchor objects, which fix their own row count.
    n_features : int
        Width ``d`` the anchor must have (the participants' data width).
    random_state : int, RandomState instance or None
        Source of randomness of a generated anchor.

    Returns
    -------
    A : ndarray of shape (n_anchors, n_features)
        The anchor, float64 and finite.
    anchor_y : ndarray of shape (n_anchors,) or None
        The anchor rows' labels when the anchor carries them (:class:`SMOTEAnchor`), else
        ``None``.

    See Also
    --------
    check_full_rank_anchor : The rank condition anchor alignment needs.

    Examples
    --------
    >>> from skdc.anchors import resolve_anchor
    >>> A, anchor_y = resolve_anchor("orthonormal", None, 3, random_state=0)
    >>> A.shape, anchor_y is None
    ((12, 3), True)
    """
    rng = check_random_state(random_state)
    r = 4 * n_features if n_anchors is None else n_anchors
    anchor_y = None
    if isinstance(anchor, str):
        A = _NAMED_ANCHORS[anchor](r, n_features, random_state=rng)
    elif hasattr(anchor, "make_anchor"):
        A, anchor_y = anchor.make_anchor(n_features, random_state=rng)
    elif callable(anchor):
        A = anchor(r, n_features, random_state=rng)
        if isinstance(A, tuple):
            A, anchor_y = A
    else:
        A = anchor
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[1] != n_features:
        raise ValueError(
            f"The anchor must have shape (n_anchors, n_features) = (r, {n_features}); got "
            f"shape {A.shape}. Give an anchor as wide as the data."
        )
    if not np.all(np.isfinite(A)):
        raise ValueError("The anchor contains NaN or infinity; give a finite anchor.")
    if anchor_y is not None:
        anchor_y = np.asarray(anchor_y)
        if anchor_y.shape != (A.shape[0],):
            raise ValueError(
                f"anchor labels must have shape ({A.shape[0]},); got {anchor_y.shape}."
            )
    return A, anchor_y


@validate_params(
    {"A": ["array-like"], "rtol": [Interval(Real, 0, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references)
def check_full_rank_anchor(A, *, rtol=1e-10):
    """Raise unless the centered anchor has full column rank (Props 2.12 and 3.1 of [1]_).

    Anchor alignment identifies the participants' rotations only when the centered anchor
    ``Abar = H_r A`` has full column rank, which needs ``n_anchors >= n_features + 1``.

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    A : array-like of shape (n_anchors, n_features)
        The anchor.
    rtol : float, default=1e-10
        ``Abar`` counts as rank-deficient when its smallest singular value is at most
        ``rtol`` times its largest.

    Returns
    -------
    None
        Returns nothing; raises ``ValueError`` with what to change when the rank is short.

    {references}

    Examples
    --------
    >>> from skdc.anchors import check_full_rank_anchor, orthonormal_anchor
    >>> check_full_rank_anchor(orthonormal_anchor(8, 2, random_state=0))  # passes silently
    >>> import numpy as np
    >>> check_full_rank_anchor(np.ones((8, 2)))  # every centered row is zero
    Traceback (most recent call last):
    ...
    ValueError: The centered anchor is rank-deficient ...
    """
    A = np.asarray(A, dtype=np.float64)
    r, d = A.shape
    if r < d + 1:
        raise ValueError(
            f"Anchor alignment needs n_anchors >= n_features + 1 = {d + 1} anchor rows "
            f"(the centered anchor has rank at most n_anchors - 1); got {r}. Increase "
            f"n_anchors (default 4 * n_features = {4 * d})."
        )
    s = np.linalg.svd(A - A.mean(axis=0), compute_uv=False)
    if s[-1] <= rtol * max(s[0], np.finfo(float).tiny):
        raise ValueError(
            f"The centered anchor is rank-deficient (smallest singular value {s[-1]:.3g}, "
            f"largest {s[0]:.3g}): alignment cannot identify the rotations. Use "
            "anchor='orthonormal' or an anchor whose centered columns are independent."
        )


# an anchor "covers" the rows when at most half of its rows leave the rows' per-feature range
# and its spread is at least a quarter of theirs (both measured feature by feature). On
# standardized breast-cancer rows, kernel PCA + KTI reached 0.69 accuracy with an orthonormal
# anchor (spread 0.09) and 0.90 with a uniform one (spread 0.29); a SMOTE anchor has about 1.
_MAX_OUTSIDE, _MIN_SPREAD = 0.5, 0.25
_SMOTE_ADVICE = (
    "A nonlinear mechanism maps only what lies near the rows it was fitted on, so this anchor "
    "integrates to near chance accuracy. Build the anchor from public rows of your data's "
    "domain (in a simulation, rows held out from the participants): "
    "anchor=SMOTEAnchor.from_rows(X_public, y_public)."
)


@validate_params(
    {"A": ["array-like"], "X": ["array-like"], "estimator_name": [str]},
    prefer_skip_nested_validation=True,
)
def check_anchor_covers_rows(A, X, *, estimator_name="the mechanism"):
    """Warn when an anchor lies outside the range of the rows a nonlinear mechanism is fitted on.

    A nonlinear reduction (UMAP, kernel PCA) maps only what lies near its training rows: an
    anchor far from them, or squeezed into a small part of their range, lands in one corner of
    every participant's representation, and no integration can align it. A synthetic anchor
    (``"orthonormal"``, ``"uniform"``) does exactly that unless the features happen to share
    its scale: on scikit-learn's digits, UMAP + KTI reaches chance-level accuracy with them and
    about 0.8 with a SMOTE anchor from public rows. :class:`~skdc.mechanisms.UMAPMechanism` and
    :class:`~skdc.mechanisms.KernelPCAMechanism` call this at ``fit``.

    The anchor is refused as off the rows (a ``UserWarning``) when more than half of its rows
    have a feature outside the rows' ``[min, max]`` of that feature, or when its spread is
    below a quarter of the rows' spread (the root mean ratio of per-feature variances, over
    the features that vary).

    Read more in the :ref:`User Guide <nonlinear>`.

    Parameters
    ----------
    A : array-like of shape (n_anchors, n_features)
        The anchor.
    X : array-like of shape (n_samples, n_features)
        The rows the mechanism is fitted on.
    estimator_name : str, default="the mechanism"
        Who is warning, for the message.

    Returns
    -------
    outside : float
        Share of anchor rows with a feature outside the rows' range.
    spread : float
        The anchor's spread over the rows' (1 means as spread out as the rows).

    See Also
    --------
    SMOTEAnchor.from_rows : An anchor from public rows, which covers them.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from skdc.anchors import check_anchor_covers_rows, orthonormal_anchor
    >>> X = np.random.RandomState(0).uniform(0, 16, size=(200, 8))  # pixel-like features
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     outside, spread = check_anchor_covers_rows(orthonormal_anchor(32, 8, random_state=0), X)
    >>> round(outside, 2), len(caught)
    (1.0, 1)
    >>> check_anchor_covers_rows(X[:32] + 0.1, X)[0] < 0.5  # rows of the domain: no warning
    True
    """
    A = np.asarray(A, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    low, high = X.min(axis=0), X.max(axis=0)
    slack = 1e-9 * np.maximum(high - low, 1.0)
    off = (A < low - slack) | (A > high + slack)
    outside = float(np.mean(off.any(axis=1)))
    var_x = X.var(axis=0)
    varies = var_x > 0
    spread = float(np.sqrt(np.mean(A.var(axis=0)[varies] / var_x[varies]))) if varies.any() \
        else 1.0
    if outside > _MAX_OUTSIDE:
        row, col = np.argwhere(off)[0]
        side = "below its minimum" if A[row, col] < low[col] else "above its maximum"
        warnings.warn(
            f"{estimator_name}: {outside:.0%} of the anchor's rows lie outside the range of the "
            f"rows it is fitted on (e.g. anchor row {row}, feature {col}: {A[row, col]:.3g}, "
            f"{side} {low[col] if side.startswith('below') else high[col]:.3g}). "
            + _SMOTE_ADVICE, UserWarning, stacklevel=2)
    elif spread < _MIN_SPREAD:
        warnings.warn(
            f"{estimator_name}: the anchor covers {spread:.0%} of the spread of the rows it is "
            "fitted on (per-feature standard deviations); its rows sit in one small corner of "
            "their range. " + _SMOTE_ADVICE, UserWarning, stacklevel=2)
    return outside, spread


def _split_over_classes(total, n_classes, refusal):
    """``total`` rows split evenly over the classes, the first ``total % n_classes`` one more.

    Raises ``ValueError(refusal)`` when some class would get none.
    """
    if total < n_classes:
        raise ValueError(refusal)
    counts = np.full(n_classes, total // n_classes)
    counts[: total % n_classes] += 1
    return counts



class SMOTEAnchor(BaseEstimator):
    """Class-balanced SMOTE anchor built from public source rows (Section 5.1 of [2]_).

    Read more in the :ref:`User Guide <nonlinear>`.

    Per class ``c``, ``n_source / n_classes`` public rows ``S_c`` are drawn without replacement
    and kept in the anchor; the remaining ``n_anchors / n_classes - |S_c|`` rows are synthesised
    by imbalanced-learn's :class:`~imblearn.over_sampling.SMOTE`: ``a = s_i + u (s_j - s_i)``
    with ``s_j`` one of the ``k_neighbors`` nearest same-class sources of ``s_i`` and
    ``u ~ U[0, 1)``. Every anchor row inherits its class, so the mechanism's uploads carry
    ``anchor_y`` (needed by the label-aware graphs of :class:`~skdc.alignment.KTIAligner`).

    Pass an instance as the ``anchor`` parameter of any mechanism; the mechanism calls
    :meth:`make_anchor`.

    .. warning::
       ``X_public`` must be **public** data that the participants agree to share among
       themselves (for example a public data set of the same domain), never participants'
       private rows: every anchor row is released to all participants and, obfuscated, to the
       analyst, and a synthetic row lies on a segment between two source rows.

    Parameters
    ----------
    n_anchors : int
        Total number of anchor rows ``n_a``; each class gets ``n_anchors // n_classes`` rows
        (the first ``n_anchors % n_classes`` classes one more).
    X_public : array-like of shape (n_public, n_features)
        Public source rows, as wide as the participants' data.
    y_public : array-like of shape (n_public,)
        Their class labels.
    n_source : int, default=None
        Number of real source rows ``n_a^smote`` (split evenly over the classes). ``None`` uses
        every public row, capped at each class's anchor quota.
    k_neighbors : int, default=10
        SMOTE neighbourhood ``k_nn``, capped at ``|S_c| - 1``.
    random_state : int, RandomState instance or None, default=None
        Source of randomness; ``None`` uses the generator handed over by the mechanism.

    See Also
    --------
    orthonormal_anchor : Centered orthonormal anchor for GDP alignment.
    uniform_anchor : I.i.d. uniform anchor.

    Notes
    -----
    A class with a single source row cannot be interpolated; its synthetic rows are copies of
    that row plus ``N(0, 0.01^2)`` noise (our choice: [2]_ leaves this edge case open).

    References
    ----------
    .. [2] Suetake, Kawakami, Ikeda, Takano, "Nonlinear Data Integration via Kernel Methods for
       Data Collaboration Analysis", arXiv:2605.27219, 2026.

    Examples
    --------
    The gallery example :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` builds its anchor
    with it.

    >>> import numpy as np
    >>> from skdc.anchors import SMOTEAnchor
    >>> rng = np.random.RandomState(0)
    >>> X_pub, y_pub = rng.rand(40, 3), np.repeat([0, 1], 20)
    >>> A, a_y = SMOTEAnchor(60, X_pub, y_pub, n_source=10, k_neighbors=3,
    ...                      random_state=0).make_anchor(3)
    >>> A.shape, np.bincount(a_y).tolist()
    ((60, 3), [30, 30])
    """

    _parameter_constraints: dict = {
        "n_anchors": [Interval(Integral, 2, None, closed="left")],
        "X_public": ["array-like"],
        "y_public": ["array-like"],
        "n_source": [None, Interval(Integral, 1, None, closed="left")],
        "k_neighbors": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self, n_anchors, X_public, y_public, *, n_source=None, k_neighbors=10, random_state=None
    ):
        self.n_anchors = n_anchors
        self.X_public = X_public
        self.y_public = y_public
        self.n_source = n_source
        self.k_neighbors = k_neighbors
        self.random_state = random_state

    @classmethod
    def from_rows(cls, X_public, y_public, *, n_anchors=None, random_state=None):
        """A SMOTE anchor over public rows, sized for them: the anchor nonlinear mechanisms need.

        ``n_anchors`` defaults to ``max(4 * n_features, 10 * n_classes)`` (the linear
        alignments need more than ``n_features`` rows; each class gets at least ten) and every
        public row is a source, up to each class's quota.

        Parameters
        ----------
        X_public : array-like of shape (n_public, n_features)
            Public rows of the participants' domain (in a simulation, rows held out from the
            participants' data); never a participant's private rows.
        y_public : array-like of shape (n_public,)
            Their class labels.
        n_anchors : int, default=None
            Total anchor rows; ``None``: ``max(4 * n_features, 10 * n_classes)``.
        random_state : int, RandomState instance or None, default=None
            Source of randomness; ``None`` uses the generator handed over by the mechanism.

        Returns
        -------
        anchor : SMOTEAnchor
            Pass it as a mechanism's ``anchor``.

        Examples
        --------
        >>> from sklearn.datasets import load_digits
        >>> from sklearn.model_selection import train_test_split
        >>> from skdc.anchors import SMOTEAnchor
        >>> X, y = load_digits(return_X_y=True)
        >>> X_pub, X_priv, y_pub, y_priv = train_test_split(X, y, train_size=200,
        ...                                                 stratify=y, random_state=0)
        >>> anchor = SMOTEAnchor.from_rows(X_pub, y_pub, random_state=0)
        >>> anchor.n_anchors, anchor.make_anchor(64)[0].shape
        (256, (256, 64))
        """
        X = np.asarray(X_public)
        n_classes = np.unique(np.asarray(y_public)).size
        if n_anchors is None:
            n_anchors = max(4 * (X.shape[1] if X.ndim == 2 else 1), 10 * n_classes)
        return cls(n_anchors, X_public, y_public, random_state=random_state)

    def make_anchor(self, n_features, random_state=None):
        """Draw the anchor and its labels.

        Parameters
        ----------
        n_features : int
            Width the mechanism expects; must equal ``X_public.shape[1]``.
        random_state : int, RandomState instance or None, default=None
            Used when the anchor's own ``random_state`` is ``None``.

        Returns
        -------
        A : ndarray of shape (n_anchors, n_features)
            Source rows followed by synthetic rows, class by class.
        anchor_y : ndarray of shape (n_anchors,)
            The class of each anchor row.
        """
        validate_estimator_params(self)
        X, y = self._public_rows(n_features)
        rng = check_random_state(
            random_state if self.random_state is None else self.random_state
        )
        classes = np.unique(y)
        quota, n_src = self._class_counts(classes, y)
        rows, labels = [], []
        for c, cls in enumerate(classes):
            pool = np.flatnonzero(y == cls)
            if pool.size < n_src[c]:
                raise ValueError(
                    f"SMOTEAnchor: class {cls!r} has {pool.size} public rows, fewer than the "
                    f"{n_src[c]} sources it needs. Lower n_source or give more public rows."
                )
            S = X[rng.choice(pool, size=n_src[c], replace=False)]
            new = self._synthesize(S, quota[c] - n_src[c], rng)
            rows.append(np.vstack([S, new]))
            labels.append(np.full(quota[c], cls))
        return np.vstack(rows), np.concatenate(labels)

    def _public_rows(self, n_features):
        """``X_public`` as float64 and ``y_public``, checked against the data width."""
        X = np.asarray(self.X_public, dtype=np.float64)
        y = np.asarray(self.y_public)
        if X.ndim != 2 or X.shape[1] != n_features:
            raise ValueError(
                f"SMOTEAnchor's X_public must have shape (n_public, {n_features}) to match the "
                f"participants' data; got shape {X.shape}. Give public rows with the same "
                "features."
            )
        if y.shape != (X.shape[0],):
            raise ValueError(
                f"SMOTEAnchor's y_public must have one label per public row, shape "
                f"({X.shape[0]},); got {y.shape}."
            )
        return X, y

    def _class_counts(self, classes, y):
        """Per class: its anchor quota ``n_anchors / n_classes`` and its number of sources."""
        n_classes = classes.size
        quota = _split_over_classes(
            self.n_anchors, n_classes,
            f"SMOTEAnchor needs n_anchors >= the number of classes ({n_classes}); got "
            f"n_anchors={self.n_anchors}. Increase n_anchors.",
        )
        if self.n_source is None:
            return quota, np.minimum(np.bincount(np.searchsorted(classes, y)), quota)
        n_src = _split_over_classes(
            self.n_source, n_classes,
            f"SMOTEAnchor needs n_source >= the number of classes ({n_classes}), one "
            f"source row per class at least; got n_source={self.n_source}.",
        )
        return quota, np.minimum(n_src, quota)

    def _synthesize(self, S, m, rng):
        """``m`` synthetic rows of one class from its sources ``S`` by SMOTE."""
        from imblearn.over_sampling import SMOTE

        if m == 0:
            return S[:0]
        if S.shape[0] == 1:
            # one source: synthetic rows are noisy duplicates (an edge case [2] leaves open)
            return S + 0.01 * rng.standard_normal((m, S.shape[1]))
        # SMOTE within the class only: a two-class problem against one dummy row
        dummy = S[:1] + 1.0
        k = min(self.k_neighbors, S.shape[0] - 1)
        smote = SMOTE(
            sampling_strategy={1: S.shape[0] + m},
            k_neighbors=k,
            random_state=rng.randint(np.iinfo(np.int32).max),
        )
        Xr, _ = smote.fit_resample(np.vstack([S, dummy]), np.r_[np.ones(S.shape[0], int), 0])
        return Xr[S.shape[0] + 1 :]  # imblearn appends the synthetic rows
