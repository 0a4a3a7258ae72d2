"""The audit's draw engine (skdc/audit/_draws.py): fingerprints by content, the data digest,
what a checkpointed row holds, the runner that resumes a checkpoint, the values a bisection
plans, and the search that stops a value as soon as its verdict is certain.

The search runs on a toy deployment whose attack error at noise ``v`` in draw ``k`` is
``v * L[k]``: a draw meets the target 1 exactly when ``v >= 1 / L[k]``, so every count below
is a hand count over ``L``."""

import hashlib
import math

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from sklearn.base import BaseEstimator

from skdc.audit._calibrate import _bisect
from skdc.audit._draws import (
    _code_content,
    _column_kind,
    _content_hash,
    _data_digest,
    _planned_values,
    _row_fields,
    _runner,
    _Search,
)
from skdc.mechanisms import IGDP
from skdc.utils._checkpoint import DrawCheckpoint

# ----------------------------------------------------------------------------- fingerprints


def test_code_is_compared_by_content_not_by_file_or_line():
    source = "def f(x):\n    def g(y):\n        return y + 1\n    return g(x) * 2\n"
    here = compile(source, "a.py", "exec").co_consts[0]
    there = compile("\n" * 9 + source, "b.py", "exec").co_consts[0]
    nested = compile(source.replace("y + 1", "y + 2"), "a.py", "exec").co_consts[0]
    assert (here.co_filename, here.co_firstlineno) != (there.co_filename, there.co_firstlineno)
    assert _code_content(here) == _code_content(there)
    assert _code_content(here) != _code_content(nested)  # a nested function's constant


def test_functions_hash_by_code_defaults_and_closure():
    def make(k):
        return lambda est, X, y=None: float(k)

    def scale(est, X, y=None, factor=1.0):
        return factor

    def scale2(est, X, y=None, factor=2.0):
        return factor

    assert _content_hash(make(1)) == _content_hash(make(1))
    assert _content_hash(make(1)) != _content_hash(make(2))  # the closure's cell
    assert _content_hash(lambda e, X, y: 1.0) != _content_hash(lambda e, X, y: 2.0)
    scale2.__qualname__ = scale.__qualname__
    assert _content_hash(scale) != _content_hash(scale2)  # the default alone differs


def test_arrays_and_estimators_hash_by_content():
    rng = np.random.RandomState(0)
    A1 = rng.standard_normal((400, 4))
    A2 = A1.copy()
    A2[100:300] += 1.0  # prints alike: repr elides the middle rows
    assert repr(IGDP(3, anchor=A1)) == repr(IGDP(3, anchor=A2))
    assert _content_hash(IGDP(3, anchor=A1)) != _content_hash(IGDP(3, anchor=A2))
    assert _content_hash(IGDP(3, anchor=A1)) == _content_hash(IGDP(3, anchor=A1.copy()))
    assert _content_hash(IGDP(3, random_state=0)) != _content_hash(IGDP(3, random_state=1))


def _sha256(*arrays):
    """The digest by hand: each array's shape and dtype code, then its C-order bytes."""
    h = hashlib.sha256()
    for a in arrays:
        h.update(f"{a.shape}{a.dtype.str}".encode() + a.tobytes())
    return h.hexdigest()


def test_the_data_digest_is_sha256_of_shape_dtype_and_bytes():
    X = np.arange(6, dtype=np.float64).reshape(3, 2)
    y = np.array([0, 1, 1])
    assert _data_digest(X, y) == _sha256(X, y)
    assert _data_digest(X, y, None) == hashlib.sha256(
        f"{X.shape}{X.dtype.str}".encode() + X.tobytes() + f"{y.shape}{y.dtype.str}".encode()
        + y.tobytes() + b"none").hexdigest()


def test_the_data_digest_changes_with_any_value_dtype_shape_or_partition():
    X = np.arange(6, dtype=np.float64).reshape(3, 2)
    y, parts = np.array([0, 1, 1]), np.array([0, 1, 0])
    base = _data_digest(X, y, parts)
    moved = X.copy()
    moved[2, 1] = np.nextafter(moved[2, 1], np.inf)  # one ulp
    others = [_data_digest(moved, y, parts), _data_digest(X.astype(np.float32), y, parts),
              _data_digest(X.reshape(2, 3), y, parts), _data_digest(X.T, y, parts),
              _data_digest(X, y, np.array([1, 0, 0])), _data_digest(X, y, None),
              _data_digest(X, y), _data_digest(X, y.astype(np.int32), parts)]
    assert len({base, *others}) == 1 + len(others)


def test_the_data_digest_ignores_memory_layout_and_containers():
    X = np.arange(6, dtype=np.float64).reshape(3, 2)
    y = np.array([0, 1, 1])
    base = _data_digest(X, y)
    assert _data_digest(np.asfortranarray(X), y) == base
    wide = np.zeros((3, 4))
    wide[:, ::2] = X
    assert _data_digest(wide[:, ::2], y) == base  # a strided view
    assert _data_digest(X.tolist(), y.tolist()) == base
    assert _data_digest((X, y)) == base  # a tuple of arrays digests as its arrays


