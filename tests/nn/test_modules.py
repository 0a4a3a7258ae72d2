"""Tests of the Table 2 / Table 3 modules (skdc/nn/_modules.py)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from skdc.nn import AuditorModule, RepresentationModule, representation_layout  # noqa: E402


@pytest.mark.parametrize(
    "width, side, pad",
    [(100, 10, (3, 3, 3, 3)), (64, 8, (4, 4, 4, 4)), (50, 8, (4, 4, 4, 4)),
     (121, 11, (2, 3, 2, 3)), (400, 20, (0, 0, 0, 0)), (256, 16, (0, 0, 0, 0))],
)
def test_representation_layout(width, side, pad):
    assert representation_layout(width) == (side, pad)


def test_representation_layout_validates_its_parameters():
    with pytest.raises(ValueError, match="n_features"):
        representation_layout(0)
    with pytest.raises(ValueError, match="reference_side"):
        representation_layout(100, reference_side=2.5)


def test_layout_places_row_and_zero_pads():
    """Table 2: a 100-dim row becomes a 10x10 square padded by 3 zeros to 16x16."""
    rng = np.random.RandomState(0)
    module = RepresentationModule(100, 10)
    x = torch.as_tensor(rng.rand(2, 100), dtype=torch.float32)
    img = module.layout(x)
    assert img.shape == (2, 1, 16, 16)
    np.testing.assert_array_equal(img[:, 0, 3:13, 3:13].numpy(), x.reshape(2, 10, 10).numpy())
    mask = torch.ones(16, 16, dtype=torch.bool)
    mask[3:13, 3:13] = False
    assert torch.count_nonzero(img[:, 0][:, mask]) == 0


def test_layout_fills_non_square_width_with_zeros():
    module = RepresentationModule(50, 3)
    x = torch.ones(1, 50)
    img = module.layout(x)
    assert img.shape == (1, 1, 16, 16)
    assert float(img.sum()) == 50.0


@pytest.mark.parametrize("width, flat", [(100, 20), (64, 20), (400, 80)])
def test_table2_sizes(width, flat):
    """Flatten size 20 for padded 16x16 inputs (Table 2), 80 for the CelebA 20x20 input."""
    module = RepresentationModule(width, 10)
    assert module.fc.in_features == flat
    assert module.fc.out_features == 50
    assert module.conv1.out_channels == 10 and module.conv2.out_channels == 20
    out = module(torch.zeros(3, width))
    assert out.shape == (3, 10)


def test_single_logit_variant():
    module = RepresentationModule(400, 1)
    assert module(torch.zeros(4, 400)).shape == (4,)


def test_representation_module_rejects_too_small_reference():
    with pytest.raises(ValueError, match="too small for two 5x5 valid convolutions"):
        RepresentationModule(64, 2, reference_side=8)


def test_table3_sizes():
    """Table 3: 28x28 input, flatten 64*7*7 = 3136, 128-dim embedding, 10 logits."""
    module = AuditorModule(784, 10)
    assert module.embedding.in_features == 3136
    assert module.embedding.out_features == 128
    x = torch.rand(2, 784)
    assert module(x).shape == (2, 10)
    emb = module.embed(x)
    assert emb.shape == (2, 128)
    assert torch.all(emb >= 0)  # ReLU embedding


def test_auditor_module_rgb_shape():
    module = AuditorModule(3 * 16 * 16, 2, image_shape=(3, 16, 16))
    assert module(torch.rand(5, 768)).shape == (5, 2)


def test_auditor_module_bad_shapes():
    with pytest.raises(ValueError, match="not one grayscale square"):
        AuditorModule(50, 2)
    with pytest.raises(ValueError, match="holds 48 values but rows have 50"):
        AuditorModule(50, 2, image_shape=(3, 4, 4))
    with pytest.raises(ValueError, match="at least 4x4"):
        AuditorModule(9, 2)
