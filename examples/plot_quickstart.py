"""
==========================================
Quickstart: obfuscate, align, learn, sweep
==========================================

Ten participants hold the rows of scikit-learn's digits. Each obfuscates its rows with its own
secret rotation and shift (I-GDP) and uploads them with the same map applied to a shared
anchor; the analyst aligns the uploads through noisy anchor uploads (GOPP) and trains a
logistic regression. A sweep over the anchor noise ``v`` then shows what the noise costs in
accuracy, one fitted pipeline per draw.
"""

# %%
# One pipeline
# ------------
# A mechanism (participant side), an aligner (analyst side) and any scikit-learn model compose
# in a :class:`~sklearn.pipeline.Pipeline`.
import os

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from skdc import IGDP, GOPPAligner
from skdc.alignment import v_phase_transition
from skdc.experiments import plot_noise_curves, privacy_utility_sweep

# Under the test suite (``SKDC_EXAMPLE_SIZE=small``) the example runs at a smaller size.
SMALL = os.environ.get("SKDC_EXAMPLE_SIZE") == "small"
X, y = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X) / np.sqrt(X.shape[1])
X_train, X_test, y_train, y_test = train_test_split(X, y, stratify=y, random_state=0)

pipe = Pipeline([("gdp", IGDP(n_participants=10, random_state=0)),
                 ("align", GOPPAligner(v=0.05)),
                 ("clf", LogisticRegression(max_iter=2000))])
pipe.fit(X_train, y_train)
print(f"test accuracy at v=0.05: {pipe.score(X_test, y_test):.3f}")

# %%
# What travels between the steps
# ------------------------------
# The mechanism returns :class:`skdc.Uploads`: the stacked uploads with each row's participant
# and each participant's anchor upload. The aligner returns a plain array in one frame.
uploads = pipe.named_steps["gdp"].transform(X_train)
print(type(uploads).__name__, uploads.shape, "participants:", uploads.n_participants,
      "anchor upload of participant 0:", uploads.anchors[0].shape)
align = pipe.named_steps["align"]
print(f"GOPP: {align.n_iter_} iterations, converged={align.converged_}, "
      f"v_PT={align.v_phase_transition_:.3f}")

# %%
# A sweep over the anchor noise
# -----------------------------
# :func:`~skdc.experiments.privacy_utility_sweep` clones the pipeline per draw, sets ``v`` and
# a fresh noise seed, fits, and scores on held-out rows. Pass ``attacks=`` (attack scorers,
# ``scorer(fitted_pipeline, X, y) -> float``) to add leakage columns; here we look at utility
# and the solver. ``n_jobs`` runs draws in parallel through joblib.
v_pt = v_phase_transition(10, X.shape[1], 4 * X.shape[1])
pipe.set_params(align__max_iter=200)
results = privacy_utility_sweep(pipe, X, y, param="align__v",
                                values=np.linspace(0.01, 2.5 * v_pt, 4 if SMALL else 10),
                                random_state=0)
print(results[["value", "balanced_accuracy", "n_iter", "converged", "seconds"]].round(3))

# %%
# The figure: points are draws, the line is the paper's cubic regression spline, the band its
# 95% percentile-bootstrap band (kept inside [0, 1], the range of a balanced accuracy); the
# dashed line is chance and the dotted one the phase-transition level ``v_PT``.
ax = plot_noise_curves(results, "balanced_accuracy", x_range=(0, 2.5 * v_pt), n_boot=500,
                       references={"chance": 0.1}, x_references={"v_PT": v_pt},
                       title="I-GDP + GOPP on digits")
plt.show()