def test_object_labels_digest_by_their_values():
    first = np.array(["label" + str(k) for k in range(3)], dtype=object)
    second = np.array(["label" + str(k) for k in range(3)], dtype=object)
    assert _data_digest(first) == _data_digest(second)
    assert _data_digest(first) != _data_digest(np.array(["label0", "label1", "other"],
                                                        dtype=object))
    assert _data_digest(np.array([1], dtype=object)) != _data_digest(np.array(["1"], dtype=object))


# ----------------------------------------------------------------------------- checkpointed rows


@pytest.mark.parametrize("name, errors, kind", [
    ("balanced_accuracy", (), "share"), ("roc_auc", (), "share"), ("mp unlinked", (), "share"),
    ("mp linkage", (), "share"), ("mp inference", (), "share"), ("mp", ["mp"], "error"),
    ("mp sensitive", (), "error"), ("mp", (), "number"), ("my_scorer", (), "number"),
])
def test_each_column_kind(name, errors, kind):
    assert _column_kind(name, errors) == kind


def test_a_row_holds_the_scores_the_attacks_and_the_diagnostics():
    fields = _row_fields({"balanced_accuracy": None, "mine": None},
                         {"procrustes": None, "procrustes unlinked": None}, ["procrustes"])
    assert fields == {"balanced_accuracy": "share", "mine": "number", "procrustes": "error",
                      "procrustes unlinked": "share", "seconds": "finite", "n_iter?": "int",
                      "converged?": "bool", "fixed_point_residual?": "number"}


# ----------------------------------------------------------------------------- the runner


class Knob(BaseEstimator):
    """A 'deployment' with one noise knob ``v``; its randomness is ``random_state``."""

    def __init__(self, v=0.0, random_state=None):
        self.v = v
        self.random_state = random_state

    def fit(self, X, y=None):
        return self


def test_the_runner_stores_its_rows_and_a_second_run_reads_them_back(tmp_path):
    calls = []

    def error(est, X, y=None):
        calls.append((est.v, est.random_state))
        return est.v * 10 + est.random_state

    data = (np.zeros((4, 1)), np.zeros((2, 1)), np.zeros(4), np.zeros(2), {})
    fields = _row_fields({}, {"a": None})
    path = tmp_path / "draws.jsonl"
    jobs = [(0.5, 1), (0.25, 2)]
    with _runner(Knob(), "v", "auto", data, {}, {"a": error}, 1,
                 DrawCheckpoint(path, {"run": 1}, fields), False, "toy") as run:
        rows = run(jobs)
    assert [r["a"] for r in rows] == [6.0, 4.5] and run.n_resumed == 0
    assert sorted(calls) == [(0.25, 2), (0.5, 1)]
    assert len(path.read_text().splitlines()) == 3  # the header and two rows
    with _runner(Knob(), "v", "auto", data, {}, {"a": error}, 1,
                 DrawCheckpoint(path, {"run": 1}, fields), False, "toy") as run:
        again = run([*jobs, (0.5, 3)])
    assert len(calls) == 3 and calls[-1] == (0.5, 3)  # only the new draw ran
    assert [r["a"] for r in again] == [6.0, 4.5, 8.0] and run.n_resumed == 2


# ----------------------------------------------------------------------------- the bisection


@pytest.mark.parametrize("low, high, xtol", [(0.0, 1.0, 1 / 32), (0.0, 10.0, 3.0),
                                             (2.0, 3.0, 0.25), (0.0, 1.0, 2.0), (1.0, 9.0, 1.0)])
def test_the_planned_values_are_both_ends_and_one_per_halving(low, high, xtol):
    halvings = max(0, math.ceil(math.log2((high - low) / xtol) - 1e-9))
    assert _planned_values(low, high, xtol) == 2 + halvings


@pytest.mark.parametrize("threshold", [0.3, 0.71, 0.999])
def test_a_bisection_evaluates_at_most_the_planned_values(threshold):
    seen = []

    def passes(v):
        seen.append(v)
        return v >= threshold

    value, (lo, hi) = _bisect(passes, 0.0, 1.0, 1 / 32)
    assert len(seen) <= _planned_values(0.0, 1.0, 1 / 32)
    assert lo < threshold <= hi == value and hi - lo <= 1 / 32


# ----------------------------------------------------------------------------- the search

L = np.array([4.0, 0.5, 2.0, 1.0, 8.0, 3.0, 1.5, 6.0, 0.8, 5.0, 2.5, 7.0, 1.2, 9.0, 3.5, 0.9,
              4.5, 1.1, 6.5, 2.2, 5.5, 1.3, 7.5, 3.2, 1.7, 8.5, 2.8, 9.5, 1.9, 4.2, 6.2, 2.4,
              5.2, 1.6, 7.2, 3.6, 8.2, 2.6, 9.2])  # 39 draws
SEEDS = 100 + np.arange(L.size)


