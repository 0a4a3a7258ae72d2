"""Noise calibration on digits: the returned noise meets the target on fresh draws."""

from contextlib import contextmanager

import numpy as np
import pytest
from joblib import parallel_config
from numpy.testing import assert_allclose
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skdc.alignment import GOPPAligner, v_phase_transition
from skdc.experiments import NoiseCalibration, calibrate_noise, privacy_utility_sweep
from skdc.experiments._calibrate import _prediction_bounds
from skdc.mechanisms import IGDP

ATTACKS = ["procrustes", "alignment_map"]
# Small on purpose: 3 participants, 16 PCA features, 450 rows.
# Procrustes error grows about 2.9 v here; v_PT = v_phase_transition(3, 16, 64) = 0.177.
COMMON = dict(param="align__v", bounds=(0.0, 0.16), xtol=0.01, n_draws=6, progress=False)
TARGET = 0.2


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    X = PCA(16, random_state=0).fit_transform(X / 16.0)
    X = X / np.sqrt((X**2).sum(axis=1).mean())
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, train_size=300, test_size=150, stratify=y,
                                              random_state=0)
    pipe = Pipeline([("gdp", IGDP(3, random_state=0)), ("align", GOPPAligner()),
                     ("clf", RidgeClassifier())])
    return pipe, X_tr, y_tr, (X_te, y_te)


def _fresh_rate(pipe, X_tr, y_tr, test, value, targets, n, seed):
    """Share of fresh draws at ``value`` whose every attack meets its target (via the sweep)."""
    df = privacy_utility_sweep(pipe, X_tr, y_tr, test_data=test, param="align__v",
                               values=[value], n_draws=n, attacks=list(targets),
                               random_state=seed, progress=False)
    ok = np.all([df[a].to_numpy() >= t for a, t in targets.items()], axis=0)
    return ok.mean()


@pytest.fixture(scope="module")
def calibrations(digits):
    pipe, X_tr, y_tr, test = digits
    return [calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                            min_error=TARGET, confidence=0.9, random_state=seed, **COMMON)
            for seed in (0, 1)]


def test_meets_target_on_fresh_draws_at_stated_rate(digits, calibrations):
    pipe, X_tr, y_tr, test = digits
    rates, below = [], []
    for seed, cal in enumerate(calibrations):
        assert isinstance(cal, NoiseCalibration)
        assert cal.bracket[0] < cal.value == cal.bracket[1]
        assert cal.bracket_width <= COMMON["xtol"] + 1e-12
        rates.append(_fresh_rate(pipe, X_tr, y_tr, test, cal.value, {"procrustes": TARGET}, 30,
                                 1000 + seed))
        # not far above the smallest value that meets: two bracket widths lower already fails
        lower = cal.value - 2 * cal.bracket_width
        below.append(_fresh_rate(pipe, X_tr, y_tr, test, lower, {"procrustes": TARGET}, 30,
                                 2000 + seed))
    assert np.mean(rates) >= 0.9 - 0.1, rates
    assert max(below) < 0.9, below


def test_result_holds_its_draws_and_intervals(calibrations):
    cal = calibrations[0]
    n_values = cal.table["value"].nunique()
    assert cal.n_draws_run == n_values * COMMON["n_draws"] == len(cal.table)
    at = cal.table[cal.table["value"] == cal.value]
    # the reported numbers are the draws' numbers, recomputed here independently
    assert_allclose(cal.attack_error, at["procrustes"].mean(), rtol=1e-12)
    assert_allclose(cal.utility, at["balanced_accuracy"].mean(), rtol=1e-12)
    lo, hi = cal.utility_interval
    assert lo <= cal.utility <= hi
    from scipy import stats

    e = at["procrustes"].to_numpy()
    t = stats.t.ppf(0.9, e.size - 1)
    assert_allclose(cal.attack_error_interval[0],
                    e.mean() - t * e.std(ddof=1) * np.sqrt(1 + 1 / e.size), rtol=1e-10)
    assert cal.attack_error_interval[0] >= TARGET
    # the value just below the answer fails in the summary, the answer meets
    s = cal.summary.set_index("value")
    assert not s.loc[cal.bracket[0], "meets"] and s.loc[cal.value, "meets"]
    assert_allclose(cal.v_phase_transition, v_phase_transition(3, 16, 64),
                    rtol=1e-12)


def test_noise_is_redrawn_through_the_sweep_seed(calibrations):
    table = calibrations[0].table
    # draw k has the same seed at every value (common random numbers) ...
    per_draw = table.groupby("draw")["draw_seed"].nunique()
    assert (per_draw == 1).all()
    assert table.groupby("value")["draw_seed"].nunique().eq(COMMON["n_draws"]).all()
    # ... and the draws at one noisy value differ: the noise was redrawn
    noisy = table[table["value"] == calibrations[0].value]
    assert noisy["procrustes"].nunique() == COMMON["n_draws"]


