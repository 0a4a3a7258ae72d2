"""Tests of batched training of many draws' nets (skdc/nn/_batched.py)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from sklearn.base import clone  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from skdc.nn import LinkageAuditor, RepresentationCNN, fit_batched  # noqa: E402


def _template(**kw):
    params = dict(max_epochs=2, batch_size=64, lr=1e-2, device="cpu", random_state=0)
    params.update(kw)
    return RepresentationCNN(**params)


def _draws(X, n_draws, seed):
    rng = np.random.RandomState(seed)
    return [X + s * rng.randn(*X.shape) for s in np.linspace(0.0, 0.5, n_draws)]


def test_batched_equals_sequential_fits(digits):
    """Each batched model is the model ``clone(template).fit(X[m], y)`` would give."""
    X, y = digits
    draws = _draws(X, 2, seed=0)
    template = _template()
    nets = fit_batched(template, draws, y)
    assert len(nets) == 2
    for net, Xm in zip(nets, draws):
        ref = clone(template).fit(Xm, y)
        np.testing.assert_allclose(net.history[:, "valid_bacc"], ref.history[:, "valid_bacc"],
                                   rtol=0, atol=1e-12)
        assert net.best_epoch_ == ref.best_epoch_
        for (name, p), (_, q) in zip(net.module_.named_parameters(),
                                     ref.module_.named_parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-4,
                                       err_msg=name)
        np.testing.assert_allclose(net.predict_proba(Xm), ref.predict_proba(Xm), rtol=0, atol=1e-4)
        assert np.mean(net.predict(Xm) == ref.predict(Xm)) >= 0.99


def test_draws_differ_and_share_initialisation(digits):
    X, y = digits
    draws = _draws(X, 2, seed=1)
    nets = fit_batched(_template(max_epochs=1), draws, y)
    assert not torch.equal(nets[0].module_.conv1.weight, nets[1].module_.conv1.weight)
    assert (nets[0].init_seed_, nets[0].order_seed_) == (nets[1].init_seed_,
                                                         nets[1].order_seed_)


def test_chunks_give_the_same_models(digits):
    X, y = digits
    draws = _draws(X, 3, seed=2)
    together = fit_batched(_template(max_epochs=1), draws, y)
    chunked = fit_batched(_template(max_epochs=1), draws, y, chunk_size=2)
    for a, b in zip(together, chunked):
        np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-5)


def test_model_groups_give_the_same_models(digits, monkeypatch):
    """On the CPU a step runs its models a few at a time; the models do not depend on how
    many (one at a time here, against all three at once)."""
    from skdc.nn import _batched

    X, y = digits
    draws = _draws(X, 3, seed=3)
    together = fit_batched(_template(max_epochs=1), draws, y)
    monkeypatch.setattr(_batched, "_CPU_GROUP_ELEMENTS", 1)
    one_by_one = fit_batched(_template(max_epochs=1), draws, y)
    for a, b in zip(together, one_by_one):
        np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-5)
        assert a.history[-1, "valid_bacc"] == b.history[-1, "valid_bacc"]


def test_vectorised_balanced_accuracy_is_sklearns():
    from sklearn.metrics import balanced_accuracy_score

    from skdc.nn._batched import _balanced_accuracies

    rng = np.random.RandomState(0)
    y_true = rng.choice([0, 2, 3], size=200)  # class 1 absent, as in a small validation fold
    pred = rng.randint(0, 4, size=(5, 200))
    with warnings.catch_warnings():  # sklearn warns of predicted classes absent from y_true
        warnings.simplefilter("ignore", UserWarning)
        expected = [balanced_accuracy_score(y_true, p) for p in pred]
    np.testing.assert_allclose(_balanced_accuracies(y_true, pred), expected, rtol=1e-12)


def test_explicit_validation_and_no_validation(digits):
    X, y = digits
    draws = np.stack(_draws(X, 2, seed=3))
    nets = fit_batched(_template(), draws[:, :160], y[:160], X_valid=draws[:, 160:],
                       y_valid=y[160:])
    for net, Xm in zip(nets, draws):
        best = net.best_epoch_ - 1
        scores = net.history[:, "valid_bacc"]
        assert net.best_valid_balanced_accuracy_ == pytest.approx(max(scores))
        assert scores[best] == max(scores)
        from sklearn.metrics import balanced_accuracy_score

        assert balanced_accuracy_score(y[160:], net.predict(Xm[160:])) == pytest.approx(
            scores[best])
    last = fit_batched(_template(train_split=None), draws, y)
    assert all(n.best_epoch_ == 2 and np.isnan(n.best_valid_balanced_accuracy_) for n in last)


def test_logit_head_batched(digits):
    X, y = digits
    yb = (y == 0).astype(int)
    template = _template(head="logit")
    draws = _draws(X, 2, seed=4)
    nets = fit_batched(template, draws, yb)
    ref = clone(template).fit(draws[1], yb)
    np.testing.assert_allclose(nets[1].predict_proba(draws[1]), ref.predict_proba(draws[1]),
                               rtol=0, atol=1e-4)


def test_auditor_batched(digits):
    X, y = digits
    template = LinkageAuditor(max_epochs=1, batch_size=64, device="cpu", random_state=0,
                              train_split=None, module__channels=(8, 8, 8))
    nets = fit_batched(template, [X, X[:, ::-1]], y)
    assert nets[0].transform(X).shape == (len(X), 128)


def test_bad_inputs(digits):
    X, y = digits
    with pytest.raises(TypeError, match="fit_batched trains skdc.nn nets"):
        fit_batched(LogisticRegression(), [X], y)
    with pytest.raises(ValueError, match="same shape"):
        fit_batched(_template(), [X, X[:-1]], y)
    with pytest.raises(ValueError, match="holds no draws"):
        fit_batched(_template(), [], y)
    with pytest.raises(ValueError, match="one label per row"):
        fit_batched(_template(), [X], y[:-1])
    with pytest.raises(ValueError, match="RandomState instance"):
        fit_batched(_template(random_state=np.random.RandomState(0)), [X], y)
    with pytest.raises(ValueError, match="X_valid and y_valid together"):
        fit_batched(_template(), [X], y, X_valid=[X])
    with pytest.raises(ValueError, match="NaN or infinity"):
        fit_batched(_template(), [np.full_like(X, np.nan)], y)


def test_parameters_are_validated(digits):
    X, y = digits
    with pytest.raises(ValueError, match="chunk_size"):
        fit_batched(_template(), [X], y, chunk_size=0)
    with pytest.raises(ValueError, match="progress"):
        fit_batched(_template(), [X], y, progress="sometimes")


@pytest.mark.parametrize("width", [50, 100, 400])
def test_batched_matches_sequential_for_other_widths(width):
    """Rows laid out with fill zeros (50), padded (100) or unpadded (400: CelebA's 20x20)."""
    rng = np.random.RandomState(width)
    y = np.arange(90) % 3
    X = rng.rand(90, width) + 0.5 * y[:, None] * (np.arange(width) % 3 == 0)
    template = _template(max_epochs=1, batch_size=32, train_split=None)
    nets = fit_batched(template, [X, X[::-1].copy()], y)
    ref = clone(template).fit(X, y)
    np.testing.assert_allclose(nets[0].predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-4)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no cuda device")
def test_batched_on_cuda_matches_sequential_cuda_fits(digits):
    """The GPU path (all models in one group) trains the models sequential CUDA fits give."""
    X, y = digits
    draws = _draws(X, 3, seed=4)
    template = _template(device="cuda")
    nets = fit_batched(template, draws, y)
    for net, Xm in zip(nets, draws):
        assert next(net.module_.parameters()).device.type == "cuda"
        ref = clone(template).fit(Xm, y)
        np.testing.assert_allclose(net.predict_proba(Xm), ref.predict_proba(Xm), rtol=0, atol=1e-3)


def test_progress_bar_over_epochs(digits, capsys):
    pytest.importorskip("tqdm")
    X, y = digits
    fit_batched(_template(max_epochs=2), _draws(X, 2, seed=5), y, progress=True)
    assert "training 2 draws' nets" in capsys.readouterr().err
    fit_batched(_template(max_epochs=1), _draws(X, 2, seed=5), y, progress=False)
    assert capsys.readouterr().err == ""
