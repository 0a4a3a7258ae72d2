"""The block entropy lower bound of Bourne and Allison, "From Pixels to Privacy-Sensitive
Features" (arXiv:2610.13768, 2026): the sanity caps of each grid pair (App. E), the Hadamard
rotation that equalises block traces (Remark C.1), invariances, refusals, the device, and the
checkpoint of grid pairs (a draw checkpoint of skdc.utils._checkpoint) that a stopped fit resumes
from."""

import json
import math

import numpy as np
import pytest

from skdc.privacy import BlockEntropyLowerBound, sampling_margin


@pytest.fixture(scope="module")
def fitted_bound():
    rng = np.random.RandomState(0)
    A = rng.standard_normal((8, 8)) * np.linspace(0.3, 2.0, 8)
    X = rng.standard_normal((400, 8)) @ A
    X_perp = rng.standard_normal((100, 8)) @ A
    ent = BlockEntropyLowerBound(block_sizes=[1, 2, 8], nu2=(0.4, 1.6, 6.4), device="cpu",
                                 random_state=0)
    return ent.fit(X, X_perp=X_perp), X, X_perp, A


def test_entropy_within_the_dither_and_gaussian_caps_per_pair(fitted_bound):
    ent, X, _, _ = fitted_bound
    n = X.shape[0]
    assert len(ent.pairs_) == 9
    for p in ent.pairs_:
        k, s, v = p["k"], p["s"], p["nu2"]
        floor = 0.5 * k * math.log2(2 * math.pi * math.e * s**2)
        cap = floor + math.log2(n)
        gauss = 0.5 * k * math.log2(2 * math.pi * math.e * (1 + v) / k)
        assert floor - 0.05 <= p["h_hat"] <= min(cap, gauss + 0.1)
        assert p["h_lb"] == pytest.approx(p["h_hat"] - p["t_mc"] - p["t_md"])
        assert p["t_md"] == pytest.approx(sampling_margin(n, 9, 0.025))


def test_eig_rotation_equalises_block_traces():
    rng = np.random.RandomState(0)
    m = 12
    Q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    Sigma = Q @ np.diag(np.geomspace(0.1, 10, m)) @ Q.T
    L = np.linalg.cholesky(Sigma)
    # a huge calibration sample whose covariance is exactly Sigma: whitened then recoloured
    Z = rng.standard_normal((5000, m))
    Z -= Z.mean(axis=0)
    W = np.linalg.cholesky(Z.T @ Z / (Z.shape[0] - 1))
    Z = Z @ np.linalg.inv(W).T @ L.T
    ent = BlockEntropyLowerBound(block_sizes=[1], nu2=(1.0,), device="cpu")
    ent.fit(Z[:200], X_perp=Z)
    assert ent.trace_ == pytest.approx(np.trace(Sigma), rel=1e-10)
    # rotated covariance on the unit-trace scale: each of the m coordinates carries 1/m
    Y = ent._rotate(Z)
    C = np.cov(Y, rowvar=False)
    for k in (1, 2, 3, 4, 6, 12):
        nk = m // k
        block_traces = [nk * np.trace(C[b * k:(b + 1) * k, b * k:(b + 1) * k]) for b in range(nk)]
        np.testing.assert_allclose(block_traces, 1.0, rtol=0, atol=1e-10)


def test_invariant_to_global_rescale_and_shift(fitted_bound):
    ent, X, X_perp, _ = fitted_bound
    ent2 = BlockEntropyLowerBound(block_sizes=[1, 2, 8], nu2=(0.4, 1.6, 6.4), device="cpu",
                                  random_state=0).fit(3.0 * X + 7.0, X_perp=3.0 * X_perp + 7.0)
    for a, b in zip(ent.pairs_, ent2.pairs_):
        assert a["h_lb"] == pytest.approx(b["h_lb"], abs=1e-8)
    assert ent2.trace_ == pytest.approx(9 * ent.trace_)


def test_representation_is_applied():
    from sklearn.decomposition import PCA

    rng = np.random.RandomState(1)
    X = rng.standard_normal((300, 10))
    psi = PCA(n_components=4, random_state=0).fit(rng.standard_normal((100, 10)))
    ent = BlockEntropyLowerBound(block_sizes=[1, 4], nu2=(1.6,), rotation="signs",
                                 representation=psi,
                                 device="cpu").fit(X, X_perp=rng.standard_normal((50, 10)))
    assert ent.n_components_ == 4 and ent.padded_dim_ == 4


