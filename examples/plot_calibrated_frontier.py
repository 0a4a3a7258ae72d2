"""
==============================================================
The calibrated frontier: how much noise does each target cost?
==============================================================

Three hospitals obfuscate their digits with independent secret rotations (I-GDP) and upload a
noisy copy of a shared anchor; the analyst aligns the uploads by noisy-anchor GOPP alignment
and trains a classifier. The analyst colludes with participant 0 and attacks participant 1 by
orthogonal Procrustes on the anchor. For several acceptable attack errors,
:func:`~skdc.experiments.calibrate_noise` finds the smallest anchor noise ``v`` whose error a
*fresh* deployment meets with 90% probability, and what it costs in balanced accuracy. The
calibrated points, drawn over a plain sweep, are the frontier a data team chooses from.

Set ``SKDC_EXAMPLE_SIZE=small`` to run it smaller.
"""

# %%
# Data and deployment
# -------------------
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skdc.alignment import GOPPAligner
from skdc.experiments import calibrate_noise, plot_frontier, privacy_utility_sweep
from skdc.mechanisms import IGDP

small = os.environ.get("SKDC_EXAMPLE_SIZE") == "small"
n_rows, n_draws, targets = (300, 4, (0.2, 0.4)) if small else (500, 6, (0.15, 0.3, 0.45))
X, y = load_digits(return_X_y=True)
X_tr, X_te, y_tr, y_te = train_test_split(X[:n_rows] / 16.0, y[:n_rows], test_size=0.3,
                                          stratify=y[:n_rows], random_state=0)
pipe = Pipeline([("gdp", IGDP(n_participants=3, random_state=0)),
                 ("align", GOPPAligner()), ("clf", RidgeClassifier())])

# %%
# One calibration per target
# --------------------------
# The calibrations share a checkpoint: draw ``k`` at a value is the same draw whatever the
# target, so a value evaluated for one target is read back for the next one.
checkpoint = os.path.join(tempfile.mkdtemp(), "draws.jsonl")
calibrations = [
    calibrate_noise(pipe, X_tr, y_tr, test_data=(X_te, y_te), param="align__v",
                    attack="procrustes", min_error=t, confidence=0.9, n_draws=n_draws,
                    bounds=(0.0, 0.12), xtol=0.005, random_state=0, checkpoint=checkpoint,
                    progress=False)
    for t in targets
]
for cal in calibrations:
    print(f"target {cal.min_error['procrustes']:.2f}: v = {cal.value:.4f} "
          f"(bracket {cal.bracket[0]:.4f}..{cal.bracket[1]:.4f}), balanced accuracy "
          f"{cal.utility:.3f} [{cal.utility_interval[0]:.3f}, {cal.utility_interval[1]:.3f}],"
          f" {cal.n_draws_run} draws")

# %%
# The frontier with the calibrated points
# ---------------------------------------
# Grey points and band: a plain sweep (utility against the attack's error, one point per
# draw). Stars: the calibrated noise of each target, at the target error it guarantees, with
# the utility interval. The gap between a star and the target line is the price of the 90%
# guarantee over the mean.
sweep = privacy_utility_sweep(pipe, X_tr, y_tr, test_data=(X_te, y_te), param="align__v",
                              values=np.linspace(0.005, 0.12, 8 if small else 16), n_draws=2,
                              attacks=["procrustes"], random_state=1, progress=False)
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
plot_frontier(sweep, "procrustes", "balanced_accuracy", hue=None, n_boot=500, ax=ax0)
for k, cal in enumerate(calibrations):
    lo, hi = cal.utility_interval
    ax0.errorbar([cal.attack_error_interval[0]], [cal.utility],
                 yerr=[[cal.utility - lo], [hi - cal.utility]], fmt="*", markersize=11,
                 color=f"C{k + 1}", label=f"target {cal.min_error['procrustes']:.2f}: "
                                          f"v = {cal.value:.3f}")
    ax0.axvline(cal.min_error["procrustes"], color=f"C{k + 1}", linestyle=":", linewidth=1)
ax0.set_xlabel("Procrustes attack error (star: 90% lower bound)")
ax0.set_ylabel("balanced accuracy")
ax0.legend(fontsize="small", frameon=False)

# %%
# How the last calibration got there: its draws, its lower bounds and its bracket.
calibrations[-1].plot(ax=ax1)
plt.show()
