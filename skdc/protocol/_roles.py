"""The two roles of a deployment: a participant at home, the analyst in the middle.

Simulation and deployment share the estimators (:ref:`deployment`). A
:class:`Participant` is one organisation: it draws its own GDP secret, obfuscates its rows and
the shared anchor, adds its own anchor noise (Def 4.1 of [1]_) and writes one upload file; its
secret is written to an owner-only file and never leaves home. The :class:`Analyst` loads the
upload files, fits the aligner and the model, and exports each participant's alignment map and
the model as files. A participant then predicts at home: its mechanism, its map, the model.

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

import contextlib
import os
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.utils import check_array

from .. import Uploads
from ..alignment import GOPPAligner, ReferenceAligner
from ..mechanisms import CGDP, IGDP
from ..utils._docstring import Substitution
from ..utils._folders import ensure_folder
from ..utils._outputs import output_mode
from ..utils._random import fresh_seed
from ..utils._references import gdp_paper_references
from ._container import (
    Container,
    UploadError,
    atomic_file,
    check_digest_field,
    check_feature_names,
    check_values,
    is_int,
    max_magnitude,
    write_container,
    write_members,
)
from ._files import (
    AlignmentMap,
    check_anchor,
    check_same_run,
    check_same_upload,
    map_of,
    model_arrays,
    read_model,
    run_fingerprint,
    save_model,
)
from ._format import (
    _UPLOAD,
    UploadSet,
    anchor_fingerprint,
    column_difference,
    load_uploads,
    match_columns,
    upload_contents,
    upload_digests,
    write_upload,
)
from ._screen import FALSE_ALARM, rank_deficient, screen_anchor_uploads

__all__ = ["Analyst", "Participant"]

_SECRET = "skdc-secret"
#: Seeds a secret file may hold: a chosen int below 2**32 (tests only) or a fresh seed of
#: 128 bits of entropy below 2**129 (:func:`~skdc.utils._random.fresh_seed`).
_SEED_BOUND = 2**129
#: A given seed of at least this many bits' range (``skdc participant new-seed``) is no
#: chosen, test-only seed: C-GDP's participants share one as their common secret.
_WIDE = 2**128
_MECHANISMS = {"IGDP": IGDP, "CGDP": CGDP}
_SECRET_PARAMS = ("n_participants", "noise", "translation_scale", "n_anchors")
#: Largest collaboration size: participant ids are numpy int64 (setting a participant up
#: draws its own secret only, so the size costs nothing).
_MAX_PARTICIPANTS = int(np.iinfo(np.int64).max)


def _check_seed(value, name):
    """A seed as stored: ``None`` draws 128 bits of operating-system entropy
    (:func:`~skdc.utils._random.fresh_seed`); an int is a chosen seed (tests only)."""
    if value is None:
        return fresh_seed()
    if isinstance(value, Integral) and not isinstance(value, bool) and 0 <= value < _SEED_BOUND:
        return int(value)
    raise TypeError(
        f"{name} must be an int in [0, 2**129) or None (128 bits drawn from the operating "
        f"system); got {type(value).__name__}. A deployment stores the seed in the secret "
        "file, so it must be a plain int."
    )


def _check_noise_seed(value, name):
    # None: the mechanism derives its noise stream from its own (private) secret seed
    return None if value is None else _check_seed(value, name)


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
    anchor_noise : float, default=0.0
        Standard deviation ``v`` of the noise added to the anchor upload before it leaves home:
        the upload carries ``B_i + v W_i`` (Def 4.1 of [1]_). ``0`` lets a colluding analyst
        recover the secret exactly (Prop 3.1 of [1]_) and warns.

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
    ...                  anchor_noise=0.05)
    >>> up = me.upload(np.random.RandomState(0).rand(10, 3), anchor=A)
    >>> up.shape, up.anchors[0].shape
    ((10, 3), (12, 3))
    """

    def __init__(self, participant_id, mechanism, *, anchor_noise=0.0):
        self.participant_id = participant_id
        self.mechanism = mechanism
        self.anchor_noise = anchor_noise

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
        v = self.anchor_noise
        if not isinstance(v, Real) or isinstance(v, bool) or not np.isfinite(v) or v < 0:
            raise ValueError(f"anchor_noise must be a finite float >= 0; got {v!r}.")

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
        self.seed_ = _check_seed(seed, "mechanism.random_state")
        self.noise_seed_ = _check_noise_seed(noise_seed, "mechanism.noise_random_state")
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
            if self.anchor_noise == 0:
                warnings.warn(
                    f"Participant {i} uploads a clean anchor upload (anchor_noise=0): with one "
                    "colluding participant the analyst recovers this participant's secret "
                    "exactly (Prop 3.1 of the GDP paper). Set anchor_noise > 0.",
                    UserWarning,
                )
            # B_i + v W_i, formed as the simulated GOPPAligner(v) forms it; only this leaves
            anchors = Y.noisy_anchors(self.anchor_noise)  # its own, under local id 0
        return Uploads(np.asarray(Y), np.zeros(X.shape[0], dtype=np.intp), anchors=anchors,
                       anchor_y=Y.anchor_y)

    def _upload_contents(self, uploads):
        """The header and arrays of the upload file of ``uploads``."""
        header, arrays = upload_contents(
            uploads, self.participant_id, labels=self.labels_,
            mechanism=self.mechanism_, anchor_noise=self.anchor_noise,
            anchor_id=None if self.anchor_ is None else anchor_fingerprint(self.anchor_),
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
            "seed": self.seed_, "anchor_noise": float(self.anchor_noise),
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
        header, arrays = self._secret_contents()
        return write_container(path, _SECRET, header, arrays, mode=0o600, what="the secret")

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
        header, arrays = self._own_upload(uploads)
        secret_header, secret_arrays = self._secret_contents()
        with _folder_locks([upload_path, secret_path]):
            published = None
            try:
                with atomic_file(upload_path, output_mode(0o644), exclusive=not overwrite,
                                 what="the upload", kind=_UPLOAD) as fu:
                    write_members(fu, _UPLOAD, header, arrays, header_digests=True)
                    with atomic_file(secret_path, 0o600, exclusive=not overwrite,
                                     what="the secret", kind=_SECRET) as fs:
                        write_members(fs, _SECRET, secret_header, secret_arrays)
                    published = os.lstat(secret_path)
            except BaseException:
                if published is not None and not overwrite:
                    _remove_if_same(secret_path, published)
                raise
        return upload_path, secret_path

    @classmethod
    def load_secret(cls, path):
        """Rebuild a participant from its secret file, checking the re-derived secret.

        The header is checked field by field against the stored arrays (``participant_id`` in
        ``0 .. n_participants - 1``, ``n_participants`` a 64-bit int, ``n_features_in`` a
        positive int matching the stored rotation); anything off raises
        :class:`~skdc.protocol.UploadError` naming the file and the field.
        """
        with Container(path, _SECRET) as c:
            h = c.header
            _check_secret_header(c)
            arrays = c.read()
        try:
            mech = _MECHANISMS[h["mechanism"]](**h["params"], random_state=h["seed"],
                                     noise_random_state=h["noise_seed"])
            self = cls(h["participant_id"], mech, anchor_noise=h["anchor_noise"])
            self._check_params()
            self.seed_ = _check_seed(h["seed"], "seed")
            self.noise_seed_ = _check_noise_seed(h["noise_seed"], "noise_seed")
            self.chosen_seed_ = _chosen_seed_field(h)
            self.n_features_in_ = int(h["n_features_in"])
            # a secret written before the field existed: names not checked
            self.feature_names_in_ = h.get("feature_names")
            self.anchor_ = arrays.get("anchor")
            self.mechanism_ = self._fit_mechanism(self.n_features_in_, self.anchor_)
        except (KeyError, TypeError, ValueError) as exc:
            raise UploadError(f"{c.path}: invalid secret file ({exc}).") from None
        self.upload_digest_ = h["upload_digest"]
        self.anchor_upload_digest_ = h["anchor_upload_digest"]
        self._secret_path = c.path
        if not (np.array_equal(self.mechanism_.rotations_[0], arrays["rotation"])
                and np.array_equal(self.mechanism_.translations_[0], arrays["translation"])):
            raise UploadError(
                f"{c.path}: the secret re-derived from the seed differs from the stored one "
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


def _chosen_seed_field(h):
    """Whether a secret file's seeds were chosen (a file written before the field existed
    drew 31-bit seeds: as searchable as a chosen one)."""
    chosen = h.get("chosen_seed", True)
    if not isinstance(chosen, bool):
        raise TypeError(f"field 'chosen_seed' must be true or false; got {chosen!r}")
    return chosen


def _check_secret_header(c):
    """The public fields of a secret file, checked against each other and the stored arrays."""
    h, where = c.header, c.path
    if not isinstance(h.get("mechanism"), str) or h["mechanism"] not in _MECHANISMS:
        raise UploadError(f"{where}: field 'mechanism' must be one of {sorted(_MECHANISMS)}.")
    params = h.get("params")
    if not isinstance(params, dict) or set(params) != set(_SECRET_PARAMS):
        raise UploadError(
            f"{where}: field 'params' must be an object with exactly the keys "
            f"{list(_SECRET_PARAMS)}."
        )
    p = params["n_participants"]
    if not is_int(p) or not 1 <= p <= _MAX_PARTICIPANTS:
        raise UploadError(
            f"{where}: field 'params.n_participants' must be an int in 1 .. "
            f"{_MAX_PARTICIPANTS}; got {p!r}."
        )
    c.int_field("participant_id", 0, p - 1,
                expected=f"an int in 0 .. {p - 1} (n_participants={p})")
    if check_digest_field(h, "upload_digest", where) is None:
        raise UploadError(f"{where}: field 'upload_digest' must be the digest of the upload "
                          "this secret made; got null.")
    check_digest_field(h, "anchor_upload_digest", where)
    d = c.int_field("n_features_in", 1)
    check_feature_names(h.get("feature_names"), where, d)
    c.expect_members(["rotation", "translation"], optional=["anchor"])
    expected = {"rotation": (d, d), "translation": (d,)}
    for name, (shape, dtype) in c.array_members().items():
        if dtype != np.dtype("<f8"):
            raise UploadError(f"{where}: field {name!r} has dtype {dtype}; expected float64.")
        if name == "anchor" and (len(shape) != 2 or shape[1] != d):
            raise UploadError(
                f"{where}: field 'anchor' has shape {shape}; expected (n_anchors, {d})."
            )
        if name in expected and shape != expected[name]:
            raise UploadError(
                f"{where}: field {name!r} has shape {shape}; n_features_in={d} makes it "
                f"{expected[name]}."
            )


@contextlib.contextmanager
def _folder_locks(paths):
    """Hold an exclusive lock on the folders of ``paths`` (in a fixed order: no deadlock).

    Writers of the same pair of files take turns, so each pair is written whole. Where the
    operating system has no ``flock`` (Windows), nothing is locked; exclusive creation still
    keeps a pair together.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    folders = sorted({os.path.dirname(os.path.abspath(p)) for p in paths})
    with contextlib.ExitStack() as stack:
        for folder in folders:
            try:
                fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            except OSError as exc:
                raise UploadError(f"{folder}: cannot open the folder to write into it "
                                  f"({exc.strerror}).") from None
            stack.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield


def _remove_if_same(path, st):
    """Remove ``path`` only if it is still the file ``st`` (``os.lstat``) describes."""
    with contextlib.suppress(OSError):
        now = os.lstat(path)
        if (now.st_ino, now.st_dev) == (st.st_ino, st.st_dev):
            os.unlink(path)


def _as_upload_set(uploads, y):
    """What :meth:`Analyst.fit` was given, as an :class:`UploadSet`, its values checked."""
    if isinstance(uploads, UploadSet):
        return uploads
    if not isinstance(uploads, Uploads):
        return load_uploads(uploads)
    # in memory: the limit load_uploads applies to files, before any arithmetic
    anchors = uploads.anchors or []
    limit = max_magnitude(uploads.size + sum(np.size(b) for b in anchors))
    check_values(np.asarray(uploads), "the in-memory uploads", "data", limit)
    for i, b in enumerate(anchors):
        check_values(np.asarray(b, dtype=np.float64), "the in-memory uploads",
                     f"anchor_upload {i}", limit)
    return UploadSet(uploads, None if y is None else np.asarray(y),
                     [{} for _ in range(uploads.n_participants)])


def _file_of(loaded, i):
    """Participant ``i``'s upload file (or its id, for in-memory uploads), for messages."""
    return f"participant {i}" if loaded.paths is None else loaded.paths[i]


def _check_noise_range(value):
    """``Analyst(anchor_noise_range=...)`` as ``(low, high)`` floats, or ``None``."""
    if value is None:
        return None
    ok = isinstance(value, (tuple, list)) and len(value) == 2 and all(
        isinstance(x, Real) and not isinstance(x, bool) for x in value)
    if ok:
        low, high = float(value[0]), float(value[1])
        ok = np.isfinite(low) and 0 <= low <= high and not np.isnan(high)
    if not ok:
        raise ValueError(
            "anchor_noise_range must be two numbers (LOW, HIGH) with 0 <= LOW <= HIGH (HIGH "
            f"may be inf): the anchor noise an upload may declare; got {value!r:.80}."
        )
    return low, high


def _listed(files, most=4):
    """``a, b, c and 2 more``: at most ``most`` names."""
    files = list(files)
    more = f" and {len(files) - most} more" if len(files) > most else ""
    return ", ".join(files[:most]) + more


def _refuse_undue_anchor_noise(loaded, noise_range):
    """Refuse, before any alignment, uploads declaring anchor noise the analyst did not agree
    to: the screen holds each anchor upload to the noise it declares, which its sender chose."""
    declared = {k: float(h["anchor_noise"]) for k, h in enumerate(loaded.headers)
                if isinstance(h.get("anchor_noise"), Real)}
    why = ("the screen of the anchor uploads holds each to the noise it declares, so more "
           "noise than agreed would let a poisoned (row-permuted, foreign) anchor upload pass")
    if noise_range is not None:
        low, high = noise_range
        bad = [k for k, v in declared.items() if not low <= v <= high]
        if bad:
            raise UploadError(
                f"{_listed(_file_of(loaded, j) for j in bad)}: declare"
                f"{'s' if len(bad) == 1 else ''} anchor noise "
                f"{_listed(f'{declared[j]:g}' for j in bad)}, outside the accepted "
                f"{low:g} .. {high:g} (anchor_noise_range); {why}. Ask "
                f"{_participants(loaded, bad)} to upload with anchor noise in that range, or "
                "widen the range if the collaboration agreed to it."
            )
        return
    values = sorted(set(declared.values()))
    if len(values) < 2:
        return
    counts = {v: sum(d == v for d in declared.values()) for v in values}
    agreed = max(values, key=lambda v: (counts[v], -v))  # the most declared; a tie: the least
    odd = [k for k, v in declared.items() if v != agreed]
    n = counts[agreed]
    raise UploadError(
        f"{_listed(_file_of(loaded, j) for j in odd)}: declare{'s' if len(odd) == 1 else ''} "
        f"anchor noise {_listed(f'{declared[j]:g}' for j in odd)}, where {n} other "
        f"upload{'s declare' if n != 1 else ' declares'} {agreed:g}; every upload must "
        f"declare the collaboration's agreed anchor noise, since {why}. Ask "
        f"{_participants(loaded, odd)} to upload with the agreed anchor noise, or name the "
        "noise you accept with anchor_noise_range=(LOW, HIGH)."
    )


def _participants(loaded, ks):
    """``participant 4`` or ``participants 2, 4``: by the ids their uploads declare."""
    ids = [str(loaded.headers[k].get("participant_id", k)) for k in ks]
    return f"participant{'s' if len(ids) > 1 else ''} {_listed(ids)}"


def _refuse_rank_deficient(anchors, loaded):
    """Refuse a centered anchor upload spanning fewer directions than its width."""
    for i, b in enumerate(anchors):
        s = np.linalg.svd(b - b.mean(axis=0), compute_uv=False)
        if rank_deficient(s):
            raise UploadError(
                f"{_file_of(loaded, i)}: field 'anchor_upload' is rank-deficient (centered "
                f"singular values {s[0]:.3g} .. {s[-1]:.3g}): it spans fewer than its "
                f"{b.shape[1]} columns, so no rotation aligns it with the others. Refusing to "
                f"train on it; ask participant {i} for a fresh upload."
            )


def _screen_message(screen, loaded):
    """One line naming the upload that sits farthest from the consensus."""
    k = int(np.argmax(screen.ratios))
    p = len(screen.ratios)
    v = screen.noise
    noise = (f"the declared anchor noise (v = {v[k]:g}; {v.min():g} .. {v.max():g} over all)"
             if screen.declared else f"the anchor noise the uploads show (v ~ {v[0]:.3g})")
    where = (f"{_file_of(loaded, k)}: field 'anchor_upload'" if p > 2 else
             f"{_file_of(loaded, 0)} and {_file_of(loaded, 1)}: field 'anchor_upload'")
    return (
        f"{where} lies {screen.residuals[k]:.3g} from the participants' consensus after "
        f"alignment (GOPP residual), where {noise} explains {screen.expected[k]:.3g} (squared "
        f"ratio {screen.ratios[k]:.3g} > {screen.threshold:.3g}, exceeded by honest uploads "
        f"once in {1 / FALSE_ALARM:.0e} fits). "
        + ("With two participants the analyst cannot tell which one is off: ask both for a "
           "fresh upload." if p == 2 else
           f"Its rows may be permuted, rank-deficient or made with another anchor or secret; "
           f"ask participant {k} for a fresh upload, or leave it out.")
    )


def _warn_on_clean_anchors_or_one_upload(aligner, headers):
    """Warn on clean anchor uploads (to GOPP) and on a single upload (nothing to align)."""
    if isinstance(aligner, GOPPAligner):
        clean = [k for k, h in enumerate(headers) if "anchor_noise" in h
                 and not h["anchor_noise"]]
        if clean:
            warnings.warn(
                f"participant(s) {clean} declare no anchor noise: their anchor uploads are "
                "clean, so a colluding analyst recovers their secret exactly. Ask them to "
                "upload with --anchor-noise > 0.",
                UserWarning,
            )
    if len(headers) == 1:
        warnings.warn(
            "only 1 participant's upload: there is nothing to align (the model is "
            "trained on one participant's obfuscated rows). Collect every participant's "
            "upload before fitting.",
            UserWarning,
        )


def _near_duplicates(anchors, rtol=1e-8):
    """Pairs of participants whose centered anchor uploads (nearly) coincide."""
    B = np.stack([b - b.mean(axis=0) for b in anchors]).reshape(len(anchors), -1)
    proj = B @ np.random.RandomState(0).standard_normal((B.shape[1], 8))
    norms = np.linalg.norm(B, axis=1)
    pairs = []
    order = np.argsort(proj[:, 0])
    for a, b in zip(order[:-1], order[1:]):
        scale = max(norms[a], norms[b], np.finfo(float).tiny)
        if np.linalg.norm(B[a] - B[b]) <= rtol * scale:
            pairs.append((int(min(a, b)), int(max(a, b))))
    return pairs


class Analyst:
    """The analyst of a deployment: aligns the received uploads, trains and exports.

    Read more in the :ref:`User Guide <deployment>`.

    Parameters
    ----------
    aligner : GOPPAligner, ReferenceAligner or None, default=None
        The aligner (cloned at fit). ``None`` means ``GOPPAligner()``. A ``GOPPAligner`` must
        have ``v=0``: in a deployment the participants add the anchor noise themselves. Pass
        ``"none"`` for uploads that need no alignment (C-GDP).
    model : estimator, default=None
        A linear model from :func:`~skdc.protocol.save_model`'s allow-list (cloned at fit);
        ``None`` means ``LogisticRegression()``.
    outliers : {'refuse', 'warn'}, default='refuse'
        What to do, before the model is trained, when a participant's aligned anchor upload
        sits farther from the others' consensus than its declared anchor noise explains (rows
        permuted, a rank-deficient upload, another anchor or secret): raise
        :class:`~skdc.protocol.UploadError` naming its file, or warn and train anyway. The
        threshold is the chi-square quantile of the residual at a false-alarm probability of
        ``1e-6`` per fit (see Notes).
    anchor_noise_range : tuple of (float, float) or None, default=None
        The anchor noise ``(low, high)`` an upload may declare (``high`` may be ``inf``).
        ``None``: every upload that declares anchor noise must declare the same value, the
        collaboration's agreed one. The screen holds each anchor upload to the noise it
        declares, so a participant declaring more noise than agreed would pass a poisoned
        (row-permuted, foreign) anchor upload: an upload declaring another value, or one
        outside the range, is refused with :class:`~skdc.protocol.UploadError` before any
        alignment.

    Attributes
    ----------
    aligner_ : aligner or None
        The fitted aligner (the analyst's view: noisy anchor uploads, rotations).
    model_ : estimator
        The fitted model.
    headers_ : list of dict
        The public headers of the uploads.
    n_participants_ : int
        Number of participants.
    near_duplicates_ : list of tuple
        Pairs of participants whose centered anchor uploads nearly coincide (warned).
    anchor_residual_ratios_ : ndarray of shape (n_participants,) or None
        Each participant's squared GOPP residual over its expected value under the declared
        anchor noise (``None`` when nothing was screened: no alignment, one participant).
    anchor_residual_threshold_ : float or None
        The threshold those ratios were held to.
    upload_digests_ : list of str or None
        The digest of each participant's upload file (``None`` for in-memory uploads); each
        participant's alignment map records its own.
    feature_names_in_ : list of str or None
        The raw columns' names, in order, that the uploads declare (one schema: uploads whose
        names differ are refused); ``None`` when none declares names. Carried into every map
        and the model.
    unnamed_uploads_ : list of int
        The participants whose upload declares no names (rows from a ``.npy``): their columns
        were checked by count only.

    Notes
    -----
    The screen of the anchor uploads: at the planted rotations, participant ``i``'s centered,
    aligned anchor upload differs from the consensus of all ``p`` by Gaussian noise alone,
    with ``||E_i||_F^2 / s_i^2`` chi-square with ``(r - 1) d`` degrees of freedom and
    ``s_i^2 = v_i^2 (1 - 2/p) + sum_j v_j^2 / p^2`` (Def 4.1 and eq. (26) of the GDP paper);
    the GOPP rotations only lower it. The participant of the largest ratio above the
    quantile is named.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.alignment import ReferenceAligner
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import Analyst, save_simulated_uploads
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.rand(60, 3), rng.randint(2, size=60)
    >>> ids = np.arange(60) % 3
    >>> Y = IGDP(n_participants=3, random_state=0).fit_transform(X, participant=ids)
    >>> tmp = tempfile.mkdtemp()
    >>> paths = save_simulated_uploads(tmp, Y, anchor_noise=0.0, labels=y)
    >>> analyst = Analyst(aligner=ReferenceAligner()).fit(paths)
    >>> sorted(os.path.basename(p) for p in analyst.export(tmp))
    ['map_0.npz', 'map_1.npz', 'map_2.npz', 'model.npz']

    Uploads declaring different anchor noise are refused unless the analyst names the range
    the collaboration agreed to:

    >>> Analyst(ReferenceAligner(), anchor_noise_range=(0.0, 0.1)).fit(paths).n_participants_
    3
    """

    def __init__(self, aligner=None, model=None, *, outliers="refuse", anchor_noise_range=None):
        self.aligner = aligner
        self.model = model
        self.outliers = outliers
        self.anchor_noise_range = anchor_noise_range

    def fit(self, uploads, y=None):
        """Load (if paths), align and train.

        Parameters
        ----------
        uploads : UploadSet, Uploads, str, path-like or sequence of paths
            The participants' upload files, what :func:`~skdc.protocol.load_uploads`
            returned, or an in-memory :class:`~skdc.Uploads` (then pass ``y``).
        y : array-like of shape (n_samples,), default=None
            Labels, only with an in-memory ``Uploads``.

        Returns
        -------
        self : object
        """
        if self.outliers not in ("refuse", "warn"):
            raise ValueError(f"outliers must be 'refuse' or 'warn'; got {self.outliers!r}.")
        noise_range = _check_noise_range(self.anchor_noise_range)
        loaded = _as_upload_set(uploads, y)
        Y, y, headers = loaded.uploads, loaded.y, loaded.headers
        if y is None:
            raise ValueError(
                "the uploads carry no labels; participants upload labels with their rows "
                "(`skdc participant upload --labels y.npy`)."
            )
        aligner = self._check_aligner(Y)
        _warn_on_clean_anchors_or_one_upload(aligner, headers)
        self.near_duplicates_ = [] if Y.anchors is None else _near_duplicates(Y.anchors)
        if self.near_duplicates_:
            warnings.warn(
                f"participants {self.near_duplicates_} have nearly identical anchor uploads: "
                "they share one secret, so each can invert the other's uploads. Every "
                "participant must draw its own secret (its own seed).",
                UserWarning,
            )
        self.headers_ = headers
        self.n_participants_ = len(headers)
        self.upload_digests_ = loaded.digests
        names = [h.get("feature_names") for h in headers]
        self.feature_names_in_ = next((n for n in names if n is not None), None)
        self.unnamed_uploads_ = [k for k, n in enumerate(names) if n is None]
        if aligner is not None:
            _refuse_undue_anchor_noise(loaded, noise_range)
            _refuse_rank_deficient(Y.anchors, loaded)
        self.aligner_ = None if aligner is None else clone(aligner).fit(Y)
        self._screen(Y, loaded)
        Z = np.asarray(Y) if aligner is None else self.aligner_.transform(Y)
        model = LogisticRegression() if self.model is None else self.model
        self.model_ = clone(model).fit(Z, y)
        return self

    def _screen(self, Y, loaded):
        """Refuse (or warn about) the anchor upload farthest from the consensus, if too far."""
        self.anchor_residual_ratios_ = self.anchor_residual_threshold_ = None
        if self.aligner_ is None or len({b.shape[1] for b in Y.anchors}) > 1:
            return  # no alignment, or widths no rotation maps onto each other
        gopp = self.aligner_
        if not isinstance(gopp, GOPPAligner):  # the screen compares GOPP residuals
            gopp = GOPPAligner(v=0.0).fit(Y)
        declared = [h.get("anchor_noise") for h in loaded.headers]
        screen = screen_anchor_uploads(gopp.anchor_uploads_, gopp.rotations_, declared)
        if screen is None:
            return
        self.anchor_residual_ratios_ = screen.ratios
        self.anchor_residual_threshold_ = screen.threshold
        if screen.ratios.max() > screen.threshold:
            message = _screen_message(screen, loaded)
            if self.outliers == "refuse":
                raise UploadError(message)
            warnings.warn(message, UserWarning)

    def _check_aligner(self, Y):
        """The aligner to fit (``None``: no alignment), refused where it cannot serve."""
        aligner = GOPPAligner() if self.aligner is None else self.aligner
        if isinstance(aligner, str) and aligner == "none":
            return None
        if not isinstance(aligner, (GOPPAligner, ReferenceAligner)):
            raise TypeError(
                f"aligner must be a GOPPAligner, a ReferenceAligner or 'none'; got "
                f"{type(aligner).__name__}."
            )
        if isinstance(aligner, GOPPAligner) and aligner.v != 0:
            raise ValueError(
                f"GOPPAligner(v={aligner.v}) would add anchor noise on the analyst's side; in a "
                "deployment each participant adds it before upload (--anchor-noise). Use "
                "GOPPAligner(v=0)."
            )
        if Y.anchors is None:
            raise ValueError(
                "the uploads carry no anchor uploads, so they cannot be aligned; use "
                "aligner='none' (C-GDP) or have the participants upload with the shared anchor."
            )
        return aligner

    def alignment_map(self, participant_id):
        """The :class:`AlignmentMap` to return to participant ``participant_id``."""
        if not 0 <= participant_id < self.n_participants_:
            raise ValueError(
                f"participant_id must be in 0 .. {self.n_participants_ - 1}; got "
                f"{participant_id}."
            )
        m = map_of(self.aligner_, participant_id)
        m.feature_names = getattr(self, "feature_names_in_", None)
        if self.upload_digests_ is not None:
            m.upload_digest = self.upload_digests_[participant_id]
            m.anchor_upload_digest = (self.headers_[participant_id].get("digests") or {}).get(
                "anchor_upload")
        return m

    def export(self, out_dir):
        """Write ``map_<i>.npz`` for every participant and ``model.npz`` into ``out_dir``.

        All files of one export carry the same ``run_id`` (a SHA-256 over every map and the
        model), so a participant's predict refuses a map and a model of different runs; each
        map also records the digest of the upload it was fitted on. Maps and model are
        owner-only (``0o600``): a map plus what one colluding participant discloses reveals
        that participant's rotation.

        Returns
        -------
        paths : list of str
            The written files.
        """
        maps = [self.alignment_map(i) for i in range(self.n_participants_)]
        run_id = run_fingerprint(maps, model_arrays(self.model_)[0])
        ensure_folder(out_dir, "the export folder", mode=0o700, error=UploadError)
        paths = []
        for m in maps:
            m.run_id = run_id
            paths.append(m.save(os.path.join(out_dir, f"map_{m.participant_id}.npz")))
        paths.append(save_model(os.path.join(out_dir, "model.npz"), self.model_, run_id=run_id,
                                feature_names=getattr(self, "feature_names_in_", None)))
        return paths

