"""DP-SGD for skorch nets: Poisson batches, per-sample clipping, accounting agrees with Opacus."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
pytest.importorskip("skorch")

from skorch import NeuralNetClassifier  # noqa: E402
from torch import nn  # noqa: E402

from skdc.nn import PoissonBatchLoader, make_dpsgd_net  # noqa: E402
from skdc.privacy import DPSGDLeakageAccountant  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Full backward hook:UserWarning")


class TinyMLP(nn.Module):
    def __init__(self, n_in=4, n_hidden=8):
        super().__init__()
        self.l1 = nn.Linear(n_in, n_hidden)
        self.l2 = nn.Linear(n_hidden, 2)

    def forward(self, X):
        return self.l2(torch.relu(self.l1(X)))


DPNet = make_dpsgd_net(NeuralNetClassifier)


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """One torch thread: the OpenMP pool oversubscribes the shared cores otherwise."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
CE = nn.CrossEntropyLoss


@pytest.fixture(scope="module")
def data():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((120, 4)).astype(np.float32)
    y = (X[:, 0] + X[:, 1] > 0).astype(np.int64)
    return X, y


@pytest.fixture(scope="module")
def trained(data):
    X, y = data
    torch.manual_seed(0)
    net = DPNet(TinyMLP, criterion=CE,
                max_epochs=4, lr=0.5, batch_size=24, train_split=None, verbose=0,
                noise_multiplier=0.8, max_grad_norm=1.0, dp_delta=1e-5, dp_random_state=0)
    return net.fit(X, y)


def test_run_is_recorded_with_actual_q_sigma_steps(trained, data):
    X, _ = data
    q = 24 / X.shape[0]
    assert trained.dp_runs_ == [{"q": q, "sigma": 0.8, "steps": 4 * round(1 / q)}]
    acct = trained.dp_accountant()
    ref = DPSGDLeakageAccountant().add_run(q, 0.8, 20)
    assert acct.leakage_bits_ == pytest.approx(ref.leakage_bits_, rel=1e-12)
    spent = trained.privacy_spent()
    assert spent["leakage_bits"] == pytest.approx(ref.leakage_bits_, rel=1e-12)
    # and both equal Theorem 4.1's sum of KL charges, integrated here by adaptive quadrature
    assert spent["leakage_bits"] == pytest.approx(_leakage_bits_by_quad(q, 0.8, 20), rel=1e-9)
    hist = trained.history[:, "dp_epsilon"]
    assert len(hist) == 4 and all(a < b for a, b in zip(hist, hist[1:]))
    assert hist[-1] == pytest.approx(spent["eps"])


def _leakage_bits_by_quad(q, sigma, steps):
    """steps * KL((1 - q) N(0, s^2) + q N(1, s^2) || N(0, s^2)) / ln 2, by scipy quad."""
    from scipy.integrate import quad
    from scipy.stats import norm

    def integrand(y):
        llr = np.logaddexp(np.log1p(-q), np.log(q) + (2 * y - 1) / (2 * sigma**2))
        return ((1 - q) * norm.pdf(y, 0, sigma) + q * norm.pdf(y, 1, sigma)) * llr

    kl, _ = quad(integrand, -np.inf, np.inf, epsabs=0, epsrel=1e-13, limit=200)
    return steps * kl / np.log(2)


def _assert_epsilon_is_opacus(net, delta=1e-5):
    """The net's (epsilon, order) equal Opacus' RDP accountant fed the run's own history."""
    from opacus.accountants import RDPAccountant

    opacus_acct = RDPAccountant()
    for r in net.dp_runs_:
        opacus_acct.history.append((r["sigma"], r["q"], r["steps"]))
    eps_ref, alpha_ref = opacus_acct.get_privacy_spent(delta=delta)
    spent = net.privacy_spent(delta)
    assert spent["eps"] == pytest.approx(eps_ref, rel=1e-8)
    assert spent["alpha"] == alpha_ref


def test_epsilon_matches_opacus_rdp_accountant(trained):
    _assert_epsilon_is_opacus(trained)


def test_privacy_spent_with_the_prv_accountant(trained):
    import math

    rdp = trained.privacy_spent(1e-5)
    prv = trained.privacy_spent(1e-5, accountant="prv")
    assert math.isnan(prv["alpha"]) and prv["leakage_bits"] == rdp["leakage_bits"]
    assert 0 < prv["eps"] < rdp["eps"]  # PRV is tighter than RDP on the same run


def test_trained_net_predicts(trained, data):
    X, y = data
    assert np.isfinite(trained.history[-1, "train_loss"])
    assert trained.predict(X).shape == (X.shape[0],)


def test_per_sample_clipping_bounds_the_update(data):
    """Full batch (q = 1), negligible noise: the mean clipped gradient has norm <= C."""
    X, y = data
    C = 1e-3
    torch.manual_seed(0)
    net = DPNet(TinyMLP, criterion=CE,
                max_epochs=1, lr=1.0, train_split=None, verbose=0, sample_rate=1.0,
                noise_multiplier=1e-9, max_grad_norm=C, dp_random_state=0,
                optimizer=torch.optim.SGD)
    net.initialize()
    before = [p.detach().clone() for p in net.module_.parameters()]
    net.partial_fit(X, y)
    step = torch.sqrt(sum(((p.detach() - b) ** 2).sum()
                          for p, b in zip(net.module_.parameters(), before)))
    assert net.dp_runs_ == [{"q": 1.0, "sigma": 1e-9, "steps": 1}]
    assert float(step) <= C * (1 + 1e-4)
    assert float(step) > 0.05 * C  # clipped, not vanishing, gradients


