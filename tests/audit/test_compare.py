"""compare_options and ``skdc audit --compare``: every option's columns against direct
computations, GaussMix's epsilon against the accountant, a self-contained report (rendered by
Chromium where it exists), and the chosen option's flags reproducing the audited upload bit for
bit, checked by ``analyst fit --audit-fingerprint``."""

import base64
import json
import os
import shutil
import subprocess
import warnings
from html.parser import HTMLParser

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn import config_context
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from skdc.__main__ import main
from skdc.alignment import GOPPAligner, KTIAligner
from skdc.anchors import SMOTEAnchor
from skdc.attacks import AnchorRegressionAttack, collusion_view, make_attack
from skdc.audit import Central, Local, compare_options
from skdc.audit._deployments import _DEPLOYMENTS
from skdc.audit._targets import _linkage_params
from skdc.linear_model import MixingLogisticRegression
from skdc.mechanisms import CGDP, IGDP, KernelPCAMechanism, calibrate_gaussmix, gaussmix_release
from skdc.metrics import (
    linkage_accuracy,
    reconstruction_label_accuracy,
    relative_error,
)
from skdc.privacy import GaussMixAccountant
from skdc.protocol import load_uploads
from tests._fuzz import CASES, deadline

N_PARTICIPANTS, COLLUDER, TARGET = 3, 0, 1
LINKAGE = _linkage_params()


@pytest.fixture(scope="module")
def data():
    X, y = make_classification(n_samples=240, n_features=6, n_informative=4, random_state=0)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def comparison(data, tmp_path_factory):
    X, y = data
    folder = tmp_path_factory.mktemp("compare")
    with warnings.catch_warnings():  # the calibrated anchor noise may lie above v_PT here
        warnings.simplefilter("ignore", UserWarning)
        # the error target alone decides (the linkage target has its own tests below)
        cmp = compare_options(X, y, n_participants=N_PARTICIPANTS, confidence=0.75,
                              target_error=0.5, max_linkage=None,
                              epsilons=[2.0, 8.0], xtol=0.25, n_measure=2,
                              progress=False, checkpoint=folder / "checkpoint",
                              random_state=0)
    cmp.save(folder / "report")
    return cmp, folder


def _seeds(pipe, draw_seed):
    """A draw's seeds by the documented rule: every random_state and noise_random_state of
    the pipeline, sorted by name, each its own int drawn from the draw's seed."""
    names = sorted(k for k in pipe.get_params(deep=True)
                   if k.rsplit("__", 1)[-1] in ("random_state", "noise_random_state"))
    values = np.random.RandomState(draw_seed).randint(2**31 - 1, size=len(names))
    return {k: int(v) for k, v in zip(names, values)}


def _fit(pipe, h):
    with config_context(enable_metadata_routing=True):
        pipe.fit(h.X_train, h.y_train, participant=h.participant_train)
        return balanced_accuracy_score(h.y_test, pipe.predict(h.X_test))


def _attacked(h):
    """Every row the attacks read: the training rows, then the held-out ones (the analyst
    holds the uploads of both), with their labels and participants."""
    return (np.vstack([h.X_train, h.X_test]), np.r_[h.y_train, h.y_test],
            np.r_[h.participant_train, h.participant_test])


def _reader(h):
    """The attack scorer's default reader: a forest on the colluder's clean rows."""
    X, y, p = _attacked(h)
    return RandomForestClassifier(n_estimators=50, random_state=0).fit(X[p == COLLUDER],
                                                                      y[p == COLLUDER])


# ----------------------------------------------------------------------------- Local, Central