def test_blocks_must_divide_dimension():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 8))
    with pytest.raises(ValueError, match="block sizes must divide the dimension 8"):
        BlockEntropyLowerBound(block_sizes=[3], device="cpu").fit(X, X_perp=X[:50] + 1)


def test_too_few_samples_says_how_many():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((6, 4))
    with pytest.raises(ValueError, match=r"too few estimation rows .* At least \d+ rows"):
        BlockEntropyLowerBound(device="cpu").fit(X, X_perp=rng.standard_normal((20, 4)))


def test_eig_rotation_needs_enough_calibration_rows():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((200, 8))
    with pytest.raises(ValueError, match="at least m=8 calibration rows"):
        BlockEntropyLowerBound(device="cpu").fit(X, X_perp=rng.standard_normal((5, 8)))


def test_without_calibration_rows_needs_declared_trace():
    X = np.random.RandomState(0).standard_normal((200, 4))
    with pytest.raises(ValueError, match="rotation='signs'"):
        BlockEntropyLowerBound(device="cpu").fit(X)
    ent = BlockEntropyLowerBound(block_sizes=[2], nu2=(1.6,), rotation="signs", trace=4.0,
                                 device="cpu").fit(X)
    assert ent.trace_ == 4.0 and len(ent.pairs_) == 1


def test_gpu_requested_where_none_is():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    X = np.random.RandomState(0).standard_normal((300, 4))
    with pytest.raises(ValueError, match="torch sees no CUDA device"):
        BlockEntropyLowerBound(device="cuda").fit(X, X_perp=X[:50])


def test_cuda_bound_agrees_with_the_cpu_bound():
    """On a GPU the bound is the CPU's up to Monte Carlo noise (the dithers differ)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no cuda device")
    rng = np.random.RandomState(0)
    X, X_perp = rng.standard_normal((600, 8)), rng.standard_normal((100, 8))
    params = dict(block_sizes=[1, 4], nu2=(0.4, 1.6), progress=False)
    cpu = BlockEntropyLowerBound(device="cpu", **params).fit(X, X_perp=X_perp)
    gpu = BlockEntropyLowerBound(device="cuda", **params).fit(X, X_perp=X_perp)
    assert gpu.device_ == "cuda"
    for a, b in zip(cpu.pairs_, gpu.pairs_):
        assert (a["k"], a["nu2"], a["t_mc"], a["t_md"]) == (b["k"], b["nu2"], b["t_mc"], b["t_md"])
        assert abs(a["h_hat"] - b["h_hat"]) < 0.05 * a["k"]


def test_random_state_takes_a_generator_or_none():
    """The standard constraint: an int seeds the dithers as before; a RandomState seeded
    alike or None draws the seed at fit, and a negative int is refused."""
    from sklearn.utils._param_validation import InvalidParameterError

    rng = np.random.RandomState(0)
    X, X_perp = rng.standard_normal((200, 4)), rng.standard_normal((60, 4))
    params = dict(block_sizes=[2], nu2=(1.6,), device="cpu", progress=False)
    a, b, c = (BlockEntropyLowerBound(random_state=rs, **params).fit(X, X_perp=X_perp)
               for rs in (np.random.RandomState(3), np.random.RandomState(3), None))
    assert a.pairs_ == b.pairs_ and len(c.pairs_) == 1
    with pytest.raises(InvalidParameterError, match="random_state"):
        BlockEntropyLowerBound(random_state=-1, **params).fit(X, X_perp=X_perp)


# -- the checkpoint of grid pairs: a draw checkpoint (skdc.utils._checkpoint) ------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests._fuzz import CASES, deadline  # noqa: E402

_CK_PARAMS = dict(block_sizes=[1, 2], nu2=(0.4, 1.6), device="cpu", progress=False)


def _entries(text):
    """The checkpoint's lines, decoded: the header, then one ``{"key", "row"}`` per pair."""
    return [json.loads(line) for line in text.splitlines()]


def _write_entries(path, entries):
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))
    return path


@pytest.fixture(scope="module")
def checkpointed(tmp_path_factory):
    """Data, a finished run and its checkpoint's text."""
    rng = np.random.RandomState(0)
    X, X_perp = rng.standard_normal((200, 4)), rng.standard_normal((60, 4))
    path = tmp_path_factory.mktemp("ck") / "grid.json"
    full = BlockEntropyLowerBound(**_CK_PARAMS).fit(X, X_perp=X_perp, checkpoint=path)
    return X, X_perp, full.pairs_, path.read_text()


