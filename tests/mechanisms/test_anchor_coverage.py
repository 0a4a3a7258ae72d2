"""A nonlinear mechanism warns when its anchor lies off the rows it is fitted on, and the
anchor that works (SMOTE over public rows of the domain) is one call away."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skdc.alignment import KTIAligner
from skdc.anchors import SMOTEAnchor, check_anchor_covers_rows, orthonormal_anchor
from skdc.mechanisms import KernelPCAMechanism, UMAPMechanism


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X_pub, X_rest, y_pub, y_rest = train_test_split(X, y, train_size=150, stratify=y,
                                                    random_state=0)
    return X_pub, y_pub, train_test_split(X_rest[:600], y_rest[:600], test_size=0.3,
                                          stratify=y_rest[:600], random_state=0)


def _warnings(func):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func()
    return out, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def test_synthetic_anchor_off_pixel_rows_warns(digits):
    X_pub, _, (X_tr, _, _, _) = digits
    (outside, _), messages = _warnings(
        lambda: check_anchor_covers_rows(orthonormal_anchor(256, 64, random_state=0), X_tr))
    assert outside == 1.0
    assert len(messages) == 1
    assert "100% of the anchor's rows lie outside the range" in messages[0]
    assert "SMOTEAnchor.from_rows(X_public, y_public)" in messages[0]


def test_synthetic_anchor_squeezed_into_standardized_rows_warns():
    X = np.random.RandomState(0).randn(300, 10)  # standardized rows: the anchor is inside
    (outside, spread), messages = _warnings(
        lambda: check_anchor_covers_rows(orthonormal_anchor(40, 10, random_state=0), X,
                                         estimator_name="KernelPCAMechanism"))
    assert outside == 0.0
    # column norms 1 over 40 rows: a standard deviation near 1 / sqrt(40) against 1
    assert spread == pytest.approx(1 / np.sqrt(40), rel=0.1)
    assert len(messages) == 1 and messages[0].startswith("KernelPCAMechanism: the anchor covers")


def test_smote_anchor_from_public_rows_covers_them(digits):
    X_pub, y_pub, (X_tr, _, _, _) = digits
    anchor = SMOTEAnchor.from_rows(X_pub, y_pub, random_state=0)
    assert anchor.n_anchors == 256  # max(4 x 64 features, 10 x 10 classes)
    A, a_y = anchor.make_anchor(64)
    (outside, spread), messages = _warnings(lambda: check_anchor_covers_rows(A, X_tr))
    assert messages == [] and outside < 0.5 and spread > 0.5
    assert np.bincount(a_y).tolist() == [26] * 6 + [25] * 4


def test_kernel_pca_fit_warns_and_the_smote_anchor_integrates(digits):
    X_pub, y_pub, (X_tr, X_te, y_tr, y_te) = digits

    def accuracy(anchor):
        pipe = Pipeline([("kpca", KernelPCAMechanism(n_participants=3, n_components=10,
                                                     anchor=anchor, random_state=0)),
                         ("kti", KTIAligner()),
                         ("clf", LogisticRegression(max_iter=2000))])
        return pipe.fit(X_tr, y_tr).score(X_te, y_te)

    synthetic, messages = _warnings(lambda: accuracy("orthonormal"))
    assert any(m.startswith("KernelPCAMechanism: 100% of the anchor's rows lie outside")
               for m in messages), messages
    smote, messages = _warnings(
        lambda: accuracy(SMOTEAnchor.from_rows(X_pub, y_pub, random_state=0)))
    assert not any("anchor" in m for m in messages), messages
    # ten classes: chance is 0.1; the synthetic anchor stays near it, public rows do not
    assert synthetic < 0.3 and smote > 0.55, (synthetic, smote)


def test_umap_mechanism_checks_its_anchor_before_fitting(digits, monkeypatch):
    X_pub, _, (X_tr, _, _, _) = digits

    class Stop(Exception):
        pass

    def stop(self, X, participant, rng):
        raise Stop  # UMAP itself is not needed to see the check

    monkeypatch.setattr(UMAPMechanism, "_make_estimators", stop)
    mech = UMAPMechanism(n_participants=2, anchor="uniform", random_state=0)
    with pytest.warns(UserWarning, match="UMAPMechanism: 100% of the anchor's rows lie outside"):
        with pytest.raises(Stop):
            mech.fit(X_tr)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # rows of the domain: no warning
        with pytest.raises(Stop):
            UMAPMechanism(n_participants=2, anchor=X_pub[:80], random_state=0).fit(X_tr)


def test_aligner_without_anchor_suggests_what_works(digits):
    _, _, (X_tr, _, y_tr, _) = digits
    Y = KernelPCAMechanism(n_participants=2, n_components=3, random_state=0).fit_transform(X_tr)
    with pytest.raises(ValueError, match=r"SMOTEAnchor\.from_rows\(X_public, y_public\)"):
        KTIAligner().fit(Y)
