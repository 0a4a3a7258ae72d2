"""Tests of the best-validation checkpoint (skdc/nn/_callbacks.py)."""


import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.metrics import balanced_accuracy_score  # noqa: E402
from skorch.callbacks import Callback  # noqa: E402
from skorch.dataset import Dataset  # noqa: E402
from skorch.helper import predefined_split  # noqa: E402


class _Scramble(Callback):
    """Overwrite the weights at the start of epoch 3, so a later epoch is worse."""

    def on_epoch_begin(self, net, **kwargs):
        if len(net.history) == 3:
            with torch.no_grad():
                for p in net.module_.parameters():
                    p.normal_(0, 5.0)


def test_best_validation_balanced_accuracy_checkpoint(digits, small_cnn):
    X, y = digits
    rng = np.random.RandomState(0)
    idx = rng.permutation(len(X))
    tr, va = idx[:180], idx[180:]
    net = small_cnn(lr=1e-2, max_epochs=3, callbacks=[_Scramble()],
                    train_split=predefined_split(Dataset(X[va].astype(np.float32), y[va])))
    net.fit(X[tr], y[tr])
    scores = net.history[:, "valid_bacc"]
    assert scores[2] < max(scores[:2])  # the scrambled last epoch is not the best
    best = int(np.argmax(scores))
    assert net.best_epoch_ == best + 1
    assert net.best_valid_balanced_accuracy_ == pytest.approx(scores[best])
    # the kept weights are those of the best epoch, not the last
    assert balanced_accuracy_score(y[va], net.predict(X[va])) == pytest.approx(scores[best])


def test_no_validation_keeps_last_epoch(digits, small_cnn):
    X, y = digits
    net = small_cnn(train_split=None).fit(X, y)
    assert net.best_epoch_ == 2
    assert np.isnan(net.best_valid_balanced_accuracy_)

