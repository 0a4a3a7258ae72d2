"""The skdc nets' checkpoint: keep the epoch of the best validation balanced accuracy.

The reference code of [1]_ (Section 5.1) keeps, of all epochs, the weights with the highest
**validation balanced accuracy**: :class:`BestValidCheckpoint` keeps them in memory and
restores them at the end of training; ``_ValidScoring`` writes the score it reads
(``valid_bacc``), computed by ``_valid_balanced_accuracy`` on the validation rows. The nets
(``_base.py``, ``_net.py``) and :func:`~skdc.nn.fit_batched` use them.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import numpy as np
from sklearn.metrics import balanced_accuracy_score
from skorch import NeuralNetClassifier
from skorch.callbacks import Callback, EpochScoring

__all__ = ["BestValidCheckpoint"]


def _valid_balanced_accuracy(net, X, y):
    """Balanced accuracy on the validation rows ``X`` (a skorch ``Dataset``) of class indices ``y``.

    skorch's own ``predict_proba`` runs here (ours checks arrays, and ``X`` is a ``Dataset``);
    inside :class:`_ValidScoring` it replays the outputs cached during validation.
    """
    proba = NeuralNetClassifier.predict_proba(net, X)
    return balanced_accuracy_score(np.asarray(y).astype(np.int64), proba.argmax(axis=1))


class _ValidScoring(EpochScoring):
    """skorch's ``EpochScoring``, run while ``net.device`` shows the fitted device.

    Its cache replays the validation outputs on ``net.device`` (read when the cache is made);
    with ``device='auto'`` that must be ``device_`` (see ``_BaseCNN._skorch_device``).
    """

    def on_epoch_end(self, net, **kwargs):
        with net._skorch_device():
            super().on_epoch_end(net, **kwargs)


class BestValidCheckpoint(Callback):
    """Keep the weights of the epoch with the best validation score, restore them at the end.

    Read more in the :ref:`User Guide <experiments>`.

    The copy lives in memory (no files), and is dropped once restored, so a pickled net holds
    only its final weights. Without a validation split the last epoch is kept.

    Parameters
    ----------
    monitor : str, default='valid_bacc'
        History key of the score; ``'<monitor>_best'`` flags improving epochs (as written by
        :class:`skorch.callbacks.EpochScoring`).
    """

    def __init__(self, monitor="valid_bacc"):
        self.monitor = monitor

    def initialize(self):
        self.best_state_ = None
        self.best_epoch_ = None
        self.best_score_ = np.nan
        return self

    def on_train_begin(self, net, X=None, y=None, **kwargs):
        self.initialize()

    def on_epoch_end(self, net, **kwargs):
        row = net.history[-1]
        if row.get(self.monitor + "_best", False):
            self.best_state_ = {
                k: v.detach().clone() for k, v in net.module_.state_dict().items()
            }
            self.best_epoch_ = int(row["epoch"])
            self.best_score_ = float(row[self.monitor])

    def on_train_end(self, net, X=None, y=None, **kwargs):
        if self.best_state_ is not None:
            net.module_.load_state_dict(self.best_state_)
            net.best_epoch_ = self.best_epoch_
            net.best_valid_balanced_accuracy_ = self.best_score_
        else:
            net.best_epoch_ = len(net.history)
            net.best_valid_balanced_accuracy_ = np.nan
        self.best_state_ = None
