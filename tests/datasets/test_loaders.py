"""Tests of the local-file loaders (skdc/datasets/_loaders.py) on files the tests write."""

import gzip

import numpy as np
import pytest

from skdc.datasets import load_celeba, load_mnist, read_idx


def _write_idx(path, array, compress=False):
    codes = {np.dtype("uint8"): 0x08, np.dtype(">i4"): 0x0C, np.dtype(">f8"): 0x0E}
    array = np.asarray(array)
    header = bytes([0, 0, codes[array.dtype], array.ndim])
    header += b"".join(int(s).to_bytes(4, "big") for s in array.shape)
    payload = header + array.tobytes()
    opener = gzip.open if compress else open
    with opener(path, "wb") as f:
        f.write(payload)


@pytest.fixture
def mnist_dir(tmp_path):
    rng = np.random.RandomState(0)
    train = rng.randint(0, 256, size=(6, 28, 28)).astype(np.uint8)
    test = rng.randint(0, 256, size=(3, 28, 28)).astype(np.uint8)
    _write_idx(tmp_path / "train-images-idx3-ubyte", train)
    _write_idx(tmp_path / "train-labels-idx1-ubyte", np.arange(6, dtype=np.uint8))
    _write_idx(tmp_path / "t10k-images-idx3-ubyte.gz", test, compress=True)
    _write_idx(tmp_path / "t10k-labels-idx1-ubyte.gz", np.array([9, 8, 7], np.uint8),
               compress=True)
    return tmp_path, train, test


@pytest.mark.parametrize("compress", [False, True])
@pytest.mark.parametrize("dtype", ["uint8", ">i4", ">f8"])
def test_read_idx_roundtrip(tmp_path, compress, dtype):
    rng = np.random.RandomState(0)
    array = (rng.rand(3, 4, 2) * 100).astype(dtype)
    _write_idx(tmp_path / "a.idx", array, compress)
    out = read_idx(tmp_path / "a.idx")
    np.testing.assert_array_equal(out, array)
    assert out.dtype.isnative


