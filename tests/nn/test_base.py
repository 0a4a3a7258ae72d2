"""Tests of what the skdc nets share (skdc/nn/_base.py): the device, the seeds, label coding,
skorch's methods on the fitted device, clone and pickling; run through RepresentationCNN.
"""

import copy
import pickle
from unittest.mock import patch

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from skorch.callbacks import Callback, Checkpoint  # noqa: E402
from skorch.exceptions import DeviceWarning, NotInitializedError  # noqa: E402

from skdc.nn import RepresentationCNN, resolve_device  # noqa: E402

CUDA = torch.cuda.is_available()


def test_same_seed_same_init_and_batches(digits, small_cnn):
    X, y = digits
    a, b, c = (small_cnn(random_state=s).fit(X, y) for s in (0, 0, 1))
    for (ka, pa), (_, pb) in zip(a.module_.named_parameters(), b.module_.named_parameters()):
        torch.testing.assert_close(pa, pb, rtol=0, atol=0, msg=ka)
    assert (a.init_seed_, a.order_seed_) == (b.init_seed_, b.order_seed_)
    assert a.history[:, "train_loss"] == b.history[:, "train_loss"]
    assert not torch.equal(a.module_.conv1.weight, c.module_.conv1.weight)


def test_device_auto_resolves_at_fit(digits):
    X, y = digits
    net = RepresentationCNN(max_epochs=1, random_state=0)
    assert net.device == "auto"
    net.fit(X, y)
    assert net.device == "auto"
    assert net.device_ == ("cuda" if CUDA else "cpu")
    assert net.get_params()["device"] == "auto"
    with patch("torch.cuda.is_available", lambda *_: True):
        assert resolve_device("auto") == "cuda"
    with patch("torch.cuda.is_available", lambda *_: False):
        assert resolve_device("auto") == "cpu"


def test_fit_leaves_the_device_parameter_as_set(digits):
    """``device='auto'`` stays the parameter during every call; the fitted device is ``device_``."""
    X, y = digits
    seen = []

    class _RecordDevice(Callback):
        def on_batch_begin(self, net, **kwargs):
            seen.append(net.device)

    net = RepresentationCNN(max_epochs=2, batch_size=64, random_state=0,
                            callbacks=[("record", _RecordDevice())])
    unfitted = clone(net).get_params(deep=False)
    net.fit(X, y)
    assert seen and set(seen) == {"auto"}
    assert net.get_params()["device"] == "auto"
    assert np.isfinite(net.history[:, "valid_bacc"]).all()
    fresh = clone(net)
    assert not hasattr(fresh, "device_") and not hasattr(fresh, "module_")
    config = fresh.get_params(deep=False)
    assert config.keys() == unfitted.keys()
    for key, value in unfitted.items():
        if isinstance(value, (str, int, float, type, type(None))):
            assert config[key] == value, key
        else:
            assert type(config[key]) is type(value), key


def test_cuda_requested_without_device_raises(digits, small_cnn):
    X, y = digits
    with patch("torch.cuda.is_available", lambda *_: False):
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            small_cnn(device="cuda").fit(X, y)
    with pytest.raises(ValueError, match="device must be 'auto', 'cpu'"):
        resolve_device("tpu9")


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_fit_on_device(digits, small_cnn, device):
    if device == "cuda" and not CUDA:
        pytest.skip("no cuda device")
    X, y = digits
    net = small_cnn(device=device, max_epochs=1).fit(X, y)
    assert next(net.module_.parameters()).device.type == device
    assert net.predict(X[:5]).shape == (5,)


@pytest.mark.skipif(not CUDA, reason="no cuda device")
def test_auto_uses_cuda_and_unpickles_on_cpu(digits):
    X, y = digits
    net = RepresentationCNN(max_epochs=1, random_state=0).fit(X, y)
    assert net.device_ == "cuda"
    dumped = pickle.dumps(net)
    with patch("torch.cuda.is_available", lambda *_: False):
        with pytest.warns(DeviceWarning):
            loaded = pickle.loads(dumped)
    assert loaded.device_ == "cpu"
    assert next(loaded.module_.parameters()).device.type == "cpu"


def test_auto_device_set_params_reinitialises_on_the_fitted_device(digits):
    """skorch re-creates the module inside ``set_params``; it lands on ``device_``."""
    X, y = digits
    net = RepresentationCNN(max_epochs=1, batch_size=64, random_state=0).fit(X, y)
    net.set_params(module__hidden_units=9)
    assert net.device == "auto"
    assert net.module_.fc.out_features == 9
    assert next(net.module_.parameters()).device.type == net.device_
    net.partial_fit(X, y)  # the optimizer was re-created for the new module
    assert len(net.history) == 2 and net.predict(X[:3]).shape == (3,)


