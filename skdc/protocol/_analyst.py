"""The analyst of a deployment: it aligns the received uploads, trains and exports.

The :class:`Analyst` loads the participants' upload files (:func:`~skdc.protocol.load_uploads`),
refuses what it cannot train on (undue anchor noise, rank-deficient or near-duplicate anchor
uploads, an anchor upload far from the others' consensus: :mod:`skdc.protocol._screen`), fits
the aligner and the model, and exports each participant's alignment map
(:mod:`skdc.protocol._map`) and the model (:mod:`skdc.protocol._model`) as files of one run.
"""

# Licence: BSD 3 clause

import os
import warnings
from numbers import Real

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from .. import Uploads
from ..alignment import GOPPAligner, ReferenceAligner
from ..utils._deprecation import renamed_argument, renamed_attribute
from ..utils._folders import ensure_folder
from ._container import UploadError, check_values, max_magnitude
from ._map import map_of, run_fingerprint
from ._model import model_arrays, save_model
from ._screen import FALSE_ALARM, rank_deficient, screen_anchor_uploads
from ._upload_set import UploadSet, load_uploads

__all__ = ["Analyst"]


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
    """``Analyst(v_range=...)`` as ``(low, high)`` floats, or ``None``."""
    if value is None:
        return None
    ok = isinstance(value, (tuple, list)) and len(value) == 2 and all(
        isinstance(x, Real) and not isinstance(x, bool) for x in value)
    if ok:
        low, high = float(value[0]), float(value[1])
        ok = np.isfinite(low) and 0 <= low <= high and not np.isnan(high)
    if not ok:
        raise ValueError(
            "v_range must be two numbers (LOW, HIGH) with 0 <= LOW <= HIGH (HIGH "
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
                f"{low:g} .. {high:g} (v_range); {why}. Ask "
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
        "noise you accept with v_range=(LOW, HIGH)."
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
    v_range : tuple of (float, float) or None, default=None
        The anchor-noise scale ``v`` (Def 4.1 of the GDP paper) an upload may declare in its
        header's ``anchor_noise`` field, as ``(low, high)`` (``high`` may be ``inf``).
        ``None``: every upload that declares anchor noise must declare the same value, the
        collaboration's agreed one. The screen holds each anchor upload to the noise it
        declares, so a participant declaring more noise than agreed would pass a poisoned
        (row-permuted, foreign) anchor upload: an upload declaring another value, or one
        outside the range, is refused with :class:`~skdc.protocol.UploadError` before any
        alignment.
    anchor_noise_range : tuple of (float, float) or None, default=None
        Deprecated spelling of ``v_range`` (the attribute ``anchor_noise_range`` too).

        .. deprecated:: 0.2
           ``anchor_noise_range`` is renamed ``v_range`` and will be removed in 0.3.

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
    >>> paths = save_simulated_uploads(tmp, Y, v=0.0, labels=y)
    >>> analyst = Analyst(aligner=ReferenceAligner()).fit(paths)
    >>> sorted(os.path.basename(p) for p in analyst.export(tmp))
    ['map_0.npz', 'map_1.npz', 'map_2.npz', 'model.npz']

    Uploads declaring different anchor noise are refused unless the analyst names the range
    the collaboration agreed to:

    >>> Analyst(ReferenceAligner(), v_range=(0.0, 0.1)).fit(paths).n_participants_
    3
    """

    def __init__(self, aligner=None, model=None, *, outliers="refuse", v_range=None,
                 anchor_noise_range=None):
        self.aligner = aligner
        self.model = model
        self.outliers = outliers
        self.v_range = renamed_argument("anchor_noise_range", anchor_noise_range, "v_range",
                                        v_range)

    anchor_noise_range = renamed_attribute("anchor_noise_range", "v_range")

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
        noise_range = _check_noise_range(self.v_range)
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
