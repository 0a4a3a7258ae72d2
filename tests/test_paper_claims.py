"""Claims of the papers with offline numbers, checked through the public API.

KTI paper (Suetake et al., arXiv:2605.27219): under a linear obfuscation with a shared span,
DC-LTI ~ DC-GEP ~ Central on the projected features, and data collaboration beats Local;
reconstruction accuracy lies in [0, 1] and equals the predicted class's share when all
reconstructions coincide. Anchor-noise GDP paper: the attacks' errors grow with the anchor
noise v, the v = 0 exactness of GOPP (eq. 36-37) at the MNIST experiment size, and the
projection floor of eq. (78) for an SVD basis.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import train_test_split
from sklearn.neighbors import NearestCentroid
from sklearn.pipeline import Pipeline

from skdc import CGDP, IGDP, GOPPAligner
from skdc.alignment import GEPAligner, LTIAligner
from skdc.attacks import (
    AlignmentMapAttack,
    AnchorRegressionAttack,
    KnownAnchorAttack,
    collusion_view,
)
from skdc.audit import Central, Local
from skdc.mechanisms import ParticipantWise, PCAMechanism
from skdc.metrics import reconstruction_label_accuracy


class _LinearMap(TransformerMixin, BaseEstimator):
    """``f(x) = x M``: a participant's secret linear obfuscation."""

    def __init__(self, M=None):
        self.M = M

    def fit(self, X, y=None):
        return self

    def transform(self, X):
        return np.asarray(X, dtype=np.float64) @ self.M


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


# -- KTI paper (Suetake et al., arXiv:2605.27219), Sec. 4.1 and 5.2: linear obfuscation with a
#    shared span integrates exactly, and data collaboration beats local training ---------------
K_PARTIES, N_PER, D_TILDE = 6, 30, 12


@pytest.fixture(scope="module")
def linear_runs(digits):
    """Per seed: F_k = F M_k (shared span), DC-LTI / DC-GEP, Central on X F, Local on raw rows.

    The forests have 30 trees (the paper's default is 100) to keep the test fast.
    """
    X, y = digits
    runs = []
    for seed in range(3):
        rng = np.random.RandomState(seed)
        F = rng.standard_normal((64, D_TILDE))
        maps = [F @ (rng.standard_normal((D_TILDE, D_TILDE)) + 2 * np.eye(D_TILDE))
                for _ in range(K_PARTIES)]
        n = K_PARTIES * N_PER
        X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=n, test_size=n, stratify=y,
                                                  random_state=seed)
        part = np.arange(n) % K_PARTIES
        mech = ParticipantWise(_LinearMap(), n_participants=K_PARTIES, vary={"M": maps},
                               anchor="uniform", n_anchors=200, random_state=seed)
        Y_tr = mech.fit_transform(X_tr, participant=part)
        Y_te = mech.transform(X_te, participant=part)
        run = {"y_te": y_te, "P_tr": X_tr @ F, "P_te": X_te @ F}

        def forest(seed=seed):
            return RandomForestClassifier(n_estimators=30, random_state=seed)

        for name, aligner in (("LTI", LTIAligner(D_TILDE)), ("GEP", GEPAligner(D_TILDE))):
            Z_tr = aligner.fit_transform(Y_tr)
            Z_te = aligner.transform(Y_te)
            run[name] = (Z_tr, Z_te)
            run[name + "_lda"] = LinearDiscriminantAnalysis().fit(Z_tr, y_tr).score(Z_te, y_te)
            run[name + "_rf"] = forest().fit(Z_tr, y_tr).score(Z_te, y_te)
        run["Central_lda"] = LinearDiscriminantAnalysis().fit(X_tr @ F, y_tr).score(X_te @ F,
                                                                                    y_te)
        run["Central_rf"] = Central(forest()).fit(X_tr @ F, y_tr).score(X_te @ F, y_te)
        run["Local_rf"] = Local(forest()).fit(X_tr, y_tr, participant=part).score(
            X_te, y_te, participant=part)
        runs.append(run)
    return runs


