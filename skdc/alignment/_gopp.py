"""Noisy-anchor alignment by the generalized orthogonal Procrustes problem (GOPP) [1]_.

Each participant adds Gaussian noise of standard deviation ``v`` to its anchor upload before it
leaves home (Def 4.1 of [1]_); the analyst estimates one rotation per participant by the
centered GOPP, solved by a spectrally initialised generalized power method (Algorithm 4 and eq.
(32)), and maps participant ``i``'s rows by ``N_i(T) = (T - b_i) Rhat_i`` (eq. (33)-(35); no
reference translation, footnote 1). The anchor noise trades alignment accuracy, hence utility,
against how well a colluding analyst can estimate the target's secret.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
.. [2] Ling, "Solving orthogonal group synchronization via convex and low-rank optimization:
   tightness and landscape analysis", Mathematical Programming, 2023.
"""

# Licence: BSD 3 clause

import time
import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..utils._docstring import Substitution
from ..utils._references import gdp_paper_references
from ..utils._sklearn_compat import Interval, StrOptions, validate_params
from ._base import (
    BaseAligner,
    _aligner_attributes_doc,
    _stack_equal_width,
)
from ._gopp_solver import _restart_seed_constraint, _restarts_constraint, solve_gopp

__all__ = ["GOPPAligner", "ling_error_bound", "ling_sufficient_v", "v_phase_transition"]


def _ling_denominator(n_participants, n_features, n_anchors, log_term):
    p, d, r = n_participants, n_features, n_anchors
    return np.sqrt(p * d) + np.sqrt(r - 1) + log_term


def _ling_theorem_denominator(n_participants, n_features, n_anchors, gamma):
    """``sqrt(p d) + sqrt(r - 1) + sqrt(2 gamma p log p)`` of Theorem 4.6 of [1]_."""
    p = n_participants
    return _ling_denominator(p, n_features, n_anchors, np.sqrt(2 * gamma * p * np.log(p)))


# the problem sizes of Ling's bounds, and the probability exponent of Theorem 4.6 of [1]_
_ling_sizes_constraints = {
    "n_participants": [Interval(Integral, 2, None, closed="left")],
    "n_features": [Interval(Integral, 1, None, closed="left")],
    "n_anchors": [Interval(Integral, 2, None, closed="left")],
}
_ling_gamma_constraint = {"gamma": [Interval(Real, 2, None, closed="neither")]}

_ling_parameters_doc = """n_participants, n_features, n_anchors : int
        ``p``, ``d`` and ``r``.
    gamma : float, default=3.0
        Probability exponent, ``gamma > 2``.
"""


@validate_params(_ling_sizes_constraints, prefer_skip_nested_validation=True)
@Substitution(references=gdp_paper_references)
def v_phase_transition(n_participants, n_features, n_anchors):
    """Empirical phase-transition anchor-noise level ``v_PT``, eq. (51) of [1]_.

    Read more in the :ref:`User Guide <numbers>`.

    ``v_PT = 1.89 sqrt(p) / (sqrt(p d) + sqrt(r - 1) + 2 sqrt(p ln p))``. Below it the power
    method usually reaches a global solution in Ling's experiments [2]_; above it the success
    probability falls sharply. A reference, not a run-level certificate.

    Parameters
    ----------
    n_participants : int
        Number of participants ``p`` (at least 2).
    n_features : int
        Width ``d``.
    n_anchors : int
        Anchor rows ``r``.

    Returns
    -------
    v_pt : float
        The reference noise level.

    {references}
    .. [2] Ling, "Solving orthogonal group synchronization via convex and low-rank optimization:
       tightness and landscape analysis", Mathematical Programming, 2023.

    Examples
    --------
    >>> from skdc.alignment import v_phase_transition
    >>> round(v_phase_transition(10, 100, 400), 4)
    0.0977
    """
    p = n_participants
    return float(
        1.89
        * np.sqrt(p)
        / _ling_denominator(p, n_features, n_anchors, 2 * np.sqrt(p * np.log(p)))
    )


