"""The feature schema of a deployment, through the command line on CSV tables the tests write.

A participant's table names its columns in its header: ``participant upload`` records the
names, in order, in the secret and the upload; ``analyst fit`` refuses uploads whose names
differ (naming both files and the first differing column), carries them into every map and
the model, and says in its summary when an upload (a ``.npy``) had none; ``participant
predict`` refuses new rows of other columns, puts the same names in the uploaded order (one
warning line), and checks a ``.npy`` by its count only. Predictions are written by
``--out``'s suffix, with ``--id-column``'s ids beside them. Also: ``analyst fit`` says when
the declared anchor noise exceeds ``v_PT``, and a usage error names the sub-command.
"""

import importlib.util
import json

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc.protocol import AlignmentMap
from skdc.protocol._container import Container, write_container
from skdc.protocol._model import read_model

from .conftest import run_cli

pd = pytest.importorskip("pandas")

P = 3
COLUMNS = ["age", "bmi", "sbp", "chol", "hdl"]


def _frame(rng, n, prefix):
    X = rng.rand(n, len(COLUMNS))
    frame = pd.DataFrame(X, columns=COLUMNS)
    frame.insert(0, "pid", [f"{prefix}-{k:03d}" for k in range(n)])  # text: never a feature
    frame["y"] = (X[:, 0] + 2 * X[:, 1] - X[:, 3] > 0.8).astype(int)
    return frame


def _upload(site, i, data, *, out=None, secret=None, extra=()):
    out = out or site / "uploads" / f"u{i}.npz"
    secret = secret or site / f"s{i}.npz"
    return ["participant", "upload", "--id", i, "--n-participants", P, "--data", data,
            "--labels", "y", "--id-column", "pid", "--anchor", site / "anchor.npy",
            "--anchor-noise", 0.05, "--secret-out", secret, "--out", out, *extra]


def _predict(site, data, out, *extra, ids="table"):
    """``participant predict`` of participant 0; a table's ``pid`` is its id column unless
    ``ids`` says otherwise (``None``: no --id-column)."""
    if ids == "table":
        ids = None if str(data).endswith(".npy") else "pid"
    return ["participant", "predict", "--secret", site / "s0.npz", "--map",
            site / "run" / "map_0.npz", "--model", site / "run" / "model.npz", "--data", data,
            "--out", out, *extra, *([] if ids is None else ["--id-column", ids])]


def _refused(argv, capsys, *words):
    status, out, err = run_cli(argv, capsys)
    assert status == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith("skdc "), err
    for word in words:
        assert word in err, (word, err)
    return err


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """Three sites' CSV tables (an id column, five named features, the label) uploaded and
    fitted; ``new.csv`` and its columns swapped, renamed, as a ``.npy``."""
    from skdc.__main__ import main

    site = tmp_path_factory.mktemp("schema")
    rng = np.random.RandomState(0)
    for i in range(P):
        _frame(rng, 60, f"s{i}").to_csv(site / f"site{i}.csv", index=False)
    new = _frame(rng, 200, "new").drop(columns="y")
    new.to_csv(site / "new.csv", index=False)
    new[["pid", "bmi", "age", "sbp", "chol", "hdl"]].to_csv(site / "swapped.csv", index=False)
    new.rename(columns={"sbp": "dbp"}).to_csv(site / "renamed.csv", index=False)
    np.save(site / "new.npy", new[COLUMNS].to_numpy())
    np.save(site / "swapped.npy", new[["bmi", "age", "sbp", "chol", "hdl"]].to_numpy())
    assert main(["anchor", "make", "--n-features", "5", "--seed", "1",
                 "--out", str(site / "anchor.npy")]) == 0
    (site / "uploads").mkdir()
    for i in range(P):
        assert main([str(a) for a in _upload(site, i, site / f"site{i}.csv",
                                             extra=["--seed", 10 + i])]) == 0
    assert main(["analyst", "fit", *[str(site / "uploads" / f"u{i}.npz") for i in range(P)],
                 "--out", str(site / "run")]) == 0
    return site


