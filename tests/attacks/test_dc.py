"""Tests of the DC anchor-regression attacks (the reconstruction attacks of Section 5.5 of the
KTI paper)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.linear_model import LinearRegression

from skdc.attacks import AnchorRegressionAttack, KnownAnchorAttack, collusion_view
from skdc.mechanisms import CGDP, IGDP, BaseMechanism
from skdc.metrics import relative_error


class _TanhReducer(BaseMechanism):
    """Test mechanism: participant i maps rows by tanh(X W_i) to fewer dimensions."""

    def __init__(self, n_participants=2, *, n_components=3, anchor="uniform", n_anchors=300,
                 random_state=None):
        super().__init__(n_participants, anchor=anchor, n_anchors=n_anchors,
                         random_state=random_state)
        self.n_components = n_components

    def _fit_participants(self, X, participant, rng):
        self.weights_ = rng.randn(self.n_participants, X.shape[1], self.n_components) * 0.5
        return self.n_components

    def _apply(self, X, i):
        return np.tanh(X @ self.weights_[i])


@pytest.mark.parametrize("regressor", ["pinv", "lr", LinearRegression()],
                         ids=["pinv", "lr", "estimator"])
def test_anchor_regression_exact_on_gdp(regressor):
    """For a GDP map with noiseless anchors every linear attack is exact."""
    X = np.random.RandomState(0).rand(80, 4)
    view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    rec = AnchorRegressionAttack(regressor).reconstruct(view)
    assert relative_error(view.truth.X, rec.X) < 1e-10


def test_anchor_regression_on_a_nonlinear_reducer():
    """Upload -> raw learned from (B_target, A) works where GDP inversions cannot."""
    rng = np.random.RandomState(0)
    X = rng.rand(400, 5)
    mech = _TanhReducer(2, random_state=0).fit(X)
    view = collusion_view(mech, X)
    assert view.Y.shape[1] == 3
    with pytest.raises(ValueError, match="inverts a GDP map, which keeps the width"):
        KnownAnchorAttack().reconstruct(view)
    baseline = relative_error(view.truth.X, np.tile(view.anchor.mean(0), (len(view.Y), 1)))
    for reg in ("pinv", "lr", "mlp"):
        rec = AnchorRegressionAttack(reg, random_state=0).reconstruct(view)
        assert rec.X.shape == view.truth.X.shape
        assert relative_error(view.truth.X, rec.X) < baseline


def test_anchor_regression_on_leaked_subset_and_mlp_seed():
    X = np.random.RandomState(0).rand(80, 4)
    view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    rec = AnchorRegressionAttack(anchor_rows=np.arange(8)).reconstruct(view)
    assert relative_error(view.truth.X, rec.X) < 1e-10  # 8 >= d + 1 rows suffice
    a = AnchorRegressionAttack("mlp", random_state=0).reconstruct(view).X
    b = AnchorRegressionAttack("mlp", random_state=0).reconstruct(view).X
    assert_allclose(a, b, rtol=0)


def test_anchor_regression_needs_an_anchor():
    X = np.random.RandomState(0).rand(40, 3)
    view = collusion_view(CGDP(2, random_state=0).fit(X), X)
    with pytest.raises(ValueError, match="raw anchor rows .* lacks anchor, B"):
        AnchorRegressionAttack().reconstruct(view)
    view = collusion_view(IGDP(2, random_state=0).fit(X), X)
    with pytest.raises(ValueError, match="at least 2 leaked anchor rows"):
        AnchorRegressionAttack(anchor_rows=[0]).reconstruct(view)


def test_anchor_regression_ignores_extra_colluders():
    """Every colluder discloses the same anchor: a larger coalition gives the same attack, on a
    nonlinear mechanism (each participant its own map)."""
    X = np.random.RandomState(0).rand(300, 6)
    mech = _TanhReducer(4, random_state=0).fit(X)
    one, three = (AnchorRegressionAttack("lr").reconstruct(
        collusion_view(mech, X, colluder=K, target=1)).X for K in (0, [0, 2, 3]))
    np.testing.assert_array_equal(one, three)
