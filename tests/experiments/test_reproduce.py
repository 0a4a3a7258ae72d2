"""The papers' experiments as public functions (skdc.experiments._reproduce): Proposition 2.12
and the noise sweeps of the GDP paper (Nosaka et al., arXiv:2608.18749, Section 5.2), the KTI
paper's comparison of integrations (Suetake et al., arXiv:2605.27219, Section 5.2), and the
files a reproduction writes."""

import os

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from threadpoolctl import threadpool_limits

from skdc import CGDP, IGDP, GOPPAligner
from skdc.experiments import (
    Reproduction,
    reproduce_kti,
    reproduce_mnist_equivalence,
    reproduce_mnist_sweep,
    sweep_private_and_anchor_noise,
)
from skdc.experiments._reproduce import _utility_at_linkage
from skdc.utils._files import FileError
from tests._fuzz import CASES

pd = pytest.importorskip("pandas")
pytest.importorskip("matplotlib")

SMALL = dict(n_participants=3, n_anchors=30, n_components=10)


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield


@pytest.fixture(scope="module")
def rows():
    """Train and test rows of a 20-feature task (the projection F keeps 10 of them)."""
    X, y = make_classification(n_samples=300, n_features=20, n_informative=8,
                               random_state=np.random.RandomState(0))
    return X[:200], y[:200], X[200:], y[200:]


def test_equivalence_holds_and_the_classifiers_agree(rows):
    """Prop 2.12: C-GDP's uploads and AA-I-GDP's aligned matrix are one matrix, so the two
    classifiers trained on them predict alike; unaligned I-GDP is the control."""
    rep = reproduce_mnist_equivalence(*rows, progress=False, **SMALL)
    assert rep.details["discrepancy"] < 1e-10 and rep.details["holds"]
    table = rep.table.set_index("method")
    assert list(table.index) == ["C-GDP", "AA-I-GDP", "I-GDP"]
    assert table.loc["C-GDP", "balanced_accuracy"] == table.loc["AA-I-GDP", "balanced_accuracy"]
    assert table["balanced_accuracy"].between(0, 1).all()
    assert (table["discrepancy"] == rep.details["discrepancy"]).all()


def _pipelines():
    private = Pipeline([("gdp", CGDP(3, random_state=0)), ("clf", LogisticRegression())])
    anchor = Pipeline([("gdp", IGDP(3, random_state=0)), ("align", GOPPAligner()),
                       ("clf", LogisticRegression())])
    return private, anchor


def test_the_two_sweeps_and_their_strongest_attack():
    X, y = make_classification(n_samples=300, n_features=6, random_state=np.random.RandomState(1))
    results = sweep_private_and_anchor_noise(
        *_pipelines(), X[:200], y[:200], X[200:], y[200:], noise_values=[0.3, 0.6],
        v_values=[0.02, 0.05], labels=("private", "anchor"), progress=False)
    assert results["method"].tolist() == ["private"] * 2 + ["anchor"] * 2
    assert results["param"].tolist() == ["gdp__noise"] * 2 + ["align__v"] * 2
    private, anchor = results.iloc[:2], results.iloc[2:]
    # the attacks that apply: known-secret inversion of C-GDP, known-anchor ones of GOPP
    assert private["known_secret"].notna().all() and private["mp"].isna().all()
    assert anchor[["mp", "procrustes", "alignment_map"]].notna().all().all()
    assert anchor["known_secret"].isna().all()
    # the strongest attack is the lowest score of the draw, in each metric
    errors = results[["known_secret", "mp", "procrustes", "alignment_map"]].to_numpy()
    assert_allclose(results["strongest"], np.nanmin(errors, axis=1), rtol=0, atol=0)
    linkage = results[["known_secret_linkage", "mp_linkage", "procrustes_linkage",
                       "alignment_map_linkage"]].to_numpy()
    assert_allclose(results["strongest_linkage"], np.nanmin(linkage, axis=1), rtol=0, atol=0)
    assert results["strongest_linkage"].between(0, 1).all()


def test_the_sweeps_without_attacks_score_utility_only():
    X, y = make_classification(n_samples=240, n_features=6, random_state=np.random.RandomState(2))
    results = sweep_private_and_anchor_noise(
        *_pipelines(), X[:160], y[:160], X[160:], y[160:], noise_values=[0.3],
        v_values=[0.05], attacks=False, progress=False)
    assert "strongest" not in results and "mp" not in results
    assert results["balanced_accuracy"].between(0, 1).all()


@pytest.mark.parametrize("old, new", [("private_values", "noise_values"),
                                      ("anchor_values", "v_values")])
