"""Offline data, loaders for local files of the papers' data sets, and partitions."""

from ._identity import identity_split, public_reduction_pool
from ._images import load_digit_images, load_lfw_subset
from ._loaders import load_celeba, load_mnist, read_idx
from ._partition import partition
from ._synthetic import make_identity_images, make_image_classification

__all__ = [
    "identity_split",
    "load_celeba",
    "load_digit_images",
    "load_lfw_subset",
    "load_mnist",
    "make_identity_images",
    "make_image_classification",
    "partition",
    "public_reduction_pool",
    "read_idx",
]
