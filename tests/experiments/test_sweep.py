"""Tests of skdc.experiments.privacy_utility_sweep."""

import os
import sys
import types

import numpy as np
import pandas as pd
import pytest
from joblib import parallel_config
from pandas.testing import assert_frame_equal
from scipy import stats
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from skdc import IGDP, GOPPAligner
from skdc.experiments import privacy_utility_sweep


def _pipe():
    return Pipeline([("gdp", IGDP(n_participants=3, random_state=0)),
                     ("align", GOPPAligner(max_iter=100)),
                     ("clf", LogisticRegression(max_iter=200))])


def relative_rotation_error(est, X, y):
    """A leakage-style scorer: how far the analyst's ``R_1 R_0^T`` is from ``O_1^T O_0``.

    With anchor uploads ``B_i = A O_i + Psi_i`` the GOPP rotations are ``R_i = O_i^T Q`` at
    ``v = 0``, so the error is 0 there and grows with the anchor noise.
    """
    O = est.named_steps["gdp"].rotations_
    R = est.named_steps["align"].rotations_
    return float(np.linalg.norm(R[1] @ R[0].T - O[1].T @ O[0]))


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=150, n_features=4, n_informative=3, n_redundant=0,
                               random_state=0)


def _sweep(data, **kwargs):
    X, y = data
    params = dict(param="align__v", values=[0.0, 0.05, 0.3], n_draws=2,
                  attacks={"rot_err": relative_rotation_error}, random_state=0)
    params.update(kwargs)
    return privacy_utility_sweep(_pipe(), X, y, **params)


@pytest.fixture(scope="module")
def table(data):
    return _sweep(data)


def test_table_layout(table):
    assert list(table.columns) == ["draw", "param", "value", "seed", "balanced_accuracy",
                                   "rot_err", "n_iter", "converged", "fixed_point_residual",
                                   "seconds"]
    assert_frame_equal(table[["draw"]], pd.DataFrame({"draw": np.arange(6)}))
    assert (table["param"] == "align__v").all()
    assert table["value"].tolist() == [0.0, 0.0, 0.05, 0.05, 0.3, 0.3]
    assert table["balanced_accuracy"].between(0, 1).all()
    assert (table["seconds"] >= 0).all()
    assert table["converged"].dtype == bool
    assert (table["n_iter"] >= 1).all()


def test_attack_scores_follow_the_noise(table):
    # the attack scorer sees the fitted pipeline of its own draw: exact at v = 0
    assert (table.loc[table["value"] == 0, "rot_err"] < 1e-8).all()
    assert (table.loc[table["value"] == 0.3, "rot_err"] > 1e-3).all()


def test_each_draw_has_its_own_noise_realization(table):
    # same v, different seeds: different anchor noise, different leakage
    at = table[table["value"] == 0.3]
    assert at["seed"].nunique() == 2
    assert at["rot_err"].nunique() == 2


def _same(a, b):
    assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))


def test_reproducible_from_one_seed(data, table):
    _same(_sweep(data), table)
    other = _sweep(data, random_state=1)
    assert not np.array_equal(other["seed"], table["seed"])


def test_same_table_under_threads(data, table):
    with parallel_config(backend="threading", n_jobs=2):
        _same(_sweep(data), table)


def test_same_table_under_processes(data, table):
    # loky worker processes: the scorer and the pipeline travel by pickling
    with parallel_config(backend="loky", n_jobs=2):
        _same(_sweep(data), table)


def test_same_table_under_a_backend_that_cannot_yield(data, table):
    # joblib's multiprocessing backend (like Ray's) refuses return_as="generator": the sweep
    # then collects the rows at the end, with the same table
    with parallel_config(backend="multiprocessing", n_jobs=2):
        _same(_sweep(data), table)


def test_same_table_under_dask(data, table):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            with parallel_config(backend="dask"):
                dask_table = _sweep(data)
    _same(dask_table, table)


def test_distribution_of_values(data):
    a = _sweep(data, values=stats.uniform(0, 0.2), n_draws=4, attacks=None)
    b = _sweep(data, values=stats.uniform(0, 0.2), n_draws=4, attacks=None)
    assert a.shape[0] == 4 and a["value"].between(0, 0.2).all()
    assert a["value"].nunique() == 4
    _same(a, b)


def test_factory_and_label(data):
    X, y = data

    def factory(v):
        return Pipeline([("gdp", IGDP(n_participants=3, random_state=0)),
                         ("align", GOPPAligner(v=v, max_iter=100)),
                         ("clf", LogisticRegression(max_iter=200))])

    df = privacy_utility_sweep(factory, X, y, values=[0.0, 0.1], label="GOPP",
                               scoring=["accuracy", "balanced_accuracy"], random_state=0)
    ref = _sweep(data, values=[0.0, 0.1], n_draws=None, attacks=None,
                 scoring=["accuracy", "balanced_accuracy"])
    assert (df["method"] == "GOPP").all()
    _same(df.drop(columns="method"), ref)