# -- the schema recorded -----------------------------------------------------------------------
def test_upload_records_the_names_and_never_the_id_column(site):
    with Container(site / "uploads" / "u0.npz", "skdc-upload") as c:
        assert c.header["feature_names"] == COLUMNS
        assert c.array_members()["data"][0] == (60, 5)  # the id column is no feature
    with Container(site / "s0.npz", "skdc-secret") as c:
        assert c.header["feature_names"] == COLUMNS
    assert AlignmentMap.load(site / "run" / "map_0.npz").feature_names == COLUMNS
    assert read_model(site / "run" / "model.npz", schema=True)[2] == COLUMNS
    summary = json.loads((site / "run" / "summary.json").read_text())
    assert summary["feature_names"] == COLUMNS and summary["feature_names_checked"] is True
    assert summary["uploads_without_feature_names"] == []


# -- analyst fit ---------------------------------------------------------------------------------
@pytest.mark.parametrize("order, words", [
    (["pid", "bmi", "age", "sbp", "chol", "hdl", "y"],
     ["column 1 'bmi' where", "has 'age'", "same names in another order"]),
    (["pid", "age", "bmi", "dbp", "chol", "hdl", "y"],
     ["column 3 'dbp' where", "has 'sbp'", "'sbp' missing", "'dbp' extra"]),
])
def test_analyst_refuses_uploads_whose_columns_differ(site, tmp_path, capsys, order, words):
    table = pd.read_csv(site / "site2.csv").rename(columns={"sbp": "dbp"})
    table = table.rename(columns={"dbp": "sbp"}) if "sbp" in order else table
    table[order].to_csv(tmp_path / "site2.csv", index=False)
    own = tmp_path / "u2.npz"
    status, _, err = run_cli(_upload(site, 2, tmp_path / "site2.csv", out=own,
                                     secret=tmp_path / "s2.npz", extra=["--seed", 12]), capsys)
    assert status == 0, err  # at home nothing compares it with the others
    uploads = [site / "uploads" / "u0.npz", site / "uploads" / "u1.npz", own]
    _refused(["analyst", "fit", *uploads, "--out", tmp_path / "run"], capsys,
             f"skdc analyst: error: {own}: field 'feature_names'", str(site / "uploads" / "u0.npz"),
             *words, "agreed order and names")
    assert not (tmp_path / "run").exists()


def test_a_npy_upload_is_compared_by_count_and_the_summary_says_so(site, tmp_path, capsys):
    np.save(tmp_path / "X2.npy", pd.read_csv(site / "site2.csv")[COLUMNS].to_numpy())
    np.save(tmp_path / "y2.npy", pd.read_csv(site / "site2.csv")["y"].to_numpy())
    own = tmp_path / "u2.npz"
    argv = _upload(site, 2, tmp_path / "X2.npy", out=own, secret=tmp_path / "s2.npz",
                   extra=["--seed", 12])
    argv[argv.index("--labels") + 1] = tmp_path / "y2.npy"
    argv = argv[:argv.index("--id-column")] + argv[argv.index("--id-column") + 2:]
    status, out, err = run_cli(argv, capsys)
    assert status == 0 and "5 columns without names" in out, err
    uploads = [site / "uploads" / "u0.npz", site / "uploads" / "u1.npz", own]
    status, out, err = run_cli(["analyst", "fit", *uploads, "--out", tmp_path / "run"], capsys)
    assert status == 0, err
    assert f"column names not checked (for {own}" in out and "by count only" in out
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["feature_names_checked"] is False
    assert summary["uploads_without_feature_names"] == ["u2.npz"]
    assert summary["feature_names"] == COLUMNS  # those of the uploads that name them


# -- participant predict ---------------------------------------------------------------------
def test_predict_puts_swapped_columns_in_the_uploaded_order_and_says_so(site, tmp_path,
                                                                         capsys):
    status, out, err = run_cli(_predict(site, site / "new.csv", tmp_path / "p.csv"), capsys)
    assert status == 0 and err == "", err
    assert "by count only" not in out
    status, out, err = run_cli(_predict(site, site / "swapped.csv", tmp_path / "q.csv"), capsys)
    assert status == 0, err
    assert err.count("\n") == 1 and err.startswith("skdc participant: warning: "), err
    assert f"{site / 'swapped.csv'}: --data has the uploaded columns in another order" in err
    assert "first moved: 'bmi'" in err and "reordered them by name" in err
    expected = pd.read_csv(tmp_path / "p.csv")["prediction"].to_numpy()
    assert_array_equal(pd.read_csv(tmp_path / "q.csv")["prediction"], expected)
    # the same swap in a .npy, without names, cannot be seen: the final line says so
    status, out, err = run_cli(_predict(site, site / "swapped.npy", tmp_path / "r.npy"), capsys)
    assert status == 0 and err == "", err
    assert "columns checked by count only (--data is a .npy, without column names)" in out
    assert (np.load(tmp_path / "r.npy") != expected).any()  # what the names protect against


