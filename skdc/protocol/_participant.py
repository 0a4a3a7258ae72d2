"""A participant of a deployment: it obfuscates and uploads once, then predicts at home.

Simulation and deployment share the estimators (:ref:`deployment`). A :class:`Participant`
is one organisation: it draws its own GDP secret, obfuscates its rows and the shared anchor,
adds its own anchor noise (Def 4.1 of [1]_) and writes one upload file
(:mod:`skdc.protocol._upload`); its secret is written to an owner-only file
(:mod:`skdc.protocol._secret`) and never leaves home. The analyst
(:class:`~skdc.protocol.Analyst`) returns each participant its alignment map and the model; a
participant then predicts at home: its mechanism, its map, the model.

How the secrets line up with a simulation
-----------------------------------------
A participant's mechanism is a GDP mechanism (:class:`~skdc.mechanisms.IGDP` or
:class:`~skdc.mechanisms.CGDP`) with ``n_participants=p``, an int ``random_state=s`` and an int
``noise_random_state=t``; participant ``i`` draws **participant i's secret of that mechanism**,
and only that one (each participant's secret has its own stream, seeded from ``s`` and ``i``:
:meth:`IGDP.fit_one <skdc.mechanisms.IGDP.fit_one>`), and uploads ``B_i + v W_i``, where ``W_i``
is that mechanism's unit anchor noise for participant ``i`` (Def 4.1 of [1]_). The simulated
``GOPPAligner(v)`` forms the same ``B_i + v W_i`` from the same mechanism, through the same
function (:meth:`skdc.Uploads.noisy_anchors`). So a deployment in which every participant uses
``s`` and ``t`` reproduces ``Pipeline([IGDP(p, anchor=A, random_state=s, noise_random_state=t),
GOPPAligner(v), model])`` bit for bit (rows grouped by participant, in id order). **In
production each participant uses its own private seeds** (or none: they are drawn from the
operating system): a seed shared by all lets every participant recompute every other
participant's secret and noise.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import os
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_array

from .. import Uploads
from ..mechanisms import CGDP, IGDP
from ..utils._deprecation import DEPRECATED, renamed_argument, renamed_attribute
from ..utils._docstring import Substitution
from ..utils._random import fresh_seed
from ..utils._references import gdp_paper_references
from ._anchor import check_anchor
from ._container import UploadError, check_feature_names
from ._map import AlignmentMap, check_same_run, check_same_upload
from ._model import read_model
from ._secret import (
    _MAX_PARTICIPANTS,
    _MECHANISMS,
    _SECRET_PARAMS,
    _WIDE,
    check_noise_seed,
    check_seed,
    chosen_seed_field,
    read_secret,
    write_pair,
    write_secret,
)
from ._upload import column_difference, match_columns, upload_contents, upload_digests, write_upload

__all__ = ["Participant"]


def _is_zero(v):
    """Whether ``v`` is its default, 0 (then a deprecated ``anchor_noise=`` speaks for it)."""
    return isinstance(v, Real) and v == 0


def _as_rows(X, name="X"):
    return check_array(X, dtype=np.float64, ensure_2d=True, ensure_all_finite=True,
                       input_name=name, estimator="Participant")


@Substitution(references=gdp_paper_references)
class Participant:
    """One participant of a deployed collaboration: obfuscates and uploads once, predicts at home.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    participant_id : int
        This participant's id, ``0 .. n_participants - 1`` (agreed out of band).
    mechanism : IGDP or CGDP
        An unfitted GDP mechanism with ``n_participants`` covering ``participant_id`` (only
        this participant's secret is drawn, :meth:`IGDP.fit_one
        <skdc.mechanisms.IGDP.fit_one>`, whatever the collaboration's size). Its
        ``random_state`` seeds this participant's secret: ``None`` (the only choice for a real
        deployment) draws 128 bits of operating-system entropy; an int is a **chosen seed, for
        bit-for-bit tests only**: anyone holding the upload can search a small seed space for
        it, and the upload's header says the seed was chosen. A seed of at least ``2**128``
        (``python -m skdc participant new-seed``) is no chosen seed: C-GDP's participants share
        one as their common secret. Its ``noise_random_state`` (a chosen int, tests only, or
        ``None``: 128 bits of fresh entropy, never derived from the secret seed) seeds this
        participant's noise stream: the unit anchor noise ``W_i`` and the private-data
        noise. Its ``anchor`` parameter is replaced by the shared anchor passed to
        :meth:`upload`.
    v : float, default=0.0
        The anchor-noise scale: the standard deviation of the noise added to the anchor upload
        before it leaves home, which then carries ``B_i + v W_i`` (Def 4.1 of [1]_; ``v`` of
        :class:`~skdc.alignment.GOPPAligner`, ``--anchor-noise`` on the command line and
        ``anchor_noise`` in the upload's header). ``0`` lets a colluding analyst recover the
        secret exactly (Prop 3.1 of [1]_) and warns.
    anchor_noise : float
        Deprecated spelling of ``v``, removed in skdc 0.3 (the attribute ``anchor_noise`` too).

    Attributes
    ----------
    mechanism_ : IGDP or CGDP
        The fitted mechanism (only participant ``participant_id``'s secret is used).
    seed_ : int
        The mechanism seed used (``random_state``, or 128 bits of fresh entropy as an int in
        ``[2**128, 2**129)``).
    noise_seed_ : int
        The noise seed used (``noise_random_state``, or 128 bits of fresh entropy: never
        derived from ``seed_``, which C-GDP's participants share).
    chosen_seed_ : bool
        Whether either seed was chosen rather than drawn (recorded in the secret and in the
        upload's header, where the analyst warns about it).
    anchor_ : ndarray of shape (n_anchors, n_features) or None
        The shared raw anchor.
    n_features_in_ : int
        Width of the participant's rows.
    feature_names_in_ : list of str or None
        The names of the columns, in order, where the rows came with them (``feature_names``
        of :meth:`upload`, or a DataFrame's columns); ``None`` where they did not, and then
        only the count of columns is checked. Recorded in the secret and the upload.
    upload_digest_ : str
        Digest of the upload file this participant's upload makes (its checksum).
    anchor_upload_digest_ : str or None
        Digest of its anchor upload (``None`` without one).

    See Also
    --------
    Analyst : The other side.

    Notes
    -----
    The secret file written by :meth:`save_secret` (owner-only permissions, ``0o600``) holds the
    two seeds, the mechanism's parameters, the raw anchor, this participant's rotation and
    translation, and the digests of the upload it made and of its anchor upload;
    :meth:`load_secret` re-derives the mechanism from the seed and checks it against the
    stored secret, and :meth:`predict` refuses a map fitted on another upload.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.anchors import orthonormal_anchor
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import Participant
    >>> A = orthonormal_anchor(12, 3, random_state=0)
    >>> me = Participant(1, IGDP(n_participants=3, random_state=5, noise_random_state=7),
    ...                  v=0.05)
    >>> up = me.upload(np.random.RandomState(0).rand(10, 3), anchor=A)
    >>> up.shape, up.anchors[0].shape
    ((10, 3), (12, 3))
    """

    def __init__(self, participant_id, mechanism, *, v=0.0, anchor_noise=DEPRECATED):
        self.participant_id = participant_id
        self.mechanism = mechanism
        if anchor_noise is not DEPRECATED:  # the old spelling, refused beside a given v
            v = renamed_argument("anchor_noise", anchor_noise, "v",
                                 DEPRECATED if _is_zero(v) else v, unset=DEPRECATED)
        self.v = v

    anchor_noise = renamed_attribute("anchor_noise", "v")

    def _check_params(self):
        if not isinstance(self.mechanism, (IGDP, CGDP)):
            raise TypeError(
                "Participant runs the GDP mechanisms IGDP and CGDP, whose secret depends only on "
                f"the seed; got {type(self.mechanism).__name__}."
            )
        i = self.participant_id
        if not isinstance(i, Integral) or isinstance(i, bool) or i < 0:
            raise TypeError(f"participant_id must be an int >= 0; got {i!r}.")
        p = self.mechanism.n_participants
        if not isinstance(p, Integral) or isinstance(p, bool) or i >= p:
            raise ValueError(
                f"participant_id={i} needs a mechanism with n_participants > {i}; got "
                f"n_participants={p!r}. Give the collaboration's number of participants."
            )
        if p > _MAX_PARTICIPANTS:
            raise ValueError(
                f"n_participants={p} is above {_MAX_PARTICIPANTS} (participant ids are 64-bit "
                "ints). Give the collaboration's real size."
            )
        v = self.v
        if not isinstance(v, Real) or isinstance(v, bool) or not np.isfinite(v) or v < 0:
            raise ValueError(f"v must be a finite float >= 0; got {v!r}.")

    def _fit_mechanism(self, n_features, anchor):
        # Participant i draws participant i's secret and noise of the mechanism with these
        # seeds, and nobody else's: GDP secrets depend on the seed and the participant's id
        # only (each participant has its own stream), never on the rows or the others.
        mech = clone(self.mechanism).set_params(
            random_state=self.seed_, noise_random_state=self.noise_seed_, anchor=anchor
        )
        return mech.fit_one(self.participant_id, n_features)

    def _own_rows(self, X):
        names = getattr(self, "feature_names_in_", None)
        if names is not None and hasattr(X, "columns") and all(
                isinstance(c, str) for c in X.columns):
            # a DataFrame's columns, by name: refused when they differ, put in order when
            # they are the same names in another order
            order = match_columns(names, list(X.columns), "X:",
                                  f"participant {self.participant_id}'s upload")
            if order is not None:
                warnings.warn(f"X has the uploaded columns in another order; reordered by "
                              f"name to the upload's ({', '.join(names[:6])}"
                              f"{', ...' if len(names) > 6 else ''}).", UserWarning)
                X = X.iloc[:, order]
        X = _as_rows(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"Participant {self.participant_id} was set up for rows of "
                f"{self.n_features_in_} features; got {X.shape[1]}."
            )
        return X

    def upload(self, X, y=None, anchor=None, *, feature_names=None):
        """Fit this participant's mechanism and return its upload (with noisy anchor upload).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            This participant's rows.
        y : array-like of shape (n_samples,), default=None
            Their labels (uploaded with the rows; kept in ``labels_``).
        anchor : array-like of shape (n_anchors, n_features), default=None
            The shared raw anchor; required unless the mechanism uploads no anchor
            (``CGDP`` with ``anchor=None``).
        feature_names : list of str, default=None
            The names of the columns of ``X``, in order (a table's header), recorded in the
            secret and the upload: the analyst refuses uploads whose names differ, and
            ``skdc participant predict`` checks new rows against them. ``None``: a
            DataFrame's string column names, else none (only the count is checked).

        Returns
        -------
        uploads : Uploads of shape (n_samples, n_components)
            A one-participant :class:`~skdc.Uploads` (local id 0) whose single anchor upload
            already carries the anchor noise. Write it with :meth:`save_upload`.
        """
        self._check_params()
        if feature_names is None and hasattr(X, "columns"):
            columns = list(X.columns)
            feature_names = columns if all(isinstance(c, str) for c in columns) else None
        X = _as_rows(X)
        feature_names = check_feature_names(
            None if feature_names is None else [str(n) for n in feature_names],
            "feature_names", X.shape[1])
        if y is not None:
            y = np.asarray(y)
            if y.shape != (X.shape[0],):
                raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}.")
        if anchor is None and self.mechanism.anchor is not None:
            raise ValueError(
                "A deployment needs the shared anchor: pass anchor= (made once with "
                "`python -m skdc anchor make` and distributed to every participant). Each "
                "participant generating its own anchor would make alignment impossible."
            )
        if anchor is not None:
            anchor = check_anchor(_as_rows(anchor, "anchor"), "anchor")
            if anchor.shape[1] != X.shape[1]:
                raise ValueError(
                    f"the anchor has {anchor.shape[1]} columns but X has {X.shape[1]}; use the "
                    "anchor made for this data's width."
                )
        seed, noise_seed = self.mechanism.random_state, self.mechanism.noise_random_state
        self.seed_ = check_seed(seed, "mechanism.random_state")
        self.noise_seed_ = check_noise_seed(noise_seed, "mechanism.noise_random_state")
        if noise_seed is None:
            # the noise seed is always this participant's own, from the operating system,
            # never derived from the secret seed (which C-GDP's participants share)
            self.noise_seed_ = fresh_seed()
        # a seed narrower than 128 bits is searchable: the secret and the upload say so
        self.chosen_seed_ = any(s is not None and s < _WIDE for s in (seed, noise_seed))
        self.n_features_in_ = X.shape[1]
        self.feature_names_in_ = feature_names
        self.anchor_ = anchor
        self.mechanism_ = self._fit_mechanism(X.shape[1], anchor)
        self.labels_ = y
        uploads = self._upload_rows(X)
        # the digests of the upload file these uploads make, which the secret records
        self.upload_digest_, self.anchor_upload_digest_ = upload_digests(
            *self._upload_contents(uploads))
        return uploads

    def _upload_rows(self, X):
        i = self.participant_id
        Y = self.mechanism_.transform(X, participant=np.full(X.shape[0], i))
        anchors = None
        if Y.anchors is not None:
            if self.v == 0:
                warnings.warn(
                    f"Participant {i} uploads a clean anchor upload (v=0): with one colluding "
                    "participant the analyst recovers this participant's secret exactly (Prop "
                    "3.1 of the GDP paper). Set v > 0.",
                    UserWarning,
                )
            # B_i + v W_i, formed as the simulated GOPPAligner(v) forms it; only this leaves
            anchors = Y.noisy_anchors(self.v)  # its own, under local id 0
        return Uploads(np.asarray(Y), np.zeros(X.shape[0], dtype=np.intp), anchors=anchors,
                       anchor_y=Y.anchor_y)

    def _upload_contents(self, uploads):
        """The header and arrays of the upload file of ``uploads``."""
        header, arrays = upload_contents(
            uploads, self.participant_id, labels=self.labels_,
            mechanism=self.mechanism_, v=self.v,
            feature_names=self.feature_names_in_,
        )
        header["chosen_seed"] = bool(self.chosen_seed_)
        if not getattr(self, "_declares_size", True):
            # the command line's default size (--id + 1) is no claim about the collaboration:
            # the analyst compares only the sizes participants declare
            header["mechanism"]["n_participants"] = None
        return header, arrays

    def _own_upload(self, uploads):
        """The upload file's contents, refused unless they are the ones :meth:`upload` made."""
        if not hasattr(self, "upload_digest_"):
            raise ValueError("Participant has made no upload: call upload() first.")
        header, arrays = self._upload_contents(uploads)
        if upload_digests(header, arrays)[0] != self.upload_digest_:
            raise ValueError(
                f"these uploads are not the ones participant {self.participant_id}'s upload() "
                "returned (its secret records the digest of that upload); pass the uploads "
                "upload() returned."
            )
        return header, arrays

    def save_upload(self, path, uploads):
        """Write the upload returned by :meth:`upload` (with its labels) to ``path``.

        The file is written ``0o644`` less the umask (it goes to the analyst); a link at
        ``path`` is replaced, never written through. :meth:`save` writes the upload and the
        secret together, refusing to overwrite either.
        """
        return write_upload(path, *self._own_upload(uploads))

    def _secret_contents(self):
        i = self.participant_id
        mech = self.mechanism_
        params = {k: mech.get_params()[k] for k in _SECRET_PARAMS}
        header = {
            "participant_id": int(i), "mechanism": type(mech).__name__, "params": params,
            "seed": self.seed_, "anchor_noise": float(self.v),
            "noise_seed": self.noise_seed_, "chosen_seed": bool(self.chosen_seed_),
            "n_features_in": int(self.n_features_in_),
            # the columns' names in order (a table's header), or null: only counted
            "feature_names": self.feature_names_in_,
            # the upload this secret made: a map fitted on another upload is refused
            "upload_digest": self.upload_digest_,
            "anchor_upload_digest": self.anchor_upload_digest_,
        }
        # the mechanism holds this participant's secret alone (fit_one)
        arrays = {"rotation": mech.rotations_[0], "translation": mech.translations_[0]}
        if self.anchor_ is not None:
            arrays["anchor"] = self.anchor_
        return header, arrays

    def save_secret(self, path):
        """Write this participant's secret file with owner-only permissions (``0o600``).

        It records the digest of the upload :meth:`upload` made (and of its anchor upload),
        so that :meth:`predict` refuses a map fitted on another upload.
        """
        if not hasattr(self, "upload_digest_"):
            raise ValueError("Participant has made no upload: call upload() first.")
        return write_secret(path, *self._secret_contents())

    def save(self, upload_path, secret_path, uploads, *, overwrite=False):
        """Write the upload and its secret as a pair that always belongs together.

        Both files are written whole to temporary files first, then published, the secret
        first. Without ``overwrite``, each is created exclusively: of several writers racing
        on the same paths one wins, the others get :class:`~skdc.protocol.UploadError` and
        leave nothing behind (a secret published before its upload was refused is removed).
        With ``overwrite``, the writers take turns (a lock on the folders), so the pair left
        behind is the last writer's, whole. Either way the surviving secret records the
        digest of the surviving upload.

        Parameters
        ----------
        upload_path : str or path-like
            The upload file (``0o644`` less the umask: it goes to the analyst).
        secret_path : str or path-like
            The secret file (``0o600``: it never leaves home).
        uploads : Uploads
            What :meth:`upload` returned.
        overwrite : bool, default=False
            Replace existing files (never through a link).

        Returns
        -------
        paths : tuple of str
            ``(upload_path, secret_path)``.
        """
        upload_path, secret_path = os.fspath(upload_path), os.fspath(secret_path)
        if os.path.abspath(upload_path) == os.path.abspath(secret_path):
            raise ValueError(f"{upload_path}: the upload and the secret go to different files.")
        write_pair(upload_path, self._own_upload(uploads), secret_path,
                   self._secret_contents(), overwrite=overwrite)
        return upload_path, secret_path

    @classmethod
    def load_secret(cls, path):
        """Rebuild a participant from its secret file, checking the re-derived secret.

        The header is checked field by field against the stored arrays (``participant_id`` in
        ``0 .. n_participants - 1``, ``n_participants`` a 64-bit int, ``n_features_in`` a
        positive int matching the stored rotation); anything off raises
        :class:`~skdc.protocol.UploadError` naming the file and the field.
        """
        h, arrays = read_secret(path)
        where = os.fspath(path)
        try:
            mech = _MECHANISMS[h["mechanism"]](**h["params"], random_state=h["seed"],
                                               noise_random_state=h["noise_seed"])
            self = cls(h["participant_id"], mech, v=h["anchor_noise"])
            self._check_params()
            self.seed_ = check_seed(h["seed"], "seed")
            self.noise_seed_ = check_noise_seed(h["noise_seed"], "noise_seed")
            self.chosen_seed_ = chosen_seed_field(h)
            self.n_features_in_ = int(h["n_features_in"])
            # a secret written before the field existed: names not checked
            self.feature_names_in_ = h.get("feature_names")
            self.anchor_ = arrays.get("anchor")
            self.mechanism_ = self._fit_mechanism(self.n_features_in_, self.anchor_)
        except (KeyError, TypeError, ValueError) as exc:
            raise UploadError(f"{where}: invalid secret file ({exc}).") from None
        self.upload_digest_ = h["upload_digest"]
        self.anchor_upload_digest_ = h["anchor_upload_digest"]
        self._secret_path = where
        if not (np.array_equal(self.mechanism_.rotations_[0], arrays["rotation"])
                and np.array_equal(self.mechanism_.translations_[0], arrays["translation"])):
            raise UploadError(
                f"{where}: the secret re-derived from the seed differs from the stored one "
                "(written by a different skdc or numpy version?). Predict with the version "
                "that wrote the upload."
            )
        self.labels_ = None
        return self

    def _check_map(self, alignment_map):
        """The map (read if a path) and its name, refused unless it is this participant's map
        fitted on this participant's upload."""
        if isinstance(alignment_map, AlignmentMap):
            map_path = "the alignment map"
        else:
            map_path, alignment_map = os.fspath(alignment_map), AlignmentMap.load(alignment_map)
        if alignment_map.participant_id != self.participant_id:
            raise ValueError(
                f"this alignment map is participant {alignment_map.participant_id}'s; this is "
                f"participant {self.participant_id}. Use the map file with your id."
            )
        check_same_upload(alignment_map, map_path, self.upload_digest_,
                          getattr(self, "_secret_path", "this participant's secret"))
        self._check_schema(alignment_map.feature_names, map_path)
        return alignment_map, map_path

    def _check_schema(self, names, path):
        """Refuse a map or a model whose run recorded other column names than this secret."""
        mine = getattr(self, "feature_names_in_", None)
        diff = None if names is None or mine is None else column_difference(mine, names)
        if diff is not None:
            here, there, k, more = diff
            secret = getattr(self, "_secret_path", "this participant's secret")
            raise UploadError(
                f"{path}: field 'feature_names' has column {k} {here} where {secret} has "
                f"{there} ({more}): it was fitted on uploads of other columns. Use the files "
                "of the run that fitted this secret's upload.")

    def transform(self, X, alignment_map):
        """This participant's rows in the collaboration frame: mechanism, then its map.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows of any split (the same secret serves all of them).
        alignment_map : AlignmentMap or path
            The map the analyst returned to this participant.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
        """
        if not hasattr(self, "mechanism_"):
            raise ValueError("Participant is not set up: call upload() or load_secret() first.")
        alignment_map = self._check_map(alignment_map)[0]
        X = self._own_rows(X)
        Y = self.mechanism_.transform(X, participant=np.full(X.shape[0], self.participant_id))
        return alignment_map.apply(np.asarray(Y))

    def predict(self, X, alignment_map, model):
        """Predict this participant's rows at home with the analyst's map and model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Rows to predict.
        alignment_map : AlignmentMap or path
            This participant's alignment map.
        model : estimator or path
            The analyst's fitted model, or its file (:func:`~skdc.protocol.save_model`).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        alignment_map, map_path = self._check_map(alignment_map)
        if isinstance(model, (str, os.PathLike)):
            model_path = os.fspath(model)
            model, run_id, names = read_model(model, schema=True)
            check_same_run(alignment_map, map_path, run_id, model_path)
            self._check_schema(names, model_path)
        return model.predict(self.transform(X, alignment_map))
