"""The comparison's option runners' own arithmetic (skdc/audit/_options.py), each against a
hand count or a direct computation: the bootstrap of balanced accuracy, the chances of
linkage and of label inference, the error bound a fresh deployment exceeds, and the KTI
route's dimensions."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from sklearn.metrics import balanced_accuracy_score

from skdc.audit import _options
from skdc.audit._options import (
    _bisect_dimensions,
    _deployments,
    _DimensionMaker,
    _error_bound,
    _inference,
    _linkage,
    _linkage_chance,
    _majority_share,
    _resampled_balanced_accuracy,
    _top_dimension,
)

# ----------------------------------------------------------------------------- Local, Central


def test_each_resamples_balanced_accuracy_skips_a_class_it_lacks():
    y = np.array([0, 0, 1, 1])
    correct = np.array([True, False, True, True])
    idx = np.array([[0, 1, 2, 3],   # recalls 1/2 and 2/2
                    [0, 0, 0, 0],   # class 1 absent: recall of class 0 alone, 1
                    [1, 1, 2, 3]])  # recalls 0 and 1
    assert_allclose(_resampled_balanced_accuracy(y, correct, idx), [0.75, 1.0, 0.5],
                    rtol=1e-12)


def test_the_bootstrap_interval_in_batches_is_the_one_of_one_draw(monkeypatch):
    """Resamples drawn in batches (memory linear in the rows) are those of one draw of all of
    them: the interval is the percentile interval of sklearn's balanced accuracy over them."""
    rng = np.random.RandomState(1)
    y = rng.randint(3, size=60)
    pred = np.where(rng.rand(60) < 0.7, y, rng.randint(3, size=60))
    monkeypatch.setattr(_options, "_BOOTSTRAP_CELLS", 60 * 7)  # batches of 7 resamples
    monkeypatch.setattr(_options, "_N_BOOTSTRAP", 200)  # the last batch holds 4 of them
    util, (low, high) = _options._balanced_accuracy_bootstrap(y, pred, 0.9, 5)
    idx = np.random.RandomState(5).randint(60, size=(200, 60))
    boot = [balanced_accuracy_score(y[i], pred[i]) for i in idx]
    assert_allclose([low, high], np.quantile(boot, [0.05, 0.95]), rtol=1e-12)
    assert_allclose(util, balanced_accuracy_score(y, pred), rtol=1e-12)


def test_linkage_chance_is_one_over_the_gallery_of_same_label_rows():
    # three rows of label 0 (galleries of 3), twelve of label 1 (galleries capped at 10)
    y = np.r_[np.zeros(3, int), np.ones(12, int)]
    assert_allclose(_linkage_chance(y), (3 * (1 / 3) + 12 * (1 / 10)) / 15, rtol=1e-12)
    assert_allclose(_linkage_chance(y, n_candidates=2), 0.5, rtol=1e-12)
    assert _linkage_chance(np.array([4, 5, 6])) == 1.0  # alone in its label: no guess


def test_the_majority_share_is_the_commonest_labels():
    assert_allclose(_majority_share(np.array([0, 1, 1, 2])), 0.5, rtol=1e-12)
    assert _majority_share(np.array(["a", "a", "a"])) == 1.0
    assert (_deployments(1), _deployments(3)) == ("1 deployment", "3 deployments")


@pytest.fixture(scope="module")
def clusters():
    """Label 0 around 0, label 1 around 6 (three features): any reader tells them apart."""
    rng = np.random.RandomState(0)
    y = np.r_[np.zeros(3, int), np.ones(12, int)]
    return rng.randn(15, 3) * 0.3 + 6.0 * y[:, None], y


def test_an_exact_copy_links_every_row(clusters):
    X, y = clusters
    link, chance = _linkage(X, X, y)
    assert link == 1.0
    assert_allclose(chance, (1 + 1.2) / 15, rtol=1e-12)  # as test_linkage_chance counts