def test_local_and_central_against_direct_fits(comparison):
    cmp, _ = comparison
    h = cmp.held_out
    for name, cls in (("local", Local), ("central", Central)):
        est = cls(LogisticRegression(max_iter=1000))
        est.fit(h.X_train, h.y_train, participant=h.participant_train)
        util = balanced_accuracy_score(h.y_test, est.predict(h.X_test,
                                                             participant=h.participant_test))
        o = cmp.options[name]
        assert_allclose(o.utility, util, rtol=1e-12)
        assert o.utility_interval[0] <= o.utility <= o.utility_interval[1]
    central = cmp.options["central"]
    X_all, y_all, p_all = _attacked(h)
    X_t, y_t = X_all[p_all == TARGET], y_all[p_all == TARGET]
    assert central.attack_error == 0.0 and central.meets is False
    assert_allclose(central.linkage, float(linkage_accuracy(X_t, X_t, y_t, **LINKAGE)),
                    rtol=1e-12)
    assert_allclose(central.inference, reconstruction_label_accuracy(X_t, y_t, _reader(h)),
                    rtol=1e-12)
    assert cmp.options["local"].attack is None and cmp.options["local"].meets is None
    table = cmp.table.set_index("option")
    assert_allclose(table.loc["central", "vs_local"],
                    central.utility - cmp.options["local"].utility, rtol=1e-12)


# ----------------------------------------------------------------------------- calibrated options


def _gdp_pipe(kind, n):
    if kind == "igdp":
        return Pipeline([("gdp", IGDP(n)), ("align", GOPPAligner()),
                         ("clf", LogisticRegression(max_iter=1000))])
    return Pipeline([("gdp", CGDP(n)), ("clf", LogisticRegression(max_iter=1000))])


@pytest.mark.parametrize("kind", ["igdp", "cgdp"])
def test_gdp_columns_against_direct_computation(comparison, kind):
    cmp, _ = comparison
    h, o = cmp.held_out, cmp.options[kind]
    param = {"igdp": "align__v", "cgdp": "gdp__noise"}[kind]
    attacks = list(_DEPLOYMENTS[{"igdp": ("igdp", "gopp"), "cgdp": ("cgdp", "none")}[kind]][1])
    rows = o.calibration.table[o.calibration.table["value"] == o.value]
    utils, errors = [], {a: [] for a in attacks}
    for r in rows.itertuples():
        pipe = _gdp_pipe(kind, N_PARTICIPANTS).set_params(**{param: o.value})
        pipe.set_params(**_seeds(pipe, int(r.draw_seed)))
        utils.append(_fit(pipe, h))
        assert_allclose(r.balanced_accuracy, utils[-1], rtol=1e-12)
        X_all, _, p_all = _attacked(h)
        view = collusion_view(pipe, X_all, colluder=COLLUDER, target=TARGET,
                              participant=p_all)
        for a in attacks:
            errors[a].append(relative_error(view.truth.X, make_attack(a).reconstruct(view).X))
            assert_allclose(getattr(r, a), errors[a][-1], rtol=1e-9)
    assert_allclose(o.utility, np.mean(utils), rtol=1e-12)
    # three draws at 75%: none may fail, so the bound is the smallest error
    assert_allclose(o.attack_error, np.min(errors[o.attack]), rtol=1e-9)
    assert_allclose(o.attack_error_median, np.median(errors[o.attack]), rtol=1e-9)
    assert o.meets == bool(np.min(errors[o.attack]) >= 0.5)


def test_measured_linkage_and_inference_against_direct_computation(comparison):
    cmp, _ = comparison
    h, o = cmp.held_out, cmp.options["igdp"]
    seeds = o.draws[o.draws["stage"] == "measurement"]["draw_seed"].astype(int)
    link, infer = {}, {}
    reader = _reader(h)
    X_all, y_all, p_all = _attacked(h)
    y_t = y_all[p_all == TARGET]
    for seed in seeds:
        pipe = _gdp_pipe("igdp", N_PARTICIPANTS).set_params(align__v=o.value)
        _fit(pipe.set_params(**_seeds(pipe, int(seed))), h)
        view = collusion_view(pipe, X_all, colluder=COLLUDER, target=TARGET,
                              participant=p_all)
        sample = {"sample": view.colluder_X_input} if "matcher" in LINKAGE else {}
        for a in _DEPLOYMENTS[("igdp", "gopp")][1]:
            rec = make_attack(a).reconstruct(view).X
            link.setdefault(a, []).append(float(linkage_accuracy(view.truth.X, rec, y_t,
                                                                 **LINKAGE, **sample)))
            infer.setdefault(a, []).append(reconstruction_label_accuracy(rec, y_t, reader))
    assert_allclose(o.linkage, max(np.mean(v) for v in link.values()), rtol=1e-12)
    assert_allclose(o.inference, max(np.mean(v) for v in infer.values()), rtol=1e-12)


