"""Every command that takes ``--data`` reads CSV and Parquet tables (with a header; labels as a
column or a file) through :func:`skdc.datasets.load_table`, and refuses what it cannot use in
one line naming the file and the flag.

The commands whose work is long (audit, sweep, bound) are stopped at the call that receives
the rows, which are compared with the table's; the deployment commands run whole, and a
participant's CSV gives the same upload and predictions as its ``.npy`` files.
"""

import importlib.util

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skdc.__main__ import main

pd = pytest.importorskip("pandas")

FORMATS = ["csv", pytest.param("parquet", marks=pytest.mark.skipif(
    importlib.util.find_spec("pyarrow") is None, reason="Parquet needs pyarrow"))]


class _Seen(Exception):
    """Raised by a stand-in for the command's work once it has the rows."""


def _rows(seed=0, n=60, d=5):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, d)
    y = np.where(X[:, 0] + 0.1 * rng.randn(n) > 0.5, "malignant", "benign")
    return X, y


def _table(folder, fmt, X, y=None, name="rows"):
    """``X`` (and ``y`` as a column ``diagnosis``) written as a table; its path."""
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    if y is not None:
        frame["diagnosis"] = y
    path = folder / f"{name}.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path)
    return path


def _capture(monkeypatch, module, name, seen):
    def stand_in(*args, **kwargs):
        seen.append((args, kwargs))
        raise _Seen

    monkeypatch.setattr(module, name, stand_in)


@pytest.mark.parametrize("fmt", FORMATS)
def test_audit_reads_a_table_with_its_label_column(tmp_path, fmt, monkeypatch):
    import skdc.audit._audit as audit_module

    X, y = _rows()
    seen = []
    _capture(monkeypatch, audit_module, "audit", seen)
    with pytest.raises(_Seen):
        main(["audit", "--data", str(_table(tmp_path, fmt, X, y)), "--labels", "diagnosis",
              "--out", str(tmp_path / "report")])
    (args, _), = seen
    assert_allclose(args[0], X, rtol=1e-15)
    assert_array_equal(args[1], y)


@pytest.mark.parametrize("fmt", FORMATS)
def test_audit_config_names_the_label_column(tmp_path, fmt, monkeypatch):
    import skdc.audit._audit as audit_module

    X, y = _rows(1)
    _table(tmp_path, fmt, X, y)
    config = tmp_path / "audit.toml"
    config.write_text(f'[audit]\ndata = "rows.{fmt}"\nlabels = "diagnosis"\n')
    seen = []
    _capture(monkeypatch, audit_module, "audit", seen)
    with pytest.raises(_Seen):
        main(["audit", "--config", str(config), "--out", str(tmp_path / "report")])
    assert_allclose(seen[0][0][0], X, rtol=1e-15)
    assert_array_equal(seen[0][0][1], y)


@pytest.mark.parametrize("fmt", FORMATS)
def test_bound_reads_tables(tmp_path, fmt, monkeypatch):
    from skdc.privacy import BlockEntropyLowerBound

    X, _ = _rows(2, n=40, d=4)
    perp, _ = _rows(3, n=40, d=4)
    seen = []

    def stand_in(self, X, X_perp=None, checkpoint=None):
        seen.append((X, X_perp))
        raise _Seen

    monkeypatch.setattr(BlockEntropyLowerBound, "fit", stand_in)
    with pytest.raises(_Seen):
        main(["bound", "--data", str(_table(tmp_path, fmt, X)), "--perp",
              str(_table(tmp_path, fmt, perp, name="perp")), "--no-progress"])
    assert_allclose(seen[0][0], X, rtol=1e-15)
    assert_allclose(seen[0][1], perp, rtol=1e-15)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sweep_config_reads_a_table(tmp_path, fmt, monkeypatch):
    import skdc.experiments._sweep as sweep_module

    X, y = _rows(4)
    _table(tmp_path, fmt, X, y)
    config = tmp_path / "sweep.toml"
    config.write_text(
        f'[data]\ndataset = "{fmt}"\npath = "rows.{fmt}"\nlabel = "diagnosis"\n'
        '[[pipeline.steps]]\nname = "gdp"\nclass = "IGDP"\n'
        '[[pipeline.steps]]\nname = "clf"\nclass = "sklearn.linear_model.LogisticRegression"\n'
        '[sweep]\nparam = "gdp__noise"\nvalues = [0.0, 0.1]\n'
    )
    seen = []
    _capture(monkeypatch, sweep_module, "privacy_utility_sweep", seen)
    with pytest.raises(_Seen):
        main(["sweep", str(config)])
    (args, _), = seen
    assert_allclose(args[1], X, rtol=1e-15)
    assert_array_equal(args[2], y)


