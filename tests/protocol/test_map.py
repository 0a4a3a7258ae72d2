"""The alignment-map file (skdc/protocol/_map.py): a round trip applies as the aligner does;
a malformed map is refused."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from skdc.protocol import AlignmentMap, UploadError
from skdc.protocol._container import write_container
from skdc.utils import haar_orthogonal


@pytest.mark.parametrize("kind", ["gopp", "reference", "identity"])
def test_alignment_map_round_trip(tmp_path, kind):
    rng = np.random.RandomState(0)
    R, b, c = haar_orthogonal(3, random_state=0), rng.rand(3), rng.rand(3)
    arrays = {"gopp": (R, b, None), "reference": (R, b, c), "identity": (None, None, None)}
    m = AlignmentMap(2, kind, *arrays[kind])
    loaded = AlignmentMap.load(m.save(tmp_path / "m.npz"))
    Y = rng.rand(5, 3)
    assert_array_equal(loaded.apply(Y), m.apply(Y))
    expected = {"gopp": (Y - b) @ R, "reference": (Y - b) @ R + c, "identity": Y}[kind]
    assert_array_equal(m.apply(Y), expected)
    if kind != "identity":
        with pytest.raises(ValueError, match="takes rows of width 3; got shape"):
            m.apply(Y[:, :2])


def test_alignment_map_refuses_bad_files(tmp_path):
    path = tmp_path / "m.npz"
    write_container(path, "skdc-map", {"participant_id": 0, "kind": "gopp"},
                     {"rotation": 2 * np.eye(3), "offset_in": np.zeros(3)})
    with pytest.raises(UploadError, match="field 'rotation' is not orthogonal"):
        AlignmentMap.load(path)
    write_container(path, "skdc-map", {"participant_id": 0, "kind": "shear"}, {})
    with pytest.raises(UploadError, match="field 'kind' is 'shear'; expected one of"):
        AlignmentMap.load(path)
    write_container(path, "skdc-map", {"participant_id": 0, "kind": "gopp"},
                     {"rotation": np.eye(3), "offset_in": np.zeros(2)})
    with pytest.raises(UploadError, match=r"field 'offset_in' has shape \(2,\).*must be \(3,\)"):
        AlignmentMap.load(path)


def test_a_map_is_read_off_the_fitted_aligner(upload_files):
    from skdc.alignment import GOPPAligner, ReferenceAligner
    from skdc.protocol import load_uploads
    from skdc.protocol._map import map_of

    Y = load_uploads(upload_files[0]).uploads
    gopp, ref = GOPPAligner().fit(Y), ReferenceAligner(reference=1).fit(Y)
    rows = np.asarray(Y)[Y.participant == 2]
    assert_array_equal(map_of(gopp, 2).apply(rows), gopp.transform(Y)[Y.participant == 2])
    assert_array_equal(map_of(ref, 2).apply(rows), ref.transform(Y)[Y.participant == 2])
    assert map_of(ref, 1).kind == "identity" and map_of(None, 0).kind == "identity"
    with pytest.raises(TypeError, match="supports GOPPAligner and ReferenceAligner"):
        map_of(object(), 0)
