"""``set_output(transform="pandas")`` through a mechanism and an aligner.

The mechanism's DataFrame keeps each row's participant and the anchor uploads in its
``attrs``; the aligner reads them back and its own output becomes a DataFrame with its feature
names and the input's row labels. Predictions equal those of the default (array) output.
"""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from skdc import IGDP, GOPPAligner, Uploads
from skdc.alignment import KTIAligner
from skdc.mechanisms import KernelPCAMechanism

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def frame():
    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.randn(90, 4), columns=["age", "bmi", "bp", "hr"],
                     index=[f"patient{k}" for k in range(90)])
    y = (X["age"] + X["bmi"] + 0.3 * rng.randn(90) > 0).astype(int)
    return X, y


def _gdp_pipe():
    return Pipeline([("scale", StandardScaler()),
                     ("gdp", IGDP(n_participants=3, random_state=0)),
                     ("align", GOPPAligner(v=0.05)),
                     ("clf", LogisticRegression())])


def test_pandas_output_runs_and_predicts_as_arrays_do(frame):
    X, y = frame
    expected = _gdp_pipe().fit(X, y).predict_proba(X)
    pipe = _gdp_pipe().set_output(transform="pandas")
    assert_allclose(pipe.fit(X, y).predict_proba(X), expected, rtol=1e-12, atol=1e-12)
    Z = pipe[:-1].transform(X.iloc[10:20])
    assert isinstance(Z, pd.DataFrame)
    assert Z.columns.tolist() == [f"goppaligner{k}" for k in range(4)]
    assert Z.index.tolist() == X.index[10:20].tolist()


def test_mechanism_frame_carries_the_uploads(frame):
    X, _ = frame
    mech = IGDP(n_participants=3, random_state=0)
    plain = mech.fit_transform(X)
    out = mech.set_output(transform="pandas").transform(X)
    assert isinstance(out, pd.DataFrame) and out.columns.tolist() == [
        f"igdp{k}" for k in range(4)]
    back = Uploads.from_frame(out)
    assert_allclose(np.asarray(back), np.asarray(plain), rtol=0, atol=0)
    assert_array_equal(back.participant, plain.participant)
    for b, p in zip(back.anchors, plain.anchors):
        assert_allclose(b, p, rtol=0, atol=0)
    # rows selected and reordered by label keep their participants
    picked = out.loc[["patient7", "patient2", "patient40"]]
    assert_array_equal(Uploads.from_frame(picked).participant, plain.participant[[7, 2, 40]])


def test_frame_without_metadata_is_refused_with_a_true_message(frame):
    X, y = frame
    aligner = GOPPAligner()
    with pytest.raises(TypeError) as exc:
        aligner.fit(X)
    msg = str(exc.value)
    assert "DataFrame without the mechanism's metadata" in msg
    assert "Put a mechanism before the aligner" not in msg
    out = IGDP(n_participants=3, random_state=0).set_output(transform="pandas").fit_transform(X)
    relabelled = out.set_axis([f"r{k}" for k in range(len(out))], axis=0)
    with pytest.raises(ValueError, match="its index changed after the mechanism"):
        aligner.fit(relabelled)


def test_polars_output_is_refused_at_the_mechanism(frame):
    X, _ = frame
    mech = IGDP(n_participants=3, random_state=0).fit(X.to_numpy())
    mech._sklearn_output_config = {"transform": "polars"}  # set_output needs polars installed
    with pytest.raises(ValueError, match="a polars frame cannot carry each row's participant"):
        mech.transform(X.to_numpy())


def test_pandas_output_through_a_nonlinear_integration(frame):
    X, y = frame
    rng = np.random.RandomState(1)
    public = pd.DataFrame(rng.randn(40, 4), columns=X.columns)

    def pipe():
        return Pipeline([("kpca", KernelPCAMechanism(n_participants=3, n_components=3,
                                                     anchor=public.to_numpy(),
                                                     random_state=0)),
                         ("kti", KTIAligner()), ("clf", LogisticRegression())])

    expected = pipe().fit(X, y).predict(X)
    assert_array_equal(pipe().set_output(transform="pandas").fit(X, y).predict(X), expected)
