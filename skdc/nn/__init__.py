"""Deep models of the papers as scikit-learn classifiers (skorch), and batched training.

``RepresentationCNN`` is the utility CNN of the GDP paper's Table 2 for representations of any
width; ``LinkageAuditor`` is its Table 3 auditor, whose embeddings score linkage;
``fit_batched`` trains one utility CNN per noise draw of a sweep, all together;
``make_dpsgd_net`` gives any skorch net (these included) Poisson-subsampled DP-SGD, accounted by
:class:`skdc.privacy.DPSGDLeakageAccountant`. Importing this subpackage loads nothing; its first
name used imports torch and skorch (``pip install skdc[nn]``; DP-SGD also needs Opacus,
``skdc[dp]``).
"""

from ..utils._lazy import lazy_exports

# the public names are listed once, in __init__.pyi beside this file
__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
