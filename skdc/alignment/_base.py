"""Template shared by the analyst-side aligners.

An aligner receives :class:`~skdc.Uploads`, reads the anchor uploads as the analyst receives
them, builds one alignment map per participant and returns the collaboration representation
``Z`` as a plain array. A subclass supplies ``_receive`` (optional: what the analyst sees of the
anchor uploads), ``_fit_maps`` and ``_map``.

Below the template: the checks and steps that several aligners share (anchor-upload checks, the
integrated width, the sign convention of a target, the Helmert basis of the centering
constraint, the map of linear integrations), so that sibling aligner modules import only from
here.
"""

# Licence: BSD 3 clause

from abc import abstractmethod
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from .._uploads import check_uploads
from ..utils._deprecation import renamed_attribute
from ..utils._sklearn_compat import Interval, _fit_context, validate_data

__all__ = ["BaseAligner"]

# parameter constraints shared by the aligners
_n_components_constraint = [None, Interval(Integral, 1, None, closed="left")]
_reference_constraint = [Interval(Integral, 0, None, closed="left")]

# -- docstring fragments shared by the aligners (skdc.utils._docstring.Substitution) -----------
_aligner_attributes_doc = """n_participants_ : int
        Number of participants.
    n_features_in_ : int
        Number of features seen during fit.
"""

_integration_attributes_doc = """widths_ : list of int
        Upload width ``h_k`` of each participant.
    """ + _aligner_attributes_doc

_n_components_doc = """n_components : int, default=None
        Integrated width ``d^``; ``None`` uses the largest upload width.
"""

# the linear integrations' examples: the gallery, then three participants' PCA uploads of one
# uniform anchor
_pca_uploads_example_doc = """\
The gallery example :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` compares the
    integrations.

    >>> import numpy as np
    >>> from skdc.mechanisms import PCAMechanism
    >>> X = np.random.RandomState(0).rand(60, 5)
    >>> Y = PCAMechanism(3, n_components=3, anchor="uniform", n_anchors=20,
    ...                  random_state=0).fit_transform(X)
"""


class BaseAligner(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class of analyst-side aligners.

    Read more in the :ref:`User Guide <protocols>`.

    Warning: This class should not be used directly. Use derived classes instead.
    """

    _parameter_constraints: dict = {}

    def _receive(self, uploads):
        """The anchor uploads as the analyst sees them (a list of arrays), from ``uploads``."""
        return uploads.anchors

    @abstractmethod
    def _fit_maps(self, anchor_uploads, uploads):
        """Fit the per-participant maps; return the output width."""

    @abstractmethod
    def _map(self, Y, i):
        """Participant ``i``'s alignment map applied to its rows ``Y``."""

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the alignment maps from the anchor uploads carried by ``X``.

        Parameters
        ----------
        X : Uploads of shape (n_samples, n_components)
            The output of a mechanism's ``transform``. Plain arrays are refused with a
            ``TypeError``: the mechanism step is missing.
        y : Ignored
            Not used, present for API consistency by convention.

        Returns
        -------
        self : object
            Fitted aligner.
        """
        uploads = check_uploads(X, self)
        anchors = self._receive(uploads)
        validate_data(self, np.asarray(uploads), dtype=np.float64)
        self.n_participants_ = len(anchors)
        self._n_features_out = self._fit_maps(anchors, uploads)
        return self

    def transform(self, X):
        """Map each row with its participant's alignment map.

        Parameters
        ----------
        X : Uploads of shape (n_samples, n_components)
            Uploads of any split from the same mechanism.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_features_out)
            The collaboration representation, a plain array.
        """
        check_is_fitted(self)
        uploads = check_uploads(X, self, require_anchors=False)
        participant = uploads.participant
        Y = validate_data(self, np.asarray(uploads), dtype=np.float64, reset=False)
        if participant.size and participant.max() >= self.n_participants_:
            raise ValueError(
                f"{type(self).__name__} was fitted on {self.n_participants_} participants; "
                f"got rows of participant {int(participant.max())}. Refit the aligner on "
                "uploads that include every participant."
            )
        Z = np.zeros((Y.shape[0], self._n_features_out))
        for i in np.unique(participant):
            rows = participant == i
            Z[rows] = self._map(Y[rows], i)
        return Z

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


def _check_reference(estimator, n_participants):
    """The estimator's ``reference`` participant, refused when no upload comes from it."""
    s = estimator.reference
    if s >= n_participants:
        raise ValueError(
            f"{type(estimator).__name__}: reference={s} is not a participant: the uploads come "
            f"from {n_participants} participants (ids 0 .. {n_participants - 1}). Choose one of "
            "them."
        )
    return s


def _reference_stack(anchors, estimator):
    """The anchor uploads stacked (p, r, d) and the estimator's checked ``reference``."""
    B = _stack_equal_width(anchors, estimator)
    return B, _check_reference(estimator, B.shape[0])


