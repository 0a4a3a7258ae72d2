"""Tests of the skorch classifiers (skdc/nn/_net.py).

skorch nets set ``history_`` and ``initialized_`` in ``__init__``, which sklearn's
``check_no_attributes_set_in_init`` refuses, so they are excluded from tests/test_common.py;
clone, pickling, ``set_params``, Pipeline and GridSearchCV are tested here directly, as
skorch's own tests do (STYLE.md section 3).
"""

import copy
import pickle
import subprocess
import sys
from unittest.mock import patch

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.metrics import balanced_accuracy_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from skorch.callbacks import Callback, Checkpoint  # noqa: E402
from skorch.dataset import Dataset  # noqa: E402
from skorch.exceptions import DeviceWarning, NotInitializedError  # noqa: E402
from skorch.helper import predefined_split  # noqa: E402

from skdc.alignment import GOPPAligner  # noqa: E402
from skdc.mechanisms import IGDP  # noqa: E402
from skdc.nn import LinkageAuditor, RepresentationCNN, resolve_device  # noqa: E402

CUDA = torch.cuda.is_available()


def _net(**kw):
    params = dict(max_epochs=2, batch_size=64, device="cpu", random_state=0)
    params.update(kw)
    return RepresentationCNN(**params)


def test_import_skdc_does_not_import_torch():
    code = "import sys, skdc, skdc.datasets; assert 'torch' not in sys.modules, 'torch'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fit_predict_with_string_labels(digits):
    X, y = digits
    labels = np.array(["zero", "one", "two"])[y]
    net = _net(lr=1e-2, max_epochs=6).fit(X, labels)
    assert set(net.classes_) == set(labels)
    pred = net.predict(X)
    assert set(pred) <= set(labels)
    proba = net.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1, rtol=1e-5)
    assert balanced_accuracy_score(labels, pred) > 0.6
    assert isinstance(net.criterion_, torch.nn.CrossEntropyLoss)
    assert np.isfinite(net.history[:, "train_loss"]).all()


def test_same_seed_same_init_and_batches(digits):
    X, y = digits
    a, b, c = (_net(random_state=s).fit(X, y) for s in (0, 0, 1))
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


def test_cuda_requested_without_device_raises(digits):
    X, y = digits
    with patch("torch.cuda.is_available", lambda *_: False):
        with pytest.raises(ValueError, match="torch sees no CUDA device"):
            _net(device="cuda").fit(X, y)
    with pytest.raises(ValueError, match="device must be 'auto', 'cpu'"):
        resolve_device("tpu9")


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_fit_on_device(digits, device):
    if device == "cuda" and not CUDA:
        pytest.skip("no cuda device")
    X, y = digits
    net = _net(device=device, max_epochs=1).fit(X, y)
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

class _Scramble(Callback):
    """Overwrite the weights at the start of epoch 3, so a later epoch is worse."""

    def on_epoch_begin(self, net, **kwargs):
        if len(net.history) == 3:
            with torch.no_grad():
                for p in net.module_.parameters():
                    p.normal_(0, 5.0)


def test_best_validation_balanced_accuracy_checkpoint(digits):
    X, y = digits
    rng = np.random.RandomState(0)
    idx = rng.permutation(len(X))
    tr, va = idx[:180], idx[180:]
    net = _net(lr=1e-2, max_epochs=3, callbacks=[_Scramble()],
               train_split=predefined_split(Dataset(X[va].astype(np.float32), y[va])))
    net.fit(X[tr], y[tr])
    scores = net.history[:, "valid_bacc"]
    assert scores[2] < max(scores[:2])  # the scrambled last epoch is not the best
    best = int(np.argmax(scores))
    assert net.best_epoch_ == best + 1
    assert net.best_valid_balanced_accuracy_ == pytest.approx(scores[best])
    # the kept weights are those of the best epoch, not the last
    assert balanced_accuracy_score(y[va], net.predict(X[va])) == pytest.approx(scores[best])


def test_no_validation_keeps_last_epoch(digits):
    X, y = digits
    net = _net(train_split=None).fit(X, y)
    assert net.best_epoch_ == 2
    assert np.isnan(net.best_valid_balanced_accuracy_)


def test_logit_head(digits):
    X, y = digits
    yb = np.where(y == 0, "zero", "other")
    net = _net(head="logit", lr=1e-2, max_epochs=4).fit(X, yb)
    assert isinstance(net.criterion_, torch.nn.BCEWithLogitsLoss)
    assert net.module_.out.out_features == 1
    proba = net.predict_proba(X)
    assert proba.shape == (len(X), 2)
    pred = net.predict(X)
    # prediction thresholds the probability of classes_[1] at 0.5
    np.testing.assert_array_equal(pred, net.classes_[(proba[:, 1] > 0.5).astype(int)])
    assert balanced_accuracy_score(yb, pred) > 0.6


def test_logit_head_refuses_multiclass(digits):
    X, y = digits
    with pytest.raises(ValueError, match="head='logit' is for binary tasks; y has 3 classes"):
        _net(head="logit").fit(X, y)


def test_bad_inputs(digits):
    X, y = digits
    net = _net(max_epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="expecting 64 features"):
        net.predict(X[:, :10])
    with pytest.raises(ValueError, match=r"labels \[7\] that are not in classes_"):
        net.partial_fit(X[:4], np.array([0, 1, 2, 7]))
    with pytest.raises(ValueError, match="at least 2 classes"):
        _net().fit(X[:5], np.zeros(5))
    with pytest.raises(ValueError, match="needs the input width"):
        RepresentationCNN(classes=[0, 1], device="cpu").initialize()
    with pytest.raises(ValueError, match="unexpected argument"):
        _net(modul__hidden_units=3).fit(X, y)