def test_predict_refuses_a_renamed_column(site, tmp_path, capsys):
    _refused(_predict(site, site / "renamed.csv", tmp_path / "p.csv"), capsys,
             f"skdc participant: error: {site / 'renamed.csv'}: --data column 3 is 'dbp'",
             f"the secret {site / 's0.npz'}", "has 'sbp'", "'sbp' missing", "'dbp' extra",
             "rename or drop")
    assert not (tmp_path / "p.csv").exists()


def test_predict_refuses_a_missing_or_an_extra_named_column(site, tmp_path, capsys):
    new = pd.read_csv(site / "new.csv")
    new.drop(columns="hdl").to_csv(tmp_path / "fewer.csv", index=False)
    _refused(_predict(site, tmp_path / "fewer.csv", tmp_path / "p.csv"), capsys,
             "--data column 5 is missing", "has 'hdl'", "'hdl' missing")
    new.assign(ldl=1.0).to_csv(tmp_path / "more.csv", index=False)
    _refused(_predict(site, tmp_path / "more.csv", tmp_path / "p.csv"), capsys,
             "--data column 6 is 'ldl'", "has nothing", "'ldl' extra")


def test_predict_checks_a_npy_by_its_count(site, tmp_path, capsys):
    np.save(tmp_path / "narrow.npy", np.load(site / "new.npy")[:, :4])
    _refused(_predict(site, tmp_path / "narrow.npy", tmp_path / "p.npy"), capsys,
             "--data has 4 columns", "made for 5")


def test_a_secret_without_the_field_is_checked_by_count(site, tmp_path, capsys):
    """A secret written before the schema was recorded still predicts (names not checked)."""
    with Container(site / "s0.npz", "skdc-secret") as c:
        header, arrays = dict(c.header), c.read()
    del header["feature_names"]
    write_container(tmp_path / "old.npz", "skdc-secret", header, arrays, mode=0o600)
    argv = _predict(site, site / "swapped.csv", tmp_path / "p.csv")
    argv[argv.index("--secret") + 1] = tmp_path / "old.npz"
    status, out, err = run_cli(argv, capsys)
    assert status == 0 and err == "", err
    assert "count only (the secret records no column names" in out


# -- --out by its suffix, --id-column ------------------------------------------------------------
def test_predict_writes_a_csv_with_the_id_column(site, tmp_path, capsys):
    assert run_cli(_predict(site, site / "new.npy", tmp_path / "p.npy"), capsys)[0] == 0
    status, out, err = run_cli(_predict(site, site / "swapped.csv", tmp_path / "p.csv"),
                               capsys)
    assert status == 0, err
    assert f"200 predictions to {tmp_path / 'p.csv'} (with the id column 'pid')" in out
    got = pd.read_csv(tmp_path / "p.csv")
    assert got.columns.tolist() == ["pid", "prediction"]
    assert_array_equal(got["pid"], pd.read_csv(site / "new.csv")["pid"])
    assert_array_equal(got["prediction"], np.load(tmp_path / "p.npy"))
    # without --id-column: the predictions alone
    assert run_cli(_predict(site, site / "new.npy", tmp_path / "q.csv"), capsys)[0] == 0
    assert pd.read_csv(tmp_path / "q.csv").columns.tolist() == ["prediction"]


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="Parquet needs pyarrow")
def test_predict_writes_parquet(site, tmp_path, capsys):
    status, _, err = run_cli(_predict(site, site / "new.csv", tmp_path / "p.parquet"), capsys)
    assert status == 0, err
    got = pd.read_parquet(tmp_path / "p.parquet")
    assert got.columns.tolist() == ["pid", "prediction"] and len(got) == 200


