"""``skdc audit``'s progress and its Dask backend (skdc/audit/_cli.py): every stage
of ``audit`` and ``compare_options`` says its draws done out of draws planned (at most, where
a sequential rule may decide a setting early), the time spent and an estimate; with standard
error not a terminal (a log file) one line per stage, per setting decided and per minute of
draws; after the first draws one estimate of the whole run with how to shorten it, in the
command line's flags. And ``skdc audit --compare`` on a Dask cluster (a local, in-process
one: no address but the process's own) gives the table a local run gives. No timing is
asserted. The stages' own lines are tested in tests/utils/test_progress.py."""

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_classification
from sklearn.preprocessing import StandardScaler

from skdc.__main__ import main
from skdc.audit import audit

LINE = re.compile(r"^(skdc(?: audit)?) \[(\d+:)?\d+:\d\d\] (.*)$")


def _lines(err, name="skdc"):
    """The progress lines of ``err`` (without their ``NAME [elapsed]`` opening)."""
    out = []
    for line in err.splitlines():
        m = LINE.match(line)
        if m and m.group(1) == name:
            out.append(m.group(3))
    return out


def _one(lines, pattern):
    found = [x for x in lines if re.search(pattern, x)]
    assert len(found) == 1, (pattern, lines)
    return found[0]


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X[:300] / 16.0, y[:300]


def test_audit_log_lines_give_totals_each_value_decided_and_one_estimate(digits, capsys):
    X, y = digits
    capsys.readouterr()
    rep = audit(X, y, n_participants=3, attacks=["procrustes"], max_linkage=None,
                target_error=0.3, confidence=0.8, n_draws=4, bounds=(0.0, 0.1), n_grid=4,
                grid_draws=1, model="ridge", progress="auto")  # stderr is no terminal here
    err = capsys.readouterr().err
    assert "\r" not in err  # no bar in a log file
    lines = _lines(err)
    cal = rep.calibration
    # 4 draws at each of the 7 values the bisection can evaluate (0.1 / 32 apart), 4 grid draws
    assert lines[0] == ("started: at most 32 draws planned in 2 stages (calibrate anchor noise v "
                        "28, frontier grid 4)")
    assert _one(lines, "^calibrate anchor noise v: started").startswith(
        "calibrate anchor noise v: started, 28 draws planned (at most: a setting is decided "
        "as soon as its verdict is certain")
    decided = [x for x in lines if re.match(r"calibrate anchor noise v: anchor noise v = ", x)]
    assert len(decided) == len(cal.decisions)
    done = 0
    for line, d in zip(decided, cal.decisions.itertuples()):
        done += d.n_draws
        assert line.startswith(
            f"calibrate anchor noise v: anchor noise v = {d.value:.4g} {d.why}; ")
        assert f"; {done} of at most 28 draws, " in line
    n_cal = len(cal.table)
    assert n_cal == done < 28  # the rule decided some values early: the log says so
    assert _one(lines, "^calibrate anchor noise v: done").startswith(
        f"calibrate anchor noise v: done: {n_cal} of at most 28 draws in ")
    assert f"(decided early: {28 - n_cal} planned draws not needed)" in err
    assert "frontier grid: started, 4 draws planned" in lines
    assert _one(lines, "^frontier grid: done").startswith("frontier grid: done: 4 draws in ")
    assert lines[-1].startswith(f"finished: {n_cal + 4} draws in ")
    # the estimate, once, after the first draws; the Python API names its parameters
    estimate = _one(lines, "^estimate: ")
    assert lines.index(estimate) < lines.index(decided[-1])
    assert re.match(r"estimate: the first \d+ draws took [\d.e+-]+ s each \(wall time\); the "
                    r"run plans at most \d+ draws \(\d+ done\), so at that pace the rest "
                    r"takes (a few seconds|about \d+ (s|min))", estimate)
    assert "To shorten it: " in estimate and "backend='dask'" in estimate
    assert "a smaller n_grid= or grid_draws=" in estimate


@pytest.fixture(scope="module")
def compare_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("progress-compare")
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4, random_state=0)
    np.save(root / "X.npy", StandardScaler().fit_transform(X))
    np.save(root / "y.npy", y)
    return root


def _compare_argv(root, out, *extra):
    return ["audit", "--data", str(root / "X.npy"), "--labels", str(root / "y.npy"),
            "--n-participants", "3", "--confidence", "0.75", "--target-error", "0.5",
            "--max-linkage", "1", "--compare", "igdp", "cgdp", "kti", "gaussmix",
            "--epsilon", "4", "--measure", "2", *extra, "--out", str(out)]


