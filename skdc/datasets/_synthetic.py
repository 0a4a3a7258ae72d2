"""Synthetic image data: class-structured images and identity-structured faces.

``make_image_classification`` draws MNIST-shaped classification data at any size (the GPU
study's "synthetic 50,000 x 784 rows"): each class has a smooth prototype and a few smooth
modes of variation, each image is its class prototype plus a random combination of the modes
plus pixel noise, clipped to [0, 1]. ``make_identity_images`` draws a CelebA-like stand-in:
identities with several images each, binary attributes per image, so identity-level splits
and cross-image linkage can be tested offline.
"""

# Licence: BSD 3 clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["make_identity_images", "make_image_classification"]


def _smooth_fields(n_fields, shape, n_bumps, rng):
    """``n_fields`` smooth images of ``shape`` (channels, h, w): sums of Gaussian bumps."""
    c, h, w = shape
    yy, xx = np.mgrid[0:h, 0:w]
    centers = rng.uniform([0.2 * h, 0.2 * w], [0.8 * h, 0.8 * w], size=(n_fields, n_bumps, 2))
    widths = rng.uniform(0.08, 0.2, size=(n_fields, n_bumps)) * max(h, w)
    weights = rng.uniform(0.5, 1.0, size=(n_fields, n_bumps, c))
    d2 = ((yy[None, None] - centers[..., 0, None, None]) ** 2
          + (xx[None, None] - centers[..., 1, None, None]) ** 2)
    bumps = np.exp(-d2 / (2 * widths[..., None, None] ** 2))  # (n_fields, n_bumps, h, w)
    fields = np.einsum("fbc,fbhw->fchw", weights, bumps)
    fields /= fields.reshape(n_fields, -1).max(axis=1)[:, None, None, None]
    return fields.reshape(n_fields, -1)


@validate_params(
    {
        "n_samples": [Interval(Integral, 1, None, closed="left")],
        "n_classes": [Interval(Integral, 2, None, closed="left")],
        "image_shape": [tuple],
        "n_modes": [Interval(Integral, 0, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_image_classification(n_samples=1000, n_classes=10, *, image_shape=(1, 28, 28),
                              n_modes=4, noise=0.1, random_state=None):
    """Generate class-structured images with pixels in [0, 1].

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    n_samples : int, default=1000
        Number of images.
    n_classes : int, default=10
        Number of classes (balanced up to one image).
    image_shape : tuple of int, default=(1, 28, 28)
        ``(channels, height, width)``; the default is MNIST's.
    n_modes : int, default=4
        Smooth modes of within-class variation per class.
    noise : float, default=0.1
        Standard deviation of the i.i.d. pixel noise.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    X : ndarray of shape (n_samples, prod(image_shape))
        Flattened images (channel-first), float64 in [0, 1].
    y : ndarray of shape (n_samples,)
        Class labels ``0 .. n_classes - 1``.

    Examples
    --------
    >>> from skdc.datasets import make_image_classification
    >>> X, y = make_image_classification(50, 5, random_state=0)
    >>> X.shape, sorted(set(y.tolist())), bool(X.min() >= 0 and X.max() <= 1)
    ((50, 784), [0, 1, 2, 3, 4], True)
    """
    rng = check_random_state(random_state)
    shape = tuple(int(s) for s in image_shape)
    if len(shape) != 3 or min(shape) < 1:
        raise ValueError(f"image_shape must be (channels, height, width); got {image_shape}.")
    protos = _smooth_fields(n_classes, shape, 3, rng)
    modes = _smooth_fields(n_classes * max(n_modes, 1), shape, 2, rng)
    modes = modes.reshape(n_classes, max(n_modes, 1), -1) - 0.5 * protos[:, None]
    y = rng.permutation(np.arange(n_samples) % n_classes)
    X = 0.8 * protos[y]
    if n_modes:
        coef = rng.normal(scale=0.3, size=(n_samples, n_modes))
        X += np.einsum("nk,nkd->nd", coef, modes[y])
    X += noise * rng.standard_normal(X.shape)
    np.clip(X, 0.0, 1.0, out=X)
    return X, y


@validate_params(
    {
        "n_identities": [Interval(Integral, 1, None, closed="left")],
        "images_per_identity": [Interval(Integral, 1, None, closed="left"), tuple],
        "image_shape": [tuple],
        "n_attributes": [Interval(Integral, 1, None, closed="left")],
        "noise": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def make_identity_images(n_identities=50, images_per_identity=(2, 6), *,
                         image_shape=(3, 16, 16), n_attributes=2, noise=0.05,
                         random_state=None):
    """Generate face-like images of identities with binary attributes (a CelebA stand-in).

    Each identity has a smooth appearance; each of its images adds a smooth view change, the
    patterns of the attributes that are on for that image, and pixel noise. Attribute 0 plays
    CelebA's ``Smiling``: it varies between images of one identity.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    n_identities : int, default=50
        Number of identities.
    images_per_identity : int or tuple of (int, int), default=(2, 6)
        Images per identity, or the inclusive range it is drawn from uniformly.
    image_shape : tuple of int, default=(3, 16, 16)
        ``(channels, height, width)`` (CelebA in the paper is ``(3, 64, 64)``).
    n_attributes : int, default=2
        Number of binary attributes.
    noise : float, default=0.05
        Standard deviation of the pixel noise.
    random_state : int, RandomState instance or None, default=None
        Source of randomness.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (n_images, prod(image_shape)) float64 in [0, 1]; ``identity`` (n_images,);
        ``attributes`` (n_images, n_attributes) of 0/1; ``attribute_names``
        (``'Smiling'``, ``'attr1'``, ...); ``image_shape``.

    Examples
    --------
    >>> from skdc.datasets import make_identity_images
    >>> faces = make_identity_images(10, 3, random_state=0)
    >>> faces.data.shape, faces.identity[:4].tolist(), faces.attributes.shape
    ((30, 768), [0, 0, 0, 1], (30, 2))
    """
    rng = check_random_state(random_state)
    shape = tuple(int(s) for s in image_shape)
    if len(shape) != 3 or min(shape) < 1:
        raise ValueError(f"image_shape must be (channels, height, width); got {image_shape}.")
    if isinstance(images_per_identity, tuple):
        lo, hi = (int(v) for v in images_per_identity)
        if not 1 <= lo <= hi:
            raise ValueError(
                f"images_per_identity range must satisfy 1 <= low <= high; got "
                f"{images_per_identity}."
            )
        counts = rng.randint(lo, hi + 1, size=n_identities)
    else:
        counts = np.full(n_identities, int(images_per_identity))
    identity = np.repeat(np.arange(n_identities), counts)
    n = identity.size
    faces = _smooth_fields(n_identities, shape, 4, rng)
    views = _smooth_fields(8, shape, 2, rng) - 0.5
    patterns = _smooth_fields(n_attributes, shape, 2, rng) - 0.5
    attributes = (rng.uniform(size=(n, n_attributes)) < 0.5).astype(np.intp)
    X = 0.7 * faces[identity]
    X += 0.15 * rng.normal(size=(n, views.shape[0])) @ views / np.sqrt(views.shape[0])
    X += 0.3 * attributes @ patterns
    X += noise * rng.standard_normal(X.shape)
    np.clip(X, 0.0, 1.0, out=X)
    names = ["Smiling"] + [f"attr{k}" for k in range(1, n_attributes)]
    return Bunch(
        data=X,
        identity=identity,
        attributes=attributes,
        attribute_names=np.array(names),
        image_shape=shape,
        DESCR="Synthetic identities with binary attributes (skdc.datasets).",
    )
