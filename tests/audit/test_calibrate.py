"""Noise calibration: a distribution-free verdict over fresh deployments.

The heavy-tailed tests use a toy estimator whose "attack error" is ``v * L`` with ``L``
lognormal, drawn from the draw's seed: the true crossing (the noise at which a fresh draw meets
the target with probability ``c``) is ``t exp(sigma z_c)`` in closed form. The deployment tests
run I-GDP with GOPP alignment on small synthetic data.
"""

from contextlib import contextmanager
from functools import partial

import numpy as np
import pytest
from joblib import parallel_config
from numpy.testing import assert_allclose
from scipy import stats
from sklearn.base import BaseEstimator
from sklearn.datasets import make_classification
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import train_test_split
from sklearn.pipeline import Pipeline

from skdc.alignment import GOPPAligner, v_phase_transition
from skdc.audit import NoiseCalibration
from skdc.audit import calibrate_noise as _calibrate_noise
from skdc.audit._criteria import _allowed_failures, _min_draws, _order_bounds
from skdc.audit._draws import _content_hash
from skdc.audit._targets import _error_ratio, _prior_guess, _resolve_target
from skdc.experiments import privacy_utility_sweep
from skdc.mechanisms import IGDP
from skdc.metrics import linkage_accuracy

# The tests below judge the error target alone unless they say otherwise; the linkage target
# (on by default) has its own tests at the end.
calibrate_noise = partial(_calibrate_noise, max_linkage=None)

# ----------------------------------------------------------------------------- a known law


class Knob(BaseEstimator):
    """A 'deployment' with one noise knob ``v``; its randomness is ``random_state``."""

    def __init__(self, v=0.0, random_state=None):
        self.v = v
        self.random_state = random_state

    def fit(self, X, y=None):
        self.fitted_ = True
        return self


SIGMA = 1.0  # lognormal: mean 1.65, a long right tail


def lognormal_error(est, X, y=None):
    """``v * L``, ``L = exp(SIGMA Z)``, ``Z`` standard normal from the draw's seed."""
    return est.v * np.exp(SIGMA * np.random.default_rng(est.random_state).standard_normal())


def flat_utility(est, X, y=None):
    return 1.0 - 0.01 * est.v


TOY = dict(param="v", attack={"heavy": lognormal_error}, min_error=1.0,
           scoring={"utility": flat_utility}, progress=False)
X_TOY, Y_TOY = np.zeros((20, 1)), np.arange(20) % 2


def _true_crossing(confidence, target=1.0):
    """Smallest v with P(v L >= target) >= confidence: v = target exp(SIGMA z_confidence)."""
    return target * np.exp(SIGMA * stats.norm.ppf(confidence))


def _fresh_fail_probability(v, target=1.0):
    """P(v L < target) for a fresh draw, exactly."""
    return stats.norm.cdf(np.log(target / v) / SIGMA) if v > 0 else 1.0


@pytest.fixture(scope="module")
def heavy():
    return calibrate_noise(Knob(), X_TOY, Y_TOY, confidence=0.9, n_draws=199, bounds=(0, 16),
                           xtol=1.0, random_state=0, batch_size=50, **TOY)


def test_heavy_tailed_attack_calibrated_within_one_bracket(heavy):
    v_true = _true_crossing(0.9)  # 3.60
    lo, hi = heavy.bracket
    width = heavy.bracket_width
    assert width <= 1.0
    assert lo - width <= v_true <= hi + width, (heavy.bracket, v_true)
    # the answer is the order statistic of the draws' own crossings v_k = target / L_k
    # (L_k read off the draws at the largest value), rounded up to the bracket
    top = heavy.table[heavy.table["value"] == 16.0]
    crossings = np.sort(1.0 / (top["heavy"].to_numpy() / 16.0))
    m = _allowed_failures(199, 0.9, "order")  # 19 of 199 may fail
    q = crossings[-(m + 1)]
    assert lo < q <= hi, (q, heavy.bracket)