def test_the_sweeps_old_value_names_still_work_and_warn(old, new):
    """private_values= and anchor_values= are the deprecated spellings of noise_values= (the
    mechanisms' noise) and v_values= (the aligner's v): same sweep, one FutureWarning."""
    X, y = make_classification(n_samples=120, n_features=6, random_state=np.random.RandomState(3))
    args = (*_pipelines(), X[:80], y[:80], X[80:], y[80:])
    values = {"noise_values": [0.3], "v_values": [0.05]}
    kwargs = dict(attacks=False, random_state=0, progress=False)
    expected = sweep_private_and_anchor_noise(*args, **values, **kwargs)
    old_values = {(old if name == new else name): value for name, value in values.items()}
    with pytest.warns(FutureWarning, match=f"{old}= is deprecated .* use {new}= instead"):
        results = sweep_private_and_anchor_noise(*args, **old_values, **kwargs)
    # the same sweep, its wall-clock seconds aside
    pd.testing.assert_frame_equal(results.drop(columns="seconds"),
                                  expected.drop(columns="seconds"))
    with pytest.raises(TypeError, match=f"pass {new}= only"):
        sweep_private_and_anchor_noise(*args, **values, **{old: [0.1]}, **kwargs)
    del values[new]
    with pytest.raises(TypeError, match=f"missing required keyword argument: '{new}'"):
        sweep_private_and_anchor_noise(*args, **values, **kwargs)


def test_mnist_sweep_levels_and_its_report(rows):
    rep = reproduce_mnist_sweep(*rows, n_draws=1, n_levels=2, attacks=False, v_max=0.05,
                                progress=False, **SMALL)
    anchor = rep.table[rep.table["param"] == "align__v"]
    assert_allclose(sorted(anchor["value"]), [0.025, 0.05], rtol=1e-12)
    private = rep.table[rep.table["param"] == "gdp__noise"]["value"].to_numpy()
    assert private.size == 2 and private.max() <= 50.0
    assert rep.details["auditor"] == "pca" and rep.details["auditor_note"] is None
    assert "headline" not in rep.details  # no attacks, no linkage to read it at
    assert list(rep.details["summary"].columns) == ["balanced_accuracy"]


def test_mnist_sweep_headline_needs_draws(rows):
    """With one draw per kind of noise, no spline can be fitted: the headline says so."""
    rep = reproduce_mnist_sweep(*rows, n_draws=1, n_levels=1, auditor="pca", v_max=0.02,
                                progress=False, **SMALL)
    assert [row["fit"] for row in rep.details["headline"]] == [None, None]
    assert {"strongest", "strongest_linkage"} <= set(rep.details["summary"].columns)


def test_headline_reads_utility_off_a_spline_on_linkage():
    """The headline's number: the spline of balanced accuracy on linkage at 12.4% (exact, up
    to the ridge, for a straight line, which the cubic spline holds), with the observed
    range."""
    rng = np.random.RandomState(0)
    linkage = rng.uniform(0.1, 0.4, 60)
    table = pd.DataFrame({"method": "m", "procrustes_linkage": 1.0 - linkage,
                          "balanced_accuracy": 0.2 + 2.0 * linkage})
    fit, low, high, span = _utility_at_linkage(table, "m", "procrustes_linkage", 0.124, 0)
    assert_allclose(fit, 0.2 + 2.0 * 0.124, rtol=1e-5)  # up to the spline's 1e-8 ridge
    assert_allclose([low, high], fit, rtol=1e-5)  # no residual: a band of zero width
    assert_allclose(span, [linkage.min(), linkage.max()], rtol=1e-12)
    assert _utility_at_linkage(table.iloc[:2], "m", "procrustes_linkage", 0.124, 0) is None


def test_kti_needs_enough_rows_before_any_work():
    X = np.zeros((150, 4))
    y = np.arange(150) % 2
    with pytest.raises(ValueError, match=r"n_participants=2 needs 2 x 100 training rows plus "
                                         r"100 public rows .* X_train has 150"):
        reproduce_kti(X, y, X, y, n_participants=2)


def _table_reproduction():
    """A reproduction with an extra table and a figure, as reproduce_kti returns."""
    from skdc.experiments._reproduce_kti import _kti_figure

    table = pd.DataFrame({"method": ["a", "b"], "mean": [0.5, 0.7], "std": [0.0, 0.1]})
    trials = pd.DataFrame({"trial": [0, 0], "method": ["a", "b"], "accuracy": [0.5, 0.7]})
    return Reproduction("kti", table, extra_tables={"trials": trials}, figure=_kti_figure,
                        title="t")


def test_save_writes_the_tables_then_the_figure(tmp_path):
    files = _table_reproduction().save(tmp_path / "new" / "out")
    assert list(files) == ["kti-trials.csv", "kti.csv", "kti.png"]
    assert pd.read_csv(files["kti.csv"])["mean"].tolist() == [0.5, 0.7]
    assert pd.read_csv(files["kti-trials.csv"])["trial"].tolist() == [0, 0]
    with open(files["kti.png"], "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["kti.csv", "kti-trials.csv", "kti.png"])
def test_save_replaces_a_link_never_writes_through_it(tmp_path, name):
    CASES["output link"] += 1
    victim = tmp_path / "victim"
    victim.write_bytes(b"keep me")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / name)
    _table_reproduction().save(out)
    assert victim.read_bytes() == b"keep me"
    assert not (out / name).is_symlink() and (out / name).stat().st_size > 0


def test_save_under_an_existing_file_is_one_line(tmp_path):
    CASES["output folder under a file"] += 1
    (tmp_path / "file").write_text("x")
    with pytest.raises(FileError) as exc:
        _table_reproduction().save(tmp_path / "file" / "out")
    assert "\n" not in str(exc.value) and "a file, not a folder" in str(exc.value)
    assert (tmp_path / "file").read_text() == "x"