def test_inference_reads_the_labels_off_the_reconstructions(clusters):
    X, y = clusters
    # the first label-0 row reconstructed in the label-1 cluster: 14 of 15 read right
    X_hat = X.copy()
    X_hat[0] = X[5]
    assert_allclose(_inference(X_hat, y, X, y), 14 / 15, rtol=1e-12)


# ----------------------------------------------------------------------------- the error bound


def _cal(criterion, allowed=0, confidence=0.8):
    return SimpleNamespace(criterion=criterion, confidence=confidence,
                           decisions=pd.DataFrame({"allowed_failures": [allowed]}))


def test_the_error_bound_is_the_order_statistic_of_the_allowed_failures():
    errors = pd.Series([0.5, 0.2, 0.9, 0.4, 0.7])
    assert _error_bound(_cal("order"), errors) == 0.2  # none may fail: the smallest
    assert _error_bound(_cal("order", allowed=1), errors) == 0.4  # one may: the second
    assert _error_bound(_cal("clopper-pearson", allowed=2), errors) == 0.5
    # a NaN draw counts as failing, the lowest error
    assert _error_bound(_cal("order", allowed=1), pd.Series([0.5, np.nan, 0.9])) == 0.5
    assert _error_bound(_cal("order"), pd.Series([0.5, np.nan])) == -np.inf


def test_the_normal_error_bound_is_the_student_prediction_bound():
    x = np.array([0.61, 0.55, 0.70, 0.52, 0.66])
    half = stats.t.ppf(0.8, x.size - 1) * x.std(ddof=1) * np.sqrt(1 + 1 / x.size)
    assert_allclose(_error_bound(_cal("normal"), pd.Series(x)), x.mean() - half, rtol=1e-12)


# ----------------------------------------------------------------------------- the KTI route


@pytest.mark.parametrize("smallest, expected", [(None, (3.0, (2.0, 3.0))),
                                                (0, (0.0, (0.0, 0.0))),
                                                (8, (np.nan, (7.0, np.inf)))])
def test_the_fewest_dimensions_dropped_that_pass(smallest, expected):
    """Out of ``0 .. 7`` dropped, values from ``smallest`` on pass (3 by default)."""
    passing = 3 if smallest is None else smallest
    asked = []

    def search(k):
        asked.append(k)
        return k >= passing

    value, bracket = _bisect_dimensions(search, 8)
    assert_allclose([value, *bracket], [expected[0], *expected[1]], rtol=1e-12)
    assert asked[0] == 7  # the most dropped first: when even it fails, nothing passes
    assert len(asked) <= 2 + int(np.ceil(np.log2(7)))


def _ctx(parties, width=6, max_components=None, nonlinear="kpca"):
    parties = np.asarray(parties)
    held = SimpleNamespace(participant_train=parties, X_train=np.zeros((parties.size, width)))
    return SimpleNamespace(held=held, n_participants=int(parties.max()) + 1,
                           max_components=max_components, nonlinear=nonlinear)


def test_the_top_dimension_fits_the_smallest_party():
    parties = [0] * 5 + [1] * 9  # the smallest party holds 5 training rows
    assert _top_dimension(_ctx(parties)) == 4  # 5 - 1 components, under the width 6
    assert _top_dimension(_ctx(parties, width=3)) == 3
    assert _top_dimension(_ctx(parties, max_components=2)) == 2
    assert _top_dimension(_ctx(parties, nonlinear="umap")) == 3  # UMAP: 5 - 2
    with pytest.raises(ValueError, match="parties of at least 2 training rows; the smallest "
                                         "has 1"):
        _top_dimension(_ctx([0, 1, 1]))


def test_a_dimension_maker_keeps_top_less_the_dropped_components():
    from sklearn.decomposition import PCA
    from sklearn.pipeline import Pipeline

    pipe = Pipeline([("dr", PCA(n_components=5))])
    maker = _DimensionMaker(pipe, "dimensions dropped", "deployment", "dr__n_components", 5)
    assert maker(2.0, 7).get_params()["dr__n_components"] == 3
    assert maker(0.4, 7).get_params()["dr__n_components"] == 5  # rounded
    assert pipe.get_params()["dr__n_components"] == 5  # the template is left alone
