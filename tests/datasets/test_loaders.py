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
