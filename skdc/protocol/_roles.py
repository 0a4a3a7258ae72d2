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
``noise_random_state=t``; participant ``i`` keeps **participant i's secret of that mechanism**
(the others drawn alongside are discarded) and uploads ``B_i + v W_i``, where ``W_i`` is that
mechanism's unit anchor noise for participant ``i`` (Def 4.1 of [1]_). The simulated
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
import secrets
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
from ..utils._references import gdp_paper_references
from ._container import Container, UploadError, is_int, write_container
from ._files import (
    AlignmentMap,
    check_anchor,
    check_same_run,
    map_of,
    model_arrays,
    read_model,
    run_fingerprint,
    save_model,
)
from ._format import UploadSet, anchor_fingerprint, load_uploads, save_upload

__all__ = ["Analyst", "Participant"]

_SECRET = "skdc-secret"
_SEED_MAX = np.iinfo(np.int32).max
_MECHANISMS = {"IGDP": IGDP, "CGDP": CGDP}
_SECRET_PARAMS = ("n_participants", "noise", "translation_scale", "n_anchors")
#: Largest collaboration a participant sets up: its secret is participant ``i``'s of a
#: mechanism that draws every slot's secret from the seed, so set-up costs
#: ``n_participants`` rotations (a hostile secret file must not buy minutes of work).
_MAX_PARTICIPANTS = 10_000


def _fresh_seed():
    return secrets.randbelow(_SEED_MAX)


