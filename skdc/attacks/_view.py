"""What a colluding analyst knows: the collusion view of a fitted pipeline.

The attacker of [1]_ (its analyst-participant collusion setting) is the analyst together with a
colluding participant ``c``; skdc also lets a set ``K`` of participants collude, as the reference
code of [1]_ does for the alignment-map attack. The analyst holds every upload as received (the
target's private-data upload ``Y_i`` and its anchor upload ``B_i``, noisy for noisy-anchor
protocols) and its own fitted alignment maps; each colluder discloses its rows ``X_c``, its whole
secret state and, in anchor protocols, the raw anchor ``A``. :func:`collusion_view` reads these from
a fitted pipeline: the mechanism step (the participants' side), the optional aligner step right
after it (the analyst's side), and the earlier public steps with ``inverse_transform`` (a public
projection ``F``), used to decode a reconstruction back to the pipeline's input space (eq. (78) of
[1]_).

The target's true rows and secrets travel in a separate :class:`GroundTruth`, used only to
score a reconstruction; no attack reads it, except :class:`~skdc.attacks.KnownInputAttack`
through the explicit simulated leak :meth:`CollusionView.leak_target_pairs`.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

from dataclasses import dataclass, field
from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ..alignment import BaseAligner
from ..mechanisms import CGDP, BaseMechanism
from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, validate_params
from ._docstring import _examples_setup

__all__ = [
    "CollusionView",
    "GroundTruth",
    "Reconstruction",
    "check_colluders",
    "collusion_view",
]


@dataclass
class GroundTruth:
    """The target's true rows and secrets: for scoring a reconstruction only.

    Attributes
    ----------
    X : ndarray of shape (n_target_rows, n_input_features)
        The target's rows in the space reconstructions are decoded to (the input of the first
        decoded pipeline step, or the mechanism's input when nothing is decoded).
    X_mechanism : ndarray of shape (n_target_rows, n_features)
        The target's rows as the mechanism received them (after the earlier steps).
    rotation : ndarray of shape (n_features, n_features) or None
        The target's GDP rotation ``O_i`` (None for mechanisms without one).
    translation : ndarray of shape (n_features,) or None
        The target's GDP translation ``Psi_i``.
    """

    X: np.ndarray
    X_mechanism: np.ndarray
    rotation: np.ndarray | None = None
    translation: np.ndarray | None = None


@dataclass
class CollusionView:
    """Everything the analyst and the colluding participants know, plus the scoring truth.

    Built by :func:`collusion_view`. Attacks read the attacker's fields only; ``truth`` is for
    scoring. Per-colluder fields are tuples in the order of :attr:`colluders`; the pooled
    fields (``colluder_X``, ``colluder_rows``) hold the rows of every colluder.

    Read more in the :ref:`User Guide <what_an_attacker_knows>`.

    Attributes
    ----------
    colluders : tuple of int
        The colluding participants ``K`` (one id in the paper's threat model).
    target : int
        The attacked participant ``i``, not among :attr:`colluders`.
    Y : ndarray of shape (n_target_rows, h)
        The target's private-data uploads as the analyst received them.
    B : ndarray of shape (n_anchors, h) or None
        The target's anchor upload as the analyst received it (noisy under
        :class:`~skdc.alignment.GOPPAligner`); None without an anchor.
    anchor : ndarray of shape (n_anchors, n_features) or None
        The raw anchor ``A``, disclosed by the colluders (one shared matrix).
    colluder_X : ndarray of shape (n_colluder_rows, n_features)
        The rows of all colluders, as their mechanisms received them, in evaluation order.
    colluder_X_input : ndarray of shape (n_colluder_rows, n_input_features)
        The same rows in the decoded space (see :class:`GroundTruth`).
    colluder_anchor_uploads : tuple of ndarray of shape (n_anchors, h_c), or None
        Each colluder's anchor upload as the analyst received it.
    colluder_rotations, colluder_translations : tuple of ndarray, or None
        Each colluder's GDP secret ``(O_c, Psi_c)``; None for mechanisms without one.
    common_secret : bool
        Whether the protocol shares one secret among all participants (C-GDP): public
        knowledge of the protocol.
    aligner : estimator or None
        The analyst's fitted aligner.
    aligner_rotations : ndarray of shape (n_participants, h, h) or None
        The analyst's alignment rotations ``Rhat_j`` (``aligner.rotations_``).
    mechanism : estimator
        The fitted mechanism step (the participants' side of the simulation; attacks read the
        colluders' secrets from the fields above, never the target's from here).
    decoders : list of (str, estimator)
        Earlier pipeline steps with ``inverse_transform``, in pipeline order; see :meth:`decode`.
    target_rows, colluder_rows : ndarray of int
        Positions of the target's and of all colluders' rows among the evaluation rows.
    truth : GroundTruth
        The target's true rows and secrets (scoring only).
    """

    colluders: tuple
    target: int
    Y: np.ndarray
    B: np.ndarray | None
    anchor: np.ndarray | None
    colluder_X: np.ndarray
    colluder_X_input: np.ndarray
    colluder_anchor_uploads: tuple | None
    colluder_rotations: tuple | None
    colluder_translations: tuple | None
    common_secret: bool
    aligner: object
    aligner_rotations: np.ndarray | None
    mechanism: object
    decoders: list = field(default_factory=list)
    target_rows: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    colluder_rows: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    truth: GroundTruth | None = None

    # -- the one-colluder case ------------------------------------------------------------
    @property
    def colluder(self):
        """The colluder's id, or the tuple of ids when several participants collude."""
        return self.colluders[0] if len(self.colluders) == 1 else self.colluders

    def _single(self, name, plural):
        if len(self.colluders) != 1:
            raise AttributeError(
                f"{name} is one colluder's field, but {len(self.colluders)} participants "
                f"collude ({list(self.colluders)}); read the tuple {plural} instead, in the "
                "order of colluders."
            )
        return 0

    @property
    def colluder_rotation(self):
        """The single colluder's rotation ``O_c`` (see :attr:`colluder_rotations`)."""
        j = self._single("colluder_rotation", "colluder_rotations")
        return None if self.colluder_rotations is None else self.colluder_rotations[j]

    @property
    def colluder_translation(self):
        """The single colluder's translation ``Psi_c`` (see :attr:`colluder_translations`)."""
        j = self._single("colluder_translation", "colluder_translations")
        return None if self.colluder_translations is None else self.colluder_translations[j]

    @property
    def colluder_B(self):
        """The single colluder's anchor upload (see :attr:`colluder_anchor_uploads`)."""
        j = self._single("colluder_B", "colluder_anchor_uploads")
        return None if self.colluder_anchor_uploads is None else self.colluder_anchor_uploads[j]

    def decode(self, X_mechanism):
        """Map rows from the mechanism's input space back through the public earlier steps.

        Applies ``inverse_transform`` of :attr:`decoders` in reverse order: ``Xhat F^dagger``
        for a public projection ``F`` (eq. (78) of [1]_).
        """
        X = np.asarray(X_mechanism, dtype=np.float64)
        for _, step in reversed(self.decoders):
            X = np.asarray(step.inverse_transform(X), dtype=np.float64)
        return X

    def leak_target_pairs(self, n_pairs, random_state=None):
        """Simulate the leak of ``n_pairs`` of the target's (raw, upload) pairs.

        The known-input threat model: the attacker learned some of the target's records and
        the uploads they produced. Returns ``(X_known, Y_known, rows)`` with ``X_known`` in the
        mechanism's input space and ``rows`` the positions among the target's rows.
        """
        n = self.Y.shape[0]
        if n_pairs > n:
            raise ValueError(
                f"cannot leak n_pairs={n_pairs} pairs: the target participant {self.target} has "
                f"only {n} evaluation rows. Lower n_known or evaluate on more rows."
            )
        rows = np.sort(check_random_state(random_state).choice(n, size=n_pairs, replace=False))
        return self.truth.X_mechanism[rows], self.Y[rows], rows


