"""Loaders for the papers' data sets from files the user already has (never a download).

MNIST comes as four IDX files (``train-images-idx3-ubyte`` and friends, optionally
gzip-compressed). CelebA comes as a folder with ``img_align_celeba/`` (the JPEG images),
``list_attr_celeba.txt`` (40 binary attributes, +1/-1) and ``identity_CelebA.txt`` (image ->
identity). CelebA images are preprocessed as in Section 5.3 of [1]_: centre-cropped to a
square, resized bilinearly to ``image_size`` x ``image_size`` RGB, scaled to [0, 1] and
flattened channel-first.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import gzip
import os
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["load_celeba", "load_mnist", "missing_mnist_files", "read_idx"]

# IDX type codes (LeCun et al., "THE MNIST DATABASE", file format section)
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


def _open(path):
    path = Path(path)
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


@validate_params({"path": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def read_idx(path):
    """Read one IDX file (plain or gzip-compressed) into an array.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    array : ndarray
        The array with the file's shape and dtype (native byte order).

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from skdc.datasets import read_idx
    >>> path = os.path.join(tempfile.mkdtemp(), "labels-idx1-ubyte")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(bytes([0, 0, 8, 1]) + (3).to_bytes(4, "big") + bytes([7, 0, 9]))
    >>> read_idx(path).tolist()
    [7, 0, 9]
    """
    with _open(path) as f:
        header = f.read(4)
        if len(header) < 4 or header[0] != 0 or header[1] != 0 or header[2] not in _IDX_DTYPES:
            raise ValueError(
                f"{path} is not an IDX file: expected a header 0x00 0x00 <type> <ndim> with a "
                f"type in {sorted(hex(k) for k in _IDX_DTYPES)}; got {header!r}."
            )
        dtype = np.dtype(_IDX_DTYPES[header[2]])
        ndim = header[3]
        dims = tuple(int.from_bytes(f.read(4), "big") for _ in range(ndim))
        buf = f.read()
    expected = int(np.prod(dims)) * dtype.itemsize
    if len(buf) != expected:
        raise ValueError(
            f"{path} declares shape {dims} ({expected} bytes of data) but holds {len(buf)} "
            "bytes; the file is truncated or not an IDX file."
        )
    return np.frombuffer(buf, dtype=dtype).reshape(dims).astype(dtype.newbyteorder("="))


def _find(folder, stem):
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"),
                 stem.replace("-idx", ".idx") + ".gz"):
        if (folder / name).is_file():
            return folder / name
    return None


@validate_params(
    {"path": [str, os.PathLike], "subsets": [list, tuple]},
    prefer_skip_nested_validation=True,
)
def missing_mnist_files(path, subsets=("train", "test")):
    """The MNIST IDX files of ``subsets`` that the folder ``path`` lacks.

    A file counts as present under any spelling :func:`load_mnist` accepts (``.gz``, or
    ``train-images.idx3-ubyte``).

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    path : str or path-like
        The folder.
    subsets : list or tuple of {'train', 'test'}, default=('train', 'test')
        Which subsets' image and label files to look for.

    Returns
    -------
    missing : list of str
        The missing files' names (without ``.gz``), in the order train images, train labels,
        test images, test labels; empty when everything is there.

    Examples
    --------
    >>> from skdc.datasets import missing_mnist_files
    >>> missing_mnist_files("/no/such/folder", subsets=["test"])
    ['t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte']
    """
    unknown = sorted(set(subsets) - set(_MNIST_FILES))
    if unknown:
        raise ValueError(f"subsets must be among 'train' and 'test'; got {unknown}.")
    folder = Path(path)
    return [stem for subset in subsets for stem in _MNIST_FILES[subset]
            if _find(folder, stem) is None]


@validate_params(
    {
        "path": [str, os.PathLike],
        "subset": [StrOptions({"train", "test"})],
        "return_X_y": ["boolean"],
        "dtype": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def load_mnist(path, *, subset="train", return_X_y=False, dtype=np.float64):
    """Load MNIST (or Fashion-MNIST) from IDX files in a local folder.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    path : str or path-like
        Folder holding ``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
        ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte`` (each may end in ``.gz``;
        ``train-images.idx3-ubyte`` spellings are accepted too).
    subset : {'train', 'test'}, default='train'
        The official training (60,000) or test (10,000) images.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.
    dtype : dtype, default=np.float64
        Dtype of the pixel matrix.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n, 784) with pixels / 255 in [0, 1]; ``images`` (n, 28, 28) view;
        ``target`` (n,); ``image_shape`` ``(1, 28, 28)``.
    (data, target) : tuple
        When ``return_X_y`` is True.

    Raises
    ------
    FileNotFoundError
        Naming the files that are missing from ``path``.

    Examples
    --------
    >>> from skdc.datasets import load_mnist
    >>> load_mnist("/no/such/folder")
    Traceback (most recent call last):
    ...
    FileNotFoundError: MNIST train files are missing from /no/such/folder: ...
    """
    folder = Path(path)
    image_stem, label_stem = _MNIST_FILES[subset]
    missing = missing_mnist_files(folder, subsets=[subset])
    if missing:
        raise FileNotFoundError(
            f"MNIST {subset} files are missing from {folder}: "
            f"{', '.join(s + '[.gz]' for s in missing)}. Download them from the MNIST site "
            "(or Fashion-MNIST's) and pass the folder that holds them."
        )
    images = read_idx(_find(folder, image_stem))
    labels = read_idx(_find(folder, label_stem))
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"MNIST files disagree: images of shape {images.shape} and labels of shape "
            f"{labels.shape}; expected (n, 28, 28) and (n,)."
        )
    data = images.reshape(len(images), -1).astype(dtype) / 255.0
    target = labels.astype(np.intp)
    if return_X_y:
        return data, target
    return Bunch(data=data, images=data.reshape(images.shape), target=target,
                 image_shape=(1,) + images.shape[1:],
                 DESCR=f"MNIST-format {subset} images from {folder}, pixels / 255.")


def _read_celeba_tables(folder):
    attr_path = folder / "list_attr_celeba.txt"
    ident_path = folder / "identity_CelebA.txt"
    image_dir = folder / "img_align_celeba"
    missing = [str(p.name) + ("/" if p is image_dir else "")
               for p in (image_dir, attr_path, ident_path) if not p.exists()]
    if missing:
        raise FileNotFoundError(
            f"CelebA files are missing from {folder}: {', '.join(missing)}. The folder must "
            "hold img_align_celeba/ (the aligned JPEGs), list_attr_celeba.txt and "
            "identity_CelebA.txt from the CelebA release."
        )
    with open(attr_path) as f:
        lines = [ln.split() for ln in f.read().splitlines() if ln.strip()]
    # line 0: number of images; line 1: attribute names; then "<file> +-1 ..."
    names = lines[1]
    if not names or len(lines) < 2 or any(len(r) != len(names) + 1 for r in lines[2:]):
        raise ValueError(
            f"{attr_path} is not in CelebA's format: a count line, a line of attribute names, "
            "then one '<file> <+1/-1 per attribute>' line per image."
        )
    files = [r[0] for r in lines[2:]]
    attrs = (np.array([r[1:] for r in lines[2:]], dtype=int) > 0).astype(np.intp)
    identity_of = {}
    with open(ident_path) as f:
        for ln in f:
            parts = ln.split()
            if len(parts) == 2:
                identity_of[parts[0]] = int(parts[1])
    _check_all_found(files, identity_of.__contains__, ValueError, lambda n, some: (
        f"{ident_path} has no identity for {n} image(s) listed in {attr_path.name}, e.g. "
        f"{some}."))
    identity = np.array([identity_of[fn] for fn in files], dtype=np.intp)
    return np.array(files), attrs, np.array(names), identity, image_dir


def _check_all_found(names, found, error, message):
    """Raise ``error(message(count, first_three))`` for the ``names`` that ``found`` rejects."""
    left = [name for name in names if not found(name)]
    if left:
        raise error(message(len(left), left[:3]))


def _select_celeba_rows(files, attrs, identity, filenames):
    """The tables' rows of ``filenames``, in their order (all rows when ``None``)."""
    if filenames is None:
        return files, attrs, identity
    wanted = np.asarray(filenames).astype(str)
    position = {fn: i for i, fn in enumerate(files)}
    _check_all_found(wanted, position.__contains__, ValueError, lambda n, some: (
        f"{n} requested image(s) are not listed in list_attr_celeba.txt, e.g. {some}."))
    rows = np.array([position[fn] for fn in wanted], dtype=np.intp)
    return files[rows], attrs[rows], identity[rows]