def test_several_attacks_binding_one_decides(digits):
    pipe, X_tr, y_tr, test = digits
    kw = dict(test_data=test, confidence=0.9, random_state=0, **dict(COMMON, n_draws=4))
    targets = {"procrustes": 0.15, "alignment_map": 0.35}
    single = {a: calibrate_noise(pipe, X_tr, y_tr, attack=a, min_error=t, **kw).value
              for a, t in targets.items()}
    both = calibrate_noise(pipe, X_tr, y_tr, attack=ATTACKS, min_error=targets, **kw)
    assert both.value == max(single.values())
    assert both.binding_attack == max(single, key=single.get)
    assert set(both.attack_errors) == set(ATTACKS)


def test_warns_when_nothing_in_range_meets(digits):
    pipe, X_tr, y_tr, test = digits
    with pytest.warns(UserWarning, match="No value of align__v"):
        cal = calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                              min_error=50.0, random_state=0, **COMMON)
    assert np.isnan(cal.value) and cal.bracket == (0.16, np.inf)
    assert cal.n_draws_run == COMMON["n_draws"]  # only the upper end was needed


def test_low_end_meeting_returns_it(digits):
    pipe, X_tr, y_tr, test = digits
    cal = calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                          min_error=-1.0, random_state=0, **COMMON)
    assert cal.value == 0.0 and cal.bracket == (0.0, 0.0)


def test_warns_above_phase_transition(digits):
    pipe, X_tr, y_tr, test = digits
    v_pt = v_phase_transition(3, 16, 64)
    kw = dict(COMMON, bounds=(0.0, 0.4), xtol=0.05, n_draws=3)
    with pytest.warns(UserWarning, match="above the phase-transition level"):
        cal = calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                              min_error=0.6, random_state=0, **kw)
    assert cal.value > v_pt


def test_checkpoint_resume_equals_uninterrupted(digits, tmp_path):
    pipe, X_tr, y_tr, test = digits
    kw = dict(test_data=test, attack="procrustes", min_error=TARGET, random_state=3,
              **dict(COMMON, n_draws=3, xtol=0.03))
    ref = calibrate_noise(pipe, X_tr, y_tr, **kw)
    path = tmp_path / "draws.jsonl"
    calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, **kw)
    lines = path.read_text().splitlines()
    # an interruption: the last draws are lost and one line is cut in the middle
    path.write_text("\n".join(lines[:5]) + "\n" + lines[5][:17])
    resumed = calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, **kw)
    cols = [c for c in ref.table.columns if c != "seconds"]
    assert ref.table[cols].equals(resumed.table[cols])
    assert resumed.value == ref.value and resumed.bracket == ref.bracket
    # a checkpoint of other settings is refused, not mixed in
    with pytest.raises(ValueError, match="other settings"):
        calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, **dict(kw, random_state=4))
    with pytest.raises(ValueError, match="differ in attacks"):  # another colluder
        calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, colluder=2, **kw)


def test_prediction_bounds_cover_fresh_draws():
    # independent Monte Carlo: the share of fresh draws above the lower bound is `confidence`
    rng = np.random.RandomState(0)
    hits_normal, hits_order = [], []
    for _ in range(3000):
        sample = rng.standard_normal(10)
        fresh = rng.standard_normal()
        hits_normal.append(fresh >= _prediction_bounds(sample, 0.9, "normal")[0])
        skewed = rng.exponential(size=19)
        hits_order.append(rng.exponential() >= _prediction_bounds(skewed, 0.95, "order")[0])
    assert abs(np.mean(hits_normal) - 0.9) < 0.02
    assert abs(np.mean(hits_order) - 0.95) < 0.015  # 19 draws: the minimum covers 19/20


@pytest.mark.parametrize("kwargs, match", [
    (dict(confidence=1.5), "confidence"),
    (dict(n_draws=1), "n_draws"),
    (dict(bound="order", n_draws=5), "at least 19 draws"),
    (dict(bounds=(0.2, 0.1)), "low < high"),
    (dict(param="align__vv"), "Did you mean 'align__v'"),
    (dict(min_error={"mp": 0.3}), "one target per attack"),
])
def test_bad_inputs_are_named(digits, kwargs, match):
    pipe, X_tr, y_tr, test = digits
    kw = dict(param="align__v", attack="procrustes", min_error=0.3, test_data=test)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=match):
        calibrate_noise(pipe, X_tr, y_tr, **kw)


@contextmanager
def _backend(name):
    if name == "dask":
        distributed = pytest.importorskip("distributed")
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster:
            with distributed.Client(cluster), parallel_config(backend="dask"):
                yield
    else:
        with parallel_config(backend=name):
            yield


# multiprocessing, like Ray's backend, cannot yield results one by one
@pytest.mark.parametrize("backend", ["dask", "multiprocessing"])
def test_same_calibration_under_other_backends(digits, backend):
    pipe, X_tr, y_tr, test = digits
    kw = dict(test_data=test, attack="procrustes", min_error=TARGET, random_state=5,
              confidence=0.75, **dict(COMMON, n_draws=2, xtol=0.04))
    local = calibrate_noise(pipe, X_tr, y_tr, **kw)
    with _backend(backend):
        remote = calibrate_noise(pipe, X_tr, y_tr, n_jobs=2, **kw)
    cols = [c for c in local.table.columns if c != "seconds"]
    assert local.table[cols].equals(remote.table[cols])
    assert np.isfinite(local.value) and remote.value == local.value
