"""skdc: scikit-learn-compatible privacy-preserving data collaboration.

Participants obfuscate their rows locally and upload them once, with the same obfuscation of a
shared synthetic anchor; the analyst aligns the uploads through the anchor and trains any model;
attacks and bounds measure what a colluding analyst could reconstruct.

Subpackages
-----------
mechanisms
    Participant side: GDP, C-GDP, I-GDP, per-participant UMAP / kernel PCA / PCA, Gaussian
    mixing sketches.
anchors
    Anchor makers: orthonormal, uniform, SMOTE.
alignment
    Analyst side: reference Procrustes, noisy-anchor GOPP, MPP / GEP / ODC, LTI and KTI.
attacks
    Reconstruction attacks under analyst-participant collusion.
metrics
    Reconstruction errors, linkage, and attack / bound scorers (higher = more private).
privacy
    Leakage accountants, the reconstruction lower bound, DP-SGD, RDP of Gaussian sketches.
linear_model
    Private regression on Gaussian sketches (Linear Mixing, AdaSSP, Sheffet).
nn
    skorch CNNs: the utility model and the linkage auditor (extra ``nn``).
datasets
    Offline data, loaders for local MNIST / CelebA files, the papers' partitions.
audit
    Whether a collaboration is safe: noise calibration, the audit and its report, the
    comparison of options with the Central / Local baselines.
experiments
    Privacy-utility sweeps, spline bands, plots, the papers' reproductions.
protocol
    Deployment: upload files, participant and analyst roles, command line.
utils
    Linear-algebra primitives.

Every name and subpackage is imported on first use (PEP 562), so ``import skdc`` loads neither
scikit-learn nor SciPy, and the command line loads them only for the command that needs them.
"""

from .utils._lazy import lazy_exports as _lazy_exports

__version__ = "0.1.0"

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = _lazy_exports(__name__, __file__)
