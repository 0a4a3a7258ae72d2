"""The ``Uploads`` container: what travels from the mechanisms to the analyst.

A mechanism's ``transform`` returns :class:`Uploads`, a :class:`numpy.ndarray` subclass holding
the stacked private representations ``Y`` (so every scikit-learn estimator downstream sees an
array) with the metadata an aligner needs: the participant of each row, the anchor uploads
``B_i = f_i(A)``, for labelled anchors the anchor targets, and each participant's unit anchor
noise ``W_i`` (drawn by the participant's mechanism; see the developer guide, "Randomness").
"""

# Licence: BSD 3 clause

import functools
from numbers import Integral

import numpy as np

from .utils._docstring import Substitution
from .utils._references import gdp_paper_references

__all__ = ["Uploads", "check_participant_ids", "check_uploads"]


def _validated_at_first_call(constraints):
    """``validate_params(constraints())`` as sklearn applies it, but built at the first call.

    The command line's ``--help`` imports this module through the upload files and must not
    load scikit-learn; ``constraints`` is a function so that its sklearn objects are made late.
    """

    def decorator(func):
        validated = None

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            nonlocal validated
            if validated is None:
                from .utils._sklearn_compat import validate_params

                validated = validate_params(constraints(), prefer_skip_nested_validation=True)(
                    func
                )
            return validated(*args, **kwargs)

        return wrapper

    return decorator


def _participant_ids_constraints():
    from .utils._sklearn_compat import Interval

    return {"participant": ["array-like"],
            "n_samples": [Interval(Integral, 0, None, closed="left")]}


def _check_uploads_constraints():
    from .utils._sklearn_compat import HasMethods

    return {"X": "no_validation", "estimator": [HasMethods(["fit"])],
            "require_anchors": ["boolean"]}