def _fit_counting(checkpointed, path, monkeypatch, **params):
    """The fit resumed from ``path``, and how many pairs it estimated."""
    X, X_perp, _, _ = checkpointed
    calls = []
    original = BlockEntropyLowerBound._block_entropies

    def counting(self, C, s, n_mc, seed):
        calls.append(seed)
        return original(self, C, s, n_mc, seed)

    monkeypatch.setattr(BlockEntropyLowerBound, "_block_entropies", counting)
    fitted = BlockEntropyLowerBound(**{**_CK_PARAMS, **params}).fit(X, X_perp=X_perp,
                                                                    checkpoint=path)
    return fitted, len(calls)


def _refused(checkpointed, path, match, **params):
    """The fit refuses ``path`` in one line naming it, and leaves the file as it was."""
    X, X_perp, _, _ = checkpointed
    before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    with deadline(10), pytest.raises(ValueError, match=match or None) as info:
        BlockEntropyLowerBound(**{**_CK_PARAMS, **params}).fit(X, X_perp=X_perp, checkpoint=path)
    msg = str(info.value)
    assert str(path) in msg and "\n" not in msg, msg
    if before is not None:
        assert path.read_bytes() == before
    return msg


def test_checkpoint_holds_every_pair_under_the_runs_fingerprint(checkpointed):
    _, _, pairs, text = checkpointed
    header, *records = _entries(text)
    assert header["fingerprint"]["estimator"] == "BlockEntropyLowerBound"
    assert header["fingerprint"]["block_sizes"] == [1, 2]
    assert [r["key"] for r in records] == ["0,0", "0,1", "1,0", "1,1"]
    assert [r["row"] for r in records] == pairs


def test_checkpoint_resumes_where_a_run_stopped(checkpointed, tmp_path, monkeypatch):
    _, _, pairs, text = checkpointed
    path = _write_entries(tmp_path / "grid.json", _entries(text)[:3])  # stopped after 2 pairs
    resumed, estimated = _fit_counting(checkpointed, path, monkeypatch)
    assert estimated == 2 and resumed.pairs_ == pairs
    assert [e["row"] for e in _entries(path.read_text())[1:]] == pairs
    again, estimated = _fit_counting(checkpointed, path, monkeypatch)  # a finished grid
    assert estimated == 0 and again.pairs_ == pairs


def test_checkpoint_resumes_past_a_record_cut_short(checkpointed, tmp_path, monkeypatch):
    """An interruption in the middle of a write leaves a last line without its end: that pair
    is estimated again, and the resumed bound is the uninterrupted one to the last bit."""
    _, _, pairs, text = checkpointed
    lines = text.splitlines(keepends=True)
    path = tmp_path / "grid.json"
    path.write_text("".join(lines[:3]) + lines[3][:40])
    resumed, estimated = _fit_counting(checkpointed, path, monkeypatch)
    assert estimated == 2 and resumed.pairs_ == pairs
    assert path.read_text() == text


@pytest.mark.parametrize("params, differ", [
    (dict(random_state=1), "random_state"),
    (dict(nu2=(0.4, 3.2)), "nu2"),
    (dict(alpha=0.1), "alpha"),
    (dict(n_mc=3), "n_mc"),
])
def test_another_runs_checkpoint_is_refused(checkpointed, tmp_path, params, differ):
    path = tmp_path / "grid.json"
    path.write_text(checkpointed[3])
    msg = _refused(checkpointed, path, "written by a run with other settings", **params)
    assert f"differ in {differ})" in msg and "delete it to start afresh" in msg


def test_a_checkpoint_of_other_data_is_refused(checkpointed, tmp_path):
    X, X_perp, _, text = checkpointed
    path = tmp_path / "grid.json"
    path.write_text(text)
    for X2, X2_perp in ((X + 1, X_perp), (X, X_perp * 2)):
        with pytest.raises(ValueError, match=r"other settings \(they differ in rows\)"):
            BlockEntropyLowerBound(**_CK_PARAMS).fit(X2, X_perp=X2_perp, checkpoint=path)
    assert path.read_text() == text