def test_kti_columns_against_direct_computation(comparison):
    cmp, _ = comparison
    h, o = cmp.held_out, cmp.options["kti"]
    top, dim = o.extra["top"], o.extra["dimension"]
    own = h.participant_train == COLLUDER
    rows = o.calibration.table[o.calibration.table["value"] == o.value]
    errors = []
    for r in rows.itertuples():
        anchor = SMOTEAnchor(60, h.X_train[own], h.y_train[own], k_neighbors=10)
        pipe = Pipeline([("dr", KernelPCAMechanism(N_PARTICIPANTS, n_components=dim,
                                                   anchor=anchor)),
                         ("align", KTIAligner(graph="tsl")),
                         ("clf", LogisticRegression(max_iter=1000))])
        pipe.set_params(**_seeds(pipe, int(r.draw_seed)))
        assert_allclose(r.balanced_accuracy, _fit(pipe, h), rtol=1e-12)
        X_all, _, p_all = _attacked(h)
        view = collusion_view(pipe, X_all, colluder=COLLUDER, target=TARGET,
                              participant=p_all)
        for a in ("pinv", "lr"):
            err = relative_error(view.truth.X,
                                 AnchorRegressionAttack(a).reconstruct(view).X)
            assert_allclose(getattr(r, a), err, rtol=1e-9)
        errors.append(getattr(r, o.attack))
    assert 1 <= dim <= top <= 6 and o.setting.endswith(f"d = {dim} (of {top})")
    assert_allclose(o.attack_error, min(errors), rtol=1e-12)


def test_gaussmix_epsilon_is_the_accountants_and_utility_a_direct_release(comparison):
    cmp, _ = comparison
    h = cmp.held_out
    for stated in (2.0, 8.0):
        o = cmp.options[f"gaussmix@{stated:g}"]
        e = o.extra
        # the noise actually added, through the accountant: the stated epsilon
        eps, _ = GaussMixAccountant(e["k"], row_bound=np.sqrt(3.0)).epsilon(e["noise"],
                                                                            o.delta)
        assert_allclose(o.epsilon, eps, rtol=1e-9)
        assert_allclose(eps, stated, rtol=1e-4)
        assert o.protection == "formal" and o.attack is None and o.meets is None
        # one draw, released by hand: each participant's sketch, stacked, solved
        first = o.draws.iloc[0]
        rng = np.random.RandomState(np.random.RandomState(int(first["draw_seed"])).randint(
            2**31 - 1))
        C = np.sqrt(6)  # the default row bound: sqrt(n_features)
        scaled = h.X_train / C
        norms = np.linalg.norm(scaled, axis=1, keepdims=True)
        scaled = scaled / np.maximum(norms, 1.0)
        Z = np.hstack([scaled, np.ones((len(scaled), 1)), np.eye(2)[h.y_train]])
        k = int(np.ceil(2.5 * Z.shape[1]))
        gamma, _ = calibrate_gaussmix(k, stated, 1e-6, False)
        M = np.vstack([gaussmix_release(Z[h.participant_train == i], k=k,
                                        row_bound=np.sqrt(3.0), gamma=gamma,
                                        random_state=rng)[0]
                       for i in range(N_PARTICIPANTS)])
        clf = MixingLogisticRegression().fit_sketch(M, np.array([0, 1]))
        Xt = h.X_test / C
        Xt = Xt / np.maximum(np.linalg.norm(Xt, axis=1, keepdims=True), 1.0)
        assert_allclose(first["balanced_accuracy"],
                        balanced_accuracy_score(h.y_test, clf.predict(Xt)), rtol=1e-12)