@dataclass
class Reconstruction:
    """An attack's output.

    Attributes
    ----------
    X : ndarray of shape (n_target_rows, n_input_features)
        The reconstruction of the target's rows, decoded to the pipeline's input space
        (through :meth:`CollusionView.decode`).
    X_mechanism : ndarray of shape (n_target_rows, n_features)
        The reconstruction in the mechanism's input space (before decoding).
    rotation : ndarray of shape (n_features, n_features) or None
        The estimated secret rotation ``Ohat_i`` (None where an attack estimates none).
    translation : ndarray of shape (n_features,) or None
        The estimated secret translation ``Psihat_i``.
    """

    X: np.ndarray
    X_mechanism: np.ndarray
    rotation: np.ndarray | None = None
    translation: np.ndarray | None = None


def _pipeline_steps(estimator):
    if isinstance(estimator, Pipeline):
        return [(name, step) for name, step in estimator.steps]
    return [(type(estimator).__name__.lower(), estimator)]


def _is_skipped(step):
    return step is None or (isinstance(step, str) and step == "passthrough")


def _invertible(step):
    """Whether a step's ``inverse_transform`` really inverts it.

    A :class:`~sklearn.preprocessing.FunctionTransformer` with a ``func`` but no
    ``inverse_func`` has an identity ``inverse_transform``: decoding through it would be wrong.
    """
    if not hasattr(step, "inverse_transform"):
        return False
    if isinstance(step, FunctionTransformer):
        return step.func is None or step.inverse_func is not None
    return True


