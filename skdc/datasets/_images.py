"""Small image data sets that ship with scikit-learn and scikit-image (no download).

``load_digit_images`` is scikit-learn's 8 x 8 digits, scaled to [0, 1] like the papers' MNIST
pixels; ``load_lfw_subset`` is scikit-image's 25 x 25 face / non-face subset of Labeled Faces
in the Wild, a small binary face task standing in for CelebA offline.
"""

# Licence: BSD 3 clause

import numpy as np
from sklearn.utils import Bunch

from ..utils._docstring import Substitution
from ..utils._sklearn_compat import validate_params

__all__ = ["load_digit_images", "load_lfw_subset"]

# the loaders' one parameter, and the heading of what they return
_RETURN_X_Y_DOC = """\
Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
"""
_X_Y_RETURNED_DOC = """\
(data, target) : tuple
        When ``return_X_y`` is True.
"""


def _images_or_X_y(images, target, target_names, descr, return_X_y):
    """The loaders' one output: ``(data, target)``, or a Bunch that also holds the images."""
    data = images.reshape(len(images), -1)
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        images=images,
        target=target,
        target_names=target_names,
        image_shape=(1,) + images.shape[1:],
        DESCR=descr,
    )


@validate_params({"return_X_y": ["boolean"]}, prefer_skip_nested_validation=True)
@Substitution(return_X_y=_RETURN_X_Y_DOC, X_y_returned=_X_Y_RETURNED_DOC)
def load_digit_images(*, return_X_y=False):
    """Load scikit-learn's digits as images with pixels in [0, 1].

    The offline stand-in for MNIST (the data of Section 5.1 of the KTI paper, Suetake et al.,
    arXiv:2605.27219): 1,797 images of 8 x 8 pixels, 10 classes, pixels divided by 16.

    Read more in the :ref:`User Guide <experiments>`.

    {return_X_y}
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (1797, 64) float64 in [0, 1]; ``images`` (1797, 8, 8); ``target`` (1797,);
        ``target_names``; ``image_shape`` ``(1, 8, 8)`` (channels, height, width); ``DESCR``.
    {X_y_returned}

    Examples
    --------
    >>> from skdc.datasets import load_digit_images
    >>> digits = load_digit_images()
    >>> digits.data.shape, digits.images.shape, float(digits.data.max())
    ((1797, 64), (1797, 8, 8), 1.0)
    """
    from sklearn.datasets import load_digits

    raw = load_digits()
    images = raw.images.astype(np.float64) / 16.0
    return _images_or_X_y(images, raw.target, raw.target_names,
                          "scikit-learn digits (8x8, 10 classes), pixels scaled to [0, 1].",
                          return_X_y)


@validate_params({"return_X_y": ["boolean"]}, prefer_skip_nested_validation=True)
@Substitution(return_X_y=_RETURN_X_Y_DOC, X_y_returned=_X_Y_RETURNED_DOC)
def load_lfw_subset(*, return_X_y=False):
    """Load scikit-image's face subset of LFW as a small binary face task.

    200 grayscale images of 25 x 25 pixels in [0, 1]: 100 faces (target 1) and 100 non-face
    patches (target 0), shipped with scikit-image (``skimage.data.lfw_subset``). It has no
    identities; use :func:`make_identity_images` for identity-level splits offline.

    Read more in the :ref:`User Guide <experiments>`.

    {return_X_y}
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (200, 625) float64; ``images`` (200, 25, 25); ``target`` (200,) with
        1 = face; ``target_names`` ``['non-face', 'face']``; ``image_shape`` ``(1, 25, 25)``.
    {X_y_returned}

    Examples
    --------
    >>> from skdc.datasets import load_lfw_subset
    >>> faces = load_lfw_subset()
    >>> faces.data.shape, faces.target.sum()
    ((200, 625), 100)
    """
    try:
        from skimage.data import lfw_subset
    except ImportError as exc:  # pragma: no cover - scikit-image is a test dependency
        raise ImportError(
            "load_lfw_subset needs scikit-image: pip install scikit-image."
        ) from exc
    images = np.asarray(lfw_subset(), dtype=np.float64)
    n = len(images)
    # skimage documents the subset as 100 faces followed by 100 non-faces
    target = np.zeros(n, dtype=np.intp)
    target[: n // 2] = 1
    return _images_or_X_y(
        images, target, np.array(["non-face", "face"]),
        "scikit-image LFW subset: 100 faces and 100 non-faces, 25x25, in [0, 1].", return_X_y)
