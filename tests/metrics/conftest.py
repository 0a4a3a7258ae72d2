"""Run this room's tests with one BLAS thread: the matrices are tiny, and on a shared machine
oversubscribed BLAS threads make them tens of times slower."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(scope="module")
def digits():
    """The first 300 of scikit-learn's digits, pixels scaled to [0, 1], and their labels."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X[:300] / 16.0, y[:300]


@pytest.fixture(scope="session")
def lfw_identities():
    """scikit-image's 100 LFW faces as 100 identities of three images each (the face, its
    mirror image, and a shifted, dimmed copy), split at the identity level with one reserved
    clean reference per identity (skdc.datasets.identity_split)."""
    import numpy as np
    from sklearn.utils import Bunch

    from skdc.datasets import identity_split, load_lfw_subset

    faces = load_lfw_subset()
    imgs = faces.data[faces.target == 1].reshape(-1, 25, 25)
    views = [imgs, imgs[:, :, ::-1], np.roll(imgs, 1, axis=2) * 0.9 + 0.05]
    X = np.stack(views, axis=1).reshape(-1, 625)
    identity = np.repeat(np.arange(len(imgs)), len(views))
    split = identity_split(identity, 2, identities_per_participant=50, random_state=0)
    return Bunch(X=X, identity=identity, split=split,
                 X_protocol=X[split.protocol], identity_protocol=identity[split.protocol],
                 participant=split.participant[split.protocol],
                 references=X[split.reference], reference_identity=identity[split.reference])