def test_auto_device_save_and_load_params(digits, tmp_path):
    X, y = digits
    checkpoint = Checkpoint(dirname=str(tmp_path / "cp"))  # saves the one epoch
    net = RepresentationCNN(max_epochs=1, batch_size=64, random_state=0,
                            callbacks=[("cp", checkpoint)]).fit(X, y)
    expected = net.predict_proba(X)
    net.save_params(f_params=tmp_path / "params.pt")
    fresh = RepresentationCNN(classes=[0, 1, 2], module__n_features=64, random_state=1)
    fresh.initialize().load_params(f_params=tmp_path / "params.pt")
    assert fresh.device == "auto" and fresh.device_ == net.device_
    np.testing.assert_allclose(fresh.predict_proba(X), expected, rtol=1e-6)
    # with a checkpoint, an uninitialised net is initialised first (as skorch does)
    fresh = RepresentationCNN(classes=[0, 1, 2], module__n_features=64, random_state=1)
    fresh.load_params(checkpoint=checkpoint)
    assert fresh.device == "auto" and len(fresh.history) == 1
    np.testing.assert_allclose(fresh.predict_proba(X), expected, rtol=1e-6)


def test_uninitialised_auto_net_says_what_to_do():
    with pytest.raises(NotInitializedError, match="device='auto' is resolved by fit"):
        RepresentationCNN().infer(torch.zeros(1, 64))


def _skorch_private_names():
    """Private names of skorch's net and callbacks: defined in skorch, or set by its __init__."""
    from skorch import NeuralNetClassifier
    from skorch.callbacks import EpochScoring

    names = set()
    for cls in (NeuralNetClassifier, EpochScoring):
        for name in dir(cls):
            owner = next((k for k in cls.__mro__ if name in vars(k)), None)
            if owner is not None and owner.__module__.startswith("skorch"):
                names.add(name)
    names |= set(vars(NeuralNetClassifier(torch.nn.Linear)))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def test_nn_uses_no_private_skorch_name():
    """skdc.nn reaches skorch through its public API only (no copied or private skorch code).

    The one exception is ``_default_callbacks``: skorch's ``get_params`` reads that property
    directly, and its own classifiers override it to set their default callbacks.
    """
    import ast
    from pathlib import Path

    import skdc.nn

    private = _skorch_private_names() - {"_default_callbacks"}
    assert {"_initialize_module", "_merge_x_and_fit_params", "_modules"} <= private
    used = set()
    for path in Path(skdc.nn.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                used.add(f"{path.name}:{node.lineno}: .{node.attr}")
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name in private:
                used.add(f"{path.name}:{node.lineno}: def {node.name}")
    assert not used, sorted(used)


def test_bad_inputs(digits, small_cnn):
    X, y = digits
    net = small_cnn(max_epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="expecting 64 features"):
        net.predict(X[:, :10])
    with pytest.raises(ValueError, match=r"labels \[7\] that are not in classes_"):
        net.partial_fit(X[:4], np.array([0, 1, 2, 7]))
    with pytest.raises(ValueError, match="at least 2 classes"):
        small_cnn().fit(X[:5], np.zeros(5))
    with pytest.raises(ValueError, match="needs the input width"):
        RepresentationCNN(classes=[0, 1], device="cpu").initialize()
    with pytest.raises(ValueError, match="unexpected argument"):
        small_cnn(modul__hidden_units=3).fit(X, y)


def test_initialize_with_routed_width():
    net = RepresentationCNN(classes=[0, 1, 2], module__n_features=100, device="cpu",
                            random_state=0).initialize()
    assert net.module_.fc.in_features == 20
    assert net.predict(np.zeros((2, 100))).shape == (2,)


def test_clone_and_prefix_routed_params(digits, small_cnn):
    X, y = digits
    net = small_cnn(module__hidden_units=7, optimizer__weight_decay=0.0)
    cloned = clone(net)
    assert cloned.get_params()["module__hidden_units"] == 7
    cloned.set_params(module__hidden_units=9, lr=5e-3)
    cloned.fit(X, y)
    assert "module" in cloned.prefixes_ and "optimizer" in cloned.prefixes_
    assert cloned.module_.fc.out_features == 9
    assert cloned.optimizer_.param_groups[0]["lr"] == 5e-3
    assert net.get_params()["module__hidden_units"] == 7  # the original is untouched


def test_pickle_roundtrip_and_train_after_copy(digits):
    X, y = digits
    net = RepresentationCNN(max_epochs=1, random_state=0).fit(X, y)
    loaded = pickle.loads(pickle.dumps(net))
    assert loaded.device == "auto" and loaded.device_ == net.device_
    np.testing.assert_allclose(loaded.predict_proba(X), net.predict_proba(X), rtol=1e-6)
    copied = copy.deepcopy(net)
    copied.partial_fit(X, y)
    assert len(copied.history) == 2


def test_pickle_from_cuda_falls_back_to_cpu(digits):
    """A net fitted on CUDA unpickles on a CPU-only machine with a DeviceWarning."""
    X, y = digits
    net = RepresentationCNN(max_epochs=1, random_state=0, device="cpu").fit(X, y)
    expected = net.predict_proba(X)
    net.set_params(device="auto")
    net.device_ = "cuda"  # as if "auto" had resolved to CUDA at fit
    dumped = pickle.dumps(net)
    with patch("torch.cuda.is_available", lambda *_: False):
        with pytest.warns(DeviceWarning, match="CUDA"):
            loaded = pickle.loads(dumped)
    assert loaded.device == "auto"
    assert loaded.device_ == "cpu"
    np.testing.assert_allclose(loaded.predict_proba(X), expected, rtol=1e-6)

