"""Tests of the skorch classifiers (skdc/nn/_net.py): the utility CNN and the linkage auditor.

skorch nets set ``history_`` and ``initialized_`` in ``__init__``, which sklearn's
``check_no_attributes_set_in_init`` refuses, so they are excluded from tests/test_common.py;
clone, pickling, ``set_params``, Pipeline and GridSearchCV are tested here and in
tests/nn/test_base.py directly, as skorch's own tests do (STYLE.md section 3).
"""

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.metrics import balanced_accuracy_score  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402

from skdc.alignment import GOPPAligner  # noqa: E402
from skdc.mechanisms import IGDP  # noqa: E402
from skdc.nn import LinkageAuditor, RepresentationCNN  # noqa: E402


def test_import_skdc_does_not_import_torch():
    code = "import sys, skdc, skdc.datasets; assert 'torch' not in sys.modules, 'torch'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_fit_predict_with_string_labels(digits, small_cnn):
    X, y = digits
    labels = np.array(["zero", "one", "two"])[y]
    net = small_cnn(lr=1e-2, max_epochs=6).fit(X, labels)
    assert set(net.classes_) == set(labels)
    pred = net.predict(X)
    assert set(pred) <= set(labels)
    proba = net.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1, rtol=1e-5)
    assert balanced_accuracy_score(labels, pred) > 0.6
    assert isinstance(net.criterion_, torch.nn.CrossEntropyLoss)
    assert np.isfinite(net.history[:, "train_loss"]).all()


def test_logit_head(digits, small_cnn):
    X, y = digits
    yb = np.where(y == 0, "zero", "other")
    net = small_cnn(head="logit", lr=1e-2, max_epochs=4).fit(X, yb)
    assert isinstance(net.criterion_, torch.nn.BCEWithLogitsLoss)
    assert net.module_.out.out_features == 1
    proba = net.predict_proba(X)
    assert proba.shape == (len(X), 2)
    pred = net.predict(X)
    # prediction thresholds the probability of classes_[1] at 0.5
    np.testing.assert_array_equal(pred, net.classes_[(proba[:, 1] > 0.5).astype(int)])
    assert balanced_accuracy_score(yb, pred) > 0.6


def test_logit_head_refuses_multiclass(digits, small_cnn):
    X, y = digits
    with pytest.raises(ValueError, match="head='logit' is for binary tasks; y has 3 classes"):
        small_cnn(head="logit").fit(X, y)


def test_grid_search_in_pipeline(digits, small_cnn):
    X, y = digits
    pipe = Pipeline([("cnn", small_cnn(max_epochs=1))])
    search = GridSearchCV(pipe, {"cnn__module__hidden_units": [4, 8]}, cv=2,
                          scoring="balanced_accuracy")
    search.fit(X, y)
    assert search.best_params_["cnn__module__hidden_units"] in (4, 8)
    assert search.best_estimator_.named_steps["cnn"].module_.fc.out_features in (4, 8)


def test_pipeline_after_mechanism_and_aligner(digits, small_cnn):
    """The utility CNN trains on the aligned representation Z of a GDP pipeline."""
    X, y = digits
    pipe = Pipeline([
        ("gdp", IGDP(n_participants=3, random_state=0)),
        ("align", GOPPAligner(v=0.0)),
        ("cnn", small_cnn(lr=1e-2, max_epochs=6)),
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

