"""The anchor file (skdc/protocol/_anchor.py): made once, read without unpickling, refused
when it cannot align."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc.protocol import UploadError, load_anchor, make_anchor


def test_make_anchor_is_centered_orthonormal_and_reproducible(tmp_path):
    A = make_anchor(tmp_path / "a.npy", 4, random_state=0)
    assert_array_equal(load_anchor(tmp_path / "a.npy"), A)
    np.testing.assert_allclose(A.T @ A, np.eye(4), rtol=0, atol=1e-12)
    np.testing.assert_allclose(A.sum(axis=0), 0, rtol=0, atol=1e-12)
    assert_array_equal(make_anchor(tmp_path / "b.npy", 4, random_state=0), A)
    assert make_anchor(tmp_path / "c.npy", 4, n_anchors=5, kind="uniform").shape == (5, 4)
    with pytest.raises(ValueError, match="'kind' parameter of make_anchor must be a str among"):
        make_anchor(tmp_path / "d.npy", 4, kind="smote")


@pytest.mark.parametrize(
    "content, match",
    [
        (np.zeros(5), "2-D numeric array"),
        (np.array([["a", "b"]] * 4), "2-D numeric array"),
        (np.full((5, 2), np.nan), "NaN or infinity"),
        (np.ones((2, 2)), "needs at least n_features \\+ 1 = 3"),
        (np.ones((6, 2)), "rank-deficient"),
    ],
)
def test_load_anchor_refuses_bad_anchors(tmp_path, content, match):
    np.save(tmp_path / "a.npy", content)
    with pytest.raises(UploadError, match=match):
        load_anchor(tmp_path / "a.npy")


def test_load_anchor_refuses_pickles_and_warns_on_ill_conditioning(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([object()]), allow_pickle=True)
    with pytest.raises(UploadError, match="the anchor: dtype object is not a plain"):
        load_anchor(tmp_path / "obj.npy")
    A = make_anchor(tmp_path / "a.npy", 3, random_state=0) * np.array([1.0, 1.0, 1e-8])
    np.save(tmp_path / "ill.npy", A)
    with pytest.warns(UserWarning, match="ill-conditioned.*condition number 1e\\+08"):
        load_anchor(tmp_path / "ill.npy")



@pytest.mark.parametrize("call, param", [
    (lambda p: make_anchor(p, 0), "n_features"),
    (lambda p: make_anchor(p, 3, n_anchors=1.5), "n_anchors"),
    (lambda p: make_anchor(p, 3, random_state="seed"), "random_state"),
    (lambda p: make_anchor(3, 3), "path"),
    (lambda p: load_anchor(None), "path"),
])
def test_anchor_functions_validate_their_parameters(tmp_path, call, param):
    with pytest.raises((ValueError, TypeError), match=f"'{param}' parameter of"):
        call(tmp_path / "f")
    assert not (tmp_path / "f").exists()