@Substitution(references=gdp_paper_references)
class Uploads(np.ndarray):
    """Stacked participant uploads with their metadata.

    Read more in the :ref:`User Guide <deployment>`.

    Row ``k`` of the array is the private-data upload of participant ``participant[k]``.
    Slicing rows keeps the matching metadata; any operation that changes the number or meaning
    of rows (reductions, transposes, concatenation) returns a plain :class:`numpy.ndarray`, so
    metadata never silently describes the wrong rows.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_components)
        The stacked private representations ``Y``.
    participant : array-like of int of shape (n_samples,)
        The participant of each row, ids in ``0 .. n_participants - 1``.
    anchors : list of array-like of shape (n_anchors, h_i), default=None
        The anchor uploads ``B_i``, one per participant, in participant order. ``None`` when the
        mechanism shares no anchor (C-GDP, unaligned I-GDP). Widths ``h_i`` may differ between
        participants (nonlinear reductions); participant ``i``'s rows then use the first ``h_i``
        columns and the rest are zero.
    anchor_y : array-like of shape (n_anchors,), default=None
        Targets of the anchor rows when the anchor carries labels (SMOTE anchors).
    unit_anchor_noise : list of array-like of shape (n_anchors, h_i), default=None
        Each participant's unit anchor noise ``W_i`` (standard normal, the shape of ``B_i``),
        drawn from the participant's own noise stream by its mechanism (Def 4.1 of [1]_): the
        unit draws, not their scale. The analyst receives ``B_i + v W_i``
        (:meth:`noisy_anchors`), where the scale ``v`` is ``v`` in Python
        (:class:`~skdc.alignment.GOPPAligner`, :class:`~skdc.protocol.Participant`),
        ``anchor_noise`` in the upload header and ``--anchor-noise`` on the command line.
        ``W_i`` itself exists only inside one process, between a mechanism and an aligner, and
        is never written to an upload file.
        ``None`` when the anchor uploads are already noisy (deployment) or there are none.

    Attributes
    ----------
    participant : ndarray of shape (n_samples,)
        The participant of each row.
    anchors : list of ndarray or None
        The anchor uploads.
    anchor_y : ndarray or None
        The anchor targets.
    unit_anchor_noise : list of ndarray or None
        The unit anchor noise ``W_i`` of each participant.

    {references}

    Examples
    --------
    The gallery example :ref:`sphx_glr_auto_examples_plot_quickstart.py` passes them from the
    mechanism to the aligner.

    >>> import numpy as np
    >>> from skdc import Uploads
    >>> Y = Uploads(np.arange(8.0).reshape(4, 2), participant=[0, 1, 0, 1],
    ...             anchors=[np.eye(3, 2), np.eye(3, 2)])
    >>> Y[:2].participant
    array([0, 1])
    >>> Y.n_participants
    2
    """

    def __new__(cls, data, participant, anchors=None, anchor_y=None, unit_anchor_noise=None):
        arr = np.asarray(data, dtype=np.float64)
        if arr.ndim != 2:
            raise ValueError(
                f"Uploads expects a 2-D array of shape (n_samples, n_components); got an array "
                f"with {arr.ndim} dimension(s). Reshape your data, e.g. with X.reshape(-1, 1)."
            )
        participant = check_participant_ids(participant, arr.shape[0])
        anchors = _check_anchor_list(anchors, arr.shape[1])
        if anchors is not None and participant.size and participant.max() >= len(anchors):
            raise ValueError(
                f"Uploads has rows of participant {int(participant.max())} but anchor uploads "
                f"for only {len(anchors)} participant(s). Pass one anchor upload per participant."
            )
        if anchor_y is not None:
            anchor_y = np.asarray(anchor_y)
            if anchors is None or anchor_y.shape != (anchors[0].shape[0],):
                raise ValueError(
                    "anchor_y must have one target per anchor row; got shape "
                    f"{anchor_y.shape} for "
                    f"{'no anchors' if anchors is None else f'{anchors[0].shape[0]} anchor rows'}."
                )
        unit_anchor_noise = _check_unit_anchor_noise(unit_anchor_noise, anchors)
        obj = arr.view(cls)
        obj.participant = participant
        obj.anchors = anchors
        obj.anchor_y = anchor_y
        obj.unit_anchor_noise = unit_anchor_noise
        return obj

    def __array_finalize__(self, obj):
        participant = getattr(obj, "participant", None)
        if participant is not None and (self.ndim != 2 or self.shape[0] != participant.shape[0]):
            participant = None
        self.participant = participant
        self.anchors = getattr(obj, "anchors", None) if participant is not None else None
        self.anchor_y = getattr(obj, "anchor_y", None) if participant is not None else None
        self.unit_anchor_noise = (
            getattr(obj, "unit_anchor_noise", None) if participant is not None else None
        )

    def __array_wrap__(self, array, context=None, return_scalar=False):
        out = super().__array_wrap__(array, context, return_scalar)
        if isinstance(out, Uploads) and out.participant is None:
            return out.view(np.ndarray)
        return out

    def __getitem__(self, key):
        out = super().__getitem__(key)
        if not isinstance(out, Uploads):
            return out
        if out.ndim != 2 or self.participant is None:
            return out.view(np.ndarray)
        row_key = key[0] if isinstance(key, tuple) and len(key) else key
        if row_key is Ellipsis:
            row_key = slice(None)
        try:
            part = self.participant[row_key]
        except (IndexError, TypeError, ValueError):
            return out.view(np.ndarray)
        if part.ndim != 1 or part.shape[0] != out.shape[0]:
            return out.view(np.ndarray)
        out.participant = part
        out.anchors = self.anchors
        out.anchor_y = self.anchor_y
        out.unit_anchor_noise = self.unit_anchor_noise
        return out

    def __reduce__(self):
        return (
            _rebuild_uploads,
            (np.asarray(self), self.participant, self.anchors, self.anchor_y,
             self.unit_anchor_noise),
        )

    def __repr__(self):
        body = repr(np.asarray(self))
        return f"Uploads({body[6:-1]}, n_participants={self.n_participants})"

    @property
    def n_participants(self):
        """Number of participants: the number of anchor uploads, else ``max(id) + 1``."""
        if self.participant is None:
            return 0
        if self.anchors is not None:
            return len(self.anchors)
        return int(self.participant.max()) + 1 if self.participant.size else 0

    @property
    def widths(self):
        """Width ``h_i`` of each participant's representation, from its anchor upload."""
        if self.anchors is None:
            return [self.shape[1]] * self.n_participants
        return [b.shape[1] for b in self.anchors]

    def noisy_anchors(self, v):
        """The anchor uploads the analyst receives: ``B_i + v W_i`` for every participant.

        Def 4.1 of the noisy-anchor GDP paper (see :class:`Uploads`). Both the simulated
        analyst (:class:`~skdc.alignment.GOPPAligner`) and a deployed
        :class:`~skdc.protocol.Participant` form the noisy upload here, from the unit noise
        ``W_i`` its mechanism drew, so the two are the same to the bit.

        Parameters
        ----------
        v : float
            Standard deviation of the anchor noise, the scale of the unit draws ``W_i``
            (``v`` of :class:`~skdc.alignment.GOPPAligner`, ``anchor_noise`` in the upload
            header); ``0`` returns the anchor uploads as they are.

        Returns
        -------
        anchors : list of ndarray of shape (n_anchors, h_i) or None
            The noisy anchor uploads (``None`` when there are no anchor uploads).

        Examples
        --------
        >>> import numpy as np
        >>> from skdc import IGDP
        >>> U = IGDP(n_participants=2, random_state=0).fit_transform(np.eye(6, 3))
        >>> B = U.noisy_anchors(0.1)[1]
        >>> W = U.unit_anchor_noise[1]
        >>> bool(np.allclose(B, U.anchors[1] + 0.1 * W, rtol=0, atol=1e-15))
        True
        """
        if self.anchors is None or v == 0:
            return self.anchors
        if self.unit_anchor_noise is None:
            raise ValueError(
                f"anchor noise v={v} was asked for, but these Uploads carry no unit anchor "
                "noise (unit_anchor_noise=None): their anchor uploads are already noisy, as in "
                "a deployment where each participant adds its own noise before the upload leaves "
                "home, or they come from a mechanism without an anchor. Use v=0 on them."
            )
        return [b + v * w for b, w in zip(self.anchors, self.unit_anchor_noise)]

    def to_frame(self, columns=None, index=None):
        """The uploads as a :class:`pandas.DataFrame` whose ``attrs`` carry the metadata.

        A mechanism returns this under ``set_output(transform="pandas")``; an aligner reads
        the metadata back (:meth:`from_frame`), also after rows of the frame were selected or
        reordered by their index.

        Parameters
        ----------
        columns : array-like of str, default=None
            Column names (a mechanism's ``get_feature_names_out()``).
        index : pandas.Index, default=None
            Row labels (the input frame's index); ``None``: ``0 .. n_samples - 1``.

        Returns
        -------
        frame : pandas.DataFrame
            The rows, with ``frame.attrs["skdc.uploads"]`` holding the participants, the
            anchor uploads, the anchor targets and the unit anchor noise.

        Examples
        --------
        >>> import numpy as np
        >>> from skdc import Uploads
        >>> Y = Uploads(np.arange(6.0).reshape(3, 2), participant=[0, 1, 0])
        >>> frame = Y.to_frame(columns=["gdp0", "gdp1"])
        >>> Uploads.from_frame(frame.iloc[[2, 0]]).participant
        array([0, 0])
        """
        import pandas as pd

        frame = pd.DataFrame(np.asarray(self), columns=columns, index=index, copy=True)
        frame.attrs[_FRAME_KEY] = {
            "participant": self.participant, "anchors": self.anchors,
            "anchor_y": self.anchor_y, "unit_anchor_noise": self.unit_anchor_noise,
            "index": frame.index,
        }
        return frame

    @classmethod
    def from_frame(cls, frame):
        """The :class:`Uploads` of a frame made by :meth:`to_frame`, rows matched by index.

        Parameters
        ----------
        frame : pandas.DataFrame
            A mechanism's output under ``set_output(transform="pandas")``, possibly a
            selection or reordering of its rows.

        Returns
        -------
        uploads : Uploads
            The rows with their participants and the anchor uploads.

        Raises
        ------
        TypeError
            When ``frame`` carries no uploads metadata.
        ValueError
            When its rows can no longer be matched to the metadata (a new index).
        """
        meta = getattr(frame, "attrs", {}).get(_FRAME_KEY)
        if meta is None:
            raise TypeError(f"{type(frame).__name__} carries no skdc uploads metadata.")
        participant, index = meta["participant"], meta["index"]
        if not frame.index.equals(index):
            at = index.get_indexer(frame.index) if index.is_unique else None
            if at is None or np.any(at < 0):
                raise ValueError(
                    "the DataFrame's rows no longer match the mechanism's metadata (its index "
                    "changed after the mechanism); select rows by the index the mechanism "
                    "gave them, or put the aligner right after the mechanism."
                )
            participant = participant[at]
        return cls(frame.to_numpy(dtype=np.float64), participant=participant,
                   anchors=meta["anchors"], anchor_y=meta["anchor_y"],
                   unit_anchor_noise=meta["unit_anchor_noise"])

    @classmethod
    def concatenate(cls, uploads):
        """Stack the rows of several :class:`Uploads` sharing the same anchors."""
        uploads = list(uploads)
        if not uploads:
            raise ValueError("Uploads.concatenate needs at least one Uploads; got none.")
        first = uploads[0]
        for u in uploads:
            if not isinstance(u, Uploads) or u.participant is None:
                raise TypeError(f"Uploads.concatenate takes Uploads; got {type(u).__name__}.")
            if u.anchors is not first.anchors and not _same_anchors(u.anchors, first.anchors):
                raise ValueError("Uploads.concatenate needs uploads sharing the same anchors.")
            if u.unit_anchor_noise is not first.unit_anchor_noise and not _same_anchors(
                u.unit_anchor_noise, first.unit_anchor_noise
            ):
                raise ValueError(
                    "Uploads.concatenate needs uploads sharing the same anchor noise (uploads "
                    "of one fitted mechanism)."
                )
        return cls(
            np.vstack([np.asarray(u) for u in uploads]),
            participant=np.concatenate([u.participant for u in uploads]),
            anchors=first.anchors,
            anchor_y=first.anchor_y,
            unit_anchor_noise=first.unit_anchor_noise,
        )