@pytest.mark.parametrize("method", ["LTI", "GEP"])
def test_linear_obfuscation_integrates_to_the_projected_features(linear_runs, method):
    """DC-LTI and DC-GEP recover X F T, one invertible T for every party (train and test)."""
    for run in linear_runs:
        Z_tr, Z_te = run[method]
        T, *_ = np.linalg.lstsq(run["P_tr"], Z_tr, rcond=None)
        assert np.linalg.norm(run["P_tr"] @ T - Z_tr) < 1e-8 * np.linalg.norm(Z_tr)
        assert np.linalg.norm(run["P_te"] @ T - Z_te) < 1e-8 * np.linalg.norm(Z_te)
        assert np.linalg.matrix_rank(T) == D_TILDE


def test_linear_obfuscation_lti_gep_and_central_agree(linear_runs):
    """LTI ~ GEP ~ Central on X F: identical for an affine-invariant classifier (LDA); the
    forests (not affine invariant) agree on average."""
    for run in linear_runs:
        one_row = 1 / len(run["y_te"])
        assert abs(run["LTI_lda"] - run["Central_lda"]) <= one_row
        assert abs(run["GEP_lda"] - run["Central_lda"]) <= one_row
    mean = {k: np.mean([r[k] for r in linear_runs]) for k in ("LTI_rf", "GEP_rf", "Central_rf")}
    assert abs(mean["LTI_rf"] - mean["GEP_rf"]) <= 0.03
    assert abs(mean["LTI_rf"] - mean["Central_rf"]) <= 0.06


def test_data_collaboration_beats_local(linear_runs):
    """DC with K parties >= Local on average (the same forest)."""
    for method in ("LTI", "GEP"):
        dc = np.mean([r[method + "_rf"] for r in linear_runs])
        local = np.mean([r["Local_rf"] for r in linear_runs])
        assert dc >= local


# -- KTI paper, Sec. 5.5: reconstruction accuracy, the risk measure of the utility-privacy study --
@pytest.mark.filterwarnings("ignore:self.within_class_std_dev_:UserWarning")
def test_reconstruction_accuracy_range_and_identical_reconstructions(digits):
    X, y = digits
    reader_rows = np.arange(len(y)) % 2 == 0
    reader = NearestCentroid().fit(X[reader_rows], y[reader_rows])
    # a balanced 7-class evaluation set E: 15 held-out rows of each of the digits 3-9
    E_rows = np.concatenate([np.flatnonzero(~reader_rows & (y == c))[:15] for c in range(3, 10)])
    E, y_E = X[E_rows], y[E_rows]
    # every reconstruction the same image (a class centroid, labelled as its class): the
    # accuracy is that class's share of E
    for c in range(3, 10):
        same = np.tile(X[reader_rows & (y == c)].mean(axis=0), (len(y_E), 1))
        assert reader.predict(same[:1])[0] == c
        assert reconstruction_label_accuracy(same, y_E, reader) == pytest.approx(1 / 7,
                                                                                 rel=1e-15)
    # an actual attack's reconstructions, noise and the clean rows all score within [0, 1]
    part = np.arange(len(y_E)) % 2
    mech = PCAMechanism(2, n_components=6, anchor="uniform", n_anchors=100,
                        random_state=0).fit(E, participant=part)
    view = collusion_view(mech, E, colluder=0, target=1, participant=part)
    X_hat = AnchorRegressionAttack().reconstruct(view).X
    noise = np.random.RandomState(0).uniform(0, 1, E.shape)
    for rec, labels in ((X_hat, y_E[part == 1]), (noise, y_E), (E, y_E)):
        acc = reconstruction_label_accuracy(rec, labels, reader)
        assert 0.0 <= acc <= 1.0
        assert acc == pytest.approx(np.mean(reader.predict(rec) == labels), rel=1e-15)


# -- Anchor-noise GDP paper ---------------------------------------------------------------------
def _rotation_error(rec, truth):
    return np.linalg.norm(rec.rotation - truth.rotation) / np.linalg.norm(truth.rotation)