def test_initialize_with_routed_width():
    net = RepresentationCNN(classes=[0, 1, 2], module__n_features=100, device="cpu",
                            random_state=0).initialize()
    assert net.module_.fc.in_features == 20
    assert net.predict(np.zeros((2, 100))).shape == (2,)


def test_clone_and_prefix_routed_params(digits):
    X, y = digits
    net = _net(module__hidden_units=7, optimizer__weight_decay=0.0)
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


def test_grid_search_in_pipeline(digits):
    X, y = digits
    pipe = Pipeline([("cnn", _net(max_epochs=1))])
    search = GridSearchCV(pipe, {"cnn__module__hidden_units": [4, 8]}, cv=2,
                          scoring="balanced_accuracy")
    search.fit(X, y)
    assert search.best_params_["cnn__module__hidden_units"] in (4, 8)
    assert search.best_estimator_.named_steps["cnn"].module_.fc.out_features in (4, 8)


def test_pipeline_after_mechanism_and_aligner(digits):
    """The utility CNN trains on the aligned representation Z of a GDP pipeline."""
    X, y = digits
    pipe = Pipeline([
        ("gdp", IGDP(n_participants=3, random_state=0)),
        ("align", GOPPAligner(v=0.0)),
        ("cnn", _net(lr=1e-2, max_epochs=6)),
    ])
    pipe.fit(X, y)
    assert balanced_accuracy_score(y, pipe.predict(X)) > 0.6


def test_linkage_auditor_embeddings(digits):
    X, y = digits
    auditor = LinkageAuditor(max_epochs=1, batch_size=64, device="cpu", random_state=0,
                             module__channels=(8, 8, 8))
    E = auditor.fit_transform(X, y)
    assert E.shape == (len(X), 128)
    np.testing.assert_allclose(np.linalg.norm(E, axis=1), 1, rtol=1e-5)
    raw = auditor.embed(X)
    assert (raw >= 0).all()
    np.testing.assert_allclose(E, raw / np.linalg.norm(raw, axis=1, keepdims=True), rtol=1e-5)
    assert list(auditor.get_feature_names_out()[:2]) == ["linkageauditor0", "linkageauditor1"]
    unnormalised = clone(auditor).set_params(normalize=False).fit(X, y)
    np.testing.assert_allclose(unnormalised.transform(X), raw, rtol=1e-5)
    assert auditor.predict(X).shape == (len(X),)


def test_linkage_auditor_rgb_images():
    from skdc.datasets import make_identity_images

    faces = make_identity_images(12, 3, image_shape=(3, 8, 8), random_state=0)
    auditor = LinkageAuditor(max_epochs=1, device="cpu", random_state=0, train_split=None,
                             module__image_shape=(3, 8, 8), module__channels=(8, 8, 8))
    E = auditor.fit(faces.data, faces.identity).transform(faces.data)
    assert E.shape == (36, 128)


def test_linkage_auditor_needs_square_or_shape(digits):
    X, y = digits
    with pytest.raises(ValueError, match="pass module__image_shape"):
        LinkageAuditor(max_epochs=1, device="cpu").fit(X[:, :50], y)


def test_tags():
    from sklearn.utils import get_tags

    assert get_tags(RepresentationCNN()).estimator_type == "classifier"
    tags = get_tags(LinkageAuditor())
    assert tags.transformer_tags.preserves_dtype == ["float32"]


@pytest.fixture(scope="module")
def digits_600():
    """600 training and 300 held-out rows of all ten digits, scaled to [0, 1]."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X[:600] / 16.0, y[:600], X[600:900] / 16.0, y[600:900]


def _train_batches(net):
    return sum("train_loss" in b for b in net.history[-1, "batches"])


def test_default_batch_is_sized_to_the_rows_and_learns_on_small_data(digits_600):
    X, y, X_te, y_te = digits_600
    torch.set_num_threads(1)  # tiny batches: a second thread only adds contention
    auto = RepresentationCNN(device="cpu", random_state=0).fit(X, y)
    paper = RepresentationCNN(batch_size=256, device="cpu", random_state=0).fit(X, y)
    # "auto": min(256, max(16, 600 // 40)) = 16 rows a batch; ValidSplit(5) trains on 480 rows,
    # so 30 steps an epoch where the paper's batch of 256 takes 2
    assert auto.batch_size_ == 16 and _train_batches(auto) == 30
    assert paper.batch_size_ == 256 and _train_batches(paper) == 2
    acc_auto = balanced_accuracy_score(y_te, auto.predict(X_te))
    acc_paper = balanced_accuracy_score(y_te, paper.predict(X_te))
    assert acc_auto > 0.7  # ten classes: chance is 0.1
    assert acc_auto > acc_paper + 0.2  # 30 gradient steps in all are too few to learn


@pytest.mark.parametrize("batch_size, n_rows, expected", [
    ("auto", 20_000, 256), ("auto", 1_000, 25), ("auto", 100, 16), (-1, 100, -1), (32, 100, 32)])
def test_batch_size_(batch_size, n_rows, expected):
    rng = np.random.RandomState(0)
    net = RepresentationCNN(batch_size=batch_size, device="cpu")
    net._check_fit_data(rng.rand(n_rows, 16), np.arange(n_rows) % 2)
    assert net.batch_size_ == expected
    assert net.get_params_for("iterator_train").get("batch_size", net.batch_size) == expected


def test_bad_batch_size():
    with pytest.raises(ValueError, match="batch_size must be a positive int, -1 or 'auto'"):
        RepresentationCNN(batch_size="big", device="cpu").fit(np.zeros((8, 16)),
                                                               np.arange(8) % 2)