@pytest.mark.parametrize("out, extra, words", [
    ("p.txt", [], ["p.txt: --out must end in .csv, .parquet or .npy", "got '.txt'",
                   "Rename --out"]),
    ("p", [], ["--out must end in", "got no suffix"]),
    ("p.npy", [], ["p.npy: --out is a .npy, which holds no id column for "
                                       "--id-column 'pid'", "write the predictions to a .csv"]),
])
def test_predict_refuses_an_out_it_cannot_write(site, tmp_path, capsys, out, extra, words):
    _refused(_predict(site, site / "new.csv", tmp_path / out, *extra), capsys, *words)
    assert list(tmp_path.iterdir()) == []


def test_id_column_refusals(site, tmp_path, capsys):
    # no such column (predict and upload)
    _refused(_predict(site, site / "new.csv", tmp_path / "p.csv", ids="patient"), capsys,
             f"{site / 'new.csv'}: --data has no column 'patient' for the ids",
             "(--id-column 'patient')", "its columns are 'pid'")
    argv = _upload(site, 0, site / "site0.csv", out=tmp_path / "u.npz",
                   secret=tmp_path / "s.npz")
    argv[argv.index("--id-column") + 1] = "y"
    _refused(argv, capsys, "--data has no column 'y' for the ids", "it is the label column")
    # a .npy has no columns to name
    _refused(_predict(site, site / "new.npy", tmp_path / "p.csv", ids="pid"), capsys,
             f"{site / 'new.npy'}: --id-column 'pid' names a column of a table",
             "--data is a .npy")
    # without --id-column the id column would be a feature: refused as not numeric
    _refused(_predict(site, site / "new.csv", tmp_path / "p.csv", ids=None), capsys,
             "--data column 'pid' is not numeric")
    assert list(tmp_path.iterdir()) == []


# -- the declared anchor noise against v_PT ------------------------------------------------------
def test_analyst_says_when_the_anchor_noise_exceeds_v_pt(site, tmp_path, capsys):
    (tmp_path / "up").mkdir()
    uploads = []
    for i in range(P):
        argv = _upload(site, i, site / f"site{i}.csv", out=tmp_path / "up" / f"u{i}.npz",
                       secret=tmp_path / f"s{i}.npz", extra=["--seed", 20 + i])
        argv[argv.index("--anchor-noise") + 1] = 0.4
        assert run_cli(argv, capsys)[0] == 0
        uploads.append(tmp_path / "up" / f"u{i}.npz")
    status, _, err = run_cli(["analyst", "fit", *uploads, "--outliers", "warn",
                              "--out", tmp_path / "run"], capsys)
    assert status == 0, err
    line = next(ln for ln in err.splitlines() if "v_PT" in ln)
    assert line.startswith("skdc analyst: warning: the uploads declare anchor noise v = 0.4, "
                           "above v_PT = ")
    assert "(3 participants, 5 columns, 20 anchor rows" in line
    assert "--anchor-noise below" in line
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["anchor_noise_above_v_pt"] is True
    assert summary["declared_anchor_noise"] == 0.4
    assert 0 < summary["v_phase_transition"] < 0.4
    # below it: nothing said, and the summary says so
    below = json.loads((site / "run" / "summary.json").read_text())
    assert below["anchor_noise_above_v_pt"] is False
    assert below["declared_anchor_noise"] == 0.05 < below["v_phase_transition"]


# -- a usage error names the sub-command ----------------------------------------------------------
@pytest.mark.parametrize("argv, prog", [
    (["audit", "--bogus"], "skdc audit"),
    (["analyst", "fit", "u.npz", "--out", "o", "--bogus"], "skdc analyst fit"),
    (["participant", "predict", "--secret", "s", "--map", "m", "--model", "m", "--data", "d",
      "--out", "p.npy", "--bogus", "1"], "skdc participant predict"),
    (["participant", "new-seed", "--bogus"], "skdc participant new-seed"),
])
def test_an_unknown_flag_is_refused_by_the_sub_command(capsys, argv, prog):
    err = _refused(argv, capsys, f"{prog}: error: unrecognized arguments: --bogus")
    assert not err.startswith("skdc: error")
