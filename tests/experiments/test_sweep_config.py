"""The sweep config (skdc/experiments/_sweep_config.py): only estimator classes with plain-data
parameters, a bounded and shallow file, and every wrong key refused in one line naming the file
and the key."""

import os
import re

import pytest

from skdc.__main__ import main
from skdc.experiments import load_sweep_config
from skdc.experiments._sweep_config import _steps_toml
from tests._fuzz import CASES, deadline

_DATA = """
[data]
dataset = "digits"
test_size = 0.3

"""
_SWEEP = """
[sweep]
param = "align__v"
values = [0.0, 0.1]
seed = 0
"""
_STEPS = [("gdp", "IGDP", {"n_participants": 3, "random_state": 0}),
          ("align", "GOPPAligner", {"max_iter": 100}),
          ("clf", "sklearn.linear_model.LogisticRegression", {"max_iter": 300})]
_CONFIG = _DATA + _steps_toml(_STEPS) + _SWEEP


def _refused(tmp_path, capsys, text, match, name="bad.toml", reader="config (sweep)"):
    """``skdc sweep`` on ``text``: exit 2, one line naming the file and matching ``match``."""
    CASES[reader] += 1
    cfg = tmp_path / name
    if text is not None:
        cfg.write_text(text)
    with deadline(30):
        status = main(["sweep", str(cfg)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(cfg) in err, err
    assert re.search(match, err), err
    return err


# -- 1. only estimator classes, only plain data ---------------------------------------------
def test_a_function_that_runs_a_command_is_refused(tmp_path, capsys, monkeypatch):
    """The issue's exploit: check_output ran `touch MARK`."""
    monkeypatch.chdir(tmp_path)
    steps = ('[[pipeline.steps]]\nclass = "sklearn.utils._testing.check_output"\n'
             'params = { args = ["touch", "MARK"] }\n')
    _refused(tmp_path, capsys, _DATA + steps + _SWEEP, r"private name '_testing'")
    assert not (tmp_path / "MARK").exists()


def test_a_function_that_writes_a_file_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    steps = ('[[pipeline.steps]]\nclass = "sklearn.datasets.dump_svmlight_file"\n'
             'params = { X = [[1.0]], y = [1.0], f = "PWNED" }\n')
    _refused(tmp_path, capsys, _DATA + steps + _SWEEP,
             r"step 0 .*'sklearn\.datasets\.dump_svmlight_file' is not an estimator class")
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("cls, match", [
    ("sklearn.base.clone", "is not an estimator class"),
    ("sklearn.utils.estimator_checks.check_estimator", "is not an estimator class"),
    ("skdc.utils._outputs.write_file", "private name '_outputs'"),
    ("sklearn.linear_model._logistic.LogisticRegression", "private name '_logistic'"),
    ("skdc.experiments._cli._resolve_class", "private name '_cli'"),
    ("os.system", "sklearn, skdc or imblearn"),
    ("sklearn.tests.test_base.T", "test module"),
    ("sklearn..base.clone", "not a dotted name"),
    ("print", "No class 'print'"),
    ("BaseAligner.__subclasses__", "private name '__subclasses__'"),
])
def test_only_public_estimator_classes(tmp_path, capsys, cls, match):
    steps = f'[[pipeline.steps]]\nclass = "{cls}"\n'
    _refused(tmp_path, capsys, _DATA + steps + _SWEEP, match)


@pytest.mark.parametrize("params, match", [
    ("{ max_iter = 1979-05-27T07:32:00Z }", r"steps\[2\]\.params\.max_iter a datetime.*plain"),
    ("{ C = nan }", r"not finite"),
    ("{ max_iter = true }", r"step 2 .*'max_iter' parameter of LogisticRegression"),
    ("{ max_iter = 'many' }", r"step 2 .*'max_iter' parameter"),
    ("{ memory = '/tmp' }", r"memory"),
    ("{ no_such = 1 }", r"step 2 .*no_such"),
    ("5", r"step 2 .*params must be a table"),
])
def test_step_parameters_are_plain_valid_data(tmp_path, capsys, params, match):
    steps = _steps_toml(_STEPS[:2]) + ('\n[[pipeline.steps]]\nname = "clf"\n'
                                       'class = "sklearn.linear_model.LogisticRegression"\n'
                                       f"params = {params}\n")
    _refused(tmp_path, capsys, _DATA + steps + _SWEEP, match)


def test_yaml_non_plain_parameters_are_refused(tmp_path, capsys):
    pytest.importorskip("yaml")
    text = ("data: {dataset: digits}\n"
            "pipeline:\n  steps:\n"
            "  - {class: IGDP, params: {n_participants: 3}}\n"
            "  - {class: GOPPAligner, params: {max_iter: !!set {a, b}}}\n"
            "sweep: {param: align__v, values: [0.0]}\n")
    _refused(tmp_path, capsys, text, r"plain data", name="bad.yaml")
    _refused(tmp_path, capsys, text.replace("!!set {a, b}", "!!binary aGVsbG8="), "plain data",
             name="bad.yaml")
    _refused(tmp_path, capsys, text.replace("!!set {a, b}", "!!python/object:os.system {}"),
             "not valid YAML", name="bad.yaml")


# -- 3. the file itself: a regular file, bounded in bytes and in depth ------------------------
def test_config_that_is_not_a_regular_file(tmp_path, capsys):
    os.mkfifo(tmp_path / "fifo.toml")
    _refused(tmp_path, capsys, None, "a named pipe", name="fifo.toml")
    (tmp_path / "dir.toml").mkdir()
    _refused(tmp_path, capsys, None, "a directory", name="dir.toml")
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    _refused(tmp_path, capsys, None, "a character device", name="zero.toml")
    _refused(tmp_path, capsys, "# " + "x" * 2**21 + "\n" + _CONFIG, "more than 1048576 bytes")


@pytest.mark.parametrize("name, text", [
    ("deep.toml", _CONFIG + "label = " + "[" * 50_000 + "]" * 50_000 + "\n"),
    ("deep_keys.toml", _CONFIG.replace("[sweep]", "[sweep]\nlabel." + ".".join(["a"] * 200)
                                       + " = 1")),
    ("deep.yaml", "sweep: " + "[" * 50_000 + "]" * 50_000 + "\n"),
], ids=["toml-arrays", "toml-dotted-keys", "yaml-lists"])
def test_config_nested_too_deeply(tmp_path, capsys, name, text):
    if name.endswith(".yaml"):
        pytest.importorskip("yaml")
    _refused(tmp_path, capsys, text, "nested", name=name)


def test_yaml_aliases_cannot_blow_up(tmp_path, capsys):
    pytest.importorskip("yaml")
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for k in range(1, 9):  # 10**9 leaves once the aliases are expanded
        lines.append(f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]")
    _refused(tmp_path, capsys, "\n".join(lines) + "\n", "more than 100000 values",
             name="laughs.yaml")
    _refused(tmp_path, capsys, "sweep: &s [*s]\n", "nested", name="loop.yaml")


# -- 3. the sweep's own keys --------------------------------------------------------------
def test_steps_must_be_a_list_of_tables(tmp_path, capsys):
    """Issue 24: steps = 5 gave "'int' object is not iterable", naming no key."""
    _refused(tmp_path, capsys, _DATA + "[pipeline]\nsteps = 5\n" + _SWEEP,
             r"\[pipeline\] steps must be a non-empty list of tables")
    _refused(tmp_path, capsys, _DATA + "[pipeline]\nsteps = [5]\n" + _SWEEP,
             r"pipeline step 0 must be a table")


def test_the_example_and_a_good_config_load(tmp_path, capsys):
    main(["sweep", "--example"])
    (tmp_path / "example.toml").write_text(capsys.readouterr().out)
    (tmp_path / "good.toml").write_text(_CONFIG)
    for name in ("example.toml", "good.toml"):
        spec = load_sweep_config(tmp_path / name)
        assert [step for step, _ in spec.pipeline.steps] == ["gdp", "align", "clf"]
        assert spec.X.shape[0] == len(spec.y) > 0


@pytest.mark.parametrize("edit, match", [
    (("test_size = 0.3", 'test_size = "big"'), r"\[data\] test_size must be"),
    (("test_size = 0.3", "test_size = 1.5"), r"\[data\] test_size must be"),
    (('dataset = "digits"', "dataset = 3"), r"\[data\] dataset must be"),
    (('dataset = "digits"', 'dataset = "npz"\npath = 3'), r"\[data\] path must be"),
    (("seed = 0", 'seed = "0"'), r"\[sweep\] seed must be"),
    (("seed = 0", "seed = true"), r"\[sweep\] seed must be"),
    (("seed = 0", "seed = -1"), r"\[sweep\] seed must be"),
    (("seed = 0", "seed = 1099511627776"), r"\[sweep\] seed must be"),
    (("seed = 0", "seed = 0\nn_draws = true"), r"\[sweep\] n_draws must be"),
    (("seed = 0", "seed = 0\nn_draws = 0"), r"\[sweep\] n_draws must be"),
    (("seed = 0", "seed = 0\nn_jobs = 1.5"), r"\[sweep\] n_jobs must be"),
    (("seed = 0", "seed = 0\nattacks = 3"), r"\[sweep\] attacks must be"),
    (("seed = 0", "seed = 0\nscoring = 1"), r"\[sweep\] scoring must be"),
    (("seed = 0", "seed = 0\nlabel = []"), r"gives sweep\.label an empty list"),
    (('param = "align__v"', "param = 3"), r"\[sweep\] param must be"),
    (('param = "align__v"', 'param = "clf__memory"'), "memory"),
    (("values = [0.0, 0.1]", "values = 5"), r"\[sweep\] values must be"),
    (("values = [0.0, 0.1]", "values = []"), r"gives sweep\.values an empty list"),
    (("values = [0.0, 0.1]", "values = [[0.0]]"), r"\[sweep\] values must be"),
    (("[sweep]", "[output]\ncsv = 1\n[sweep]"), r"\[output\] csv must be"),
    (("[sweep]", "[output]\nplot = true\n[sweep]"), r"\[output\] plot must be"),
    (('name = "gdp"', "name = 3"), r"step 0 name must be"),
    (('name = "gdp"', 'name = "a__b"'), r"step 0 name must be"),
    (('class = "IGDP"', "class = 3"), r"step 0 class must be"),
])
def test_wrong_types_name_the_key(tmp_path, capsys, edit, match):
    _refused(tmp_path, capsys, _CONFIG.replace(*edit), match)


@pytest.mark.parametrize("dist, match", [
    ('{ name = "rv_continuous" }', "not a distribution"),
    ('{ name = "rv_discrete" }', "not a distribution"),
    ('{ name = "multivariate_normal" }', "not a distribution"),
    ('{ name = "_lazywhere" }', "not a distribution"),
    ('{ name = "norm", loc = "a" }', r"distribution loc must be a finite number"),
    ('{ name = "norm", scale = -1.0 }', "distribution 'norm'"),
    ('{ name = "norm", shape = 1.0 }', "distribution 'norm'"),
    ('{ name = "uniform", low = 1.0, high = 0.0 }', "distribution 'uniform'"),
    ('{ name = 3 }', "distribution name must be"),
    ("5", r"\[sweep\] distribution must be a table"),
])
def test_distribution_is_a_public_scipy_distribution(tmp_path, capsys, dist, match):
    """Issue 24: name = "rv_continuous" gave a RecursionError traceback."""
    text = _CONFIG.replace("values = [0.0, 0.1]", f"distribution = {dist}\nn_draws = 2")
    _refused(tmp_path, capsys, text, match)


def test_good_distributions_load(tmp_path):
    for dist in ('{ name = "uniform", low = 0.0, high = 0.3 }', '{ name = "loguniform", '
                 'a = 0.01, b = 1.0 }', '{ name = "randint", low = 0, high = 3 }'):
        cfg = tmp_path / "ok.toml"
        cfg.write_text(_CONFIG.replace("values = [0.0, 0.1]", f"distribution = {dist}\n"
                                                             "n_draws = 2"))
        values = load_sweep_config(cfg).values
        assert hasattr(values, "rvs")


# -- the data file named by the config ------------------------------------------------------
def _npz_config(tmp_path, data_name):
    return _CONFIG.replace('dataset = "digits"', f'dataset = "npz"\npath = "{data_name}"')


def test_npz_data_through_the_boundary(tmp_path, capsys):
    np = pytest.importorskip("numpy")
    os.mkfifo(tmp_path / "fifo.npz")
    _refused(tmp_path, capsys, _npz_config(tmp_path, "fifo.npz"), "a named pipe")
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")
    _refused(tmp_path, capsys, _npz_config(tmp_path, "junk.npz"), r"junk\.npz")
    rng = np.random.RandomState(0)
    X = rng.rand(20, 3)
    X[0, 0] = np.nan
    np.savez(tmp_path / "nan.npz", X=X, y=np.arange(20) % 2)
    _refused(tmp_path, capsys, _npz_config(tmp_path, "nan.npz"), "not finite")
    np.savez(tmp_path / "obj.npz", X=np.array([[None]], dtype=object), y=[0])
    _refused(tmp_path, capsys, _npz_config(tmp_path, "obj.npz"), r"obj\.npz")
    np.savez(tmp_path / "short.npz", X=rng.rand(20, 3), y=np.arange(19) % 2)
    _refused(tmp_path, capsys, _npz_config(tmp_path, "short.npz"), "rows")


def test_npz_member_declaring_a_huge_shape(tmp_path, capsys):
    import io
    import zipfile

    np = pytest.importorskip("numpy")
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": "<f8", "fortran_order": False, "shape": (2**40, 2**10)})
    with zipfile.ZipFile(tmp_path / "huge.npz", "w") as zf:
        zf.writestr("X.npy", buf.getvalue() + bytes(64))
    _refused(tmp_path, capsys, _npz_config(tmp_path, "huge.npz"), "declares")


# -- 7. fuzz: any value at any key, and random bytes ----------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TOML_VALUES = st.sampled_from([
    "1", "-1", "0", "true", "false", "1.5", "nan", "inf", "-inf", '"x"', '""', "[]", "[1, 2]",
    '["a", 1]', "{}", '{ a = 1 }', "1979-05-27", "07:32:00", "[[1]]", '{ name = "norm" }',
    "18446744073709551615", "9223372036854775807", '"' + "a" * 300 + '"',
])
_KEYS = ["test_size", "dataset", "param", "values", "seed", "class", "name", "params",
         "max_iter", "n_participants", "random_state"]


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(_KEYS), value=_TOML_VALUES, which=st.integers(0, 2))
def test_fuzz_sweep_config_values(tmp_path, key, value, which):
    """Any value at any key: the config loads (and then names only estimator classes with
    plain, valid parameters) or is refused in one line naming the file."""
    CASES["config (sweep)"] += 1
    lines = _CONFIG.splitlines()
    hits = [i for i, ln in enumerate(lines) if re.match(rf"{key} = ", ln)
            or re.search(rf"\b{key} = ", ln)]
    text = _CONFIG
    if hits:
        i = hits[which % len(hits)]
        lines[i] = re.sub(rf"\b{key} = ([^,}}]+)", lambda m: f"{key} = {value}", lines[i],
                          count=1)
        text = "\n".join(lines) + "\n"
    cfg = tmp_path / "fuzz.toml"
    cfg.write_text(text)
    try:
        load_sweep_config(cfg)
    except (ValueError, FileNotFoundError) as exc:
        assert str(cfg) in str(exc) and "\n" not in str(exc), str(exc)


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=300), suffix=st.sampled_from([".toml", ".yaml"]))
def test_fuzz_sweep_config_bytes(tmp_path, blob, suffix):
    CASES["config (sweep)"] += 1
    cfg = tmp_path / ("fuzz" + suffix)
    cfg.write_bytes(blob)
    try:
        load_sweep_config(cfg)
    except (ValueError, FileNotFoundError) as exc:
        assert str(cfg) in str(exc) and "\n" not in str(exc), str(exc)
    else:  # pragma: no cover - random bytes that happen to be a whole config
        pass


def test_the_audit_config_goes_through_the_same_loader(tmp_path, capsys):
    """Issue 24: an audit config with ``attack`` nested 50,000 deep gave a RecursionError
    traceback; the shared loader refuses it in one line naming the file."""
    CASES["config (audit)"] += 1
    cfg = tmp_path / "audit.toml"
    cfg.write_text("[audit]\nattack = " + "[" * 50_000 + "]" * 50_000 + "\n")
    with deadline(30):
        status = main(["audit", "--config", str(cfg)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert str(cfg) in err and "nested too deeply" in err, err