def test_the_gaussian_rule_fails_on_it():
    with pytest.warns(UserWarning) as record:
        cal = calibrate_noise(Knob(), X_TOY, Y_TOY, confidence=0.9, n_draws=199,
                              bounds=(0, 16), xtol=1.0, random_state=0, criterion="normal",
                              **TOY)
    messages = " ".join(str(w.message) for w in record)
    assert "plainly not" in messages and "Shapiro-Wilk" in messages
    v_true = _true_crossing(0.9)
    # its bound goes negative at any noise: nothing "meets", far from the true 3.6
    assert not (cal.bracket[0] - 1.0 <= v_true <= cal.bracket[1] + 1.0), cal.bracket


def test_returned_noise_keeps_its_promise_on_average():
    """Over many calibrations the exact fresh-failure probability at the returned value is at
    most 1 - confidence (the order-statistic rule's guarantee), not far below it."""
    fails = []
    for seed in range(20):
        cal = calibrate_noise(Knob(), X_TOY, Y_TOY, confidence=0.9, bounds=(0, 25), xtol=0.2,
                              random_state=seed, batch_size=9, **TOY)
        assert cal.n_draws_max == 9
        fails.append(_fresh_fail_probability(cal.value))
    # E[1 - F(max of 9)] = 1/10 (its sd over 20 calibrations: 0.02); the bracket rounds up,
    # so a little less
    assert 0.03 < np.mean(fails) <= 0.1 + 0.05, np.mean(fails)


def test_sequential_draws_stop_failing_values_not_the_verdict():
    kw = dict(confidence=0.9, n_draws=49, bounds=(0, 16), xtol=0.5, random_state=3, **TOY)
    one = calibrate_noise(Knob(), X_TOY, Y_TOY, batch_size=1, **kw)
    every = calibrate_noise(Knob(), X_TOY, Y_TOY, batch_size=49, **kw)
    assert one.value == every.value and one.bracket == every.bracket
    assert one.n_draws_run < every.n_draws_run
    d = one.decisions
    failed_early = d[(d["n_draws"] < 49) & ~d["passes"]]
    passed_early = d[(d["n_draws"] < 49) & d["passes"]]
    assert len(failed_early) and failed_early["why"].str.startswith("failed after").all()
    # a value passes early only once the draws left cannot make it fail
    assert (passed_early["n_failed"] + 49 - passed_early["n_draws"]
            <= _allowed_failures(49, 0.9, "order")).all()
    assert passed_early["why"].str.contains("the rest cannot exceed").all()
    assert int(d["n_draws"].sum()) == one.n_draws_run


def test_criteria_counts():
    # order: m failures of n bound a fresh failure by (m + 1) / (n + 1)
    assert _min_draws(0.95, "order") == 19 and _min_draws(0.9, "order") == 9
    assert _allowed_failures(19, 0.95, "order") == 0
    assert _allowed_failures(39, 0.95, "order") == 1
    assert _allowed_failures(18, 0.95, "order") == -1
    # Clopper-Pearson, n successes of n: the lower bound is (1 - c)^(1/n) >= c
    n = _min_draws(0.95, "clopper-pearson")
    assert 0.05 ** (1 / n) >= 0.95 > 0.05 ** (1 / (n - 1))
    assert _allowed_failures(n, 0.95, "clopper-pearson") == 0
    # NaN counts as failing (the lowest), infinity as meeting
    assert _order_bounds([np.nan, 2.0, np.inf], 1) == (-np.inf, np.inf)
    assert _order_bounds([0.5, 2.0, np.inf], 2) == (2.0, 2.0)


def test_clopper_pearson_is_stricter_than_order():
    kw = dict(confidence=0.8, bounds=(0, 16), xtol=0.25, random_state=1, batch_size=20, **TOY)
    order = calibrate_noise(Knob(), X_TOY, Y_TOY, **kw)
    cp = calibrate_noise(Knob(), X_TOY, Y_TOY, criterion="clopper-pearson", **kw)
    assert cp.n_draws_max > order.n_draws_max
    assert cp.value >= _true_crossing(0.8) - 0.25
    passing = cp.decisions[cp.decisions["passes"]]
    assert (passing["share_lower"] >= 0.8).all()


# ----------------------------------------------------------------------------- deployments