def test_draws_go_out_largest_noise_first_and_come_back_in_draw_order(data):
    # the factory sees the values as they are dispatched; the rows keep the draws' order, and
    # each row's score is its own draw's (the scorer reads the value the estimator was built at)
    X, y = data
    built = []

    def factory(v):
        built.append(v)
        est = LogisticRegression(max_iter=200)
        est.noise_value_ = v
        return est

    values = [0.2, 0.0, 0.3, 0.1, 0.3]
    df = privacy_utility_sweep(factory, X, y, values=values, seed_param=None,
                               scoring={"value_seen": lambda est, X_, y_: est.noise_value_},
                               random_state=0)
    assert built == [0.3, 0.3, 0.2, 0.1, 0.0]
    np.testing.assert_array_equal(df["value"], values)
    np.testing.assert_array_equal(df["value_seen"], values)


def test_explicit_test_data_and_progress(data, capsys):
    X, y = data
    df = privacy_utility_sweep(_pipe(), X[:100], y[:100], values=[0.01], progress=True,
                               test_data=(X[100:], y[100:]), random_state=0)
    assert df.shape[0] == 1
    assert "sweep align__v" in capsys.readouterr().err


def test_unknown_parameter_before_any_work():
    calls = []

    def attack(est, X, y):
        calls.append(1)
        return 0.0

    # X=None: the message comes before the data are touched
    with pytest.raises(ValueError, match=r"no parameter 'align__vv'.*Did you mean 'align__v'"):
        privacy_utility_sweep(_pipe(), None, None, param="align__vv", values=[0.1],
                              attacks=[attack])
    with pytest.raises(ValueError, match="no parameter 'gdp__random_stat'"):
        privacy_utility_sweep(_pipe(), None, None, values=[0.1], seed_param="gdp__random_stat")
    assert not calls


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, ValueError, "Pass values="),
        ({"values": stats.uniform(0, 1)}, ValueError, "pass n_draws"),
        ({"values": []}, ValueError, "values is empty"),
        ({"values": [0.1], "n_draws": 0}, ValueError, "n_draws must be a positive int"),
        ({"values": [0.1], "inner_threads": 0}, ValueError, "inner_threads must be"),
        ({"values": [0.1], "attacks": [3]}, TypeError, "name or a scorer callable"),
        ({"values": [0.1], "attacks": {"balanced_accuracy": relative_rotation_error}},
         ValueError, "share the names"),
    ],
)
def test_bad_input(data, kwargs, error, match):
    X, y = data
    with pytest.raises(error, match=match):
        privacy_utility_sweep(_pipe(), X, y, **kwargs)


def test_attack_names_resolve_through_skdc_metrics(data, monkeypatch):
    X, y = data
    made = []

    def make_attack_scorer(name):
        made.append(name)
        return relative_rotation_error

    fake = types.ModuleType("skdc.metrics")
    fake.make_attack_scorer = make_attack_scorer
    monkeypatch.setitem(sys.modules, "skdc.metrics", fake)
    df = privacy_utility_sweep(_pipe(), X, y, values=[0.0], attacks=["procrustes"],
                               random_state=0)
    assert made == ["procrustes"]
    assert df["procrustes"].iloc[0] < 1e-8


def test_attack_names_without_skdc_metrics(data, monkeypatch):
    X, y = data
    monkeypatch.setitem(sys.modules, "skdc.metrics", None)
    with pytest.raises(ImportError, match="Pass scorer callables"):
        privacy_utility_sweep(_pipe(), X, y, values=[0.0], attacks="procrustes")


def test_fit_params_need_an_explicit_split(data):
    X, y = data
    with pytest.raises(ValueError, match="pass the split yourself"):
        privacy_utility_sweep(_pipe(), X, y, values=[0.0], fit_params={"participant": y % 3})


def test_regression_target_is_not_stratified():
    # a continuous target: the split must not try to stratify on it
    from sklearn.linear_model import Ridge

    rng = np.random.RandomState(0)
    X = rng.randn(90, 4)
    y = X @ rng.randn(4) + 0.1 * rng.randn(90)
    pipe = Pipeline([("gdp", IGDP(n_participants=3, random_state=0)),
                     ("align", GOPPAligner()), ("reg", Ridge())])
    df = privacy_utility_sweep(pipe, X, y, values=[0.0], scoring="r2", random_state=0)
    assert df["r2"].iloc[0] > 0.9


class _CountedScorer:
    """A scorer that writes the id of each process that unpickles it to a file."""

    def __init__(self, path):
        self.path = str(path)

    def __setstate__(self, state):
        self.__dict__.update(state)
        with open(self.path, "a") as f:
            f.write(f"{os.getpid()}\n")

    def __call__(self, est, X, y):
        return 0.0


def _unpickled_in(path):
    return path.read_text().split() if path.exists() else []


def test_sweep_context_crosses_to_each_worker_once(data, tmp_path):
    # the estimator, the data and the scorers go to a worker once per sweep, not per draw
    X, y = data
    path = tmp_path / "unpickled.txt"
    kw = dict(values=[0.0, 0.05, 0.3], n_draws=3, attacks={"counted": _CountedScorer(path)},
              random_state=0)
    ref = privacy_utility_sweep(_pipe(), X, y, **kw)
    assert _unpickled_in(path) == []  # in-process: used as it is, never pickled back
    with parallel_config(backend="loky", n_jobs=2):
        out = privacy_utility_sweep(_pipe(), X, y, **kw)
    pids = _unpickled_in(path)
    assert 1 <= len(pids) <= 2 and len(set(pids)) == len(pids)  # 9 draws, <= 2 unpickles
    assert str(os.getpid()) not in pids
    _same(out, ref)
