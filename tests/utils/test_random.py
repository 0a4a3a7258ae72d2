"""Seeds of secrets (skdc/utils/_random.py): wide unless chosen, and re-derivable."""

import numpy as np
import pytest

from skdc.mechanisms import CGDP, GDP, IGDP, CodebookRelease, GaussMix
from skdc.utils._random import (
    SECRET_BITS,
    draw_seeds,
    fresh_seed,
    secret_stream,
    seed_bytes,
    seeded_rng,
)


def test_a_fresh_seed_is_128_bits_under_a_marker_bit():
    seeds = {fresh_seed() for _ in range(32)}
    assert len(seeds) == 32
    assert all(s >> SECRET_BITS == 1 for s in seeds)


def test_a_wide_seed_gives_wide_distinct_children_and_the_same_ones_again():
    root = fresh_seed()
    a = draw_seeds(root, 4)
    assert a == draw_seeds(root, 4) and len(set(a)) == 4
    assert all(s.bit_length() == SECRET_BITS + 1 for s in a)
    rng, next_seed = secret_stream(root)
    rng2, next_seed2 = secret_stream(root)
    assert rng.randint(2**31) == rng2.randint(2**31)
    assert [next_seed(), next_seed()] == [next_seed2(), next_seed2()]


def test_a_chosen_seed_keeps_the_streams_of_earlier_versions():
    # the earlier code: randint(2**31 - 1) draws from check_random_state(seed)
    expected = np.random.RandomState(7).randint(2**31 - 1, size=3).tolist()
    assert draw_seeds(7, 3) == expected
    rng, next_seed = secret_stream(7)
    ref = np.random.RandomState(7)
    assert rng.rand() == ref.rand() and next_seed() == ref.randint(2**31 - 1)
    np.testing.assert_array_equal(seeded_rng(5).rand(3), np.random.RandomState(5).rand(3))
    assert seed_bytes(5) == (5).to_bytes(8, "little")


def test_every_bit_of_a_wide_seed_seeds_the_generator():
    s = fresh_seed()
    flipped = s ^ (1 << 100)
    assert seeded_rng(s).randint(2**31) != seeded_rng(flipped).randint(2**31) or \
        seeded_rng(s).rand() != seeded_rng(flipped).rand()
    assert seed_bytes(s) != seed_bytes(flipped) and len(seed_bytes(s)) == 17


@pytest.mark.parametrize("make", [
    lambda rs: IGDP(3, random_state=rs).fit(np.random.RandomState(0).rand(30, 4)),
    lambda rs: CGDP(3, random_state=rs).fit(np.random.RandomState(0).rand(30, 4)),
    lambda rs: GDP(random_state=rs).fit(np.random.RandomState(0).rand(30, 4)),
    lambda rs: GaussMix(3, random_state=rs).fit(np.random.RandomState(0).rand(30, 4) / 4),
    lambda rs: CodebookRelease(n_bits=1, random_state=rs).fit(
        np.random.RandomState(0).rand(30, 4)),
], ids=["IGDP", "CGDP", "GDP", "GaussMix", "CodebookRelease"])
def test_every_noise_seed_of_a_mechanism_is_wide_unless_chosen(make):
    fresh = make(None)
    assert fresh.noise_seed_.bit_length() == SECRET_BITS + 1
    assert make(None).noise_seed_ != fresh.noise_seed_
    # a chosen seed keeps the stream of earlier versions (tests only)
    assert make(0).noise_seed_ < 2**31 and make(0).noise_seed_ == make(0).noise_seed_
    # a wide seed (a secret file's) re-derives the same noise seed
    assert make(fresh.noise_seed_).noise_seed_ == make(fresh.noise_seed_).noise_seed_


def test_a_mechanism_with_no_seed_draws_each_purpose_from_its_own_wide_stream():
    mech = IGDP(3).fit(np.random.RandomState(0).rand(30, 4))
    assert mech._secret_seed.bit_length() == SECRET_BITS + 1
    assert mech._secret_seed != mech.noise_seed_


