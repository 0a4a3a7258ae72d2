"""PyTorch modules of the paper's utility CNN (Table 2) and linkage auditor CNN (Table 3).

The utility CNN reads one representation row (any width ``h``), lays it out on the smallest
square that holds it (trailing zeros fill the square), zero-pads symmetrically up to the
reference input side (16, the side of Table 2's padded 10 x 10 input) and applies two
convolution blocks and a 50-unit head [1]_. Wider rows are not padded (CelebA's 20 x 20 input;
Section 5.3 of [1]_ keeps "the same reference architecture" and the authors' reference code
drops the padding), which gives the 80 -> 50 -> 1 logit variant.

The auditor is the Table 3 network: three 3 x 3 convolutions, two max-pools, a 128-dim ReLU
embedding (the linkage embedding) and a training head.

References
----------
.. [1] Nosaka, Suetake, Takano, Okada, Yoshise, "Geometric Data Perturbation with Noisy-Anchor
   Alignment for Privacy-Preserving Collaborative Learning", arXiv:2608.18749, 2026 (Tables 2
   and 3, Section 5).
"""

# Licence: BSD 3 clause

import math
from numbers import Integral

from torch import nn
from torch.nn import functional as F

from ..utils._sklearn_compat import Interval, validate_params

__all__ = ["AuditorModule", "RepresentationModule", "representation_layout"]


@validate_params(
    {
        "n_features": [Interval(Integral, 1, None, closed="left")],
        "reference_side": [Interval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def representation_layout(n_features, reference_side=16):
    """Side of the square a row is laid out on, and the symmetric padding to the reference.

    Read more in the :ref:`User Guide <experiments>`.

    Parameters
    ----------
    n_features : int
        Width of a representation row.
    reference_side : int, default=16
        Side of the padded input of the paper's Table 2 network.

    Returns
    -------
    side : int
        ``ceil(sqrt(n_features))``; the row fills ``side * side`` entries (zeros after it).
    pad : tuple of int
        ``(left, right, top, bottom)`` zero padding that brings ``side`` up to
        ``max(side, reference_side)``; the extra entry of an odd total goes right/bottom.

    Examples
    --------
    >>> from skdc.nn import representation_layout
    >>> representation_layout(100)
    (10, (3, 3, 3, 3))
    >>> representation_layout(400)
    (20, (0, 0, 0, 0))
    """
    side = math.isqrt(int(n_features))
    if side * side < n_features:
        side += 1
    total = max(reference_side - side, 0)
    lo, hi = total // 2, total - total // 2
    return side, (lo, hi, lo, hi)


class RepresentationModule(nn.Module):
    """Utility CNN of Table 2 for a representation row of any width.

    Parameters
    ----------
    n_features : int
        Width of the input rows.
    n_outputs : int
        Number of logits; ``1`` gives the CelebA single-logit variant (output shape
        ``(batch,)``).
    reference_side : int, default=16
        Rows laid out on a smaller square are zero-padded up to this side.
    conv_channels : tuple of int, default=(10, 20)
        Filters of the two valid convolutions.
    kernel_size : int, default=5
        Side of the convolution filters.
    hidden_units : int, default=50
        Width of the fully connected layer before the output.
    """

    def __init__(self, n_features, n_outputs, *, reference_side=16, conv_channels=(10, 20),
                 kernel_size=5, hidden_units=50):
        super().__init__()
        self.n_features = int(n_features)
        self.n_outputs = int(n_outputs)
        self.side, self.pad = representation_layout(self.n_features, reference_side)
        size = max(self.side, reference_side)
        c1, c2 = conv_channels
        for _ in range(2):
            size = (size - kernel_size + 1) // 2
        if size < 1:
            raise ValueError(
                f"A {max(self.side, reference_side)}-pixel square is too small for two "
                f"{kernel_size}x{kernel_size} valid convolutions with 2x2 pooling; raise "
                "reference_side (at least 16 for kernel_size=5)."
            )
        self.conv1 = nn.Conv2d(1, c1, kernel_size)
        self.conv2 = nn.Conv2d(c1, c2, kernel_size)
        self.fc = nn.Linear(c2 * size * size, hidden_units)
        self.out = nn.Linear(hidden_units, self.n_outputs)

    def layout(self, X):
        """Reshape rows ``(batch, n_features)`` to padded squares ``(batch, 1, S, S)``."""
        fill = self.side * self.side - self.n_features
        if fill:
            X = F.pad(X, (0, fill))
        X = X.reshape(X.shape[0], 1, self.side, self.side)
        if any(self.pad):
            X = F.pad(X, self.pad)
        return X

    def forward(self, X):
        X = self.layout(X)
        X = F.max_pool2d(F.relu(self.conv1(X)), 2)
        X = F.max_pool2d(F.relu(self.conv2(X)), 2)
        X = F.relu(self.fc(X.flatten(1)))
        X = self.out(X)
        return X.squeeze(-1) if self.n_outputs == 1 else X


class AuditorModule(nn.Module):
    """Linkage auditor CNN of Table 3 for square images of any size.

    Parameters
    ----------
    n_features : int
        Width of a flattened image row (``channels * height * width``).
    n_outputs : int
        Number of classes of the training head.
    image_shape : tuple of int or None, default=None
        ``(channels, height, width)``; ``None`` reads one grayscale square from
        ``n_features``.
    channels : tuple of int, default=(32, 64, 64)
        Filters of the three 3 x 3 convolutions (padding 1).
    embedding_dim : int, default=128
        Width of the ReLU embedding used for linkage.
    """

    def __init__(self, n_features, n_outputs, *, image_shape=None, channels=(32, 64, 64),
                 embedding_dim=128):
        super().__init__()
        if image_shape is None:
            side = math.isqrt(int(n_features))
            if side * side != n_features:
                raise ValueError(
                    f"Rows of {n_features} features are not one grayscale square image; pass "
                    "module__image_shape=(channels, height, width)."
                )
            image_shape = (1, side, side)
        c, h, w = (int(s) for s in image_shape)
        if c * h * w != n_features:
            raise ValueError(
                f"image_shape {tuple(image_shape)} holds {c * h * w} values but rows have "
                f"{n_features} features."
            )
        if h < 4 or w < 4:
            raise ValueError(f"Images must be at least 4x4 for two 2x2 pools; got {h}x{w}.")
        self.image_shape = (c, h, w)
        c1, c2, c3 = channels
        self.conv1 = nn.Conv2d(c, c1, 3, padding=1)
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
        self.conv3 = nn.Conv2d(c2, c3, 3, padding=1)
        self.embedding = nn.Linear(c3 * (h // 4) * (w // 4), embedding_dim)
        self.head = nn.Linear(embedding_dim, n_outputs)

    def embed(self, X):
        """128-dim penultimate embedding ``ReLU(fc(flatten(features)))`` of flat rows."""
        X = X.reshape(X.shape[0], *self.image_shape)
        X = F.relu(self.conv2(F.relu(self.conv1(X))))
        X = F.max_pool2d(X, 2)
        X = F.max_pool2d(F.relu(self.conv3(X)), 2)
        return F.relu(self.embedding(X.flatten(1)))

    def forward(self, X):
        return self.head(self.embed(X))