def test_read_idx_rejects_bad_files(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04rest")
    with pytest.raises(ValueError, match="is not an IDX file"):
        read_idx(tmp_path / "bad")
    _write_idx(tmp_path / "ok", np.zeros((4, 4), np.uint8))
    (tmp_path / "cut").write_bytes((tmp_path / "ok").read_bytes()[:-3])
    with pytest.raises(ValueError, match="truncated"):
        read_idx(tmp_path / "cut")


def test_load_mnist(mnist_dir):
    path, train, test = mnist_dir
    d = load_mnist(path)
    assert d.data.shape == (6, 784) and d.images.shape == (6, 28, 28)
    np.testing.assert_allclose(d.data, train.reshape(6, -1) / 255.0, rtol=0)
    np.testing.assert_array_equal(d.target, np.arange(6))
    X, y = load_mnist(str(path), subset="test", return_X_y=True, dtype=np.float32)
    assert X.dtype == np.float32
    np.testing.assert_allclose(X, test.reshape(3, -1) / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(y, [9, 8, 7])


def test_load_mnist_missing_files(mnist_dir):
    path, _, _ = mnist_dir
    (path / "train-labels-idx1-ubyte").unlink()
    with pytest.raises(FileNotFoundError, match=r"train-labels-idx1-ubyte\[\.gz\]"):
        load_mnist(path)
    with pytest.raises(ValueError, match="subset"):
        load_mnist(path, subset="valid")


def test_load_mnist_inconsistent_files(mnist_dir):
    path, _, _ = mnist_dir
    _write_idx(path / "train-labels-idx1-ubyte", np.arange(5, dtype=np.uint8))
    with pytest.raises(ValueError, match="MNIST files disagree"):
        load_mnist(path)


@pytest.fixture
def celeba_dir(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    images = tmp_path / "img_align_celeba"
    images.mkdir()
    names = ["000001.jpg", "000002.jpg", "000003.jpg"]
    for k, name in enumerate(names):
        # 30 wide x 20 high: red 5-pixel margins left and right, a blue-ish centre square
        arr = np.zeros((20, 30, 3), np.uint8)
        arr[:, :5] = (255, 0, 0)
        arr[:, 25:] = (255, 0, 0)
        arr[:, 5:25] = (0, 40 * k, 200)
        Image.fromarray(arr).save(images / name.replace(".jpg", ".png"), format="PNG")
        (images / name.replace(".jpg", ".png")).rename(images / name)
    (tmp_path / "list_attr_celeba.txt").write_text(
        "3\nSmiling Young\n000001.jpg  1 -1\n000002.jpg -1 -1\n000003.jpg  1  1\n")
    (tmp_path / "identity_CelebA.txt").write_text(
        "000001.jpg 7\n000002.jpg 7\n000003.jpg 12\n")
    return tmp_path


def test_load_celeba(celeba_dir):
    d = load_celeba(celeba_dir, image_size=8)
    assert d.data.shape == (3, 3 * 64) and d.data.dtype == np.float32
    assert d.image_shape == (3, 8, 8)
    np.testing.assert_array_equal(d.attributes, [[1, 0], [0, 0], [1, 1]])
    assert list(d.attribute_names) == ["Smiling", "Young"]
    np.testing.assert_array_equal(d.identity, [7, 7, 12])
    img = d.data.reshape(3, 3, 8, 8)  # channel-first
    # centre crop removed the red margins: red channel is 0, blue channel is 200/255
    assert img[:, 0].max() < 0.05
    np.testing.assert_allclose(img[:, 2], 200 / 255, rtol=0, atol=0.02)
    np.testing.assert_allclose(img[2, 1], 80 / 255, rtol=0, atol=0.02)


def test_load_celeba_subset_and_tables_only(celeba_dir):
    d = load_celeba(celeba_dir, filenames=["000003.jpg", "000001.jpg"], image_size=4)
    np.testing.assert_array_equal(d.identity, [12, 7])
    assert list(d.filenames) == ["000003.jpg", "000001.jpg"]
    tables = load_celeba(celeba_dir, load_images=False)
    assert tables.data is None and tables.attributes.shape == (3, 2)
    with pytest.raises(ValueError, match="not listed in list_attr_celeba.txt"):
        load_celeba(celeba_dir, filenames=["999.jpg"])


def test_load_celeba_missing_files(celeba_dir):
    (celeba_dir / "img_align_celeba" / "000002.jpg").unlink()
    with pytest.raises(FileNotFoundError, match="missing from .*000002.jpg"):
        load_celeba(celeba_dir)
    (celeba_dir / "identity_CelebA.txt").unlink()
    with pytest.raises(FileNotFoundError, match="identity_CelebA.txt"):
        load_celeba(celeba_dir)


def test_load_celeba_bad_tables(celeba_dir):
    (celeba_dir / "identity_CelebA.txt").write_text("000001.jpg 7\n")
    with pytest.raises(ValueError, match="has no identity for 2 image"):
        load_celeba(celeba_dir, load_images=False)
    (celeba_dir / "list_attr_celeba.txt").write_text("1\nSmiling Young\n000001.jpg 1\n")
    with pytest.raises(ValueError, match="not in CelebA's format"):
        load_celeba(celeba_dir, load_images=False)


# -- hostile files: one line naming the file, never a hang, a traceback or a bomb ------------
from tests._fuzz import CASES, deadline  # noqa: E402  (counted per reader)


def _one_line_naming(exc, path):
    msg = str(exc)
    assert "\n" not in msg and str(path) in msg, msg
    return msg


def _idx_header(code, dims):
    return bytes([0, 0, code, len(dims)]) + b"".join(int(d).to_bytes(4, "big") for d in dims)


def test_read_idx_gzip_bomb_reads_the_declared_bytes_plus_one(tmp_path):
    """A labels file declaring 10 bytes but inflating to 32 MiB stops after 10 bytes + one."""
    import tracemalloc

    path = tmp_path / "train-labels-idx1-ubyte.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(_idx_header(0x08, [10]) + bytes(10))
        for _ in range(32):
            f.write(bytes(2**20))
    tracemalloc.start()
    try:
        with pytest.raises(ValueError) as info:
            read_idx(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "more than" in _one_line_naming(info.value, path)
    assert peak < 4 * 2**20, peak  # the bytes read stay near the declared 10, not 32 MiB


@pytest.mark.parametrize("dims, match", [
    ((2**31, 2**31, 4), r"declares shape \(2147483648, 2147483648, 4\)"),
    ((2**32 - 1,), "above max_bytes"),
    ((1,) * 255, "255 dimensions"),
    ((), "0 dimensions"),
])
def test_read_idx_refuses_impossible_headers(tmp_path, dims, match):
    path = tmp_path / "x.idx"
    path.write_bytes(_idx_header(0x0D, dims))  # no data: (2**31)**2 * 4 overflows to 0
    with pytest.raises(ValueError, match=match) as info:
        read_idx(path)
    _one_line_naming(info.value, path)


def test_read_idx_refuses_what_is_not_a_regular_file(tmp_path):
    os = pytest.importorskip("os")
    fifo = tmp_path / "fifo-idx1-ubyte"
    os.mkfifo(fifo)
    link = tmp_path / "zero-idx1-ubyte"
    link.symlink_to("/dev/zero")
    for path, kind in ((fifo, "a named pipe"), (tmp_path, "a directory"),
                       (link, "a character device")):
        with deadline(10), pytest.raises(ValueError, match=kind) as info:
            read_idx(path)
        _one_line_naming(info.value, path)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_read_idx_refuses_non_finite_floats(tmp_path, bad):
    array = np.zeros((2, 3), ">f8")
    array[1, 2] = bad
    _write_idx(tmp_path / "f.idx", array)
    with pytest.raises(ValueError, match="not finite") as info:
        read_idx(tmp_path / "f.idx")
    _one_line_naming(info.value, tmp_path / "f.idx")


@pytest.mark.parametrize("images, match", [
    (np.full((6, 28, 28), np.nan, ">f8"), "not finite"),
    (np.full((6, 28, 28), 1e300, ">f8"), r"pixel values in \[0, 255\]"),
    (np.full((6, 28, 28), -1.0, ">f8"), r"pixel values in \[0, 255\]"),
    (np.full((6, 28, 28), 256, ">i4"), r"pixel values in \[0, 255\]"),
])
def test_load_mnist_refuses_pixels_out_of_range(mnist_dir, images, match):
    path, _, _ = mnist_dir
    _write_idx(path / "train-images-idx3-ubyte", images)
    with pytest.raises(ValueError, match=match) as info:
        load_mnist(path)
    _one_line_naming(info.value, path / "train-images-idx3-ubyte")


def test_load_mnist_refuses_bad_labels_and_a_labels_bomb(mnist_dir):
    path, _, _ = mnist_dir
    _write_idx(path / "train-labels-idx1-ubyte", np.array([0, 1, 2, 3, 4, -5], ">i4"))
    with pytest.raises(ValueError, match="labels must be") as info:
        load_mnist(path)
    _one_line_naming(info.value, path / "train-labels-idx1-ubyte")
    labels = path / "train-labels-idx1-ubyte"
    labels.unlink()
    with gzip.open(str(labels) + ".gz", "wb", compresslevel=1) as f:
        f.write(_idx_header(0x08, [6]) + bytes(6) + bytes(2**22))
    with pytest.raises(ValueError, match="more than") as info:
        load_mnist(path)
    _one_line_naming(info.value, str(labels) + ".gz")


def test_load_mnist_names_a_pipe_instead_of_calling_it_missing(mnist_dir):
    import os

    path, _, _ = mnist_dir
    (path / "train-labels-idx1-ubyte").unlink()
    os.mkfifo(path / "train-labels-idx1-ubyte")
    with deadline(10), pytest.raises(ValueError, match="a named pipe") as info:
        load_mnist(path)
    _one_line_naming(info.value, path / "train-labels-idx1-ubyte")


_BAD_ATTRIBUTES = [
    ("", "0 non-empty lines"),
    ("3\n", r"1 non-empty line\)"),
    ("3\nSmiling Young\n000001.jpg 1 yes\n000002.jpg -1 -1\n000003.jpg 1 1\n",
     r"line 3 .*'yes'"),
    ("3\nSmiling Young\n000001.jpg 1 2\n000002.jpg -1 -1\n000003.jpg 1 1\n", r"line 3 .*'2'"),
    ("x\nSmiling Young\n000001.jpg 1 1\n", "count"),
    ("5\nSmiling Young\n000001.jpg 1 1\n000002.jpg -1 -1\n000003.jpg 1 1\n",
     "declares 5 images but lists 3"),
    ("2\nSmiling Young\n000001.jpg 1 1\n000001.jpg -1 -1\n", "000001.jpg twice"),
    ("1\nSmiling Young\n../secret.jpg 1 1\n", r"'\.\./secret\.jpg'.*img_align_celeba"),
    ("1\nSmiling Young\n/etc/passwd 1 1\n", r"'/etc/passwd'.*img_align_celeba"),
    ("1\nSmiling Young\nsub/../../x.jpg 1 1\n", "img_align_celeba"),
]
_BAD_IDENTITIES = [
    ("000001.jpg seven\n000002.jpg 7\n000003.jpg 12\n", r"line 1 .*seven"),
    ("000001.jpg 7 8\n000002.jpg 7\n000003.jpg 12\n", "line 1"),
]


@pytest.mark.parametrize("name, text, match",
                         [("list_attr_celeba.txt", *case) for case in _BAD_ATTRIBUTES]
                         + [("identity_CelebA.txt", *case) for case in _BAD_IDENTITIES])
def test_load_celeba_refuses_bad_attribute_and_identity_files(celeba_dir, name, text, match):
    path = celeba_dir / name
    path.write_text(text)
    with pytest.raises(ValueError, match=match) as info:
        load_celeba(celeba_dir, load_images=False)
    _one_line_naming(info.value, path)


def test_load_celeba_never_leaves_the_image_folder(celeba_dir):
    # a valid image beside the folder: listing it as ../ must not read it
    (celeba_dir / "secret.jpg").write_bytes((celeba_dir / "img_align_celeba"
                                             / "000001.jpg").read_bytes())
    (celeba_dir / "list_attr_celeba.txt").write_text("1\nSmiling Young\n../secret.jpg 1 1\n")
    (celeba_dir / "identity_CelebA.txt").write_text("../secret.jpg 7\n")
    with pytest.raises(ValueError, match="img_align_celeba"):
        load_celeba(celeba_dir, image_size=4)


@pytest.mark.parametrize("which", ["list_attr_celeba.txt", "identity_CelebA.txt",
                                   "img_align_celeba/000002.jpg"])
def test_load_celeba_refuses_pipes(celeba_dir, which):
    import os

    path = celeba_dir / which
    path.unlink()
    os.mkfifo(path)
    with deadline(10), pytest.raises(ValueError, match="a named pipe") as info:
        load_celeba(celeba_dir, image_size=4)
    _one_line_naming(info.value, path)


def test_load_celeba_non_image_file_is_one_line(celeba_dir):
    path = celeba_dir / "img_align_celeba" / "000002.jpg"
    path.write_bytes(b"this is not an image at all")
    with pytest.raises(ValueError, match="not a readable image") as info:
        load_celeba(celeba_dir, image_size=4)
    _one_line_naming(info.value, path)


# -- fuzz: hostile bytes and paths; each case either loads what it declares or is refused in
# one line naming the file
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _loads_or_refuses(call, path):
    try:
        return call()
    except ValueError as exc:
        _one_line_naming(exc, path)
        return None


_IDX_FILES = st.one_of(
    st.binary(max_size=120),
    st.builds(lambda code, dims, body: _idx_header(code, dims) + body,
              st.sampled_from([0x08, 0x09, 0x0B, 0x0C, 0x0D, 0x0E, 0x07]),
              st.lists(st.integers(0, 2**32 - 1) | st.integers(0, 4), max_size=4),
              st.binary(max_size=80)),
)


@FUZZ
@given(blob=_IDX_FILES, compress=st.booleans())
def test_fuzz_read_idx(tmp_path, blob, compress):
    CASES["idx loader"] += 1
    path = tmp_path / ("f.idx.gz" if compress else "f.idx")
    if compress:
        with gzip.open(path, "wb") as f:
            f.write(blob)
    else:
        path.write_bytes(blob)
    array = _loads_or_refuses(lambda: read_idx(path), path)
    if array is not None:  # loaded: exactly the declared data, and nothing else was there
        ndim = blob[3]
        assert array.shape == tuple(int.from_bytes(blob[4 + 4 * i:8 + 4 * i], "big")
                                    for i in range(ndim))
        assert 4 + 4 * ndim + array.nbytes == len(blob)


def _hostile_idx(tmp_path):
    """``(name, path)`` of files no IDX reader should load (made small)."""
    import os

    ok = tmp_path / "ok.idx"
    _write_idx(ok, np.arange(12, dtype=np.uint8).reshape(3, 4))
    blob = ok.read_bytes()
    cases = {"fifo": None, "directory": tmp_path / "dir", "link to /dev/zero": "/dev/zero",
             "link to /dev/urandom": "/dev/urandom", "dangling link": tmp_path / "nowhere"}
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    out = [("fifo", tmp_path / "fifo"), ("directory", tmp_path / "dir")]
    for name, target in cases.items():
        if name.startswith(("link", "dangling")):
            link = tmp_path / name.replace(" ", "_").replace("/", "_")
            link.symlink_to(target)
            out.append((name, link))
    for cut in range(len(blob)):
        (tmp_path / f"cut{cut}").write_bytes(blob[:cut])
        out.append((f"truncated at {cut}", tmp_path / f"cut{cut}"))
    (tmp_path / "long").write_bytes(blob + b"\0")
    out.append(("one byte too many", tmp_path / "long"))
    for declared in (1, 2**10, 2**20):  # declared size vs decompressed size: small bombs
        path = tmp_path / f"bomb{declared}.gz"
        with gzip.open(path, "wb", compresslevel=1) as f:
            f.write(_idx_header(0x08, [declared]) + bytes(declared + 2**16))
        out.append((f"gzip inflating past {declared} declared bytes", path))
    for dims in ((2**31, 2**31, 4), (2**32 - 1,) * 3, (1,) * 33, (1,) * 255, ()):
        path = tmp_path / f"dims{len(dims)}-{dims[:1]}"
        path.write_bytes(_idx_header(0x0C, dims) + bytes(8))
        out.append((f"dimensions {dims[:3]}... ({len(dims)})", path))
    for bad in (np.nan, np.inf):
        path = tmp_path / f"float{bad}"
        _write_idx(path, np.array([1.0, bad], ">f8"))
        out.append((f"float {bad}", path))
    return out


def test_fuzz_read_idx_hostile_paths(tmp_path):
    for name, path in _hostile_idx(tmp_path):
        CASES["idx loader"] += 1
        try:
            with deadline(10):
                read_idx(path)
        except ValueError as exc:
            _one_line_naming(exc, path)
        else:
            pytest.fail(f"{name}: loaded")


_TABLE_TEXT = st.text(alphabet="0123456789 -+\n.jpg/abcSmilingYoung\t", max_size=160)


@FUZZ
@given(attr=_TABLE_TEXT, ident=_TABLE_TEXT)
def test_fuzz_celeba_tables(celeba_dir, attr, ident):
    CASES["celeba loader"] += 1
    (celeba_dir / "list_attr_celeba.txt").write_text(attr)
    (celeba_dir / "identity_CelebA.txt").write_text(ident)
    try:
        d = load_celeba(celeba_dir, load_images=False)
    except ValueError as exc:
        msg = str(exc)
        assert "\n" not in msg and (str(celeba_dir / "list_attr_celeba.txt") in msg
                                    or str(celeba_dir / "identity_CelebA.txt") in msg), msg
        return
    n = len(d.filenames)
    assert d.attributes.shape == (n, len(d.attribute_names)) and d.identity.shape == (n,)
    assert set(np.unique(d.attributes)) <= {0, 1}
    assert all(".." not in f.split("/") and not f.startswith("/") for f in d.filenames)


@FUZZ
@given(blob=st.binary(max_size=300))
def test_fuzz_celeba_images(celeba_dir, blob):
    CASES["celeba loader"] += 1
    path = celeba_dir / "img_align_celeba" / "000002.jpg"
    path.write_bytes(blob)
    _loads_or_refuses(lambda: load_celeba(celeba_dir, image_size=4), path)


@pytest.mark.parametrize("which", ["list_attr_celeba.txt", "identity_CelebA.txt",
                                   "img_align_celeba/000001.jpg"])
@pytest.mark.parametrize("kind", ["directory", "link to /dev/zero", "link to /dev/urandom"])
def test_fuzz_celeba_hostile_paths(celeba_dir, which, kind):
    CASES["celeba loader"] += 1
    path = celeba_dir / which
    path.unlink()
    if kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(kind.split()[-1])
    with deadline(10), pytest.raises(ValueError, match=kind.split()[0].replace("link", "device")
                                     if kind != "directory" else "directory") as info:
        load_celeba(celeba_dir, image_size=4)
    _one_line_naming(info.value, path)