def test_verdict_and_table_agree(comparison):
    cmp, _ = comparison
    v, table = cmp.verdict, cmp.table.set_index("option")
    assert set(v["meeting"]) == set(table.index[table["meets_target"] == "yes"])
    assert v["formal"] == ["gaussmix@2", "gaussmix@8"]
    if v["meeting"]:
        assert v["best"] == max(v["meeting"], key=lambda n: table.loc[n, "utility"])
        local = table.loc["local", "utility"]
        better = table.loc[v["best"], "utility"] > local
        assert v["decision"] == ("collaborate" if better else "do not collaborate")
        assert v["sentence"].startswith("Collaborate: " if better else
                                        f"Do not collaborate: each participant alone gets "
                                        f"{local:.3f}")
    assert v["deploy"] in (None, "igdp", "cgdp")
    linked = [n for n in v["meeting"] if table.loc[n, "linkage"] > max(
        2 * table.loc[n, "linkage_chance"], table.loc[n, "linkage_chance"] + 0.1)]
    assert len(v["warnings"]) == (1 if linked else 0)
    assert all(cmp.options[n].label in v["warnings"][0] for n in linked)
    risks = list(cmp.regulator["risk"])
    assert risks == ["singling out", "linkability", "inference"]


# ----------------------------------------------------------------------------- the report


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.ids, self.images = [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "img":
            self.images.append(attrs.get("src", ""))


def test_report_is_self_contained_and_says_the_regulators_words(comparison):
    cmp, folder = comparison
    text = (folder / "report" / "report.html").read_text(encoding="utf-8")
    page = _Page()
    page.feed(text)
    assert {"options", "costs", "regulator", "deployment", "judged", "limits", "reproduce",
            "verdict-sentence", "comparison"} <= page.ids
    assert not {"script", "link", "iframe", "object", "a", "embed"} & set(page.tags)
    assert len(page.images) == 1
    assert base64.b64decode(page.images[0].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    for phrase in ("Opinion 05/2014", "singling out", "linkability", "inference",
                   "exact-source linkage", "Anchor noise is not differential privacy",
                   "empirical, attack-relative", "formal guarantee", "not measured"):
        assert phrase in text, phrase
    assert len(cmp.plot()) == 2  # the figure, as a Comparison draws it
    first = text.index("id='verdict-sentence'")
    assert first < text.index("<section") and first < text.index("<img")
    written = sorted(os.listdir(folder / "report"))
    assert {"report.html", "comparison.csv", "draws.csv", "decisions.csv",
            "regulator.csv"} <= set(written)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium")
def test_report_renders_in_chromium(comparison, tmp_path):
    """A headless browser draws the page: a wide, tall, non-blank screenshot whose top holds
    the verdict's coloured box."""
    from PIL import Image

    _, folder = comparison
    shot = tmp_path / "shot.png"
    with deadline(120):
        subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--window-size=1200,1600",
                        f"--screenshot={shot}", (folder / "report" / "report.html").as_uri()],
                       capture_output=True, timeout=110, check=False)
    assert shot.is_file()
    img = np.asarray(Image.open(shot).convert("RGB"), dtype=float)
    assert img.shape[:2] == (1600, 1200)
    assert img.std() > 10  # not a blank page
    top = img[:400]
    green = (np.abs(top - [34, 170, 119]).sum(axis=2) < 40).sum()  # the .verdict border
    red = (np.abs(top - [187, 34, 34]).sum(axis=2) < 40).sum()     # or the .no border
    assert green + red > 200


# ----------------------------------------------------------------------------- deployment


def _run_upload(command, folder, draw):
    words = [w.replace("SHARED_SEED", str(draw["random_state"])) for w in command[3:]]
    words = [str(folder / w) if w.endswith((".npy", ".npz")) else w for w in words]
    if "--seed" not in words:  # I-GDP: the audited draw's private seed, to compare
        words += ["--seed", str(draw["random_state"])]
    # the audited draw's noise seed, to compare (a deployment draws its own)
    words += ["--noise-seed", str(draw["noise_random_state"])]
    assert main(words) == 0
    return words


