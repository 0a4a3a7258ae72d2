"""Tests of make_attack_scorer inside scikit-learn's model selection tools."""

import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.decomposition import PCA
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    cross_validate,
    permutation_test_score,
)
from sklearn.pipeline import Pipeline
from sklearn.random_projection import GaussianRandomProjection

from skdc.alignment import GOPPAligner
from skdc.attacks import (
    AlignmentMapAttack,
    KnownAnchorAttack,
    KnownInputAttack,
    collusion_view,
)
from skdc.mechanisms import CGDP, IGDP
from skdc.metrics import (
    identity_linkage_accuracy,
    linkage_accuracy,
    make_attack_scorer,
    psnr,
    record_mse,
    relative_error,
)
from skdc.utils._sklearn_compat import InvalidParameterError


def _pipe(v=0.0, proj=False):
    steps = [("gdp", IGDP(n_participants=2, random_state=0)),
             ("align", GOPPAligner(v=v)),
             ("clf", LogisticRegression(max_iter=100))]
    if proj:
        steps.insert(0, ("proj", GaussianRandomProjection(
            24, compute_inverse_components=True, random_state=0)))
    return Pipeline(steps)


def test_grid_search_privacy_rises_with_v(digits):
    """The grid of the developer guide: IGDP + GOPPAligner on digits, a privacy-utility table
    in one call (anchor noise v against accuracy and two attacks, Sec. 5 of the GDP paper)."""
    X, y = digits
    search = GridSearchCV(
        _pipe(), {"align__v": [0.0, 0.02, 0.1, 0.3]},
        scoring={"acc": "balanced_accuracy",
                 "privacy": make_attack_scorer("procrustes", colluder=0, target=1),
                 "am": make_attack_scorer("alignment_map")},
        refit=False, cv=3).fit(X, y)
    res = search.cv_results_
    for key in ("mean_test_privacy", "mean_test_am"):
        privacy = res[key]
        assert privacy[0] < 1e-8  # exact at v = 0
        assert np.all(np.diff(privacy) > 0), privacy
    assert res["mean_test_acc"][0] > 0.8


def test_scorer_matches_attack_and_metrics(digits):
    X, y = digits
    pipe = _pipe(v=0.1, proj=True).fit(X, y)
    view = collusion_view(pipe, X)
    rec = KnownAnchorAttack("mp").reconstruct(view)
    Xt, yt = view.truth.X, y[view.target_rows]
    assert make_attack_scorer("mp")(pipe, X, y) == relative_error(Xt, rec.X)
    assert make_attack_scorer("mp", "mse")(pipe, X, y) == record_mse(Xt, rec.X)
    assert make_attack_scorer("mp", "psnr")(pipe, X, y) == -psnr(Xt, rec.X)
    link = make_attack_scorer("mp", "linkage",
                              metric_params={"auditor": "pca", "random_state": 0})
    assert link(pipe, X, y) == 1 - linkage_accuracy(Xt, rec.X, yt, auditor="pca",
                                                    random_state=0)
    label = make_attack_scorer("mp", "label_accuracy")(pipe, X, y)
    assert 0.0 <= label < 0.9  # the reconstructions still carry the label


def test_linkage_scorer_best_matcher_reads_the_colluders_rows(digits):
    """With matcher 'best' (or 'mahalanobis') the scorer hands the colluders' rows, in the
    space the reconstructions are scored in, to the Mahalanobis matcher."""
    X, y = digits
    pipe = _pipe(v=0.3, proj=True).fit(X, y)
    view = collusion_view(pipe, X)
    rec = KnownAnchorAttack("procrustes").reconstruct(view)
    Xt, yt = view.truth.X, y[view.target_rows]
    assert view.colluder_X_input.shape[1] == Xt.shape[1] != view.colluder_X.shape[1]
    for matcher in ("best", "mahalanobis", "euclidean"):
        link = make_attack_scorer("procrustes", "linkage", metric_params={
            "auditor": "pca", "matcher": matcher, "random_state": 0})
        expected = linkage_accuracy(Xt, rec.X, yt, auditor="pca", matcher=matcher,
                                    sample=view.colluder_X_input, random_state=0)
        assert link(pipe, X, y) == 1 - float(expected)


def test_linkage_scorer_refuses_bad_matchers(digits):
    with pytest.raises(ValueError, match="matcher must be one of"):
        make_attack_scorer("mp", "linkage", metric_params={"matcher": "nearest"})
    with pytest.raises(ValueError, match="takes metric_params"):
        make_attack_scorer("mp", "linkage", metric_params={"sample": np.zeros((3, 3))})
    X, y = digits
    pipe = _pipe(v=0.1).fit(X, y)
    alone = np.ones(len(X), dtype=int)
    alone[:1] = 0  # the colluder has one evaluation row: no covariance
    mahal = make_attack_scorer("mp", "linkage", metric_params={"matcher": "mahalanobis",
                                                               "auditor": "pca"})
    with pytest.raises(ValueError, match="have 1 evaluation rows"):
        mahal(pipe, X, y, participant=alone)
    best = make_attack_scorer("mp", "linkage", metric_params={"matcher": "best",
                                                              "auditor": "pca"})
    assert 0.0 <= best(pipe, X, y, participant=alone) <= 1.0