def test_poisson_loader_batches(data):
    X, y = data
    ds = torch.utils.data.TensorDataset(torch.as_tensor(X), torch.as_tensor(y))
    loader = PoissonBatchLoader(ds, batch_size=30, generator=np.random.default_rng(0))
    sizes = [len(b[0]) for b in loader]
    assert len(sizes) == 4 and loader.sample_rate == 0.25
    assert 10 < np.mean(sizes) < 50
    empty = PoissonBatchLoader(ds, sample_rate=1e-9, steps=2, generator=np.random.default_rng(0))
    assert [b[0].shape for b in empty] == [torch.Size([0, 4])] * 2


def test_bad_noise_multiplier_refused(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net = DPNet(TinyMLP, criterion=CE,
                max_epochs=1, train_split=None, verbose=0, noise_multiplier=0.0)
        with pytest.raises(ValueError, match="noise_multiplier must be > 0"):
            net.fit(X, y)
    with pytest.raises(ValueError, match=r"sampling rate q must lie in \(0, 1\]"):
        DPNet(TinyMLP, criterion=CE,
                max_epochs=1, train_split=None, verbose=0, sample_rate=1.5).fit(X, y)


def test_make_dpsgd_net_validates_its_parameter():
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="of make_dpsgd_net must be"):
        make_dpsgd_net("NeuralNetClassifier")


def test_import_skdc_privacy_does_not_import_torch():
    import subprocess
    import sys

    code = ("import sys, skdc, skdc.privacy, skdc.linear_model, skdc.mechanisms; "
            "print('torch' in sys.modules or 'opacus' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(__import__("pathlib").Path(__file__).parents[2]))
    assert out.stdout.strip() == "False", out.stderr


def test_pickled_net_keeps_its_ledger_and_trains_on(trained, data):
    import pickle

    X, y = data
    net = pickle.loads(pickle.dumps(trained))
    assert net.dp_runs_ == trained.dp_runs_
    np.testing.assert_array_equal(net.predict(X), trained.predict(X))
    net.partial_fit(X, y)  # DP training continues after a reload and is charged
    assert len(net.dp_runs_) == 2 and net.dp_runs_[1]["steps"] == 20  # max_epochs=4 passes
    assert net.privacy_spent()["eps"] > trained.privacy_spent()["eps"]


# -- the package's own nets under DP-SGD --------------------------------------------------------
@pytest.fixture(scope="module")
def digits_small():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return (X[:400] / 16).astype(np.float32), y[:400]


@pytest.fixture(scope="module")
def dp_cnn(digits_small):
    from skdc.nn import RepresentationCNN

    X, y = digits_small
    DPCNN = make_dpsgd_net(RepresentationCNN)
    # device="auto" (the skdc.nn default) is resolved at fit time; the DP noise follows it
    net = DPCNN(max_epochs=4, batch_size=40, lr=3e-2, device="auto", random_state=0,
                noise_multiplier=0.5, max_grad_norm=1.0, dp_delta=1e-5, dp_random_state=0)
    return net.fit(X, y)


def test_representation_cnn_trains_under_dpsgd(dp_cnn, digits_small):
    from opacus import GradSampleModule

    X, y = digits_small
    assert isinstance(dp_cnn.module_, GradSampleModule)
    # Poisson sampling over the training rows (the validation fold of ValidSplit(5) is held out)
    n_train = X.shape[0] - X.shape[0] // 5
    q = 40 / n_train
    assert dp_cnn.dp_runs_ == [{"q": q, "sigma": 0.5, "steps": 4 * round(1 / q)}]
    assert dp_cnn.best_valid_balanced_accuracy_ > 0.25  # ten classes: chance is 0.1
    assert dp_cnn.predict(X[:7]).shape == (7,)
    hist = dp_cnn.history[:, "dp_epsilon"]
    assert len(hist) == 4 and all(a < b for a, b in zip(hist, hist[1:]))


def test_representation_cnn_epsilon_matches_opacus(dp_cnn):
    _assert_epsilon_is_opacus(dp_cnn)
    spent = dp_cnn.privacy_spent(1e-5)
    r = dp_cnn.dp_runs_[0]
    ref = DPSGDLeakageAccountant().add_run(r["q"], r["sigma"], r["steps"])
    assert spent["leakage_bits"] == pytest.approx(ref.leakage_bits_, rel=1e-12)
    assert spent["leakage_bits"] == pytest.approx(
        _leakage_bits_by_quad(r["q"], r["sigma"], r["steps"]), rel=1e-9)


def test_representation_cnn_default_batch_sets_the_poisson_rate(digits_small):
    from skdc.nn import RepresentationCNN

    X, y = digits_small
    net = make_dpsgd_net(RepresentationCNN)(max_epochs=1, random_state=0, noise_multiplier=0.5,
                                            max_grad_norm=1.0, dp_random_state=0).fit(X, y)
    # batch_size="auto": min(256, max(16, 400 // 40)) = 16 rows expected per Poisson batch
    assert net.batch_size_ == 16
    n_train = X.shape[0] - X.shape[0] // 5
    assert net.dp_runs_[0]["q"] == pytest.approx(16 / n_train, rel=1e-12)


def test_pickled_representation_cnn_trains_on(dp_cnn, digits_small):
    import pickle

    X, y = digits_small
    net = pickle.loads(pickle.dumps(dp_cnn))
    np.testing.assert_array_equal(net.predict(X), dp_cnn.predict(X))
    net.set_params(max_epochs=1)
    net.partial_fit(X, y)  # DP training continues after a reload and is charged
    assert len(net.dp_runs_) == 2 and net.dp_runs_[1]["steps"] > 0
    assert net.privacy_spent()["eps"] > dp_cnn.privacy_spent()["eps"]
