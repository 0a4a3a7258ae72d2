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

import io
import math
import os
import warnings
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..utils._files import FileError, one_line, open_input, read_bytes, read_text
from ..utils._sklearn_compat import Interval, StrOptions, validate_params

__all__ = ["load_celeba", "load_mnist", "missing_mnist_files", "read_idx"]

# IDX type codes (LeCun et al., "THE MNIST DATABASE", file format section)
_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

_MNIST_FILES = {
    "train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
    "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"),
}


# numpy arrays have at most 32 dimensions in NumPy 1 (64 in NumPy 2); IDX data sets use 1 to 4
_IDX_MAX_NDIM = 32
_IDX_CHUNK = 2**24  # bytes read at a time (never the declared size at once)
_TABLE_MAX_BYTES = 2**28  # CelebA's attribute table is 26 MB
_IMAGE_MAX_BYTES = 2**26  # an aligned CelebA JPEG is about 10 kB


@validate_params(
    {"path": [str, os.PathLike], "max_bytes": [Interval(Integral, 1, None, closed="left")]},
    prefer_skip_nested_validation=True,
)
def read_idx(path, *, max_bytes=2**31):
    """Read one IDX file (plain or gzip-compressed) into an array.

    Read more in the :ref:`User Guide <experiments>`.

    Only a regular file is read (never a pipe, a device or a folder), and never more than its
    header declares: the data are read in chunks up to the declared size, plus one byte to
    check that nothing follows, so a compressed file that inflates beyond its declared size
    stops there.

    Parameters
    ----------
    path : str or path-like
        The file.
    max_bytes : int, default=2**31
        The largest data size (in bytes, after decompression) accepted; a header declaring more
        is refused before anything is read.

    Returns
    -------
    array : ndarray
        The array with the file's shape and dtype (native byte order).

    Raises
    ------
    ValueError
        One line naming the file: not a regular file, not an IDX header, a shape above
        ``max_bytes``, data shorter or longer than declared, or floats that are not finite.

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
    path, what = os.fspath(path), "the IDX file"
    with open_input(path, what, max_bytes=max_bytes + 4 + 4 * _IDX_MAX_NDIM) as fh:
        dtype, dims = _idx_header(fh, path, max_bytes)
        data = np.empty(math.prod(dims) * dtype.itemsize, dtype=np.uint8)
        got = _read_into(fh, data)
        if got < data.size:
            raise FileError(
                f"{path}: {what} declares shape {dims} ({data.size} bytes of data) but holds "
                f"{got}; the file is truncated or not an IDX file."
            )
        if fh.read(1):
            raise FileError(
                f"{path}: {what} holds more than the {data.size} bytes of data its shape "
                f"{dims} declares; it is not an IDX file (or not the one it claims to be)."
            )
    array = data.view(dtype).reshape(dims)
    if not dtype.isnative:
        array = array.byteswap(inplace=True).view(dtype.newbyteorder("="))
    if dtype.kind == "f" and not np.isfinite(array).all():
        bad = int(array.size - np.count_nonzero(np.isfinite(array)))
        raise FileError(f"{path}: {what} holds {bad} values that are not finite (NaN or "
                        "infinite); data sets hold finite numbers. Replace the file.")
    return array


def _idx_header(fh, path, max_bytes):
    """``(dtype, dims)`` of an IDX header, checked before any data is read."""
    header = fh.read(4)
    if len(header) < 4 or header[0] != 0 or header[1] != 0 or header[2] not in _IDX_DTYPES:
        raise FileError(
            f"{path} is not an IDX file: expected a header 0x00 0x00 <type> <ndim> with a "
            f"type in {sorted(hex(k) for k in _IDX_DTYPES)}; got {header!r}."
        )
    dtype, ndim = np.dtype(_IDX_DTYPES[header[2]]), header[3]
    if not 1 <= ndim <= _IDX_MAX_NDIM:
        raise FileError(f"{path}: the IDX file declares {ndim} dimensions; arrays have 1 to "
                        f"{_IDX_MAX_NDIM}. It is not an IDX file.")
    raw = fh.read(4 * ndim)
    if len(raw) < 4 * ndim:
        raise FileError(f"{path}: the IDX header is truncated ({ndim} dimensions declared, "
                        f"{len(raw) // 4} given); the file is not an IDX file.")
    dims = tuple(int.from_bytes(raw[4 * i:4 * i + 4], "big") for i in range(ndim))
    nbytes = math.prod(dims) * dtype.itemsize  # Python integers: no overflow
    if nbytes > max_bytes:
        raise FileError(
            f"{path}: the IDX file declares shape {dims} ({nbytes} bytes of data), above "
            f"max_bytes={max_bytes}; it is not an IDX file, or pass a larger max_bytes."
        )
    return dtype, dims


def _read_into(fh, buffer):
    """Fill ``buffer`` from ``fh`` chunk by chunk; return the number of bytes read."""
    view, got = memoryview(buffer), 0
    while got < len(view):
        n = fh.readinto(view[got:got + _IDX_CHUNK])
        if not n:
            break
        got += n
    return got


def _find(folder, stem):
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"),
                 stem.replace("-idx", ".idx") + ".gz"):
        if os.path.lexists(folder / name):  # a pipe or a folder is found, then refused
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
    ValueError
        One line naming the file that is not a regular IDX file of MNIST's kind (see
        :func:`read_idx`), holds pixels outside [0, 255] or labels that are not non-negative
        integers.

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
    image_path, label_path = _find(folder, image_stem), _find(folder, label_stem)
    images, labels = read_idx(image_path), read_idx(label_path)
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise ValueError(
            f"MNIST files disagree: images of shape {images.shape} and labels of shape "
            f"{labels.shape}; expected (n, 28, 28) and (n,)."
        )
    _check_mnist_values(images, labels, image_path, label_path)
    data = images.reshape(len(images), -1).astype(dtype) / 255.0
    target = labels.astype(np.intp)
    if return_X_y:
        return data, target
    return Bunch(data=data, images=data.reshape(images.shape), target=target,
                 image_shape=(1,) + images.shape[1:],
                 DESCR=f"MNIST-format {subset} images from {folder}, pixels / 255.")


def _check_mnist_values(images, labels, image_path, label_path):
    """Pixels in [0, 255] and labels that are non-negative integers, or one line naming the
    file."""
    if images.size and not (images.min() >= 0 and images.max() <= 255):
        raise FileError(
            f"{image_path}: MNIST images hold pixel values in [0, 255]; this file holds values "
            f"from {images.min()} to {images.max()}. It is not an MNIST image file."
        )
    if labels.size and not (labels.min() >= 0 and np.all(labels == np.floor(labels))
                            and labels.max() <= np.iinfo(np.int32).max):
        raise FileError(
            f"{label_path}: MNIST labels must be non-negative integers; this file holds values "
            f"from {labels.min()} to {labels.max()}. It is not an MNIST label file."
        )


def _read_celeba_tables(folder):
    attr_path = folder / "list_attr_celeba.txt"
    ident_path = folder / "identity_CelebA.txt"
    image_dir = folder / "img_align_celeba"
    missing = [str(p.name) + ("/" if p is image_dir else "")
               for p in (image_dir, attr_path, ident_path) if not os.path.lexists(p)]
    if missing:
        raise FileNotFoundError(
            f"CelebA files are missing from {folder}: {', '.join(missing)}. The folder must "
            "hold img_align_celeba/ (the aligned JPEGs), list_attr_celeba.txt and "
            "identity_CelebA.txt from the CelebA release."
        )
    files, attrs, names = _read_attribute_table(attr_path)
    identity_of = _read_identity_table(ident_path)
    _check_all_found(files, identity_of.__contains__, ValueError, lambda n, some: (
        f"{ident_path} has no identity for {n} image(s) listed in {attr_path.name}, e.g. "
        f"{some}."))
    identity = np.array([identity_of[fn] for fn in files], dtype=np.intp)
    return np.array(files), attrs, np.array(names), identity, image_dir


def _table_lines(path):
    """``(line number, fields)`` of the non-empty lines of a bounded text table."""
    text = read_text(path, path.name, max_bytes=_TABLE_MAX_BYTES)
    return [(n, ln.split()) for n, ln in enumerate(text.splitlines(), 1) if ln.strip()]


def _read_attribute_table(path):
    """``(files, attributes, names)`` of ``list_attr_celeba.txt``: a count line, a line of
    attribute names, then ``<file> <+1/-1 per attribute>`` per image."""
    lines = _table_lines(path)
    if len(lines) < 2:
        raise _format_error(path, f"{len(lines)} non-empty line{'s' if len(lines) != 1 else ''}")
    (_, count), (_, names), rows = lines[0], lines[1], lines[2:]
    if len(count) != 1 or not count[0].isdigit():
        raise _format_error(path, f"line {lines[0][0]} should be the image count, not "
                                  f"{' '.join(count)!r}")
    if int(count[0]) != len(rows):
        raise _format_error(path, f"it declares {int(count[0])} images but lists {len(rows)}: "
                                  "truncated or edited")
    for n, row in rows:
        if len(row) != len(names) + 1:
            raise _format_error(path, f"line {n} has {len(row)} fields, not "
                                      f"{len(names) + 1}: a file and {len(names)} attributes")
    files = [row[0] for _, row in rows]
    for (n, _), name in zip(rows, files):
        _check_image_name(name, path, n)
    values = np.array([row[1:] for _, row in rows], dtype=str).reshape(len(rows), len(names))
    ok = np.isin(values, ["1", "+1", "-1", "0"])
    if not ok.all():
        i, j = np.argwhere(~ok)[0]
        raise _format_error(path, f"line {rows[i][0]} gives {names[j]} the value "
                                  f"{values[i, j]!r}, not 1 or -1")
    if len(set(files)) != len(files):
        twice = next(fn for k, fn in enumerate(files) if fn in files[:k])
        raise _format_error(path, f"it lists {twice} twice")
    return files, np.isin(values, ["1", "+1"]).astype(np.intp), names


def _format_error(path, detail):
    return FileError(
        f"{path}: {path.name} is not in CelebA's format ({detail}); expected a count line, a "
        "line of attribute names, then one '<file> <1 or -1 per attribute>' line per image."
    )


def _check_image_name(name, path, line):
    """Refuse an image name that reaches out of ``img_align_celeba`` (absolute, or ``..``)."""
    parts = name.replace("\\", "/").split("/")
    if os.path.isabs(name) or name.startswith(("/", "\\")) or ".." in parts:
        raise FileError(f"{path}: line {line} of {path.name} names the image {name!r}, outside "
                        "img_align_celeba; image names are files inside that folder.")


def _read_identity_table(path):
    """``{file: identity}`` of ``identity_CelebA.txt`` (``<file> <identity>`` lines)."""
    identity_of = {}
    for n, fields in _table_lines(path):
        if len(fields) != 2 or not fields[1].lstrip("+-").isdigit():
            raise FileError(f"{path}: line {n} of {path.name} should be '<file> <identity "
                            f"number>'; got {' '.join(fields)!r}.")
        identity_of[fields[0]] = int(fields[1])
    return identity_of


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
    _check_all_found(files, lambda fn: os.path.lexists(image_dir / fn), FileNotFoundError,
                     lambda n, some: (f"{n} image(s) listed in list_attr_celeba.txt are "
                                      f"missing from {image_dir}, e.g. {some}."))
    data = np.empty((len(files), 3 * image_size * image_size), dtype=dtype)
    for i, fn in enumerate(files):
        data[i] = _celeba_image(image_dir / fn, image_size)
    return data


def _celeba_image(path, size):
    from PIL import Image

    blob = read_bytes(path, "the image", max_bytes=_IMAGE_MAX_BYTES, decompress=None)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(blob)) as im:
                im = im.convert("RGB")
                w, h = im.size
                side = min(w, h)
                left, top = (w - side) // 2, (h - side) // 2
                im = im.crop((left, top, left + side, top + side))
                im = im.resize((size, size), Image.BILINEAR)
                arr = np.asarray(im, dtype=np.float32) / 255.0
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001  PIL's decoders raise many kinds on a bad file
        raise FileError(f"{path}: not a readable image ({type(exc).__name__}: "
                        f"{one_line(exc)}); replace the file.") from None
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
    ValueError
        One line naming the file that is not a regular file, not in CelebA's format, names an
        image outside ``img_align_celeba`` (an absolute name or one with ``..``), or is not a
        readable image.

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