# the key of a mechanism's DataFrame output's ``attrs`` that holds the uploads' metadata
_FRAME_KEY = "skdc.uploads"


def _rebuild_uploads(data, participant, anchors, anchor_y, unit_anchor_noise=None):
    return Uploads(data, participant=participant, anchors=anchors, anchor_y=anchor_y,
                   unit_anchor_noise=unit_anchor_noise)


def _same_anchors(a, b):
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


@_validated_at_first_call(_participant_ids_constraints)
def check_participant_ids(participant, n_samples):
    """Validate one participant id per row: whole, non-negative numbers.

    Every step that takes ``participant`` ids (the mechanisms, :class:`Uploads`, the
    baselines) checks them here, so that the same ids are refused with the same message.

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    participant : array-like of int of shape (n_samples,)
        The participant of each row, ids in ``0 .. n_participants - 1``; floats holding whole
        numbers are accepted.
    n_samples : int
        Number of rows the ids describe.

    Returns
    -------
    participant : ndarray of intp of shape (n_samples,)
        The validated ids.

    Examples
    --------
    >>> from skdc._uploads import check_participant_ids
    >>> check_participant_ids([0, 1.0, 2], 3)
    array([0, 1, 2])
    """
    participant = np.asarray(participant)
    if participant.shape != (n_samples,):
        raise ValueError(
            f"participant must have one id per row, shape ({n_samples},); got shape "
            f"{participant.shape}."
        )
    if participant.dtype.kind == "f":
        if not np.all(np.isfinite(participant)) or np.any(participant != np.round(participant)):
            raise ValueError("participant ids must be whole numbers; got non-integer values.")
    elif participant.dtype.kind not in "iub" and n_samples:
        raise ValueError(
            f"participant ids must be integers; got dtype {participant.dtype}. Map your "
            "participant labels to 0 .. n_participants - 1 first."
        )
    participant = participant.astype(np.intp)
    if participant.size and participant.min() < 0:
        raise ValueError(
            f"participant ids must be non-negative; got {int(participant.min())}."
        )
    return participant