def test_sweep_table_without_label_is_one_line(tmp_path, capsys):
    X, y = _rows(5)
    _table(tmp_path, "csv", X, y)
    config = tmp_path / "sweep.toml"
    config.write_text('[data]\ndataset = "csv"\npath = "rows.csv"\n'
                      '[[pipeline.steps]]\nclass = "IGDP"\n[sweep]\nparam = "gdp__noise"\n'
                      'values = [0.0]\n')
    assert main(["sweep", str(config)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "needs path = 'rows.csv' and label" in err


def _deploy(folder, data, labels, X_new, anchor):
    """Upload (two participants), fit, predict; the predictions of participant 0."""
    for i in (0, 1):
        assert main(["participant", "upload", "--id", str(i), "--n-participants", "2",
                     "--data", str(data[i]), *([] if labels[i] is None else
                                               ["--labels", str(labels[i])]),
                     "--anchor", str(anchor), "--anchor-noise", "0.05", "--seed", str(7 + i),
                     "--noise-seed", str(17 + i),
                     "--secret-out", str(folder / f"secret_{i}.npz"),
                     "--out", str(folder / f"upload_{i}.npz")]) == 0
    assert main(["analyst", "fit", str(folder / "upload_0.npz"), str(folder / "upload_1.npz"),
                 "--out", str(folder / "model")]) == 0
    assert main(["participant", "predict", "--secret", str(folder / "secret_0.npz"), "--map",
                 str(folder / "model/map_0.npz"), "--model", str(folder / "model/model.npz"),
                 "--data", str(X_new), "--out", str(folder / "pred.npy")]) == 0
    return np.load(folder / "pred.npy")


@pytest.mark.parametrize("fmt", FORMATS)
def test_participant_upload_and_predict_read_tables(tmp_path, fmt, capsys):
    X, y = _rows(6, n=80)
    codes = (y == "malignant").astype(int)
    halves = (slice(0, 40), slice(40, 80))
    assert main(["anchor", "make", "--n-features", "5", "--seed", "0",
                 "--out", str(tmp_path / "anchor.npy")]) == 0
    npy, tab = tmp_path / "npy", tmp_path / "tab"
    npy.mkdir()
    tab.mkdir()
    for i, rows in enumerate(halves):
        np.save(npy / f"X{i}.npy", X[rows])
        np.save(npy / f"y{i}.npy", codes[rows])
    np.save(npy / "X_new.npy", X[:20])
    expected = _deploy(npy, [npy / "X0.npy", npy / "X1.npy"], [npy / "y0.npy", npy / "y1.npy"],
                       npy / "X_new.npy", tmp_path / "anchor.npy")
    # participant 0: labels as a column of its table; participant 1: labels as a file
    data = [_table(tab, fmt, X[halves[0]], codes[halves[0]], name="site0"),
            _table(tab, fmt, X[halves[1]], name="site1")]
    pd.DataFrame({"diagnosis": codes[halves[1]]}).to_csv(tab / "y1.csv", index=False)
    got = _deploy(tab, data, ["diagnosis", tab / "y1.csv"], _table(tab, fmt, X[:20], name="new"),
                  tmp_path / "anchor.npy")
    assert_array_equal(got, expected)


@pytest.mark.parametrize("argv, words", [
    (["audit", "--labels", "diagnosis"], ["--data", "column 'sex' is not numeric",
                                          "same way at every participant"]),
    (["bound", "--perp", "{perp}", "--no-progress"], ["--data", "column 'sex' is not numeric"]),
    (["participant", "upload", "--id", "0", "--labels", "diagnosis", "--secret-out", "{s}",
      "--out", "{u}"], ["--data", "column 'sex' is not numeric"]),
])
def test_non_numeric_column_is_one_line_naming_file_and_flag(tmp_path, capsys, argv, words):
    from tests._fuzz import CASES

    CASES["table (command line)"] += 1
    X, y = _rows(7)
    frame = pd.DataFrame(X[:, :2], columns=["age", "bmi"]).assign(sex="F", diagnosis=y)
    frame.to_csv(tmp_path / "rows.csv", index=False)
    np.save(tmp_path / "perp.npy", X)
    fill = {"perp": tmp_path / "perp.npy", "s": tmp_path / "s.npz", "u": tmp_path / "u.npz"}
    argv = [a.format(**fill) for a in argv]
    assert main([*argv, "--data", str(tmp_path / "rows.csv")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert str(tmp_path / "rows.csv") in err and "Traceback" not in err
    for word in words:
        assert word in err, (word, err)


def _hostile(kind, folder, monkeypatch):
    """A hostile ``--data`` table (small on disk, the limits lowered to meet it); the words
    its refusal says."""
    if kind == "bomb":  # inflates past the byte limit
        import gzip

        path = folder / "bomb.csv.gz"
        with gzip.open(path, "wb") as fh:
            fh.write(b"a,b,diagnosis\n" + b"0,0,0\n" * 200_000)
        monkeypatch.setenv("SKDC_MAX_TABLE_BYTES", "100000")
        return path, ["holds more than 100000 bytes after decompression", "SKDC_MAX_TABLE_BYTES"]
    if kind == "pagemap":  # reports 0 bytes and never ends
        path = folder / "rows.csv"
        path.symlink_to("/proc/self/pagemap")
        return path, ["delivers more bytes than the 0 its size says"]
    if kind == "parquet":  # declares more cells than the budget
        pytest.importorskip("pyarrow")
        path = folder / "rows.parquet"
        pd.DataFrame({"a": np.zeros(5000), "diagnosis": np.zeros(5000)}).to_parquet(path)
        monkeypatch.setenv("SKDC_MAX_TABLE_CELLS", "9999")
        return path, ["declares 5000 rows x 2 columns", "SKDC_MAX_TABLE_CELLS"]
    path = folder / "rows.csv"  # "memory": too large for the memory left
    pd.DataFrame({"a": [1.0, 2.0], "diagnosis": [0, 1]}).to_csv(path, index=False)

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(pd, "read_csv", no_memory)
    return path, ["not enough memory to read --data"]


@pytest.mark.parametrize("kind", [
    "bomb", "parquet", "memory",
    pytest.param("pagemap", marks=pytest.mark.skipif(
        not __import__("os").path.exists("/proc/self/pagemap"), reason="no /proc here")),
])
@pytest.mark.parametrize("command", ["audit", "bound"])
def test_hostile_tables_end_in_one_line_naming_file_and_flag(tmp_path, capsys, monkeypatch,
                                                            kind, command):
    from tests._fuzz import CASES, deadline

    CASES["table (command line)"] += 1
    path, words = _hostile(kind, tmp_path, monkeypatch)
    argv = (["audit", "--labels", "diagnosis", "--out", str(tmp_path / "o")]
            if command == "audit" else ["bound", "--perp", str(path), "--no-progress"])
    with deadline():
        assert main([*argv, "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert str(path) in err and "--data" in err and "Traceback" not in err, err
    for word in words:
        assert word in err, (word, err)