def test_attack_errors_grow_with_anchor_noise():
    """The GDP paper (Nosaka et al., arXiv:2608.18749), its noisy-anchor claim: averaged over
    draws, OP's reduced-space NRMSE and the rotation errors of MP, OP and AM increase with the
    anchor noise v."""
    X = np.random.RandomState(0).randn(150, 6) + 2.0
    levels = [0.01, 0.03, 0.1, 0.3]
    attacks = {"mp": KnownAnchorAttack("mp"), "op": KnownAnchorAttack("procrustes"),
               "am": AlignmentMapAttack()}
    errors = {name: [] for name in (*attacks, "op_nrmse")}
    for v in levels:
        draws = {name: [] for name in errors}
        for seed in range(6):
            pipe = Pipeline([("gdp", IGDP(3, random_state=seed)), ("align", GOPPAligner(v=v))])
            view = collusion_view(pipe.fit(X), X, colluder=0, target=2)
            for name, attack in attacks.items():
                rec = attack.reconstruct(view)
                draws[name].append(_rotation_error(rec, view.truth))
                if name == "op":
                    truth = view.truth.X_mechanism
                    draws["op_nrmse"].append(np.linalg.norm(rec.X_mechanism - truth)
                                             / np.linalg.norm(truth))
        for name in errors:
            errors[name].append(np.mean(draws[name]))
    for name, curve in errors.items():
        assert all(a < b for a, b in zip(curve, curve[1:])), (name, curve)


def test_gopp_exact_at_zero_noise_at_the_mnist_size():
    """The GDP paper (arXiv:2608.18749), eqs. (36)-(37): at v = 0 GOPP recovers one common
    rotation exactly, at the paper's MNIST experiment size (Fig. 4(b): p = 10, d = 100,
    r = 400)."""
    p, d = 10, 100
    X = np.random.RandomState(0).randn(p * 40, d)
    pipe = Pipeline([("gdp", IGDP(p, random_state=0)), ("align", GOPPAligner(0.0))])
    Z = pipe.fit_transform(X)
    mech, align = pipe["gdp"], pipe["align"]
    assert mech.anchor_.shape == (400, d)
    assert align.converged_ and align.n_iter_ <= 10  # "within a handful of iterations"
    prod = mech.rotations_ @ align.rotations_
    assert max(np.linalg.norm(prod[i] - prod[0]) for i in range(p)) < 1e-8
    assert align.relative_gopp_residual_ < 1e-10
    assert align.fixed_point_residual_ < 1e-10
    Q = prod[0]
    assert_allclose(Q.T @ Q, np.eye(d), rtol=0, atol=1e-10)
    assert_allclose(Z, X @ Q, rtol=0, atol=1e-10)
    # registration onto the C-GDP output by one rotation and one shift (Procrustes by SVD)
    Zc = CGDP(p, random_state=0).fit_transform(X)
    U, _, Vt = np.linalg.svd((Z - Z.mean(0)).T @ (Zc - Zc.mean(0)))
    reg = (Z - Z.mean(0)) @ (U @ Vt) + Zc.mean(0)
    assert np.linalg.norm(reg - Zc) / np.linalg.norm(Zc) < 1e-8


def test_projection_floor_with_an_svd_basis():
    """The GDP paper (arXiv:2608.18749), eq. (78): with the SVD basis F, F^+ = F^T and
    F^T F = I, and the v = 0 attack's decoded reconstruction is the projection X F F^T (about
    the mean)."""
    rng = np.random.RandomState(0)
    X = rng.randn(120, 12) @ rng.randn(12, 12) + 3.0
    pipe = Pipeline([("proj", PCA(6)), ("gdp", IGDP(2, random_state=0)),
                     ("align", GOPPAligner(0.0))]).fit(X)
    view = collusion_view(pipe, X)
    assert [name for name, _ in view.decoders] == ["proj"]
    F = pipe["proj"].components_.T
    assert_allclose(F.T @ F, np.eye(6), rtol=0, atol=1e-10)
    assert_allclose(np.linalg.pinv(F), F.T, rtol=0, atol=1e-10)
    # the projection floor from an independent SVD of the centred rows
    mu = X.mean(axis=0)
    V = np.linalg.svd(X - mu, full_matrices=False)[2][:6].T
    X_t = X[view.target_rows]
    floor = mu + (X_t - mu) @ V @ V.T
    for attack in (KnownAnchorAttack("exact"), KnownAnchorAttack("procrustes"),
                   KnownAnchorAttack("mp")):
        rec = attack.reconstruct(view)
        assert np.linalg.norm(rec.X - floor) < 1e-8 * np.linalg.norm(floor)
    assert_allclose(view.decode((X_t - mu) @ F), floor, rtol=0, atol=1e-10)