class ToyRun:
    """``run(jobs)``: the rows of draws ``(v, seed)``, error ``v * L[seed - 100]``, utility
    ``1 - v``; every job it is asked for is logged."""

    def __init__(self):
        self.jobs = []

    def __call__(self, jobs):
        self.jobs.extend(jobs)
        return [{"a": v * L[s - 100], "u": 1.0 - v} for v, s in jobs]


def _search(n, confidence=0.95, criterion="order", batch=5):
    run = ToyRun()
    return _Search(run, SEEDS[:n], {"a": 1.0}, "u", confidence, criterion, batch), run


def test_a_value_fails_as_soon_as_one_failure_too_many_is_seen():
    search, run = _search(19)  # (0 + 1) / 20 = 5 %: no failure allowed
    assert search.allowed == 0
    # at v = 0.5 draws with L < 2 fail; the first batch (draws 0-4, L = 4, 0.5, 2, 1, 8) holds
    # two: L = 0.5 and L = 1
    assert search(0.5) is False
    assert len(run.jobs) == 5
    d = search.decisions[-1]
    assert (d["n_draws"], d["n_failed"], d["passes"]) == (5, 2, False)
    assert d["why"] == "failed after 5 of 19 draws: 2 failed, none allowed"


def test_a_value_passes_as_soon_as_the_rest_cannot_make_it_fail():
    search, run = _search(39, batch=38)  # (1 + 1) / 40 = 5 %: one failure allowed
    assert search.allowed == 1
    # at v = 1.2 the draws with L < 1 / 1.2 fail: L = 0.5 and 0.8, one more than allowed
    assert search(1.2) is False
    # at v = 2.1 (1 / 2.1 = 0.476) no draw fails: 38 draws leave one, which cannot fail twice
    assert search(2.1) is True
    d = search.decisions[-1]
    assert (d["n_draws"], d["n_failed"]) == (38, 0)
    assert d["why"] == ("passed after 38 of 39 draws: 0 failed, and the rest cannot exceed "
                        "the 1 allowed")


def test_a_decided_value_is_not_drawn_again():
    search, run = _search(19)
    assert search(3.0) is True
    n = len(run.jobs)
    assert search(3.0) is True and len(run.jobs) == n == 19


def test_a_smaller_value_draws_the_worst_draws_of_the_nearest_larger_one_first():
    search, run = _search(19)
    search(3.0)  # every draw meets: 3 * min(L[:19]) = 1.5 >= 1
    search(1.0)
    first = [s - 100 for _, s in run.jobs[19:24]]
    # the margins at 3.0 are 3 L[k]: the five smallest L of the first 19 draws come first
    assert first == list(np.argsort(L[:19], kind="stable")[:5])


def test_the_summary_and_the_decision_in_numbers():
    search, _ = _search(19, batch=19)
    search(1.2)
    errs = 1.2 * L[:19]
    failed = int(np.sum(errs < 1.0))
    assert failed == 2  # L = 0.5 and 0.8, below 1 / 1.2
    s, d = search.summary[-1], search.decisions[-1]
    assert (s["n_draws"], s["failures"], s["target"]) == (19, failed, 1.0)
    assert_allclose([s["mean"], s["median"], s["min"], s["max"], s["lower"], s["upper"]],
                    [errs.mean(), np.median(errs), errs.min(), errs.max(), errs.min(),
                     errs.max()], rtol=1e-12)  # no failure allowed: the extremes bound it
    assert_allclose([d["share_meeting"], d["fresh_fail_bound"], d["utility"]],
                    [17 / 19, 3 / 20, 1.0 - 1.2], rtol=1e-12)
    # Clopper-Pearson: 17 of 19 meeting at 95 %, the beta quantile (Biometrika 1934)
    assert_allclose(d["share_lower"], stats.beta.ppf(0.05, 17, 3), rtol=1e-9)
    assert d["why"] == "failed: 2 of 19 draws failed, none allowed"
    rows = [r for r in search.rows if r["value"] == 1.2]
    assert [r["draw"] for r in rows] == list(range(19))
    assert [r["draw_seed"] for r in rows] == list(SEEDS[:19])
    assert [r["meets"] for r in rows] == list(errs >= 1.0)


def test_the_gaussian_rule_decides_on_the_prediction_bound():
    search, run = _search(12, confidence=0.9, criterion="normal", batch=3)
    assert search.batch == 12 and search.allowed is None  # every draw, one batch
    errs = 5.0 * L[:12]
    half = stats.t.ppf(0.9, 11) * errs.std(ddof=1) * math.sqrt(1 + 1 / 12)
    lower = errs.mean() - half
    assert lower < 1.0 and search(5.0) is False  # L spreads too widely for the bound
    assert_allclose(search.summary[-1]["lower"], lower, rtol=1e-12)
    assert search.decisions[-1]["why"] == (f"Gaussian 90% prediction bound of a {lower:.4g} < 1 "
                                           "over 12 draws")
    assert len(run.jobs) == 12