def test_flags_reproduce_the_audited_upload_bit_for_bit(comparison, tmp_path, capsys):
    cmp, folder = comparison
    dep = cmp.deployment
    assert dep is not None, "the small comparison should recommend I-GDP or C-GDP"
    h, s, draw = cmp.held_out, dep["settings"], dep["draw"]
    mech = {"IGDP": IGDP, "CGDP": CGDP}[s["mechanism"]](
        s["n_participants"], noise=s["noise"], random_state=draw["random_state"],
        noise_random_state=draw["noise_random_state"])
    Y = mech.fit(h.X_train, participant=h.participant_train).transform(
        h.X_train, participant=h.participant_train)
    if mech.anchor_ is not None:
        np.save(tmp_path / "anchor.npy", mech.anchor_)
        assert dep["commands"][0][3:5] == ["anchor", "make"]
    uploads = [c for c in dep["commands"] if c[3:5] == ["participant", "upload"]]
    assert len(uploads) == N_PARTICIPANTS
    for i, command in enumerate(uploads):
        rows = h.participant_train == i
        np.save(tmp_path / f"X_{i}.npy", h.X_train[rows])
        np.save(tmp_path / f"y_{i}.npy", h.y_train[rows])
        _run_upload(command, tmp_path, draw)
    up = load_uploads([tmp_path / f"upload_{i}.npz" for i in range(N_PARTICIPANTS)])
    order = np.argsort(h.participant_train, kind="stable")
    assert np.array_equal(np.asarray(up.uploads), np.asarray(Y)[order])
    if mech.anchor_ is not None:
        for got, audited in zip(up.uploads.anchors, Y.noisy_anchors(s["anchor_noise"])):
            assert np.array_equal(got, audited)
    # the analyst checks the fingerprint: these uploads pass
    shutil.copy(folder / "report" / "deployment.json", tmp_path / "deployment.json")
    fit = [str(tmp_path / w) if w.endswith((".npz", ".json")) or w == "model/" else w
           for w in dep["commands"][-1][3:]]
    assert main(fit) == 0
    # an upload made with another noise is refused, naming the file and the setting
    changed = list(uploads[0])
    flag = "--anchor-noise" if s["mechanism"] == "IGDP" else "--noise"
    k = changed.index(flag)
    changed[k + 1] = repr(float(changed[k + 1]) * 1.01)
    changed[changed.index("--out") + 1] = "upload_0b.npz"
    changed[changed.index("--secret-out") + 1] = "secret_0b.npz"
    _run_upload(changed, tmp_path, draw)
    capsys.readouterr()
    fit[fit.index(str(tmp_path / "upload_0.npz"))] = str(tmp_path / "upload_0b.npz")
    fit[fit.index(str(tmp_path / "model/"))] = str(tmp_path / "model2/")
    assert main(fit) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    # the test's uploads carry the audited draw's chosen seeds: the analyst says so, one line
    assert [ln for ln in lines if "chosen seed" in ln] == lines[:1]
    err = lines[-1]
    assert len(lines) == 2 and "upload_0b.npz" in err
    assert ("anchor_noise" if flag == "--anchor-noise" else "noise") in err
    assert not (tmp_path / "model2").exists()


def _fingerprint_error(capsys, tmp_path, value):
    capsys.readouterr()
    code = main(["analyst", "fit", str(tmp_path / "missing.npz"), "--audit-fingerprint",
                 str(value), "--out", str(tmp_path / "m")])
    return code, capsys.readouterr().err.strip()


def test_hostile_fingerprint_files_are_refused_in_one_line(comparison, tmp_path, capsys):
    """Refusals of the --audit-fingerprint reader (skdc.protocol), each counted."""
    from skdc.protocol import read_audit_fingerprint
    from skdc.utils._files import FileError

    cmp, folder = comparison
    good = json.loads((folder / "report" / "deployment.json").read_text())
    assert read_audit_fingerprint(folder / "report" / "deployment.json") == (
        good["fingerprint"], good["settings"])
    assert read_audit_fingerprint(good["fingerprint"].upper())[0] == good["fingerprint"]
    cases = {
        "edited": {**good, "settings": {**good["settings"],
                                        "anchor_noise": good["settings"]["anchor_noise"] + 0.5}},
        "bool": {**good, "settings": {**good["settings"], "n_participants": True}},
        "negative": {**good, "settings": {**good["settings"], "noise": -1.0}},
        "missing": {**good, "settings": {k: v for k, v in good["settings"].items()
                                         if k != "noise"}},
        "short": {**good, "fingerprint": good["fingerprint"][:10]},
        "list": [good],
    }
    for name, doc in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        with pytest.raises(FileError):
            read_audit_fingerprint(path)
        CASES["audit fingerprint"] += 1
    (tmp_path / "nan.json").write_text(json.dumps(good).replace(
        json.dumps(good["settings"]["noise"]), "NaN", 1))
    (tmp_path / "big.json").write_bytes(b" " * (2 << 20))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    os.mkfifo(tmp_path / "fifo")
    os.symlink(tmp_path / "fifo", tmp_path / "link")
    (tmp_path / "folder").mkdir()
    for name in ("nan.json", "big.json", "deep.json", "fifo", "link", "folder"):
        with deadline(20), pytest.raises(FileError):
            read_audit_fingerprint(tmp_path / name)
        CASES["audit fingerprint"] += 1
    code, err = _fingerprint_error(capsys, tmp_path, tmp_path / "fifo")
    assert code == 2 and len(err.splitlines()) == 1


