import numpy as np
import pytest

from skdc import CGDP, IGDP, ReferenceAligner


def _data(seed=0, n=80, d=6):
    return np.random.RandomState(seed).randn(n, d)


@pytest.mark.parametrize("anchor", ["orthonormal", "general"])
@pytest.mark.parametrize("reference", [0, 2])
def test_exact_alignment_noiseless(anchor, reference):
    # Lemma S.2 / Prop 2.12: R_i = O_i^T O_s and Z = X O_s + Psi_s (= C-GDP output)
    X = _data()
    if anchor == "general":
        anchor = np.random.RandomState(3).randn(30, 6) * 2 + 7  # non-centered, non-orthonormal
    mech = IGDP(4, anchor=anchor, random_state=0)
    Y = mech.fit_transform(X)
    align = ReferenceAligner(reference=reference).fit(Y)
    O, psi = mech.rotations_, mech.translations_
    for i in range(4):
        assert np.linalg.norm(align.rotations_[i] - O[i].T @ O[reference]) < 1e-9
    Z = align.transform(Y)
    Z_c = X @ O[reference] + psi[reference]
    assert np.linalg.norm(Z - Z_c) / np.linalg.norm(Z_c) < 1e-12


def test_equals_cgdp_with_reference_secret():
    X = _data()
    Z = ReferenceAligner().fit_transform(IGDP(5, random_state=2).fit_transform(X))
    Z_c = CGDP(5, random_state=2).fit_transform(X)
    assert np.linalg.norm(Z - Z_c) / np.linalg.norm(Z_c) < 1e-12


def test_common_rows_coincide_across_participants():
    # N_i(M_i(S)) = M_s(S) for a common S
    X = _data()
    mech = IGDP(3, random_state=0).fit(X)
    Y = mech.transform(X)
    align = ReferenceAligner(reference=1).fit(Y)
    S = np.random.RandomState(9).randn(7, 6)
    maps = [align._map(S @ mech.rotations_[i] + mech.translations_[i], i) for i in range(3)]
    for m in maps:
        np.testing.assert_allclose(m, maps[1], rtol=0, atol=1e-12)


def test_reference_out_of_range():
    Y = IGDP(2, random_state=0).fit_transform(_data())
    with pytest.raises(ValueError, match="reference=5 is not a participant"):
        ReferenceAligner(reference=5).fit(Y)


def test_needs_anchor_uploads():
    Y = CGDP(2, random_state=0).fit_transform(_data())
    with pytest.raises(ValueError, match="carry none"):
        ReferenceAligner().fit(Y)


def test_transform_with_unknown_participant():
    X = _data()
    mech = IGDP(2, random_state=0).fit(X)
    align = ReferenceAligner().fit(mech.transform(X))
    other = IGDP(3, random_state=0).fit_transform(X)
    with pytest.raises(ValueError, match="fitted on 2 participants"):
        align.transform(other)