@validate_params(
    {**_ling_sizes_constraints, **_ling_gamma_constraint}, prefer_skip_nested_validation=True
)
@Substitution(parameters=_ling_parameters_doc, references=gdp_paper_references)
def ling_sufficient_v(n_participants, n_features, n_anchors, gamma=3.0):
    """Sufficient anchor-noise level of Theorem 4.6, eq. (49) of [1]_ (very conservative).

    Read more in the :ref:`User Guide <numbers>`.

    Parameters
    ----------
    {parameters}

    Returns
    -------
    v : float
        ``sqrt(p) / (14336 sqrt(d) (sqrt(p d) + sqrt(r - 1) + sqrt(2 gamma p log p)))``.

    {references}

    Examples
    --------
    >>> from skdc.alignment import ling_sufficient_v
    >>> f"{ling_sufficient_v(10, 100, 400, gamma=2 + 1e-12):.2e}"
    '3.60e-07'
    """
    p, d = n_participants, n_features
    return float(
        np.sqrt(p) / (14336 * np.sqrt(d) * _ling_theorem_denominator(p, d, n_anchors, gamma))
    )


@validate_params(
    {"v": [Interval(Real, 0, None, closed="left")], **_ling_sizes_constraints,
     **_ling_gamma_constraint},
    prefer_skip_nested_validation=True,
)
@Substitution(parameters=_ling_parameters_doc, references=gdp_paper_references)
def ling_error_bound(v, n_participants, n_features, n_anchors, gamma=3.0):
    """Rotational alignment-error bound of Theorem 4.6, eq. (50) of [1]_.

    Read more in the :ref:`User Guide <numbers>`.

    Valid only for ``v`` at most :func:`ling_sufficient_v`.

    Parameters
    ----------
    v : float
        Anchor noise level.
    {parameters}

    Returns
    -------
    bound : float
        ``6 / (1 - 1/1024) v sqrt(d) (sqrt(p d) + sqrt(r - 1) + sqrt(2 gamma p log p)) / sqrt(p)``.

    {references}

    Examples
    --------
    >>> from skdc.alignment import ling_error_bound, ling_sufficient_v
    >>> v = ling_sufficient_v(10, 100, 400)
    >>> round(ling_error_bound(v, 10, 100, 400), 6)
    0.000419
    """
    p, d = n_participants, n_features
    den = _ling_theorem_denominator(p, d, n_anchors, gamma)
    return float(6 / (1 - 1 / 1024) * v * np.sqrt(d) * den / np.sqrt(p))


# fitted attribute of GOPPAligner -> field of the solver's GOPPResult it copies
_RESULT_ATTRIBUTES = {
    "rotations_": "rotations",
    "template_": "template",
    "n_iter_": "n_iter",
    "converged_": "converged",
    "objective_history_": "objective_history",
    "step_history_": "step_history",
    "gopp_residual_": "gopp_residual",
    "relative_gopp_residual_": "relative_gopp_residual",
    "fixed_point_residual_": "fixed_point_residual",
    "eigengap_": "eigengap",
    "relative_eigengap_": "relative_eigengap",
    "multistart_objective_gap_": "multistart_objective_gap",
    "relative_multistart_objective_gap_": "relative_multistart_objective_gap",
    "anchor_condition_number_": "template_condition_number",
}


