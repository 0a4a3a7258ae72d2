"""
==============================================================
The calibrated frontier: how much noise does each target cost?
==============================================================

Three hospitals obfuscate their digits with independent secret rotations (I-GDP) and upload a
noisy copy of a shared anchor; the analyst aligns the uploads by noisy-anchor GOPP alignment
and trains a classifier. The analyst colludes with participant 0 and attacks participant 1 by
orthogonal Procrustes on the anchor. For several acceptable attack errors,
:func:`~skdc.audit.calibrate_noise` finds the smallest anchor noise ``v`` at which a
*fresh* deployment (new secrets, anchor and noise, the same rows and partition) meets the
target with 90% probability, and what it costs in balanced accuracy. The calibrated points,
drawn over a sweep of fresh deployments, are the frontier a data team chooses from.

Set ``SKDC_EXAMPLE_SIZE=small`` to run it smaller.
"""

# %%
# Data, partition and deployment
# ------------------------------
# The partition (who holds which row) is fixed, as it is in reality; everything a deployment
# draws (secrets, anchor, noise) is redrawn on every simulated deployment.
import os
import tempfile
from functools import partial

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skdc.alignment import GOPPAligner
from skdc.audit import calibrate_noise
from skdc.datasets import partition
from skdc.experiments import plot_frontier, privacy_utility_sweep
from skdc.mechanisms import IGDP
from skdc.metrics import make_attack_scorer

small = os.environ.get("SKDC_EXAMPLE_SIZE") == "small"
n_rows, targets = (300, (0.15, 0.3)) if small else (500, (0.1, 0.2, 0.3))
X, y = load_digits(return_X_y=True)
X, y = X[:n_rows] / 16.0, y[:n_rows]
ids = partition(y, 3, random_state=0)
X_tr, X_te, y_tr, y_te, p_tr, p_te = train_test_split(X, y, ids, test_size=0.3, stratify=y,
                                                      random_state=0)
pipe = Pipeline([("gdp", IGDP(n_participants=3, random_state=0)),
                 ("align", GOPPAligner()), ("clf", RidgeClassifier())])

# %%
# One calibration per target
# --------------------------
# A noise value passes when, of its (at most 9) simulated deployments, none leaves the attack
# below the target: a fresh deployment then fails with probability at most 1/10, whatever the
# distribution of the errors. The calibrations share a checkpoint: draw ``k`` at a value is
# the same deployment whatever the target, so a value evaluated for one target is read back
# for the next one.
checkpoint = os.path.join(tempfile.mkdtemp(), "draws.jsonl")
calibrations = [
    calibrate_noise(pipe, X_tr, y_tr, test_data=(X_te, y_te, p_te), participant=p_tr,
                    param="align__v", attack="procrustes", min_error=t, confidence=0.9,
                    bounds=(0.0, 0.15), xtol=0.005, random_state=0, checkpoint=checkpoint,
                    progress=False)
    for t in targets
]
for cal in calibrations:
    print(f"target {cal.min_error['procrustes']:.2f}: v = {cal.value:.4f} "
          f"(bracket {cal.bracket[0]:.4f}..{cal.bracket[1]:.4f}), balanced accuracy "
          f"{cal.utility:.3f} [{cal.utility_interval[0]:.3f}, {cal.utility_interval[1]:.3f}],"
          f" {cal.n_draws_run} deployments, {cal.n_draws_resumed} read back")

# %%
# The frontier with the calibrated points
# ---------------------------------------
# Left, grey points and band: a sweep of fresh deployments on the same partition (utility
# against the attack's error, one point per deployment). Stars: the calibrated noise of each
# target, at the attack error a fresh deployment exceeds with 90% probability, with the
# utility interval. Right: the price list, the calibrated noise of each target with its
# bracket, and the accuracy it leaves.
attack = {"procrustes": partial(make_attack_scorer("procrustes"), participant=p_te)}
sweep = privacy_utility_sweep(pipe, X_tr, y_tr, test_data=(X_te, y_te), param="align__v",
                              values=np.linspace(0.005, 0.15, 8 if small else 16), n_draws=2,
                              attacks=attack, seed_param="deployment",
                              fit_params={"participant": p_tr}, random_state=1,
                              progress=False)
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
plot_frontier(sweep, "procrustes", "balanced_accuracy", hue=None, n_boot=500, ax=ax0)
for k, cal in enumerate(calibrations):
    lo, hi = cal.utility_interval
    color = f"C{k + 1}"
    ax0.errorbar([cal.attack_error_interval[0]], [cal.utility],
                 yerr=[[cal.utility - lo], [hi - cal.utility]], fmt="*", markersize=12,
                 color=color, markeredgecolor="k",
                 label=f"target {cal.min_error['procrustes']:.2f}: v = {cal.value:.3f}")
    ax0.axvline(cal.min_error["procrustes"], color=color, linestyle=":", linewidth=1)
    ax1.errorbar([cal.min_error["procrustes"]], [cal.value],
                 yerr=[[cal.value - cal.bracket[0]], [0.0]], fmt="o", color=color,
                 capsize=3)
    ax1.annotate(f"accuracy {cal.utility:.3f}", (cal.min_error["procrustes"], cal.value),
                 textcoords="offset points", xytext=(8, -4), fontsize="small")
ax0.set_xlabel("Procrustes attack error (star: exceeded with 90% probability)")
ax0.set_ylabel("balanced accuracy")
ax0.legend(fontsize="small", frameon=False)
ax1.set_xlabel("target Procrustes error")
ax1.set_ylabel("calibrated anchor noise v (bar: its bracket)")
ax1.set_xlim(0, 1.25 * max(targets))
ax1.set_ylim(0, None)
plt.show()

# %%
# How the last calibration got there
# ----------------------------------
# Every simulated deployment of the last calibration: its attack error relative to the
# target (1 is the target) against the noise, in green where it meets and in red where it
# fails; above each evaluated value, the failing and run deployments. A value far below the
# answer fails on its first deployment and is not drawn further.
fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
calibrations[-1].plot(ax=ax)
plt.show()