def test_a_checkpoint_of_skdc_0_1_is_refused_in_words(checkpointed, tmp_path):
    """skdc 0.1 kept the grid as one JSON table; it is refused, saying what to do, not
    misread (its "fingerprint" was a digest, its "pairs" a list of the same records)."""
    _, _, pairs, _ = checkpointed
    path = tmp_path / "grid.json"
    path.write_text(json.dumps({"fingerprint": "0f" * 32, "pairs": pairs}))
    msg = _refused(checkpointed, path, "an entropy-grid checkpoint in the format of skdc 0.1")
    assert "delete that file (skdc wrote it) to start the grid again" in msg
    path.write_text(json.dumps({"fingerprint": "0f" * 32, "pairs": pairs[:1]}) + "\n")
    _refused(checkpointed, path, "format of skdc 0.1")


def test_clones_keep_no_checkpoint_path(tmp_path):
    """The checkpoint belongs to one fit's data, not to the estimator: a clone fitted on other
    rows writes its own file and never meets the first one's."""
    from sklearn.base import clone

    rng = np.random.RandomState(0)
    X, X_perp = rng.standard_normal((200, 4)), rng.standard_normal((60, 4))
    ent = BlockEntropyLowerBound(block_sizes=[2], nu2=(1.6,), device="cpu", progress=False)
    ent.fit(X, X_perp=X_perp, checkpoint=tmp_path / "a.json")
    twin = clone(ent).fit(X + 1, X_perp=X_perp, checkpoint=tmp_path / "b.json")
    assert "checkpoint" not in ent.get_params()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json"]
    assert [e["row"] for e in _entries((tmp_path / "b.json").read_text())[1:]] == twin.pairs_


# -- hostile checkpoints: every record validated, the file read through the boundary
def _edited(checkpointed, tmp_path, edit):
    entries = _entries(checkpointed[3])
    edit(entries)
    return _write_entries(tmp_path / "grid.json", entries)


def _shift_h(row, field, by):
    row[field] += by
    row["h_lb"] = row["h_hat"] - row["t_mc"] - row["t_md"]


def _another_estimate(entry):
    """The pair of ``entry`` with another (self-consistent) estimate, as another run's."""
    row = dict(entry["row"])
    _shift_h(row, "h_hat", 0.25)
    return {"key": entry["key"], "row": row}


@pytest.mark.parametrize("edit, match", [
    (lambda e: e[2]["row"].pop("h_lb"), "line 3: the row lacks the field 'h_lb'"),
    (lambda e: e[1]["row"].update(h_lb="big"), "line 2: the field 'h_lb' must be a finite"),
    (lambda e: e[1]["row"].update(h_lb=float("nan")), "'h_lb' must be a finite number"),
    (lambda e: e[3]["row"].update(h_hat=float("inf")), "'h_hat' must be a finite number"),
    (lambda e: e[1]["row"].update(c_mc_bar=10**400), "'c_mc_bar' must be a finite number"),
    (lambda e: e[1]["row"].update(k=True), "the field 'k' must be an integer"),
    (lambda e: e[1]["row"].update(extra=1), r"fields \['extra'\] this run does not write"),
    (lambda e: e[1]["row"].update(h_lb=e[1]["row"]["h_lb"] + 5),
     "h_lb is not h_hat - t_mc - t_md"),
    (lambda e: e[1]["row"].update(s=1.0), r"is not sqrt\(nu2 / k\)"),
    (lambda e: _shift_h(e[1]["row"], "t_mc", -1.0), "t_mc is not the Cantelli margin"),
    (lambda e: e[1]["row"].update(c_mc_bar=1.0), "t_mc is not the Cantelli margin"),
    (lambda e: e[1]["row"].update(c_mc_bar=-1.0), "t_mc is not the Cantelli margin"),
    (lambda e: _shift_h(e[1]["row"], "t_md", 0.5), "n_mc or t_md differ"),
    (lambda e: e[1]["row"].update(n_mc=3), "n_mc or t_md differ"),
    (lambda e: e[1].update(key="1,1"), "the key '1,1' is not the grid place of the pair k = 1"),
    (lambda e: e[1].update(key="9,9"), "the key '9,9' is not the grid place"),
    (lambda e: e[1]["row"].update(k=2), "is not the grid place of the pair k = 2"),
    (lambda e: e.append(_another_estimate(e[1])), "line 6 repeats the key '0,0'"),
    (lambda e: e.append(7), "line 6 must be a record"),
    (lambda e: e[0].update(fingerprint=3), r"other settings \(they differ in all\)"),
    (lambda e: e[0]["fingerprint"].update(rows="0"), r"other settings \(they differ in rows\)"),
    (lambda e: e[0]["fingerprint"].update({"\n": 1}), r"differ in '\\n'\)"),
    (lambda e: e.insert(0, {"pairs": []}), "not a draw checkpoint"),
])
def test_checkpoint_records_are_validated(checkpointed, tmp_path, edit, match):
    """Issue 24: a dict of pairs raised TypeError without the path; records lacking h_lb, or
    with h_lb a string or NaN, were accepted."""
    _refused(checkpointed, _edited(checkpointed, tmp_path, edit), match)