def _is_id(value):
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_party(value, name, n_participants):
    if not _is_id(value):
        raise TypeError(f"{name} must be an int participant id; got {type(value).__name__}.")
    if n_participants is not None and not 0 <= value < n_participants:
        raise ValueError(
            f"{name}={value} is not a participant: the mechanism has {n_participants} "
            f"participants (ids 0 .. {n_participants - 1}). Choose one of them."
        )
    if value < 0:
        raise ValueError(f"{name}={value} is not a participant id: ids start at 0.")
    return int(value)


def _colluder_ids(colluder):
    """The ids a colluder argument names: one int, or a non-empty sequence of them."""
    if _is_id(colluder):
        return [colluder]
    if isinstance(colluder, (str, bytes, dict)) or not np.iterable(colluder):
        raise TypeError(
            "colluder must be an int participant id or a list of them (e.g. colluder=[0, 2]); "
            f"got {type(colluder).__name__}."
        )
    ids = list(np.ravel(colluder)) if isinstance(colluder, np.ndarray) else list(colluder)
    if not ids:
        raise ValueError(
            "colluder must name at least one participant; got an empty list. Pass an id "
            "such as colluder=0 or a list such as colluder=[0, 2]."
        )
    return ids


@validate_params(
    {
        "colluder": "no_validation",  # one int or a sequence: checked below, with advice
        "target": "no_validation",  # None or an int: checked below like a colluder
        "n_participants": [None, Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def check_colluders(colluder, *, target=None, n_participants=None):
    """Validate a colluder or a set of colluders; return the ids as a tuple.

    Read more in the :ref:`User Guide <several_colluders>`.

    Parameters
    ----------
    colluder : int or sequence of int
        One colluding participant (the paper's threat model) or several (a set ``K``).
    target : int, default=None
        The attacked participant; it may not be among the colluders, and is checked like
        them (an int, below ``n_participants``).
    n_participants : int, default=None
        Number of participants; when given, every id must be below it.

    Returns
    -------
    colluders : tuple of int
        The colluders in the order given.

    Raises
    ------
    TypeError
        If an id is not an int.
    ValueError
        If the set is empty, names a participant twice, names the target, or names an id
        (or a target) outside ``0 .. n_participants - 1``.

    Examples
    --------
    >>> from skdc.attacks import check_colluders
    >>> check_colluders(0, target=1), check_colluders([0, 2], target=1, n_participants=3)
    ((0,), (0, 2))
    """
    if target is not None:
        target = _check_party(target, "target", n_participants)
    out = tuple(_check_party(c, "colluder", n_participants) for c in _colluder_ids(colluder))
    seen = set()
    for c in out:
        if c in seen:
            raise ValueError(
                f"colluder lists participant {c} more than once ({list(out)}); name each "
                "colluding participant once."
            )
        seen.add(c)
    if target is not None and target in seen:
        what = (f"got both = {target}" if len(out) == 1
                else f"the target {target} is among the colluders {list(out)}")
        raise ValueError(
            f"target={target} colludes: colluder and target must be different participants; "
            f"{what}. A colluder cannot be its own target: remove it from colluder or choose "
            "another target."
        )
    return out


# -- the collusion, step by step ------------------------------------------------------------
# collusion_view reads the threat model of [1]_ off a fitted pipeline, in its order: find the
# two sides (the participants' mechanism, the analyst's aligner), pass the evaluation rows
# through the public earlier steps, let the participants upload them, then hand out what the
# analyst holds, what the colluders disclose, and (for scoring only) the target's truth.


def _the_two_sides(estimator):
    """The participants' side (the mechanism step), the analyst's (the aligner right after it,
    or None) and the earlier steps, skipped ones left out."""
    steps = _pipeline_steps(estimator)
    k = next((j for j, (_, s) in enumerate(steps) if isinstance(s, BaseMechanism)), None)
    if k is None:
        names = [f"{n}={type(s).__name__}" for n, s in steps]
        raise TypeError(
            "collusion_view needs a pipeline with a participant-side mechanism step (a "
            f"skdc.mechanisms.BaseMechanism such as IGDP or CGDP); got steps {names}. Put the "
            "mechanism in the pipeline, e.g. Pipeline([('gdp', IGDP(...)), ...])."
        )
    mechanism = steps[k][1]
    check_is_fitted(mechanism)
    aligner = None
    if k + 1 < len(steps) and isinstance(steps[k + 1][1], BaseAligner):
        aligner = steps[k + 1][1]
        check_is_fitted(aligner)
    earlier = [(n, s) for n, s in steps[:k] if not _is_skipped(s)]
    return mechanism, aligner, earlier


def _through_public_steps(earlier, X):
    """Pass ``X`` through the earlier steps; their trailing invertible run is the public decoder.

    Returns the rows as the mechanism receives them, the same rows in the decoded space (the
    input of the first decoder; eq. (78) of [1]_ decodes by ``F^dagger``) and the decoders.
    """
    Xt, inputs = X, []
    for _, step in earlier:
        inputs.append(Xt)
        Xt = step.transform(Xt)
    Xt = np.asarray(Xt, dtype=np.float64)
    n_dec = 0
    for _, step in reversed(earlier):
        if not _invertible(step):
            break
        n_dec += 1
    X_input = np.asarray(inputs[len(earlier) - n_dec] if n_dec else Xt, dtype=np.float64)
    return Xt, X_input, earlier[len(earlier) - n_dec:]


class _Upload(NamedTuple):
    """The participants' uploads of the evaluation rows, and whose rows are where."""

    uploads: object  # the mechanism's Uploads
    target_rows: np.ndarray  # the target's positions among the evaluation rows
    target_uploads: np.ndarray  # ... and among the uploads
    colluder_rows: np.ndarray  # all colluders' positions among the evaluation rows


def _check_target_rows(target_rows, part, target):
    if target_rows.size == 0:
        present = np.unique(part).tolist()
        raise ValueError(
            f"the target participant {target} has no rows among the {len(part)} evaluation "
            f"rows (participants present: {present}). Evaluate on rows that include the "
            "target's, or choose a target among those present."
        )


def _participants_upload(mechanism, Xt, target, colluders, participant):
    """Route the evaluation rows to participants and upload them, as at prediction time.

    With declared ``participant`` ids only the target's rows need the mechanism (each colluder
    knows its own rows and secret); otherwise the mechanism's own assignment decides.
    """
    if participant is None:
        uploads = mechanism.transform(Xt)
        part = uploads.participant
        target_rows = np.flatnonzero(part == target)
        _check_target_rows(target_rows, part, target)
        target_uploads = target_rows
    else:
        part = np.asarray(participant)
        if part.shape != (Xt.shape[0],):
            raise ValueError(
                f"participant must have one id per evaluation row, shape ({Xt.shape[0]},); "
                f"got shape {part.shape}."
            )
        target_rows = np.flatnonzero(part == target)
        _check_target_rows(target_rows, part, target)
        uploads = mechanism.transform(Xt[target_rows], participant=part[target_rows])
        target_uploads = np.arange(target_rows.size)
    return _Upload(uploads, target_rows, target_uploads, np.flatnonzero(np.isin(part, colluders)))


def _analyst_holds(upload, aligner, target, colluders):
    """The uploads as the analyst received them (anchor uploads noisy under GOPP, so read from
    the fitted aligner) and its alignment rotations ``Rhat_j``."""
    received = upload.uploads.anchors
    if received is not None and getattr(aligner, "anchor_uploads_", None) is not None:
        received = aligner.anchor_uploads_
    B = colluder_B = None
    if received is not None:
        B = np.asarray(received[target], dtype=np.float64)
        colluder_B = tuple(np.asarray(received[c], dtype=np.float64) for c in colluders)
    data = np.asarray(upload.uploads)
    return {
        "Y": data[upload.target_uploads, : upload.uploads.widths[target]],
        "B": B,
        "colluder_anchor_uploads": colluder_B,
        "aligner": aligner,
        "aligner_rotations": getattr(aligner, "rotations_", None),
    }


def _secrets(mechanism, ids):
    """The GDP secrets ``(O_j, Psi_j)`` of participants ``ids`` as tuples, None without them."""
    rotations = getattr(mechanism, "rotations_", None)
    translations = getattr(mechanism, "translations_", None)
    return (None if rotations is None else tuple(rotations[j] for j in ids),
            None if translations is None else tuple(translations[j] for j in ids))


def _colluders_disclose(mechanism, colluders, X_mechanism, X_input):
    """Each colluder's own rows (``X_mechanism``, ``X_input``), its secret and the raw anchor."""
    rotations, translations = _secrets(mechanism, colluders)
    anchor = getattr(mechanism, "anchor_", None)
    return {
        "colluder_X": X_mechanism,
        "colluder_X_input": X_input,
        "colluder_rotations": rotations,
        "colluder_translations": translations,
        "anchor": None if anchor is None else np.asarray(anchor, dtype=np.float64),
    }


def _target_truth(mechanism, target, X_mechanism, X_input):
    """What nobody discloses: the target's rows and secret, kept to score a reconstruction."""
    rotations, translations = _secrets(mechanism, (target,))
    return GroundTruth(
        X=X_input,
        X_mechanism=X_mechanism,
        rotation=None if rotations is None else rotations[0],
        translation=None if translations is None else translations[0],
    )


@validate_params(
    {
        "estimator": [Pipeline, BaseMechanism],
        "X": ["array-like", "sparse matrix"],
        "colluder": "no_validation",  # validated by check_colluders, with advice
        "target": [Interval(Integral, 0, None, closed="left")],
        "participant": [None, "array-like"],
    },
    prefer_skip_nested_validation=True,
)
@Substitution(references=gdp_paper_references, examples=_examples_setup)
def collusion_view(estimator, X, *, colluder=0, target=1, participant=None):
    """Build what a colluding analyst knows about the target from a fitted pipeline.

    ``colluder`` is one participant or a set of them; with several, :class:`CollusionView`
    pools their rows and keeps each one's secret (see each attack for what it does with
    several colluders).

    Read more in the :ref:`User Guide <what_an_attacker_knows>`; the example
    :ref:`sphx_glr_auto_examples_plot_attack_gallery.py` shows the reconstructions.

    The pipeline holds a mechanism step (the participants: their secrets and the raw anchor),
    optionally an aligner right after it (the analyst: the anchor uploads as received and the
    alignment maps), and possibly earlier steps; those with ``inverse_transform`` form the
    public decoder (the projection ``F`` of Section 5.1 of [1]_, decoded by eq. (78)):
    decoding stops at the last step without a true inverse (a ``FunctionTransformer``
    without ``inverse_func`` counts as such), and reconstructions and truth then live in that
    step's output space. The
    evaluation rows ``X`` are passed through the earlier steps and the mechanism, exactly as
    the pipeline does at prediction time; the target's rows are those the mechanism assigns
    to ``target`` (or the declared ``participant`` ids).

    Parameters
    ----------
    estimator : Pipeline or mechanism
        A fitted :class:`~sklearn.pipeline.Pipeline` containing a
        :class:`~skdc.mechanisms.BaseMechanism` step, or a fitted mechanism.
    X : array-like of shape (n_samples, n_features)
        Evaluation rows in the pipeline's input space; they must include target rows.
    colluder : int or sequence of int, default=0
        The colluding participant ``c`` (the paper's experiments use participant 0), or a set
        ``K`` of colluders (e.g. ``[0, 2]``): each discloses its rows and its secret. Ids must
        be distinct participants; see :func:`check_colluders`.
    target : int, default=1
        The attacked participant ``i``; must not be a colluder.
    participant : array-like of int of shape (n_samples,), default=None
        Declared participant of each row (as routed to the mechanism); ``None`` uses the
        mechanism's own assignment.

    Returns
    -------
    view : CollusionView
        The attacker's knowledge, with the scoring truth in ``view.truth``.

    {references}

    {examples}
    >>> from sklearn.pipeline import make_pipeline
    >>> from skdc.alignment import GOPPAligner
    >>> pipe = make_pipeline(IGDP(2, random_state=0), GOPPAligner(v=0.1)).fit(X)
    >>> view = collusion_view(pipe, X, colluder=0, target=1)
    >>> view.Y.shape[1], view.B.shape, view.anchor.shape
    (4, (16, 4), (16, 4))
    >>> view = collusion_view(IGDP(3, random_state=0).fit(X), X, colluder=[0, 2], target=1)
    >>> view.colluders, len(view.colluder_rotations), view.colluder_X.shape[0] > 0
    ((0, 2), 2, True)
    """
    mechanism, aligner, earlier = _the_two_sides(estimator)
    p = mechanism.n_participants
    colluders = check_colluders(colluder, target=target, n_participants=p)
    target = int(target)
    Xt, X_input, decoders = _through_public_steps(earlier, X)
    upload = _participants_upload(mechanism, Xt, target, colluders, participant)
    rows, theirs = upload.target_rows, upload.colluder_rows
    return CollusionView(
        colluders=colluders,
        target=target,
        **_analyst_holds(upload, aligner, target, colluders),
        **_colluders_disclose(mechanism, colluders, Xt[theirs], X_input[theirs]),
        common_secret=isinstance(mechanism, CGDP),  # the protocol is public knowledge
        mechanism=mechanism,
        decoders=decoders,
        target_rows=rows,
        colluder_rows=theirs,
        truth=_target_truth(mechanism, target, Xt[rows], X_input[rows]),
    )
