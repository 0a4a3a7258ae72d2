# Public names of skdc.datasets, one a line. Type checkers read them here, and
# skdc.utils._lazy reads them at import time: add or remove a public name here only.
from ._identity import identity_split as identity_split
from ._identity import public_reduction_pool as public_reduction_pool
from ._images import load_digit_images as load_digit_images
from ._images import load_lfw_subset as load_lfw_subset
from ._loaders import load_celeba as load_celeba
from ._loaders import load_mnist as load_mnist
from ._loaders import missing_mnist_files as missing_mnist_files
from ._loaders import read_idx as read_idx
from ._mnist import load_mnist_sample as load_mnist_sample
from ._mnist import mnist_sample_path as mnist_sample_path
from ._partition import partition as partition
from ._synthetic import make_identity_images as make_identity_images
from ._synthetic import make_image_classification as make_image_classification
from ._tables import load_rows as load_rows
from ._tables import load_table as load_table
from ._tables import table_byte_limit as table_byte_limit
from ._tables import table_format as table_format