def _check_seed(value, name):
    if value is None:
        return _fresh_seed()
    if isinstance(value, Integral) and not isinstance(value, bool) and 0 <= value < 2**32:
        return int(value)
    raise TypeError(
        f"{name} must be an int in [0, 2**32) or None (drawn from the operating system); got "
        f"{type(value).__name__}. A deployment stores the seed in the secret file, so it must "
        "be a plain int."
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
        An unfitted GDP mechanism with ``n_participants`` covering ``participant_id`` (at
        most 10 000: setting a participant up draws every slot's secret from the seed). Its
        ``random_state`` (an int, or ``None`` for a fresh seed from the operating system) seeds
        this participant's secret, and its ``noise_random_state`` (an int, or ``None`` to
        derive it from the secret seed, as the mechanism does) this participant's noise stream:
        the unit anchor noise ``W_i`` and the private-data noise. Its ``anchor`` parameter is
        replaced by the shared anchor passed to :meth:`upload`.
    anchor_noise : float, default=0.0
        Standard deviation ``v`` of the noise added to the anchor upload before it leaves home:
        the upload carries ``B_i + v W_i`` (Def 4.1 of [1]_). ``0`` lets a colluding analyst
        recover the secret exactly (Prop 3.1 of [1]_) and warns.

    Attributes
    ----------
    mechanism_ : IGDP or CGDP
        The fitted mechanism (only participant ``participant_id``'s secret is used).
    seed_ : int
        The mechanism seed used (``random_state``).
    noise_seed_ : int or None
        The noise seed used (``noise_random_state``; ``None``: derived from ``seed_``).
    anchor_ : ndarray of shape (n_anchors, n_features) or None
        The shared raw anchor.
    n_features_in_ : int
        Width of the participant's rows.

    See Also
    --------
    Analyst : The other side.

    Notes
    -----
    The secret file written by :meth:`save_secret` (owner-only permissions, ``0o600``) holds the
    two seeds, the mechanism's parameters, the raw anchor and this participant's rotation and
    translation; :meth:`load_secret` re-derives the mechanism from the seed and checks it
    against the stored secret.

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
                f"n_participants={p} is above the supported {_MAX_PARTICIPANTS} (setting up a "
                "participant draws every slot's secret). Give the collaboration's real size."
            )
        v = self.anchor_noise
        if not isinstance(v, Real) or isinstance(v, bool) or not np.isfinite(v) or v < 0:
            raise ValueError(f"anchor_noise must be a finite float >= 0; got {v!r}.")

    def _fit_mechanism(self, n_features, anchor):
        # Participant i keeps participant i's secret and noise of the mechanism with these
        # seeds: the mechanism draws every participant's secret and unit anchor noise from the
        # seeds alone (GDP secrets do not depend on the rows), so it is fitted on one
        # placeholder row per participant slot.
        mech = clone(self.mechanism).set_params(
            random_state=self.seed_, noise_random_state=self.noise_seed_, anchor=anchor
        )
        p = mech.n_participants
        return mech.fit(np.zeros((p, n_features)), participant=np.arange(p))

    def _own_rows(self, X):
        X = _as_rows(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"Participant {self.participant_id} was set up for rows of "
                f"{self.n_features_in_} features; got {X.shape[1]}."
            )
        return X

    def upload(self, X, y=None, anchor=None):
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

        Returns
        -------
        uploads : Uploads of shape (n_samples, n_components)
            A one-participant :class:`~skdc.Uploads` (local id 0) whose single anchor upload
            already carries the anchor noise. Write it with :meth:`save_upload`.
        """
        self._check_params()
        X = _as_rows(X)
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
        self.seed_ = _check_seed(self.mechanism.random_state, "mechanism.random_state")
        self.noise_seed_ = _check_noise_seed(self.mechanism.noise_random_state,
                                             "mechanism.noise_random_state")
        self.n_features_in_ = X.shape[1]
        self.anchor_ = anchor
        self.mechanism_ = self._fit_mechanism(X.shape[1], anchor)
        self.labels_ = y
        return self._upload_rows(X)

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
            anchors = [Y.noisy_anchors(self.anchor_noise)[i]]
        return Uploads(np.asarray(Y), np.zeros(X.shape[0], dtype=np.intp), anchors=anchors,
                       anchor_y=Y.anchor_y)

    def save_upload(self, path, uploads):
        """Write the upload returned by :meth:`upload` (with its labels) to ``path``."""
        return save_upload(
            path, uploads, self.participant_id, labels=self.labels_,
            mechanism=self.mechanism_, anchor_noise=self.anchor_noise,
            anchor_id=None if self.anchor_ is None else anchor_fingerprint(self.anchor_),
        )

    def save_secret(self, path):
        """Write this participant's secret file with owner-only permissions (``0o600``)."""
        i = self.participant_id
        mech = self.mechanism_
        params = {k: mech.get_params()[k] for k in _SECRET_PARAMS}
        header = {
            "participant_id": int(i), "mechanism": type(mech).__name__, "params": params,
            "seed": self.seed_, "anchor_noise": float(self.anchor_noise),
            "noise_seed": self.noise_seed_,
            "n_features_in": int(self.n_features_in_),
        }
        arrays = {"rotation": mech.rotations_[i], "translation": mech.translations_[i]}
        if self.anchor_ is not None:
            arrays["anchor"] = self.anchor_
        return write_container(path, _SECRET, header, arrays, mode=0o600)

    @classmethod
    def load_secret(cls, path):
        """Rebuild a participant from its secret file, checking the re-derived secret.

        The header is checked field by field against the stored arrays (``participant_id`` in
        ``0 .. n_participants - 1``, ``n_participants`` at most 10 000, ``n_features_in`` a
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
            self.n_features_in_ = int(h["n_features_in"])
            self.anchor_ = arrays.get("anchor")
            self.mechanism_ = self._fit_mechanism(self.n_features_in_, self.anchor_)
        except (KeyError, TypeError, ValueError) as exc:
            raise UploadError(f"{c.path}: invalid secret file ({exc}).") from None
        i = self.participant_id
        if not (np.array_equal(self.mechanism_.rotations_[i], arrays["rotation"])
                and np.array_equal(self.mechanism_.translations_[i], arrays["translation"])):
            raise UploadError(
                f"{c.path}: the secret re-derived from the seed differs from the stored one "
                "(written by a different skdc or numpy version?). Predict with the version "
                "that wrote the upload."
            )
        self.labels_ = None
        return self

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
        if not isinstance(alignment_map, AlignmentMap):
            alignment_map = AlignmentMap.load(alignment_map)
        if alignment_map.participant_id != self.participant_id:
            raise ValueError(
                f"this alignment map is participant {alignment_map.participant_id}'s; this is "
                f"participant {self.participant_id}. Use the map file with your id."
            )
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
        if not isinstance(alignment_map, AlignmentMap):
            map_path, alignment_map = alignment_map, AlignmentMap.load(alignment_map)
        else:
            map_path = "the alignment map"
        if isinstance(model, (str, os.PathLike)):
            model_path = os.fspath(model)
            model, run_id = read_model(model)
            check_same_run(alignment_map, map_path, run_id, model_path)
        return model.predict(self.transform(X, alignment_map))


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
    d = c.int_field("n_features_in", 1)
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


def _as_upload_set(uploads, y):
    """What :meth:`Analyst.fit` was given, as ``(uploads, y, headers)``."""
    if isinstance(uploads, Uploads):
        return UploadSet(uploads, None if y is None else np.asarray(y),
                         [{} for _ in range(uploads.n_participants)])
    if isinstance(uploads, UploadSet):
        return uploads
    return load_uploads(uploads)


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

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.alignment import ReferenceAligner
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.protocol import Analyst, save_upload
    >>> rng = np.random.RandomState(0)
    >>> X, y = rng.rand(60, 3), rng.randint(2, size=60)
    >>> ids = np.arange(60) % 3
    >>> Y = IGDP(n_participants=3, random_state=0).fit_transform(X, participant=ids)
    >>> tmp = tempfile.mkdtemp()
    >>> paths = [save_upload(os.path.join(tmp, f"u{i}.npz"), Y, i, labels=y) for i in range(3)]
    >>> analyst = Analyst(aligner=ReferenceAligner()).fit(paths)
    >>> sorted(os.path.basename(p) for p in analyst.export(tmp))
    ['map_0.npz', 'map_1.npz', 'map_2.npz', 'model.npz']
    """

    def __init__(self, aligner=None, model=None):
        self.aligner = aligner
        self.model = model

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
        Y, y, headers = _as_upload_set(uploads, y)
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
        self.aligner_ = None if aligner is None else clone(aligner).fit(Y)
        Z = np.asarray(Y) if aligner is None else self.aligner_.transform(Y)
        model = LogisticRegression() if self.model is None else self.model
        self.model_ = clone(model).fit(Z, y)
        return self

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
        return map_of(self.aligner_, participant_id)

    def export(self, out_dir):
        """Write ``map_<i>.npz`` for every participant and ``model.npz`` into ``out_dir``.

        All files of one export carry the same ``run_id`` (a SHA-256 over every map and the
        model), so a participant's predict refuses a map and a model of different runs.

        Returns
        -------
        paths : list of str
            The written files.
        """
        maps = [self.alignment_map(i) for i in range(self.n_participants_)]
        run_id = run_fingerprint(maps, model_arrays(self.model_)[0])
        os.makedirs(out_dir, exist_ok=True)
        paths = []
        for m in maps:
            m.run_id = run_id
            paths.append(m.save(os.path.join(out_dir, f"map_{m.participant_id}.npz")))
        paths.append(save_model(os.path.join(out_dir, "model.npz"), self.model_, run_id=run_id))
        return paths

