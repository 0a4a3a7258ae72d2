"""Participant (skdc/protocol/_participant.py): the deployment equals the simulation, bit for
bit; what a participant refuses; its anchor-noise scale ``v`` (``anchor_noise=``, deprecated)."""

import os

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.linear_model import Ridge
from sklearn.pipeline import Pipeline

from skdc.alignment import GOPPAligner, ReferenceAligner
from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import CGDP, IGDP
from skdc.protocol import AlignmentMap, Participant, UploadError

from .conftest import API_D as D
from .conftest import P, api_data, api_deploy


def test_round_trip_equals_simulation_bit_for_bit(deployment):
    dep = deployment
    pipe, analyst = dep["pipe"], dep["analyst"]
    assert_array_equal(analyst.aligner_.anchor_uploads_, pipe["align"].anchor_uploads_)
    assert_array_equal(analyst.aligner_.rotations_, pipe["align"].rotations_)
    assert_array_equal(analyst.model_.coef_, pipe["clf"].coef_)
    model = os.path.join(dep["tmp"], "model", "model.npz")
    with sklearn.config_context(enable_metadata_routing=True):
        for i in range(P):
            rows = dep["ids_test"] == i
            me = Participant.load_secret(os.path.join(dep["tmp"], f"secret_{i}.npz"))
            map_i = os.path.join(dep["tmp"], "model", f"map_{i}.npz")
            Z_sim = pipe[:-1].transform(dep["X_test"][rows], participant=dep["ids_test"][rows])
            assert_array_equal(me.transform(dep["X_test"][rows], map_i), Z_sim)
            assert_array_equal(
                me.predict(dep["X_test"][rows], map_i, model),
                pipe.predict(dep["X_test"][rows], participant=dep["ids_test"][rows]),
            )


def test_participant_noise_is_the_mechanism_stream(deployment):
    # what participant i uploads is B_i + v W_i with the simulated mechanism's W_i
    me = Participant(2, IGDP(P, random_state=11, noise_random_state=22), v=0.05)
    up = me.upload(deployment["X"][:4], anchor=deployment["A"])
    sim = IGDP(P, anchor=deployment["A"], random_state=11, noise_random_state=22).fit(
        deployment["X"], participant=deployment["ids"])
    U = sim.transform(deployment["X"][:1], participant=[2])
    # independent arithmetic: the clean upload A O_2 + Psi_2 plus 0.05 times W_2
    clean = deployment["A"] @ sim.rotations_[2] + sim.translations_[2]
    assert_allclose(up.anchors[0], clean + 0.05 * U.unit_anchor_noise[2], rtol=0, atol=1e-14)
    assert up.unit_anchor_noise is None  # what leaves home carries no unit noise
    other = Participant(2, IGDP(P, random_state=11, noise_random_state=23), v=0.05)
    assert not np.array_equal(other.upload(deployment["X"][:4], anchor=deployment["A"])
                              .anchors[0], up.anchors[0])


def test_reference_and_cgdp_deployments_equal_simulation(tmp_path):
    X, y, ids, X_test, ids_test = api_data(1)
    A = orthonormal_anchor(4 * D, D, random_state=2)
    with pytest.warns(UserWarning, match="clean anchor upload"):
        _, analyst = api_deploy(str(tmp_path / "ref"), X, y, ids, A, s0=3, s=4, v=0.0,
                             aligner=ReferenceAligner(reference=1), model=Ridge())
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("gdp", IGDP(P, anchor=A, random_state=3)),
                         ("align", ReferenceAligner(reference=1)), ("clf", Ridge())])
        pipe.fit(X, y, participant=ids)
        for i in range(P):
            me = Participant.load_secret(str(tmp_path / "ref" / f"secret_{i}.npz"))
            rows = ids_test == i
            assert_array_equal(
                me.predict(X_test[rows], analyst.alignment_map(i), analyst.model_),
                pipe.predict(X_test[rows], participant=ids_test[rows]))
        _, analyst = api_deploy(str(tmp_path / "cgdp"), X, y, ids, None, s0=3, s=4, v=0.0,
                             mechanism=CGDP, aligner="none", model=Ridge())
        pipe = Pipeline([("gdp", CGDP(P, random_state=3)), ("clf", Ridge())])
        pipe.fit(X, y, participant=ids)
        me = Participant.load_secret(str(tmp_path / "cgdp" / "secret_2.npz"))
        assert_array_equal(me.predict(X_test[:5], analyst.alignment_map(2), analyst.model_),
                           pipe.predict(X_test[:5], participant=np.full(5, 2)))