@pytest.fixture(scope="module")
def small():
    X, y = make_classification(n_samples=300, n_features=6, n_informative=4, random_state=0)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    pipe = Pipeline([("gdp", IGDP(3, random_state=0)), ("align", GOPPAligner()),
                     ("clf", RidgeClassifier())])
    return pipe, X_tr, y_tr, (X_te, y_te)


COMMON = dict(param="align__v", bounds=(0.0, 0.4), xtol=0.025, progress=False)
TARGET = 0.3


def _fresh_rate(pipe, X_tr, y_tr, test, cal, n, seed):
    """Share of fresh deployments (new secrets, anchor and noise, the calibration's partition)
    at ``cal.value`` whose every attack meets its target, through the sweep."""
    from skdc.audit._targets import _fixed_partition
    from skdc.metrics import make_attack_scorer

    p_tr, p_te = _fixed_partition(pipe, X_tr, y_tr, test[0])
    attacks = {a: partial(make_attack_scorer(a, colluder=0, target=1), participant=p_te)
               for a in cal.min_error}
    df = privacy_utility_sweep(pipe, X_tr, y_tr, test_data=test, param="align__v",
                               values=[cal.value], n_draws=n, attacks=attacks,
                               seed_param="deployment", fit_params={"participant": p_tr},
                               random_state=seed, progress=False)
    assert df["procrustes"].nunique() == n  # every deployment differs
    ok = np.all([df[a].to_numpy() >= t for a, t in cal.min_error.items()], axis=0)
    return ok.mean()


@pytest.fixture(scope="module")
def calibrations(small):
    pipe, X_tr, y_tr, test = small
    return [calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                            min_error=TARGET, confidence=0.8, n_draws=14, random_state=seed,
                            batch_size=4, **COMMON) for seed in (0, 1)]


def test_fresh_deployments_meet_the_target_at_the_stated_rate(small, calibrations):
    pipe, X_tr, y_tr, test = small
    rates = []
    for seed, cal in enumerate(calibrations):
        assert isinstance(cal, NoiseCalibration) and cal.redraw == "deployment"
        assert cal.bracket[0] < cal.value == cal.bracket[1]
        rates.append(_fresh_rate(pipe, X_tr, y_tr, test, cal, 40, 1000 + seed))
    assert np.mean(rates) >= 0.8 - 0.1, rates


def test_each_draw_is_a_fresh_deployment_on_the_fixed_partition(small, monkeypatch):
    pipe, X_tr, y_tr, test = small
    seen = []
    fit = IGDP.fit

    def spy(self, X, y=None, participant=None):
        seen.append((self.random_state, self.noise_random_state, participant))
        return fit(self, X, y, participant=participant)

    monkeypatch.setattr(IGDP, "fit", spy)
    ids = np.arange(len(X_tr)) % 3
    ids_te = np.arange(len(test[0])) % 3
    for participant, data in ((None, test), (ids, (*test, ids_te))):
        seen.clear()
        calibrate_noise(pipe, X_tr, y_tr, test_data=data, participant=participant,
                        attack="procrustes", min_error=TARGET, confidence=0.75, n_draws=3,
                        random_state=0, **dict(COMMON, xtol=0.1))
        draws = [s for s in seen if s[0] != 0]  # the partition's own fit keeps seed 0
        assert len(draws) >= 4
        # draw k has its own secrets and noise (the same at every value: common numbers)
        assert len({s[0] for s in draws}) == len({s[1] for s in draws}) == 3
        assert all(p is not None for _, _, p in draws)
        first = draws[0][2]
        assert all(np.array_equal(p, first) for _, _, p in draws)
        if participant is not None:
            assert np.array_equal(first, ids)
    # redraw="noise": one deployment (the given random_state), only the noise redrawn
    seen.clear()
    calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes", min_error=TARGET,
                    confidence=0.75, n_draws=3, random_state=0, redraw="noise",
                    **dict(COMMON, xtol=0.1))
    assert {s[0] for s in seen} == {0} and len({s[1] for s in seen}) == 3