def test_checkpoint_that_is_not_a_regular_file(checkpointed, tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo.json")
    (tmp_path / "dir.json").mkdir()
    (tmp_path / "zero.json").symlink_to("/dev/zero")
    for name, kind in (("fifo.json", "a named pipe"), ("dir.json", "a directory"),
                       ("zero.json", "a link")):
        _refused(checkpointed, tmp_path / name, f"is {kind}, not a regular file")
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(2**25)  # 32 MiB of zeros, never read whole
    _refused(checkpointed, big, "more than 16777216 bytes")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    _refused(checkpointed, deep, "is not a draw checkpoint")


def test_checkpoint_is_never_written_through_a_link(checkpointed, tmp_path):
    target = tmp_path / "elsewhere.txt"
    link = tmp_path / "grid.json"
    link.symlink_to(target)  # dangling: no checkpoint yet
    _refused(checkpointed, link, "is a link, not a regular file")
    assert not target.exists() and link.is_symlink()
    target.write_text(checkpointed[3])  # a link to a valid checkpoint: refused as well
    _refused(checkpointed, link, "is a link")
    assert target.read_text() == checkpointed[3]


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                               max_size=3),
    max_leaves=6)
_FIELDS = ["k", "nu2", "s", "n_mc", "h_hat", "h_lb", "t_mc", "t_md", "c_mc_bar"]
_FINGERPRINT = ["estimator", "rows", "block_sizes", "nu2", "n_mc", "alpha", "random_state"]


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(line=st.integers(0, 4), record_field=st.sampled_from(_FIELDS + ["key"]),
       header_field=st.sampled_from(_FINGERPRINT), value=_JSON_VALUES, drop=st.booleans())
def test_fuzz_entropy_checkpoint(checkpointed, tmp_path, line, record_field, header_field, value,
                                 drop):
    """One field of a valid checkpoint (of a record, its key, or the header's fingerprint)
    replaced by any JSON value, or dropped: the fit either resumes to the uninterrupted run's
    records or refuses in one line naming the file."""
    CASES["entropy checkpoint"] += 1
    X, X_perp, pairs, text = checkpointed
    entries = _entries(text)
    if line == 0:
        where, field = entries[0]["fingerprint"], header_field
    elif record_field == "key":
        where, field = entries[line], "key"
    else:
        where, field = entries[line]["row"], record_field
    if drop:
        where.pop(field)
    else:
        where[field] = value
    path = _write_entries(tmp_path / "grid.json", entries)
    try:
        fitted = BlockEntropyLowerBound(**_CK_PARAMS).fit(X, X_perp=X_perp, checkpoint=path)
    except ValueError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc), str(exc)
        return
    assert fitted.pairs_ == pairs


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.binary(max_size=200), cut=st.floats(0, 1))
def test_fuzz_entropy_checkpoint_bytes(checkpointed, tmp_path, blob, cut):
    """Random bytes, and a valid checkpoint cut anywhere: the fit either resumes to the
    uninterrupted run's records (an empty file is a new checkpoint; a cut record is estimated
    again) or refuses in one line naming the file."""
    CASES["entropy checkpoint"] += 2
    X, X_perp, pairs, text = checkpointed
    for content in (blob, text.encode()[: int(cut * (len(text) - 1))]):
        path = tmp_path / "grid.json"
        path.write_bytes(content)
        try:
            with deadline(10):
                fitted = BlockEntropyLowerBound(**_CK_PARAMS).fit(X, X_perp=X_perp,
                                                                  checkpoint=path)
        except ValueError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc), str(exc)
            continue
        assert fitted.pairs_ == pairs