def test_participant_refuses_bad_setups(deployment):
    X, A = deployment["X"][:10], deployment["A"]
    with pytest.raises(TypeError, match="runs the GDP mechanisms IGDP and CGDP"):
        Participant(0, GOPPAligner()).upload(X, anchor=A)
    with pytest.raises(ValueError, match="needs a mechanism with n_participants > 3"):
        Participant(3, IGDP(3)).upload(X, anchor=A)
    with pytest.raises(ValueError, match="needs the shared anchor"):
        Participant(0, IGDP(3), v=0.1).upload(X)
    with pytest.raises(ValueError, match="anchor has 4 columns but X has 5"):
        Participant(0, IGDP(3), v=0.1).upload(X, anchor=A[:, :4])
    with pytest.raises(TypeError, match="must be an int in"):
        Participant(0, IGDP(3, random_state=np.random.RandomState(0))).upload(X, anchor=A)
    with pytest.raises(ValueError, match="v must be a finite float"):
        Participant(0, IGDP(3), v=np.nan).upload(X, anchor=A)
    with pytest.raises(ValueError, match="y must have shape"):
        Participant(0, IGDP(3), v=0.1).upload(X, np.zeros(3), anchor=A)
    with pytest.raises(ValueError, match="X contains NaN"):
        Participant(0, IGDP(3), v=0.1).upload(np.full((3, 5), np.nan), anchor=A)
    me = Participant(0, IGDP(3), v=0.1)
    with pytest.raises(ValueError, match="not set up"):
        me.transform(X, AlignmentMap(0, "identity"))
    me.upload(X, anchor=A)
    with pytest.raises(ValueError, match="map is participant 1's; this is participant 0"):
        me.transform(X, AlignmentMap(1, "identity"))
    with pytest.raises(ValueError, match="field 'upload_digest' is null"):
        me.transform(X, AlignmentMap(0, "identity"))
    own = AlignmentMap(0, "identity", upload_digest=me.upload_digest_)
    with pytest.raises(ValueError, match="set up for rows of 5 features; got 3"):
        me.transform(X[:, :3], own)


def test_fresh_seeds_are_drawn_and_differ(deployment):
    a = Participant(0, IGDP(3), v=0.1)
    b = Participant(0, IGDP(3), v=0.1)
    a.upload(deployment["X"][:5], anchor=deployment["A"])
    b.upload(deployment["X"][:5], anchor=deployment["A"])
    assert a.seed_ != b.seed_
    assert not np.array_equal(a.mechanism_.rotations_[0], b.mechanism_.rotations_[0])


def test_private_data_noise_matches_simulation(deployment):
    X, ids, A = deployment["X"], deployment["ids"], deployment["A"]
    sim = IGDP(P, noise=0.1, anchor=A, random_state=11, noise_random_state=13)
    with sklearn.config_context(enable_metadata_routing=True):
        Y = sim.fit_transform(X, participant=ids)
    for i in range(P):
        me = Participant(i, IGDP(P, noise=0.1, random_state=11, noise_random_state=13),
                         v=0.05)
        assert_array_equal(np.asarray(me.upload(X[ids == i], anchor=A)), np.asarray(Y)[ids == i])
    # a given secret seed alone may be shared (C-GDP): the noise is then the participant's own,
    # from the operating system, not the simulation's (derived from that seed)
    me = Participant(0, IGDP(P, noise=0.1, random_state=11), v=0.05)
    assert not np.array_equal(np.asarray(me.upload(X[ids == 0], anchor=A)),
                              np.asarray(Y)[ids == 0])
    assert me.noise_seed_.bit_length() == 129


def test_participant_records_a_dataframes_column_names(tmp_path):
    """A DataFrame's columns are the schema: recorded at upload, matched by name after."""
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    A = orthonormal_anchor(4 * D, D, random_state=0)
    names = [f"c{j}" for j in range(D)]
    frame = pd.DataFrame(rng.rand(20, D), columns=names)
    me = Participant(0, IGDP(n_participants=2, random_state=1, noise_random_state=2),
                     v=0.05)
    me.upload(frame, anchor=A)
    assert me.feature_names_in_ == names
    own = AlignmentMap(0, "identity", upload_digest=me.upload_digest_)
    expected = me.transform(frame, own)
    with pytest.warns(UserWarning, match="reordered by name"):
        swapped = me.transform(frame[names[::-1]], own)
    assert_allclose(swapped, expected, rtol=0)
    with pytest.raises(UploadError, match="column 1 is 'x' where"):
        me.transform(frame.rename(columns={"c0": "x"}), own)
    # explicit names win; a map of other columns is refused
    me.upload(frame.to_numpy(), anchor=A, feature_names=names[::-1])
    assert me.feature_names_in_ == names[::-1]
    other = AlignmentMap(0, "identity", upload_digest=me.upload_digest_, feature_names=names)
    with pytest.raises(UploadError, match="field 'feature_names' has column 1 'c0'"):
        me.transform(frame.to_numpy(), other)
    with pytest.raises(UploadError, match="distinct column names"):
        me.upload(frame.to_numpy(), anchor=A, feature_names=["a"] * D)


def test_anchor_noise_is_a_deprecated_spelling_of_v(deployment):
    X, A = deployment["X"][:10], deployment["A"]
    mech = IGDP(P, random_state=11, noise_random_state=22)
    new = Participant(2, mech, v=0.05)
    with pytest.warns(FutureWarning, match="anchor_noise= is deprecated.*use v= instead") \
            as caught:
        old = Participant(2, mech, anchor_noise=0.05)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert old.v == 0.05
    assert_array_equal(old.upload(X, anchor=A).anchors[0], new.upload(X, anchor=A).anchors[0])
    assert old.upload_digest_ == new.upload_digest_  # the same upload file, to the bit
    with pytest.warns(FutureWarning, match="Participant.anchor_noise is deprecated"):
        assert new.anchor_noise == 0.05
    with pytest.raises(TypeError, match="pass v= only"):
        Participant(2, mech, v=0.1, anchor_noise=0.05)