def test_result_holds_its_draws_and_decisions(calibrations):
    cal = calibrations[0]
    t, d, s = cal.table, cal.decisions, cal.summary
    assert cal.n_draws_run == len(t) == int(d["n_draws"].sum())
    at = t[t["value"] == cal.value]
    assert len(at) == cal.n_draws_max == 14
    # the reported numbers are the draws' numbers, recomputed here independently
    assert_allclose(cal.attack_error, at["procrustes"].mean(), rtol=1e-12)
    assert_allclose(cal.utility, at["balanced_accuracy"].mean(), rtol=1e-12)
    m = _allowed_failures(14, 0.8, "order")
    assert_allclose(cal.attack_error_interval[0], np.sort(at["procrustes"])[m], rtol=1e-12)
    row = d[d["value"] == cal.value].iloc[0]
    assert row["passes"] and row["n_failed"] == int((at["procrustes"] < TARGET).sum()) <= m
    assert_allclose(row["fresh_fail_bound"], (row["n_failed"] + 1) / 15, rtol=1e-12)
    low = d[d["value"] == cal.bracket[0]].iloc[0]
    assert not low["passes"] and low["n_failed"] > m
    assert set(s.columns) >= {"n_draws", "failures", "mean", "median", "min", "max",
                              "lower", "upper", "target"}
    assert_allclose(cal.v_phase_transition, v_phase_transition(3, 6, 24), rtol=1e-12)
    assert cal.binding_attack == "procrustes"


def test_common_random_numbers(calibrations):
    table = calibrations[0].table
    assert (table.groupby("draw")["draw_seed"].nunique() == 1).all()
    noisy = table[table["value"] == calibrations[0].value]
    assert noisy["procrustes"].nunique() == len(noisy)


def test_several_attacks_binding_one_decides(small):
    pipe, X_tr, y_tr, test = small
    kw = dict(test_data=test, confidence=0.75, n_draws=3, random_state=0, **COMMON)
    targets = {"procrustes": 0.2, "alignment_map": 0.45}
    single = {a: calibrate_noise(pipe, X_tr, y_tr, attack=a, min_error=t, **kw)
              for a, t in targets.items()}
    both = calibrate_noise(pipe, X_tr, y_tr, attack=list(targets), min_error=targets, **kw)
    assert both.value >= max(c.value for c in single.values()) - COMMON["xtol"]
    s = both.summary[both.summary["value"] == both.bracket[0]].set_index("attack")
    assert s.loc[both.binding_attack, "failures"] == s["failures"].max()
    assert set(both.attack_errors) == set(targets)


def test_warns_when_nothing_in_range_meets(small):
    pipe, X_tr, y_tr, test = small
    with pytest.warns(UserWarning, match=r"No value of align__v .* Widen bounds="):
        cal = calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                              min_error=50.0, confidence=0.75, random_state=0, **COMMON)
    assert np.isnan(cal.value) and cal.bracket == (0.4, np.inf)
    assert cal.n_draws_run == 1 and len(cal.decisions) == 1  # the first draw decided it
    assert not np.isnan(cal.decisions["utility"].iloc[0])


def test_low_end_meeting_returns_it(small):
    pipe, X_tr, y_tr, test = small
    cal = calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                          min_error=0.0, confidence=0.75, random_state=0, **COMMON)
    assert cal.value == 0.0 and cal.bracket == (0.0, 0.0)


def test_warns_above_phase_transition(small):
    pipe, X_tr, y_tr, test = small
    with pytest.warns(UserWarning, match="above the phase-transition level"):
        cal = calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                              min_error=0.7, confidence=0.75, random_state=0,
                              **dict(COMMON, bounds=(0.0, 1.0), xtol=0.1))
    assert cal.value > v_phase_transition(3, 6, 24)