def _check_compare_lines(err):
    """A comparison's log: the run's plan, every stage's start and end with its planned
    total, every option's end, the estimate naming the flags."""
    lines = _lines(err, "skdc audit")
    m = re.match(r"started: at most (\d+) draws planned in 7 stages \((.*)\)$", lines[0])
    assert m, lines[0]
    plan = dict(re.findall(r"(\w+: [\w -]+?) (\d+)(?:, |$)", m.group(2)))
    assert list(plan) == ["igdp: calibrate anchor noise v", "igdp: measure linkage and inference",
                          "cgdp: calibrate private-data noise sigma",
                          "cgdp: measure linkage and inference",
                          "kti: calibrate KTI dimension", "kti: measure linkage and inference",
                          "gaussmix: draws at each epsilon"]
    assert sum(map(int, plan.values())) == int(m.group(1))
    for stage, n in plan.items():  # each stage starts with the total the run planned for it
        started = _one(lines, f"^{re.escape(stage)}: started")
        if "measure" in stage:  # at most as many deployments as the calibration drew
            assert int(re.search(r"started, (\d+) draws? planned", started).group(1)) <= int(n)
        else:
            assert started.startswith(f"{stage}: started, {n} draws planned")
        assert _one(lines, f"^{re.escape(stage)}: done: ")
    for option in ("igdp", "cgdp", "kti", "gaussmix"):
        assert _one(lines, f"^{option}: done in ")
    assert any(re.match(r"kti: calibrate KTI dimension: dimension \d+ \(of 6\) (passed|failed)",
                        x) for x in lines)
    estimate = _one(lines, "^estimate: ")
    assert "fewer options in --compare" in estimate
    assert lines[-1].startswith("finished: ")
    return estimate


def test_cli_compare_logs_its_plan_and_runs_on_a_dask_cluster_as_locally(compare_files,
                                                                          tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    # the reference: two draws at a time on threads, as the two Dask workers run them
    capsys.readouterr()
    assert main(_compare_argv(compare_files, tmp_path / "local", "--backend", "threading",
                              "--n-jobs", "2")) == 0
    estimate = _check_compare_lines(capsys.readouterr().err)
    assert "--backend dask --scheduler ADDRESS" in estimate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the in-process cluster's own notices
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                      dashboard_address=None) as cluster:
            before = len(getattr(cluster.scheduler, "task_prefixes", ()))
            capsys.readouterr()
            assert main(_compare_argv(compare_files, tmp_path / "dask", "--backend", "dask",
                                      "--scheduler", cluster.scheduler_address)) == 0
            err = capsys.readouterr().err
            if hasattr(cluster.scheduler, "task_prefixes"):  # the draws ran on its workers
                assert len(cluster.scheduler.task_prefixes) > before
    table = (tmp_path / "dask" / "comparison.csv").read_text()
    assert table == (tmp_path / "local" / "comparison.csv").read_text()
    for option in ("igdp", "cgdp", "kti", "gaussmix@4"):
        assert f"\n{option}," in table
    estimate = _check_compare_lines(err)
    assert "more Dask workers (now 2)" in estimate and "dask worker ADDRESS" in estimate


@pytest.mark.parametrize("decision, lead", [
    ("collaborate", "deploy cgdp:"),
    ("do not collaborate", "should you collaborate anyway, deploy cgdp:"),
])
def test_the_printed_deployment_never_contradicts_the_decision(capsys, decision, lead):
    """A comparison that says "do not collaborate" while an option meets the targets (Local
    does better) still writes that option's flags, but never prints a bare "deploy"."""
    from types import SimpleNamespace

    from skdc.audit._cli import _print_comparison

    cmp = SimpleNamespace(verdict={"decision": decision, "sentence": "Verdict.", "warnings": []},
                          options={}, deployment={"option": "cgdp", "fingerprint": "ab12"})
    _print_comparison(cmp, {"commands": "out/deployment.txt", "report": "out/report.html"},
                      "out")
    out = capsys.readouterr().out.splitlines()
    assert [ln for ln in out if "deploy" in ln] == [
        f"{lead} flags in out/deployment.txt, fingerprint ab12"]


def test_participants_is_the_deprecated_spelling_of_n_participants(capsys):
    """``--participants`` parses as ``--n-participants`` (the same arguments, so the same
    audit), after one warning line; both together are a usage error."""
    from skdc.__main__ import build_parser

    argv = ["audit", "--data", "X.npy", "--labels", "y.npy"]
    new = build_parser("audit").parse_args([*argv, "--n-participants", "4"])
    assert capsys.readouterr().err == ""
    old = build_parser("audit").parse_args([*argv, "--participants", "4"])
    assert vars(old) == vars(new) and new.n_participants == 4
    assert capsys.readouterr().err == (
        "skdc audit: warning: --participants is deprecated and will be removed in skdc 0.3; "
        "use --n-participants instead.\n")
    assert main([*argv, "--participants", "4", "--n-participants", "4"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err
