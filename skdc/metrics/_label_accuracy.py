"""Semantic leakage read by a classifier: are the reconstructions labelled correctly?

:func:`reconstruction_label_accuracy` is the KTI paper's reconstruction accuracy (its Section
5.5, computed as its reference code does): a classifier trained on clean data labels the
reconstructions. A leakage score: higher means less private.
"""

# Licence: BSD 3 clause

import numpy as np
from sklearn.metrics import accuracy_score
from sklearn.utils import check_array
from sklearn.utils.validation import check_is_fitted

from ..utils._docstring import Substitution
from ..utils._references import kti_paper_references
from ..utils._sklearn_compat import HasMethods, validate_params

__all__ = ["reconstruction_label_accuracy"]


@validate_params(
    {"X_hat": ["array-like"], "y": ["array-like"], "classifier": [HasMethods(["predict"])]},
    prefer_skip_nested_validation=True,
)
@Substitution(references=kti_paper_references)
def reconstruction_label_accuracy(X_hat, y, classifier):
    """Reconstruction accuracy of the KTI paper: a clean-data classifier labels reconstructions.

    ``ReconAcc = mean_k 1[classifier.predict(X_hat)[k] = y_k]``, the privacy-risk measure of
    Section 5.5 of [1]_ as its reference code computes it. The classifier must be fitted on
    clean records independent of the target's (e.g. the colluder's). Higher means more leakage
    (less private).

    Read more in the :ref:`User Guide <nonlinear_privacy>`; the example
    :ref:`sphx_glr_auto_examples_plot_kti_vs_linear.py` reports it across reductions.

    Parameters
    ----------
    X_hat : array-like of shape (n_samples, n_features)
        Reconstructions.
    y : array-like of shape (n_samples,)
        The true labels of the reconstructed records.
    classifier : fitted classifier
        Trained on clean data.

    Returns
    -------
    accuracy : float
        The fraction of reconstructions labelled correctly.

    {references}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.neighbors import KNeighborsClassifier
    >>> from skdc.metrics import reconstruction_label_accuracy
    >>> clf = KNeighborsClassifier(1).fit([[0.0], [1.0]], [0, 1])
    >>> reconstruction_label_accuracy([[0.1], [0.2]], [0, 1], clf)
    0.5
    """
    check_is_fitted(classifier)
    X_hat = check_array(X_hat, dtype=np.float64)
    return float(accuracy_score(np.asarray(y), classifier.predict(X_hat)))