def test_scorer_accepts_instances_and_attack_params(digits):
    X, y = digits
    pipe = _pipe().fit(X, y)
    s1 = make_attack_scorer("known_input", n_known=70, random_state=0)
    s2 = make_attack_scorer(KnownInputAttack(n_known=3), n_known=70, random_state=0)
    # digits has constant pixels, so the leaked records never span the space: near exact only
    assert s1(pipe, X, y) == s2(pipe, X, y) < 0.05


def test_cross_validate_and_permutation_test(digits):
    X, y = digits
    scorer = make_attack_scorer("procrustes")
    cv = cross_validate(_pipe(0.1), X, y, cv=3, scoring={"privacy": scorer})
    assert np.all(cv["test_privacy"] > 0)
    score, perm, _ = permutation_test_score(_pipe(0.1), X, y, scoring=scorer, cv=2,
                                            n_permutations=2, random_state=0)
    assert score > 0 and perm.shape == (2,)


def test_scorer_requests_routed_participant(digits):
    X, y = digits
    ids = np.arange(len(X)) % 2
    scorer = make_attack_scorer("procrustes")
    assert scorer.get_metadata_routing().score.requests == {"participant": True}
    with sklearn.config_context(enable_metadata_routing=True):
        cv = cross_validate(_pipe(0.1), X, y, cv=KFold(3), params={"participant": ids},
                            scoring={"acc": "balanced_accuracy", "privacy": scorer},
                            return_estimator=True)
        search = GridSearchCV(_pipe(), {"align__v": [0.0, 0.1]}, cv=KFold(2),
                              scoring={"privacy": scorer}, refit=False).fit(
                                  X, y, participant=ids)
    assert np.all(cv["test_privacy"] > 0)
    assert search.cv_results_["mean_test_privacy"][0] < 1e-8
    # the declared rows are the target's
    est = cv["estimator"][0]
    test_rows = np.arange(len(X))[: len(X) // 3]
    assert cv["test_privacy"][0] == scorer(est, X[test_rows], y[test_rows],
                                           participant=ids[test_rows])
    view = collusion_view(est, X[test_rows], participant=ids[test_rows])
    np.testing.assert_array_equal(view.target_rows, np.flatnonzero(ids[test_rows] == 1))
    scorer.set_score_request(participant=False)
    assert scorer.get_metadata_routing().score.requests == {"participant": False}


def test_scorer_errors_propagate_to_error_score(digits):
    X, y = digits
    pipe = Pipeline([("gdp", CGDP(2, random_state=0)), ("clf", LogisticRegression(max_iter=1000))])
    scorer = make_attack_scorer("procrustes")
    with pytest.raises(ValueError, match="needs the raw anchor A"):
        scorer(pipe.fit(X, y), X, y)
    with pytest.raises(ValueError, match="needs the raw anchor A"):
        cross_validate(pipe, X, y, cv=2, scoring=scorer, error_score="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (UserWarning, FitFailedWarning))
        cv = cross_validate(pipe, X, y, cv=2, scoring=scorer, error_score=np.nan)
    assert np.all(np.isnan(cv["test_score"]))


def test_scorer_pickles(digits):
    X, y = digits
    scorer = pickle.loads(pickle.dumps(make_attack_scorer("alignment_map")))
    cv = cross_validate(_pipe(0.05), X, y, cv=2, scoring={"am": scorer})
    assert np.all(cv["test_am"] > 0)


def test_make_attack_scorer_bad_input():
    with pytest.raises(InvalidParameterError, match="attack"):
        make_attack_scorer("linear")
    with pytest.raises(InvalidParameterError, match="metric"):
        make_attack_scorer("mp", metric="ssim")
    with pytest.raises(ValueError, match="colluder and target must be different"):
        make_attack_scorer("mp", colluder=1, target=1)
    with pytest.raises(ValueError, match="takes metric_params"):
        make_attack_scorer("mp", metric="mse", metric_params={"auditor": "pca"})
    with pytest.raises(TypeError, match="unexpected metadata"):
        make_attack_scorer("mp")(None, None, None, sample_weight=1)


# -- several colluders -------------------------------------------------------------------
def test_scorer_with_several_colluders(digits):
    X, y = digits
    pipe = Pipeline([("gdp", IGDP(n_participants=4, random_state=0)),
                     ("align", GOPPAligner(v=0.05))]).fit(X)
    scorer = make_attack_scorer("alignment_map", colluder=[0, 2, 3], target=1)
    view = collusion_view(pipe, X, colluder=[0, 2, 3], target=1)
    expected = relative_error(view.truth.X, AlignmentMapAttack().reconstruct(view).X)
    assert scorer(pipe, X, y) == expected
    assert make_attack_scorer("alignment_map", colluder=np.array([0, 2, 3]))(pipe, X) == expected
    assert make_attack_scorer("alignment_map", colluder=[2])(pipe, X) == make_attack_scorer(
        "alignment_map", colluder=2)(pipe, X)
    assert "colluder=[0, 2, 3]" in repr(scorer)
    # the default label classifier trains on the pooled colluders' rows
    assert 0.0 <= make_attack_scorer("mp", "label_accuracy", colluder=[0, 2])(pipe, X, y) < 0.9
    with pytest.raises(ValueError, match="colluder=5 is not a participant: the mechanism has 4"):
        make_attack_scorer("alignment_map", colluder=[0, 5])(pipe, X)


@pytest.mark.parametrize("colluder, err, match", [
    ([0, 0], ValueError, "lists participant 0 more than once"),
    ([0, 1], ValueError, "the target 1 is among the colluders"),
    ([], ValueError, "at least one participant"),
    ([0, 2.0], TypeError, "int participant id"),
])
def test_scorer_rejects_bad_colluder_sets(colluder, err, match):
    with pytest.raises(err, match=match):
        make_attack_scorer("alignment_map", colluder=colluder, target=1)


# -- identity linkage (the face protocol) ------------------------------------------------
def _face_pipe(v):
    return Pipeline([("proj", PCA(30, random_state=0)), ("gdp", IGDP(2, random_state=0)),
                     ("align", GOPPAligner(v=v))])


def test_identity_linkage_scorer_on_faces(lfw_identities):
    """The face protocol through the scorer: exact at v = 0 (the projection floor X F F^+ is
    what links), near chance once the anchor noise is large."""
    f = lfw_identities
    params = {"references": f.references, "reference_identity": f.reference_identity}
    scorer = make_attack_scorer("procrustes", "identity_linkage", metric_params=params)
    X, ids, part = f.X_protocol, f.identity_protocol, f.participant
    pipe = _face_pipe(0.0).fit(X, gdp__participant=part)
    target = part == 1
    proj = pipe["proj"]
    floor = proj.inverse_transform(proj.transform(X[target]))
    # the default, the reference code's primary condition: references decoded like the rows
    expected = identity_linkage_accuracy(floor, ids[target], f.references, f.reference_identity,
                                         reference_decoder=proj)
    assert float(expected) > 0.3
    assert scorer(pipe, X, identity=ids, participant=part) == 1.0 - float(expected)
    raw = identity_linkage_accuracy(floor, ids[target], f.references, f.reference_identity)
    raw_scorer = make_attack_scorer("procrustes", "identity_linkage",
                                    metric_params={**params, "reference_condition": "raw"})
    assert raw_scorer(pipe, X, identity=ids, participant=part) == 1.0 - float(raw)
    noisy = _face_pipe(3.0).fit(X, gdp__participant=part)
    assert scorer(noisy, X, identity=ids, participant=part) > 1.0 - float(expected) + 0.2
    assert scorer.get_metadata_routing().score.requests == {"participant": True,
                                                            "identity": True}
    with sklearn.config_context(enable_metadata_routing=True):
        cv = cross_validate(_face_pipe(0.0), X, cv=KFold(2, shuffle=True, random_state=0),
                            params={"participant": part, "identity": ids},
                            scoring={"privacy": scorer})
    assert np.all((cv["test_privacy"] >= 0) & (cv["test_privacy"] < 0.9))


def test_identity_linkage_scorer_errors(lfw_identities):
    f = lfw_identities
    with pytest.raises(ValueError, match="lacks \\['reference_identity'\\]"):
        make_attack_scorer("mp", "identity_linkage", metric_params={"references": f.X})
    with pytest.raises(ValueError, match="reference_condition must be 'decoded'"):
        make_attack_scorer("mp", "identity_linkage", metric_params={
            "references": f.references, "reference_identity": f.reference_identity,
            "reference_condition": "clean"})
    scorer = make_attack_scorer("mp", "identity_linkage", metric_params={
        "references": f.references, "reference_identity": f.reference_identity})
    pipe = _face_pipe(0.0).fit(f.X_protocol, gdp__participant=f.participant)
    with pytest.raises(ValueError, match="needs the identity of each evaluation row"):
        scorer(pipe, f.X_protocol, participant=f.participant)
    with pytest.raises(ValueError, match="one entry per evaluation row"):
        scorer(pipe, f.X_protocol, identity=f.identity_protocol[:-1], participant=f.participant)
    with pytest.raises(TypeError, match="only takes participant."):
        make_attack_scorer("mp")(pipe, f.X_protocol, identity=f.identity_protocol)