def _one_per_participant(arrays):
    """A 3-D array (participant, row, column) as the list of its 2-D blocks; others as given."""
    if isinstance(arrays, np.ndarray) and arrays.ndim == 3:
        return list(arrays)
    return arrays


def _finite_blocks(arrays, what, check_shape):
    """float64 copies of one array per participant: ``check_shape(i, block)``, then finiteness."""
    out = []
    for i, block in enumerate(arrays):
        block = np.asarray(block, dtype=np.float64)
        check_shape(i, block)
        if not np.all(np.isfinite(block)):
            raise ValueError(f"{what} of participant {i} contains NaN or infinity.")
        out.append(block)
    return out


def _check_anchor_list(anchors, n_columns):
    if anchors is None:
        return None
    anchors = _one_per_participant(anchors)
    if not isinstance(anchors, (list, tuple)) or not anchors:
        raise TypeError(
            "anchors must be a non-empty list of 2-D arrays, one per participant; got "
            f"{type(anchors).__name__}."
        )

    def check_shape(i, b):
        if b.ndim != 2:
            raise ValueError(f"anchor upload of participant {i} must be 2-D; got {b.ndim}-D.")
        if b.shape[1] > n_columns:
            raise ValueError(
                f"anchor upload of participant {i} has width {b.shape[1]}, wider than the "
                f"{n_columns} columns of the data uploads."
            )

    out = _finite_blocks(anchors, "anchor upload", check_shape)
    rows = {b.shape[0] for b in out}
    if len(rows) != 1:
        raise ValueError(
            f"every anchor upload must have the same number of anchor rows; got {sorted(rows)}."
        )
    return out