def _stack_equal_width(anchors, estimator):
    """Stack anchor uploads into (p, r, d); orthogonal aligners need one common width."""
    widths = {b.shape[1] for b in anchors}
    if len(widths) != 1:
        raise ValueError(
            f"{type(estimator).__name__} needs every participant's anchor upload to have the "
            f"same width; got widths {sorted(widths)}. Use an integration aligner (LTI/KTI) "
            "for representations of different widths."
        )
    B = np.stack(anchors)
    # the solvers form Gram products of products (fourth powers of the centered entries):
    # refuse any participant's upload whose scale would overflow or underflow float64, or that
    # is constant, instead of aligning noise (checked per participant: one constant upload
    # beside healthy ones would otherwise get an arbitrary rotation)
    low = (16 * np.finfo(np.float64).tiny) ** 0.25
    high = (np.finfo(np.float64).max / (16.0 * max(B.size, 1) ** 2 * B.shape[-1])) ** 0.25
    for i, b in enumerate(B):
        spread = float(np.abs(b - b.mean(axis=0)).max()) if b.size else 0.0
        if not low < spread < high:
            what = ("is constant (every row the same)" if spread == 0 else
                    f"has entries up to {spread:.3g}, outside the range float64 alignment can "
                    f"handle ({low:.1g} .. {high:.1g})")
            raise ValueError(
                f"{type(estimator).__name__}: participant {i}'s centered anchor upload {what}. "
                "Check that participant's upload. Rescale the data and the anchor (e.g. "
                "StandardScaler) before the mechanism if they are too small or too large."
            )
    return B


def _check_anchor_uploads(anchors, estimator):
    """Anchor uploads with one common row count; raise a clear error otherwise."""
    rows = [b.shape[0] for b in anchors]
    if len(set(rows)) != 1:
        raise ValueError(
            f"{type(estimator).__name__} needs every participant's anchor upload to have the "
            f"same number of anchor rows n_anchors; got {rows}. Every participant must reduce "
            "the same shared anchor (same anchor, same n_anchors in the mechanism)."
        )
    return [np.asarray(b, dtype=np.float64) for b in anchors]


def _resolve_n_components(estimator, anchors, *, limit, limit_name):
    """``n_components`` or the default (the largest width), checked against ``limit``."""
    d = max(b.shape[1] for b in anchors) if estimator.n_components is None else (
        estimator.n_components
    )
    if d > limit:
        raise ValueError(
            f"{type(estimator).__name__}: n_components={d} exceeds {limit_name} = {limit}. "
            "Lower n_components or use more anchor rows (the mechanism's n_anchors)."
        )
    return int(d)


def _target_width(estimator, anchors):
    """The integrated width ``d^`` of a target-normalized integration (LTI, KTI).

    At most ``n_anchors`` columns of an orthonormal target, ``n_anchors - 1`` when the target is
    also column-centred (``center=True``, Eq. (49) of Suetake et al.).
    """
    n_a = anchors[0].shape[0]
    if estimator.center:
        return _resolve_n_components(estimator, anchors, limit=n_a - 1,
                                     limit_name="n_anchors - 1 (center=True)")
    return _resolve_n_components(estimator, anchors, limit=n_a, limit_name="n_anchors")


def _sign_flip(Z):
    """Signs making each column's largest-|.| entry positive (first index on ties).

    An eigen or singular-vector target is defined up to column signs; this pins them, and
    columns are ordered best first by the solvers.
    """
    idx = np.argmax(np.abs(Z), axis=0)
    signs = np.sign(Z[idx, np.arange(Z.shape[1])])
    signs[signs == 0] = 1.0
    return signs


def _helmert_t_dot(X):
    """``T^T X`` for the Helmert basis ``T`` (n x (n-1)) of ``{x : 1^T x = 0}``, in O(n m).

    Column ``j`` (1-based) of ``T`` is ``1/sqrt(j(j+1))`` in rows ``1..j`` and
    ``-j/sqrt(j(j+1))`` in row ``j+1``: an orthonormal basis of the centred vectors, which turns
    the constraint ``1^T Z = 0`` into ``Z = T Y`` (Eqs. (49)-(53) of Suetake et al.).
    """
    n = X.shape[0]
    j = np.arange(1, n, dtype=np.float64)
    cs = np.cumsum(X, axis=0)[:-1]
    return (cs - j[:, None] * X[1:]) / np.sqrt(j * (j + 1))[:, None]


def _helmert_dot(Y):
    """``T Y`` for the Helmert basis ``T``, ``Y`` of shape (n-1, m), in O(n m)."""
    m = Y.shape[0]
    j = np.arange(1, m + 1, dtype=np.float64)
    Yc = Y / np.sqrt(j * (j + 1))[:, None]
    out = np.zeros((m + 1, Y.shape[1]))
    out[:m] = np.cumsum(Yc[::-1], axis=0)[::-1]
    out[1:] -= j[:, None] * Yc
    return out


class _LinearIntegration(BaseAligner):
    """Shared map of linear integrations: participant ``k``'s rows ``x~ -> x~[:h_k] G^(k)``."""

    # the deprecated spelling of target_matrix_ (``target`` names the attacked party)
    target_ = renamed_attribute("target_", "target_matrix_")

    def _prepare_anchors(self, anchors):
        """The anchor uploads, checked for one common row count; stores ``widths_``."""
        anchors = _check_anchor_uploads(anchors, self)
        self.widths_ = [b.shape[1] for b in anchors]
        return anchors

    def _map(self, Y, i):
        return Y[:, : self.widths_[i]] @ self.coef_[i]
