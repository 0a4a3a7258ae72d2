"""Tests of skdc.attacks.collusion_view: what the colluding analyst is given."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.random_projection import GaussianRandomProjection

from skdc.alignment import GOPPAligner, ReferenceAligner
from skdc.attacks import KnownAnchorAttack, check_colluders, collusion_view
from skdc.mechanisms import IGDP
from skdc.utils._sklearn_compat import InvalidParameterError


def _data(seed=0, n=120, d=5):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, d)
    y = (X[:, 0] > 0.5).astype(int)
    return X, y


def test_view_holds_the_attackers_knowledge():
    X, y = _data()
    pipe = Pipeline([("gdp", IGDP(3, random_state=0)),
                     ("align", GOPPAligner(v=0.1)),
                     ("clf", LogisticRegression())]).fit(X, y)
    mech, align = pipe["gdp"], pipe["align"]
    view = collusion_view(pipe, X, colluder=0, target=2)
    U = mech.transform(X)
    rows = np.flatnonzero(U.participant == 2)
    assert_array_equal(view.target_rows, rows)
    assert_array_equal(view.Y, np.asarray(U)[rows])
    # the target's anchor upload as the analyst received it: noisy, not the clean one
    assert_array_equal(view.B, align.anchor_uploads_[2])
    assert not np.allclose(view.B, U.anchors[2])
    assert_array_equal(view.anchor, mech.anchor_)
    assert_array_equal(view.colluder_rotation, mech.rotations_[0])
    assert_array_equal(view.colluder_translation, mech.translations_[0])
    assert_array_equal(view.aligner_rotations, align.rotations_)
    assert_array_equal(view.colluder_X, X[U.participant == 0])
    assert not view.common_secret
    # scoring truth kept apart
    assert_array_equal(view.truth.X, X[rows])
    assert_array_equal(view.truth.rotation, mech.rotations_[2])


def test_view_without_aligner_uses_clean_anchor_uploads():
    X, _ = _data()
    mech = IGDP(2, random_state=0).fit(X)
    view = collusion_view(mech, X)
    assert view.aligner is None and view.aligner_rotations is None
    assert_array_equal(view.B, mech.transform(X).anchors[1])


def test_view_decodes_through_public_projection():
    """At v = 0 the decoded reconstruction equals X F F^+ (eq. (78); Figs 3 and 10 of the GDP
    paper)."""
    X, y = _data(d=12)
    pipe = Pipeline([
        ("scale", StandardScaler()),
        ("proj", GaussianRandomProjection(6, compute_inverse_components=True, random_state=0)),
        ("gdp", IGDP(2, random_state=0)),
        ("align", ReferenceAligner()),
    ]).fit(X)
    view = collusion_view(pipe, X)
    assert [n for n, _ in view.decoders] == ["scale", "proj"]
    assert_allclose(view.truth.X, X[view.target_rows], rtol=0)
    rec = KnownAnchorAttack().reconstruct(view)
    proj = pipe["proj"]
    Xs = pipe["scale"].transform(X[view.target_rows])
    expected = pipe["scale"].inverse_transform(proj.inverse_transform(proj.transform(Xs)))
    assert_allclose(rec.X, expected, rtol=1e-8, atol=1e-8)
    assert_allclose(rec.X_mechanism, view.truth.X_mechanism, rtol=1e-10, atol=1e-10)


def test_view_stops_decoding_at_a_step_without_inverse():
    X, _ = _data()
    pipe = Pipeline([("square", FunctionTransformer(np.square)),  # identity inverse: not one
                     ("scale", StandardScaler()),
                     ("skip", "passthrough"),
                     ("gdp", IGDP(2, random_state=0))]).fit(X)
    view = collusion_view(pipe, X)
    assert [n for n, _ in view.decoders] == ["scale"]
    assert_allclose(view.truth.X, X[view.target_rows] ** 2, rtol=0)
    rec = KnownAnchorAttack().reconstruct(view)
    assert_allclose(rec.X, view.truth.X, rtol=1e-8, atol=1e-8)


def test_view_uses_declared_participants():
    X, _ = _data()
    ids = np.arange(len(X)) % 2
    mech = IGDP(2, random_state=0).fit(X, participant=ids)
    view = collusion_view(mech, X, participant=ids)
    assert_array_equal(view.target_rows, np.flatnonzero(ids == 1))
    ids = np.arange(len(X)) % 3
    mech = IGDP(3, random_state=0).fit(X, participant=ids)
    view = collusion_view(mech, X, participant=ids, colluder=[2, 0], target=1)
    assert_array_equal(view.colluder_rows, np.flatnonzero(ids != 1))
    assert_array_equal(view.colluder_X, X[ids != 1])


def test_view_errors():
    X, _ = _data()
    with pytest.raises(TypeError, match="needs a pipeline with a participant-side mechanism"):
        collusion_view(Pipeline([("s", StandardScaler())]).fit(X), X)
    mech = IGDP(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="colluder and target must be different"):
        collusion_view(mech, X, colluder=1, target=1)
    with pytest.raises(ValueError, match="target=5 is not a participant"):
        collusion_view(mech, X, target=5)
    with pytest.raises(ValueError, match="target participant 1 has no rows"):
        collusion_view(mech, X[:10], participant=np.zeros(10, dtype=int))
    with pytest.raises(ValueError, match="target participant 1 has only"):
        collusion_view(mech, X).leak_target_pairs(10_000)


def test_view_with_several_colluders():
    X, _ = _data(n=200)
    pipe = Pipeline([("gdp", IGDP(4, random_state=0)), ("align", GOPPAligner(v=0.1))]).fit(X)
    mech, align = pipe["gdp"], pipe["align"]
    view = collusion_view(pipe, X, colluder=[3, 0], target=1)
    part = mech.transform(X).participant
    assert view.colluders == (3, 0) and view.colluder == (3, 0)
    assert_array_equal(view.colluder_rows, np.flatnonzero((part == 3) | (part == 0)))
    assert_array_equal(view.colluder_X, X[view.colluder_rows])
    for j, c in enumerate((3, 0)):
        assert_array_equal(view.colluder_rotations[j], mech.rotations_[c])
        assert_array_equal(view.colluder_translations[j], mech.translations_[c])
        assert_array_equal(view.colluder_anchor_uploads[j], align.anchor_uploads_[c])
    with pytest.raises(AttributeError, match="2 participants collude .* colluder_rotations"):
        _ = view.colluder_rotation
    # an int and a one-element list are the same view
    one, listed = collusion_view(pipe, X, colluder=2), collusion_view(pipe, X, colluder=[2])
    assert one.colluder == listed.colluder == 2 and one.colluders == (2,)
    assert_array_equal(one.colluder_rotation, listed.colluder_rotation)
    assert_array_equal(one.colluder_B, align.anchor_uploads_[2])
    assert collusion_view(pipe, X, colluder=np.array([0, 2])).colluders == (0, 2)


@pytest.mark.parametrize("colluder, err, match", [
    ([0, 2, 0], ValueError, "lists participant 0 more than once"),
    ([0, 1], ValueError, "the target 1 is among the colluders \\[0, 1\\]"),
    ([0, 7], ValueError, "colluder=7 is not a participant: the mechanism has 3"),
    ([0, -1], ValueError, "colluder=-1 is not a participant"),
    ([], ValueError, "at least one participant"),
    ([0, 1.5], TypeError, "must be an int participant id; got float"),
    ("0", TypeError, "an int participant id or a list of them"),
    ([True], TypeError, "must be an int participant id; got bool"),
])
def test_view_rejects_bad_colluder_sets(colluder, err, match):
    X, _ = _data()
    mech = IGDP(3, random_state=0).fit(X)
    with pytest.raises(err, match=match):
        collusion_view(mech, X, colluder=colluder, target=1)


def test_check_colluders_without_participant_count():
    assert check_colluders([4, 9], target=0) == (4, 9)
    with pytest.raises(ValueError, match="colluder=-2 is not a participant id"):
        check_colluders(-2)


def test_view_and_check_colluders_validate_their_parameters():
    X, _ = _data()
    with pytest.raises(InvalidParameterError, match="'estimator' parameter of collusion_view"):
        collusion_view(StandardScaler().fit(X), X)
    mech = IGDP(2, random_state=0).fit(X)
    with pytest.raises(InvalidParameterError, match="'target' parameter of collusion_view"):
        collusion_view(mech, X, target=-1)
    with pytest.raises(InvalidParameterError, match="'participant' parameter"):
        collusion_view(mech, X, participant=3)
    with pytest.raises(InvalidParameterError, match="'n_participants' parameter"):
        check_colluders(0, n_participants=0)
    # the target is checked like a colluder, by check_colluders itself, with advice
    with pytest.raises(TypeError, match="target must be an int participant id; got str"):
        check_colluders(0, target="1")
    with pytest.raises(TypeError, match="target must be an int participant id; got bool"):
        check_colluders(0, target=True)
    with pytest.raises(ValueError, match="target=3 is not a participant: the mechanism has 3"):
        check_colluders(0, target=3, n_participants=3)