# ----------------------------------------------------------------------------- the command line


def test_cli_compare_writes_resumes_and_refuses_single_audit_flags(data, tmp_path, capsys):
    X, y = data
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    argv = ["audit", "--data", str(tmp_path / "X.npy"), "--labels", str(tmp_path / "y.npy"),
            "--n-participants", "3", "--confidence", "0.75", "--compare", "local", "central",
            "cgdp", "gaussmix", "--epsilon", "4", "--measure", "1", "--out",
            str(tmp_path / "out")]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cgdp" in out and "gaussmix@4" in out
    first = (tmp_path / "out" / "comparison.csv").read_text()
    assert main(argv) == 0
    assert "resumed from" in capsys.readouterr().err
    assert (tmp_path / "out" / "comparison.csv").read_text() == first
    # --fresh removes the comparison's own checkpoints (and nothing else), then reruns
    (tmp_path / "out" / "checkpoint" / "notes.txt").write_text("mine")
    assert main([*argv, "--fresh"]) == 2
    assert "notes.txt" in capsys.readouterr().err
    (tmp_path / "out" / "checkpoint" / "notes.txt").unlink()
    assert main([*argv, "--fresh"]) == 0
    assert "resumed" not in capsys.readouterr().err
    assert (tmp_path / "out" / "comparison.csv").read_text() == first
    for extra, flag in ((["--range", "0", "1"], "--range"), (["--attack", "mp"], "--attack"),
                        (["--epsilon", "0"], "--epsilon")):
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and flag in err
    bad = [*argv[:-6], "--compare", "everything", "--out", str(tmp_path / "o2")]
    assert main(bad) == 2
    assert "--compare" in capsys.readouterr().err


def test_bad_options_and_epsilons_are_refused(data):
    X, y = data
    with pytest.raises(ValueError, match="options must name"):
        compare_options(X, y, options=["lokal"], progress=False)
    with pytest.raises(ValueError, match="epsilons must be"):
        compare_options(X, y, options=["gaussmix"], epsilons=[0.0], progress=False)
    with pytest.raises(ValueError, match="epsilons must be"):
        compare_options(X, y, options=["gaussmix"], epsilons=[float("nan")], progress=False)


