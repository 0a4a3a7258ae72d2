"""
===========================================
GOPP diagnostics and the phase transition
===========================================

Under anchor noise ``v`` the analyst estimates each participant's rotation by the generalized
orthogonal Procrustes problem, solved by a generalized power method. Below the empirical
phase-transition level ``v_PT`` (eq. (51) of the noisy-anchor paper) the solver converges in a
few iterations and the alignment error grows linearly in ``v``; above it, iterations climb to
the cap and the error grows faster. This example reads the solver's diagnostics off the fitted
:class:`~skdc.alignment.GOPPAligner` on synthetic data where the true rotations are known.
"""

# %%
# A synthetic deployment
# ----------------------
# ``p`` participants, width ``d``, anchor with ``r = 4 d`` rows. The true relative rotation
# between participants ``i`` and 0 is ``O_i^T O_0``; the analyst's estimate is
# ``Rhat_i Rhat_0^T``.
import warnings

import matplotlib.pyplot as plt
import numpy as np

from skdc import IGDP, GOPPAligner
from skdc.alignment import v_phase_transition

p, d = 8, 12
r = 4 * d
rng = np.random.RandomState(0)
X = rng.randn(400, d)
mech = IGDP(n_participants=p, random_state=0)
uploads = mech.fit_transform(X)
O = mech.rotations_
v_pt = v_phase_transition(p, d, r)
print(f"p={p}, d={d}, r={r}: v_PT = {v_pt:.4f}")


def alignment_error(aligner):
    """Mean Frobenius error of the relative rotations, over participants 1..p-1."""
    R = aligner.rotations_
    return np.mean([np.linalg.norm(R[i] @ R[0].T - O[i].T @ O[0]) for i in range(1, p)])


# %%
# Sweep the anchor noise across the transition
# --------------------------------------------
# Three noise realizations per level: the participants redraw their anchor noise (the
# mechanism's ``noise_random_state``) while their secrets stay fixed. The plain power method
# (``acceleration=None``, the paper's iteration) shows the iteration count most clearly.
levels = v_pt * np.array([0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0])
rows = []
for v in levels:
    for seed in range(3):
        draw = mech.set_params(noise_random_state=seed).fit_transform(X)
        aligner = GOPPAligner(v=v, acceleration=None, max_iter=300)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # non-convergence is what we measure
            aligner.fit(draw)
        rows.append((v, aligner.n_iter_, aligner.converged_, alignment_error(aligner),
                     aligner.fixed_point_residual_, aligner.relative_eigengap_))
v_, n_iter, conv, err, fpr, gap = map(np.array, zip(*rows))
for level in levels:
    at = v_ == level
    print(f"v/v_PT={level / v_pt:4.2f}  iterations {n_iter[at].mean():6.1f}  "
          f"converged {conv[at].mean():4.0%}  error {err[at].mean():.3f}  "
          f"relative eigengap {gap[at].mean():.3f}")

# %%
# The figure
# ----------
# Left: iterations (converged runs filled, capped runs hollow). Middle: the alignment error,
# linear in ``v`` below the transition. Right: the objective ``tr(R^T G R)`` along the
# iterations for one run per level, normalised by its final value.
fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), layout="constrained")
x = v_ / v_pt
axes[0].scatter(x[conv], n_iter[conv], color="C0", label="converged")
axes[0].scatter(x[~conv], n_iter[~conv], facecolors="none", edgecolors="C3", label="capped")
axes[0].set_ylabel("power-method iterations")
axes[0].legend(frameon=False)
axes[1].plot(x, err, "o", color="C0", alpha=0.7)
slope = np.polyfit(v_[x <= 0.75], err[x <= 0.75], 1)
axes[1].plot(x, np.polyval(slope, v_), "--", color="0.4", label="linear fit below 0.75 v_PT")
axes[1].set_ylabel("relative-rotation error")
axes[1].legend(frameon=False)
for ax in axes[:2]:
    ax.axvline(1.0, color="0.5", linewidth=1)
    ax.set_xlabel("v / v_PT")
for level, color in zip(levels[::2], plt.cm.viridis(np.linspace(0, 1, len(levels[::2])))):
    aligner = GOPPAligner(v=level, acceleration=None, max_iter=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hist = np.asarray(aligner.fit(uploads).objective_history_)
    axes[2].plot(hist / hist[-1], color=color, label=f"v = {level / v_pt:.2f} v_PT")
axes[2].set_xscale("log")
axes[2].set_xlabel("iteration")
axes[2].set_ylabel("objective / final objective")
axes[2].legend(fontsize="small", frameon=False)
plt.show()
