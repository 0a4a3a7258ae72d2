"""Offline data, loaders for local files of the papers' data sets, and partitions."""

from ..utils._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "._identity": ["identity_split", "public_reduction_pool"],
    "._loaders": ["load_celeba", "load_mnist", "missing_mnist_files", "read_idx"],
    "._mnist": ["load_mnist_sample", "mnist_sample_path"],
    "._images": ["load_digit_images", "load_lfw_subset"],
    "._synthetic": ["make_identity_images", "make_image_classification"],
    "._partition": ["partition"],
})