# A privacy budget too small to mean anything is refused before any work, naming the flag
@pytest.mark.parametrize("eps", ["1e-300", "1e-30", "0.0009"])
def test_tiny_epsilon_is_refused_early_in_one_line(tmp_path, capsys, eps):
    # 1e-300 reached matplotlib's log axis and failed there without naming --epsilon
    rng = np.random.RandomState(0)
    np.save(tmp_path / "X.npy", rng.rand(30, 3))
    np.save(tmp_path / "y.npy", rng.randint(2, size=30))
    status = main(["audit", "--data", str(tmp_path / "X.npy"), "--labels",
                   str(tmp_path / "y.npy"), "--n-participants", "3", "--compare", "gaussmix",
                   "--epsilon", eps, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert "--epsilon must be a privacy budget in [0.001, 1000]" in err and f"got {eps}" in err
    assert "Give a larger --epsilon" in err
    assert not (tmp_path / "out").exists()


def test_partition_is_the_deprecated_spelling_of_participant(data):
    X, y = data
    ids = np.arange(len(X)) % 2
    kwargs = dict(options=["local", "gaussmix"], epsilons=[4.0], confidence=0.75,
                  progress=False)
    new = compare_options(X, y, participant=ids, **kwargs)
    with pytest.warns(FutureWarning, match="partition= is deprecated .* use participant=") \
            as caught:
        old = compare_options(X, y, partition=ids, **kwargs)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    assert old.setting == new.setting and old.setting["partition"]
    assert old.table.equals(new.table) and old.html == new.html
    with pytest.raises(TypeError, match="pass participant= only"):
        compare_options(X, y, participant=ids, partition=ids, **kwargs)


def test_tiny_epsilon_is_refused_by_the_function():
    X = np.random.RandomState(0).rand(30, 3)
    with pytest.raises(ValueError, match=r"in \[0.001, 1000\] \(below, GaussMix's model"):
        compare_options(X, np.arange(30) % 2, options=["gaussmix"], epsilons=[1e-300],
                        progress=False)


def test_breast_cancer_comparison_says_do_not_collaborate():
    """Standardized breast cancer, 5 participants: no anchor noise nor private-data noise in
    range brings linkage under 0.15 under the strongest attack, so the verdict opens with "Do
    not collaborate", never "Yes"."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    with warnings.catch_warnings():  # nothing meets: each calibration warns
        warnings.simplefilter("ignore", UserWarning)
        cmp = compare_options(StandardScaler().fit_transform(X), y,
                              options=["local", "igdp", "cgdp"], progress=False)
    v = cmp.verdict
    assert v["decision"] == "do not collaborate" and v["deploy"] is None
    assert v["sentence"].startswith("Do not collaborate: no option meets exact-source "
                                    "linkage at most 0.15")
    for kind in ("igdp", "cgdp"):
        o = cmp.options[kind]
        assert o.meets is False and o.linkage > 0.15
        assert f"{o.linkage:.0%} of the rows under {o.label}" in v["sentence"]
    assert "<b>Do not collaborate</b>:" in cmp.html and "<b>Yes</b>" not in cmp.html


# ----------------------------------------------------------------------------- issue 33


@pytest.fixture(scope="module")
def imbalanced_csv(tmp_path_factory):
    """9 columns, a 25% positive label, three sites."""
    import pandas as pd

    root = tmp_path_factory.mktemp("compare-table")
    rng = np.random.RandomState(0)
    X = rng.normal(size=(600, 9))
    y = (rng.uniform(size=600) < 1 / (1 + np.exp(-(-1.2 + 0.5 * X[:, 1] - 0.4 * X[:, 2])))
         ).astype(int)
    pd.DataFrame(X, columns=[f"c{j}" for j in range(9)]).assign(outcome=y).to_csv(
        root / "table.csv", index=False)
    np.save(root / "sites.npy", rng.randint(3, size=600).astype(np.int64))
    return root


@pytest.mark.parametrize("extra, learns", [([], True),
                                           (["--model-param", "class_weight=null"], False)])
def test_cli_compare_weights_an_imbalanced_label_and_warns_when_nothing_is_learned(
        imbalanced_csv, tmp_path, capsys, extra, learns):
    argv = ["audit", "--data", str(imbalanced_csv / "table.csv"), "--labels", "outcome",
            "--partition", str(imbalanced_csv / "sites.npy"), "--compare", "local",
            "central", "--confidence", "0.75", *extra, "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    err = capsys.readouterr().err
    warned = [x for x in err.splitlines() if "learns almost nothing" in x]
    text = (tmp_path / "o" / "report.html").read_text()
    table = pd_read(tmp_path / "o" / "comparison.csv").set_index("option")
    if learns:  # balanced by default: Central learns, and the report says why it is weighted
        assert not warned and table.loc["central", "utility"] > 0.55
        assert "with balanced class weights: your labels are imbalanced" in text
    else:
        assert len(warned) == 1 and warned[0].startswith("skdc audit: warning: The model "
                                                         "learns almost nothing")
        assert "without noise (Central, the raw rows pooled)" in warned[0]
        assert "--model-param class_weight=balanced" in warned[0]
        assert table.loc["central", "utility"] < 0.55
        assert "id='learns-nothing'" not in text and "learns almost nothing" in text


def pd_read(path):
    import pandas as pd

    return pd.read_csv(path)