def test_checkpoint_resume_equals_uninterrupted(small, tmp_path):
    pipe, X_tr, y_tr, test = small
    kw = dict(test_data=test, attack="procrustes", min_error=TARGET, confidence=0.75,
              random_state=3, **dict(COMMON, xtol=0.05))
    ref = calibrate_noise(pipe, X_tr, y_tr, **kw)
    path = tmp_path / "draws.jsonl"
    calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, **kw)
    lines = path.read_text().splitlines()
    # an interruption: the last draws are lost and one line is cut in the middle
    path.write_text("\n".join(lines[:5]) + "\n" + lines[5][:17])
    resumed = calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, **kw)
    assert resumed.n_draws_resumed == 4 and ref.n_draws_resumed == 0
    cols = [c for c in ref.table.columns if c != "seconds"]
    assert ref.table[cols].equals(resumed.table[cols])
    assert resumed.value == ref.value and resumed.bracket == ref.bracket
    # another target reuses the draws (rows do not depend on it)
    other = calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, **dict(kw, min_error=0.35))
    assert other.n_draws_resumed > 0
    # a checkpoint of other settings is refused, not mixed in
    with pytest.raises(ValueError, match="other settings"):
        calibrate_noise(pipe, X_tr, y_tr[::-1].copy(), checkpoint=path, **kw)
    with pytest.raises(ValueError, match="differ in content"):  # another colluder
        calibrate_noise(pipe, X_tr, y_tr, checkpoint=path, colluder=2, **kw)


def test_a_resume_under_another_scorer_of_the_same_name_is_refused(tmp_path):
    """The checkpoint's fingerprint is by content (tests/audit/test_draws.py): two lambdas
    that print alike are two configurations."""

    def make(k):
        return lambda est, X, y=None: float(k)

    path = tmp_path / "draws.jsonl"
    kw = dict(param="v", min_error=1.0, scoring={"utility": flat_utility}, progress=False,
              confidence=0.75, bounds=(0, 4), xtol=1.0, random_state=0, checkpoint=path)
    calibrate_noise(Knob(), X_TOY, Y_TOY, attack={"a": make(1)}, **kw)
    with pytest.raises(ValueError, match="other settings"):
        calibrate_noise(Knob(), X_TOY, Y_TOY, attack={"a": make(2)}, **kw)


def test_target_is_resolved_in_one_place(small):
    assert _resolve_target(0, None, 3) == 1 and _resolve_target(1, None, 3) == 0
    assert _resolve_target([0, 1], None, 3) == 2
    with pytest.raises(ValueError, match="colluder and target must be different"):
        _resolve_target(2, 2, 3)
    with pytest.raises(ValueError, match="target=3 is not a participant"):
        _resolve_target(0, 3, 3)
    with pytest.raises(TypeError, match="target must be an int"):
        _resolve_target(0, True, 3)
    pipe, X_tr, y_tr, test = small
    kw = dict(test_data=test, attack="procrustes", min_error=TARGET, confidence=0.75,
              random_state=0, **dict(COMMON, xtol=0.2))
    on1 = calibrate_noise(pipe, X_tr, y_tr, **kw)
    on2 = calibrate_noise(pipe, X_tr, y_tr, target=2, **kw)
    # the same draws (value and seed) attack another participant: other errors (the sequential
    # rule may stop the two searches after different draws, so compare the draws both ran)
    both = on1.table.merge(on2.table, on=["value", "draw"], suffixes=("_1", "_2"))
    assert len(both) and not np.allclose(both["procrustes_1"], both["procrustes_2"])


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(confidence=1.5), ValueError, "confidence"),
    (dict(n_draws=1), ValueError, "n_draws"),
    (dict(n_draws=10**12), ValueError, "n_draws"),
    (dict(n_draws=5), ValueError, r"needs n_draws >= 19"),
    (dict(criterion="clopper-pearson", n_draws=30), ValueError, r"needs n_draws >= 59"),
    (dict(bounds=(0.2, 0.1)), ValueError, "0 <= low < high"),
    (dict(bounds=(-1, 0.2)), ValueError, "a noise scale is not negative"),
    (dict(bounds=(0, np.inf)), ValueError, "finite"),
    (dict(min_error=-0.5), ValueError, r"min_error must be a finite error >= 0"),
    (dict(min_error=np.nan), ValueError, r"min_error must be a finite error >= 0"),
    (dict(min_error={"mp": 0.3}), ValueError, "one target per attack"),
    (dict(param="align__vv"), ValueError, "Did you mean 'align__v'"),
    (dict(target=0), ValueError, "colluder and target must be different"),
    (dict(target=7), ValueError, "target=7 is not a participant"),
    (dict(participant=np.zeros(5, dtype=int)), ValueError, "with test_data pass"),
    (dict(participant=np.zeros(5, dtype=int), test_data="own"), ValueError,
     "one integer participant id per row"),
    (dict(participant=1), ValueError, "participant"),
])
def test_bad_inputs_are_named(small, kwargs, error, match):
    pipe, X_tr, y_tr, test = small
    kw = dict(param="align__v", attack="procrustes", min_error=0.3, test_data=test,
              progress=False)
    kw.update(kwargs)
    if kw["test_data"] == "own":
        kw["test_data"] = (*test, np.zeros(len(test[0]), dtype=int))
    with pytest.raises(error, match=match):
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
def test_same_calibration_under_other_backends(small, backend):
    pipe, X_tr, y_tr, test = small
    kw = dict(test_data=test, attack="procrustes", min_error=TARGET, random_state=5,
              confidence=0.75, batch_size=2, **dict(COMMON, xtol=0.1))
    local = calibrate_noise(pipe, X_tr, y_tr, **kw)
    with _backend(backend):
        remote = calibrate_noise(pipe, X_tr, y_tr, n_jobs=2, **kw)
    cols = [c for c in local.table.columns if c != "seconds"]
    assert local.table[cols].equals(remote.table[cols])
    assert np.isfinite(local.value) and remote.value == local.value