@Substitution(attributes=_aligner_attributes_doc, references=gdp_paper_references)
class GOPPAligner(BaseAligner):
    """Noisy-anchor alignment by the generalized orthogonal Procrustes problem [1]_.

    Read more in the :ref:`User Guide <protocols>`.

    At ``fit``, the analyst receives each participant's anchor upload with Gaussian noise of
    standard deviation ``v``, ``B_i + v W_i`` (Def 4.1 of [1]_), then solves the centered GOPP
    (eq. (28)) by the spectrally initialised generalized power method (eq. (32)). Participant
    ``i``'s rows are mapped by ``(T - b_i) Rhat_i`` (eq. (33)-(35)).

    The unit noise ``W_i`` is the participant's own: its mechanism draws it from the
    participant's noise stream and passes it in ``Uploads.unit_anchor_noise``. This aligner only
    scales it by ``v`` (so ``v`` is tuned like any hyperparameter, and a grid over ``v``
    scales the same draws), keeps only the noisy uploads and holds no seed: nothing it holds
    regenerates ``W_i`` or a clean ``B_i``. In a deployment each participant adds the noise
    before the upload leaves home, and the analyst fits with ``v=0``.

    Parameters
    ----------
    v : float, default=0.0
        Standard deviation of the anchor noise (Def 4.1 of [1]_), relative to an anchor with
        orthonormal centered columns: the anchor-noise scale, named ``v`` as in the paper here
        (and in grids, ``align__v``) and in the rest of the Python API
        (:class:`~skdc.protocol.Participant`), ``anchor_noise`` in the upload header and
        ``--anchor-noise`` on the command line. ``v=0`` recovers exact alignment (and takes
        the anchor uploads as they come, e.g. already noisy deployment uploads). ``v > 0``
        needs uploads that carry the participants' unit anchor noise draws
        (``Uploads.unit_anchor_noise``), as a mechanism's ``transform`` returns them.
    tol : float, default=1e-7
        Stop when successive iterates differ by at most ``tol`` in Frobenius norm.
    max_iter : int, default=500
        Largest number of power-method iterations; when reached, the last iterate is used
        and a :class:`~sklearn.exceptions.ConvergenceWarning` is raised.
    acceleration : {'anderson'} or None, default='anderson'
        Anderson acceleration of the power method (same fixed point, far fewer iterations
        near the phase transition); ``None`` runs the paper's plain iteration. When both
        converge they return the same rotations to ``tol``; when both reach ``max_iter``
        they stop at different iterates, so ``n_iter_`` and ``converged_`` differ. To
        reproduce the paper's convergence counts (which draws converge within 500
        iterations, Fig. 4b of [1]_), use ``None``.
    n_restarts : int, default=0
        Extra runs of the power method from random Haar rotations, a diagnostic of the
        spectral start reported by ``multistart_objective_gap_``; the fitted rotations stay
        those of the spectral start. At most 1000, each restart being a whole solve. See
        :func:`solve_gopp`.
    restart_seed : int, default=0
        Seed of the ``RandomState`` that draws the restarts' rotations: the same seed gives
        the same restarts, another seed other ones. Unused when ``n_restarts=0``.

    Attributes
    ----------
    rotations_ : ndarray of shape (n_participants, n_features, n_features)
        The estimated rotations ``Rhat_i``.
    anchor_means_ : ndarray of shape (n_participants, n_features)
        The noisy anchor-upload means ``b_i``.
    anchor_uploads_ : ndarray of shape (n_participants, n_anchors, n_features)
        The noisy anchor uploads ``B_i + v W_i``, as the analyst receives them.
    template_ : ndarray of shape (n_anchors, n_features)
        The GOPP template ``C = (1/p) sum_i Bbar_i Rhat_i`` (eq. (26)).
    n_iter_ : int
        Power-method iterations run.
    converged_ : bool
        Whether the stopping rule was met within ``max_iter``.
    objective_history_ : list of float
        ``tr(R^T G R)`` at the start and after each accepted iterate (non-decreasing).
    step_history_ : list of float
        ``||F(R) - R||_F`` per iteration.
    gopp_residual_ : float
        ``sum_i ||C - Bbar_i Rhat_i||_F^2``.
    relative_gopp_residual_ : float
        ``gopp_residual_ / sum_i ||Bbar_i||_F^2``.
    fixed_point_residual_ : float
        ``||Pi_p(G Rhat) - Rhat||_F / max(1, ||Rhat||_F)``, the residual of Fig. 9 of [1]_
        (which the paper does not define; this is the authors' code's).
    multistart_objective_gap_ : float
        ``max(0, max_k f_k - f_0)``, the gap the authors' code reports: by how much the
        objective ``tr(R^T G R)`` of the best of the ``n_restarts`` random restarts exceeds
        that of the spectral start, ``f_0`` (positive: a restart found a better stationary
        point, so the spectral start's was not the global maximum). NaN when
        ``n_restarts=0``.
    relative_multistart_objective_gap_ : float
        ``(max_k f_k - f_0) / f_0``, signed (negative when every restart ends below the
        spectral start). NaN when ``n_restarts=0``.
    anchor_condition_number_ : float
        Condition number ``s_max / s_min`` of the template ``template_``, the analyst's
        estimate of the centered anchor's condition number (``kappa`` in Theorem 4.6 of
        [1]_; 1 for the orthonormal anchor of eq. (22), raised by the anchor noise).
    eigengap_ : float
        ``lambda_d - lambda_{d+1}`` of ``G``.
    relative_eigengap_ : float
        ``eigengap_ / |lambda_d|``.
    v_phase_transition_ : float
        :func:`v_phase_transition` for the fitted sizes (NaN for one participant).
    elapsed_seconds_ : float
        Solver wall time.
    {attributes}

    See Also
    --------
    ReferenceAligner : Noiseless alignment onto a reference participant.
    solve_gopp : The solver used by this aligner.
    v_phase_transition : Reference noise level above which alignment degrades sharply.

    Notes
    -----
    Which defaults reproduce which of the paper's numbers: ``tol=1e-7`` and ``max_iter=500``
    are the stopping rule of the paper's experiments ("10^-7 stopping criterion",
    "500-iteration limit", Section 5 of [1]_). With ``acceleration=None`` they reproduce its
    convergence counts (MNIST, Fig. 4b: 50 of 200 anchor-noise draws meet the rule, all below
    ``v_PT``; CelebA, Fig. 9: 84 of 200; the participant-count study, Fig. 11); with the
    default ``acceleration='anderson'`` the rotations are the same when both converge, the
    counts are not. The authors' code runs its protocol functions with ``tol=1e-10`` and
    ``max_iter=200`` by default, and seeds the restarts of its multistart diagnostic with a
    restart seed: ``GOPPAligner(tol=1e-10, max_iter=200, acceleration=None, n_restarts=4,
    restart_seed=...)`` compares with its ``multistart_objective_gap_``.

    {references}

    Examples
    --------
    The gallery example :ref:`sphx_glr_auto_examples_plot_gopp_diagnostics.py` shows its
    diagnostics below and above the phase transition.

    >>> import numpy as np
    >>> from skdc.mechanisms import IGDP
    >>> from skdc.alignment import GOPPAligner
    >>> X = np.random.RandomState(0).rand(60, 4)
    >>> Y = IGDP(n_participants=3, random_state=0).fit_transform(X)
    >>> align = GOPPAligner(v=0.0).fit(Y)
    >>> align.converged_, align.transform(Y).shape
    (True, (60, 4))
    """

    _parameter_constraints: dict = {
        "v": [Interval(Real, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "acceleration": [StrOptions({"anderson"}), None],
        "n_restarts": _restarts_constraint,
        "restart_seed": _restart_seed_constraint,
    }

    def __init__(self, v=0.0, *, tol=1e-7, max_iter=500, acceleration="anderson",
                 n_restarts=0, restart_seed=0):
        self.v = v
        self.tol = tol
        self.max_iter = max_iter
        self.acceleration = acceleration
        self.n_restarts = n_restarts
        self.restart_seed = restart_seed

    def _receive(self, uploads):
        # B_i + v W_i with each participant's own unit noise W_i (Def 4.1 of [1]): the noisy
        # uploads are all this aligner keeps
        try:
            return uploads.noisy_anchors(self.v)
        except ValueError as exc:
            raise ValueError(f"GOPPAligner(v={self.v}): {exc}") from None

    def _fit_maps(self, anchors, uploads):
        B = _stack_equal_width(anchors, self)
        p, r, d = B.shape
        self.anchor_uploads_ = B
        self.anchor_means_ = B.mean(axis=1)  # tau*_i = b_i, eq. (25)
        Bbar = B - self.anchor_means_[:, None, :]
        start = time.perf_counter()
        res = solve_gopp(
            Bbar, tol=self.tol, max_iter=self.max_iter, acceleration=self.acceleration,
            n_restarts=self.n_restarts, restart_seed=self.restart_seed,
        )
        self.elapsed_seconds_ = time.perf_counter() - start
        for attribute, field in _RESULT_ATTRIBUTES.items():
            setattr(self, attribute, getattr(res, field))
        self.v_phase_transition_ = v_phase_transition(p, d, r) if p >= 2 else float("nan")
        if not res.converged:
            self._warn_not_converged(res, p, d, r)
        return d

    def _warn_not_converged(self, res, p, d, r):
        warnings.warn(
            f"GOPPAligner did not converge in max_iter={self.max_iter} iterations "
            f"(last step {res.step_history[-1]:.3g} > tol={self.tol}; fixed-point "
            f"residual {res.fixed_point_residual:.3g}; relative eigengap "
            f"{res.relative_eigengap:.3g}). The last iterate is used. The anchor noise "
            f"v={self.v} is {self.v / self.v_phase_transition_:.2f} x the phase-transition "
            f"level v_phase_transition({p}, {d}, {r}) = {self.v_phase_transition_:.4g}: "
            "above it alignment degrades sharply. Lower v, add anchor rows, or raise "
            "max_iter.",
            ConvergenceWarning,
        )

    def _map(self, Y, i):
        return (Y - self.anchor_means_[i]) @ self.rotations_[i]