def _check_unit_anchor_noise(unit_anchor_noise, anchors):
    if unit_anchor_noise is None:
        return None
    if anchors is None:
        raise ValueError(
            "unit_anchor_noise was given without anchor uploads; unit anchor noise W_i belongs "
            "to an anchor upload B_i. Pass anchors= too, or unit_anchor_noise=None."
        )
    unit_anchor_noise = _one_per_participant(unit_anchor_noise)
    listed = isinstance(unit_anchor_noise, (list, tuple))
    if not listed or len(unit_anchor_noise) != len(anchors):
        raise ValueError(
            f"unit_anchor_noise must be a list of one array per anchor upload ({len(anchors)}); "
            f"got {type(unit_anchor_noise).__name__}"
            + (f" of length {len(unit_anchor_noise)}." if listed else ".")
        )

    def check_shape(i, w):
        if w.shape != anchors[i].shape:
            raise ValueError(
                f"anchor noise of participant {i} has shape {w.shape}; it must have the shape "
                f"of that participant's anchor upload, {anchors[i].shape}."
            )

    return _finite_blocks(unit_anchor_noise, "anchor noise", check_shape)


@_validated_at_first_call(_check_uploads_constraints)
def check_uploads(X, estimator, *, require_anchors=True):
    """Return ``X`` if it is an :class:`Uploads` usable by ``estimator``, else raise.

    Aligners never accept plain arrays: a plain array means the mechanism step that produces
    the uploads is missing from the pipeline, and the error says so.

    Read more in the :ref:`User Guide <protocols>`.

    Parameters
    ----------
    X : object
        What the estimator was given.
    estimator : estimator
        The estimator that needs the uploads; its class name goes into the error messages.
    require_anchors : bool, default=True
        Also refuse uploads without anchor uploads (what aligners fit on).

    Returns
    -------
    X : Uploads
        ``X`` itself.

    Raises
    ------
    TypeError
        When ``X`` is not an :class:`Uploads` with participant metadata.
    ValueError
        When ``require_anchors`` and ``X`` carries no anchor uploads.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc._uploads import check_uploads
    >>> from skdc.alignment import ReferenceAligner
    >>> check_uploads(np.eye(3), ReferenceAligner())
    Traceback (most recent call last):
    ...
    TypeError: ReferenceAligner expects skdc.Uploads produced by a mechanism step ...
    """
    name = type(estimator).__name__
    if not isinstance(X, Uploads) and _FRAME_KEY in getattr(X, "attrs", {}):
        X = Uploads.from_frame(X)  # a mechanism's output under set_output(transform="pandas")
    elif type(X).__name__ == "DataFrame":
        raise TypeError(
            f"{name} expects skdc.Uploads produced by a mechanism step; got a "
            f"{type(X).__module__.split('.')[0]} DataFrame without the mechanism's metadata "
            "(each row's participant and the anchor uploads). Under set_output(transform="
            "'pandas') a mechanism keeps it in the frame's attrs: put the aligner right after "
            "the mechanism, with no step in between that rebuilds the frame."
        )
    if not isinstance(X, Uploads) or X.participant is None:
        got = type(X).__name__ if not isinstance(X, Uploads) else "Uploads without metadata"
        raise TypeError(
            f"{name} expects skdc.Uploads produced by a mechanism step (for example IGDP) "
            f"placed before it; got {got}. Put a mechanism before the aligner, e.g. "
            f"Pipeline([('gdp', IGDP(...)), ('align', {name}(...)), ...])."
        )
    if require_anchors and X.anchors is None:
        raise ValueError(
            f"{name} aligns through anchor uploads, but these Uploads carry none. Build the "
            "mechanism with an anchor: IGDP(anchor='orthonormal') for the GDP mechanisms; for "
            "UMAPMechanism or KernelPCAMechanism, public rows of your data's domain, e.g. "
            "anchor=SMOTEAnchor.from_rows(X_public, y_public) (skdc.anchors): a synthetic "
            "anchor lies off the rows a nonlinear mechanism was fitted on and aligns to chance."
        )
    return X