def test_fingerprint_is_the_same_in_another_process():
    """A restarted run (another process, another string-hash seed) recognises its checkpoint."""
    import os
    import subprocess
    import sys

    code = ("from sklearn.metrics import get_scorer\n"
            "from skdc.audit._draws import _content_hash\n"
            "from skdc.metrics import make_attack_scorer\n"
            "from skdc.mechanisms import IGDP\n"
            "print(_content_hash(IGDP(3, random_state=0), make_attack_scorer('mp'),"
            " get_scorer('balanced_accuracy')))\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONHASHSEED="123", PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120).stdout.strip()
    from sklearn.metrics import get_scorer

    from skdc.metrics import make_attack_scorer

    assert out == _content_hash(IGDP(3, random_state=0), make_attack_scorer("mp"),
                                get_scorer("balanced_accuracy"))


# ----------------------------------------------------------------------------- linkage, inference


@pytest.fixture(scope="module")
def linkage_calibration(small):
    pipe, X_tr, y_tr, test = small
    return _calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                            max_linkage=0.5, confidence=0.75, random_state=0,
                            **dict(COMMON, bounds=(0.0, 1.0), xtol=0.1))


def test_linkage_target_is_judged_per_draw_by_the_linkage_accuracy(small, linkage_calibration):
    """Column "procrustes unlinked" is one minus the exact-source linkage accuracy of the
    draw's reconstructions of every row of the target (its training rows and its held-out
    ones: the analyst holds the uploads of both), recomputed here from the draw's own
    deployment; a draw meets when it is at least 1 - max_linkage."""
    from sklearn import config_context

    from skdc.attacks import collusion_view, make_attack
    from skdc.audit._targets import _fixed_partition, _linkage_params
    from skdc.utils._draw_jobs import _Maker

    pipe, X_tr, y_tr, (X_te, y_te) = small
    cal = linkage_calibration
    assert cal.min_error == {"procrustes unlinked": 0.5}  # the error is recorded, not judged
    assert "procrustes" in cal.table and np.isfinite(cal.value)
    assert_allclose(cal.table["meets"], cal.table["procrustes unlinked"] >= 0.5, rtol=0)
    p_tr, p_te = _fixed_partition(pipe, X_tr, y_tr, X_te)
    row = cal.table[cal.table["value"] == cal.value].iloc[0]
    est = _Maker(pipe, "align__v", "deployment")(float(row["value"]), int(row["draw_seed"]))
    with config_context(enable_metadata_routing=True):
        est.fit(X_tr, y_tr, participant=p_tr)
    X_all, y_all = np.vstack([X_tr, X_te]), np.r_[y_tr, y_te]
    view = collusion_view(est, X_all, colluder=0, target=1, participant=np.r_[p_tr, p_te])
    assert len(view.target_rows) == np.sum(p_tr == 1) + np.sum(p_te == 1)
    rec = make_attack("procrustes").reconstruct(view)
    params = {**_linkage_params(), "sample": view.colluder_X_input}
    acc = linkage_accuracy(view.truth.X, rec.X, y_all[view.target_rows], **params)
    assert_allclose(row["procrustes unlinked"], 1.0 - float(acc), rtol=1e-12)


