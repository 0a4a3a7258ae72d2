"""A participant's secret cannot be found by searching seeds (the developer guide, randomness).

Earlier versions drew every secret from a 31-bit seed; with the default centred anchor, the
upload alone tests a candidate seed exactly: ``mean(B_i + v W_i) = Psi(s) + v mean(W(s))``. The
search below is that attack, over a sample of the old space.
"""

import numpy as np
import pytest

from skdc.anchors import orthonormal_anchor
from skdc.mechanisms import IGDP
from skdc.protocol import Participant, load_uploads
from skdc.utils._random import SECRET_BITS

from .conftest import CHOSEN_SEED, P, deploy, run_cli, upload_argv

V = 0.05


def _anchor():
    A = orthonormal_anchor(12, 4, random_state=0)
    return A - A.mean(axis=0)  # centred, as the default anchor is


def _shift(seed, i, n_features):
    """What a candidate seed predicts for the mean of participant i's anchor upload: its shift
    ``Psi(s)`` (the anchor noise, mean ``v mean(W)``, is the only misfit)."""
    return IGDP(n_participants=3, random_state=seed).fit_one(i, n_features).translations_[0]


def _search(upload, i, candidates):
    B = upload.anchors[0]
    tol = 6 * V * np.sqrt(B.shape[1] / B.shape[0])  # six standard deviations of v mean(W)
    return [c for c in candidates
            if np.linalg.norm(_shift(c, i, B.shape[1]) - B.mean(axis=0)) < tol]


@pytest.mark.filterwarnings("ignore:Participant .* clean anchor")
def test_a_chosen_seed_is_found_by_a_search_of_the_old_space_and_a_fresh_one_is_not():
    A = _anchor()
    X = np.random.RandomState(1).rand(20, A.shape[1])
    rng = np.random.RandomState(2)
    # a sample of the old space (31-bit seeds), the chosen seed among it
    candidates = [int(c) for c in rng.randint(2**31 - 1, size=300)]
    chosen = candidates[137]
    up = Participant(1, IGDP(n_participants=3, random_state=chosen), v=V).upload(
        X, anchor=A)
    assert _search(up, 1, candidates) == [chosen]
    # the same search against a fresh participant finds nothing
    me = Participant(1, IGDP(n_participants=3), v=V)
    up = me.upload(X, anchor=A)
    assert _search(up, 1, candidates) == []
    # its seed is 128 bits of entropy (a marker bit above), and re-derives its upload
    assert me.seed_.bit_length() == SECRET_BITS + 1 and not me.chosen_seed_
    again = Participant(1, IGDP(n_participants=3, random_state=me.seed_,
                                noise_random_state=me.noise_seed_), v=V)
    np.testing.assert_array_equal(again.upload(X, anchor=A).anchors[0], up.anchors[0])
    assert not again.chosen_seed_  # a 128-bit seed given back is no chosen seed


def test_fresh_seeds_carry_128_bits_that_vary():
    # every bit of the 128 takes both values over 64 fresh participants (a source truncated
    # to fewer bits would leave the high bits constant); chance of a false alarm: 2**-56
    drawn = []
    for _ in range(64):
        me = Participant(0, IGDP(n_participants=2), v=V)
        me.upload(np.eye(4)[:2], anchor=_anchor())
        drawn.append(me.seed_ - (1 << SECRET_BITS))
    ones, zeros = 0, (1 << SECRET_BITS) - 1
    for s in drawn:
        assert 0 <= s < 1 << SECRET_BITS
        ones, zeros = ones | s, zeros & s
    assert ones == (1 << SECRET_BITS) - 1 and zeros == 0


@pytest.fixture(scope="module")
def cli_site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("entropy")
    ups = deploy(tmp, n_rows=20, labels=lambda X: (X[:, 0] > 0.5).astype(int),
                 seeds=[3 + i for i in range(P)])
    return tmp, ups


def test_the_command_line_draws_a_wide_seed_and_records_a_chosen_one(cli_site, capsys):
    from skdc.protocol._container import Container

    cli_site, ups = cli_site
    argv = upload_argv(cli_site, 0, **{"--seed": None, "--out": cli_site / "fresh0.npz",
                                       "--secret-out": cli_site / "fresh_secret0.npz"})
    status, _, err = run_cli(argv, capsys)
    assert status == 0, err
    with Container(cli_site / "fresh_secret0.npz", "skdc-secret") as c:
        assert c.header["seed"].bit_length() == SECRET_BITS + 1
        assert c.header["chosen_seed"] is False
    assert load_uploads([cli_site / "fresh0.npz"]).headers[0]["chosen_seed"] is False
    # the test deployment's own uploads were made with --seed: the analyst says so, one line
    with pytest.warns(UserWarning, match=CHOSEN_SEED) as caught:
        assert load_uploads([ups[0]]).headers[0]["chosen_seed"] is True
    assert caught[0].filename == __file__
    status, _, err = run_cli(["analyst", "fit", *ups, "--out", cli_site / "run"], capsys,
                             seed_warning=True)
    assert status == 0, err
    lines = [ln for ln in err.splitlines() if CHOSEN_SEED in ln]
    assert len(lines) == 1, err
    (line,) = lines
    assert line.startswith("skdc analyst: warning: ") and ups[0] in line
    assert "tests only" in line