def _read_celeba_images(image_dir, files, image_size, dtype):
    """The pixel matrix of ``files``, one preprocessed image a row."""
    _check_all_found(files, lambda fn: (image_dir / fn).is_file(), FileNotFoundError,
                     lambda n, some: (f"{n} image(s) listed in list_attr_celeba.txt are "
                                      f"missing from {image_dir}, e.g. {some}."))
    data = np.empty((len(files), 3 * image_size * image_size), dtype=dtype)
    for i, fn in enumerate(files):
        data[i] = _celeba_image(image_dir / fn, image_size)
    return data


def _celeba_image(path, size):
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        w, h = im.size
        side = min(w, h)
        left, top = (w - side) // 2, (h - side) // 2
        im = im.crop((left, top, left + side, top + side))
        im = im.resize((size, size), Image.BILINEAR)
        arr = np.asarray(im, dtype=np.float32) / 255.0
    return arr.transpose(2, 0, 1).reshape(-1)  # channel-first 3 x size x size


@validate_params(
    {
        "path": [str, os.PathLike],
        "filenames": ["array-like", None],
        "image_size": [Interval(Integral, 1, None, closed="left")],
        "load_images": ["boolean"],
        "dtype": "no_validation",
    },
    prefer_skip_nested_validation=True,
)
def load_celeba(path, *, filenames=None, image_size=64, load_images=True, dtype=np.float32):
    """Load CelebA (images, attributes, identities) from a local folder.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    path : str or path-like
        Folder holding ``img_align_celeba/``, ``list_attr_celeba.txt`` and
        ``identity_CelebA.txt``.
    filenames : array-like of str or None, default=None
        Load only these images (in this order), e.g. those an identity split selected;
        ``None`` loads every listed image.
    image_size : int, default=64
        Side of the resized square images.
    load_images : bool, default=True
        ``False`` reads only the tables (fast), so that a split can be chosen first.
    dtype : dtype, default=np.float32
        Dtype of the pixel matrix.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n, 3 * image_size**2) in [0, 1], channel-first (``None`` when
        ``load_images`` is False); ``attributes`` (n, 40) of 0/1; ``attribute_names``;
        ``identity`` (n,); ``filenames``; ``image_shape`` ``(3, image_size, image_size)``.

    Raises
    ------
    FileNotFoundError
        Naming the missing files or images.

    Examples
    --------
    >>> from skdc.datasets import load_celeba
    >>> load_celeba("/no/such/folder")
    Traceback (most recent call last):
    ...
    FileNotFoundError: CelebA files are missing from /no/such/folder: ...
    """
    folder = Path(path)
    files, attrs, names, identity, image_dir = _read_celeba_tables(folder)
    files, attrs, identity = _select_celeba_rows(files, attrs, identity, filenames)
    data = _read_celeba_images(image_dir, files, image_size, dtype) if load_images else None
    return Bunch(data=data, attributes=attrs, attribute_names=names, identity=identity,
                 filenames=files, image_shape=(3, image_size, image_size),
                 DESCR=f"CelebA from {folder}, centre-cropped, {image_size}x{image_size} RGB.")