def test_sensitive_column_ratio_against_a_hand_computation():
    # the colluders' class means are the attacker's guess: 1.0 for label 0, 3.0 for label 1,
    # the overall mean 2.0 for label 2, which the colluders lack
    x_c, y_c = np.array([0.0, 2.0, 3.0, 3.0]), np.array([0, 0, 1, 1])
    prior = _prior_guess(x_c, y_c, np.array([1, 0, 2]), 3)
    assert_allclose(prior, [3.0, 1.0, 2.0], rtol=0)
    truth, guess = np.array([2.0, 1.0, 4.0]), np.array([2.5, 1.0, 4.0])
    # MSE(guess) = 0.25 / 3, MSE(prior) = (1 + 0 + 4) / 3
    assert_allclose(_error_ratio(truth, guess, prior), 0.25 / 5.0, rtol=1e-12)
    assert _error_ratio(truth, truth, truth) == 1.0  # nothing to gain over an exact guess
    assert _error_ratio(truth, np.full(3, np.nan), prior) == 0.0  # NaN counts as exact


def test_sensitive_column_is_measured_and_judged(small):
    pipe, X_tr, y_tr, test = small
    cal = _calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                           max_linkage=None, sensitive=2, max_sensitive_gain=0.9,
                           confidence=0.75, random_state=0, **COMMON)
    assert cal.min_error == {"procrustes sensitive": pytest.approx(0.1)}
    ratio = cal.table["procrustes sensitive"]
    # without noise the reconstruction is exact: no worse than the guess by any margin
    assert ratio[cal.table["value"] == 0.0].max() < 1e-12
    assert (cal.table["meets"] == (ratio >= 0.1 - 1e-12)).all()


@pytest.mark.parametrize("kw, match", [
    (dict(max_linkage=None), "Nothing is judged"),
    (dict(max_sensitive_gain=0.5), "name it with sensitive="),
    (dict(sensitive=99), "sensitive must be a column index"),
    (dict(max_linkage=1.5), "max_linkage"),
])
def test_targets_are_checked(small, kw, match):
    pipe, X_tr, y_tr, test = small
    with pytest.raises(ValueError, match=match):
        _calibrate_noise(pipe, X_tr, y_tr, test_data=test, attack="procrustes",
                         **dict(COMMON, **kw))


@pytest.mark.parametrize("field, value", [
    ("balanced_accuracy", 7.5), ("procrustes unlinked", -3.0), ("procrustes unlinked", 5.0),
    ("procrustes", 1e9), ("procrustes", float("nan")), ("balanced_accuracy", float("nan")),
])
def test_checkpoint_refuses_impossible_values(tmp_path, field, value):
    import json

    from skdc.audit._draws import _row_fields
    from skdc.utils._checkpoint import CheckpointError, DrawCheckpoint

    fields = _row_fields({"balanced_accuracy": None, "v_phase_transition": None},
                         {"procrustes": None, "procrustes unlinked": None}, ["procrustes"])
    path = tmp_path / "draws.jsonl"
    row = {"balanced_accuracy": 0.9, "v_phase_transition": 0.2, "procrustes": 0.4,
           "procrustes unlinked": 0.8, "seconds": 0.1}
    ck = DrawCheckpoint(path, {"a": 1}, fields)
    ck.put("0.1/1", row)
    ck.put("0.1/2", dict(row, **{field: value}))  # kept in memory, never written
    assert ck.get("0.1/2")[field] == value or np.isnan(value)
    assert len(path.read_text().splitlines()) == 2
    with open(path, "a") as fh:  # written by something else than skdc
        fh.write(json.dumps({"key": "0.1/3", "row": dict(row, **{field: value})}) + "\n")
    with pytest.raises(CheckpointError, match=rf"draws.jsonl: checkpoint line 3: the field "
                                              rf"'{field}' must be"):
        DrawCheckpoint(path, {"a": 1}, fields)
