"""The trainer's first steps on the CPU, where torch is installed (the project's venv has none; the
GPU machine and a developer's torch do): real rendered samples through the data loader, the
replay ring and its photometric change, the loss on RGB pixels and two optimizer steps."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ocrmodel import spec  # noqa: E402
from train.data import AUX_CELLS, KIND_WEIGHTS, TEXT_SLOTS, kind_weights  # noqa: E402
from train.replay import ReplayRing, photometric  # noqa: E402
from train.train import OcrModel, RenderedStream, losses, train_step  # noqa: E402

FRESH = 2
REPLAYED = 2


def test_the_first_steps_train_on_rgb_samples() -> None:
    torch.manual_seed(0)
    # Half colour crops, half grey, so a batch holds both.
    weights = kind_weights({kind: 0.0 for kind in KIND_WEIGHTS} | {"colour": 0.5, "balloon": 0.5})
    loader = torch.utils.data.DataLoader(RenderedStream(None, 0, weights), batch_size=FRESH, num_workers=0)
    model = OcrModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ring = ReplayRing(8, torch.device("cpu"), torch.Generator().manual_seed(0))
    before = [p.detach().clone() for p in model.parameters()]
    for step, batch in enumerate(loader):
        if step == 2:
            break
        pixels = batch[0]
        assert pixels.shape == (FRESH, spec.IMAGE_SIZE, spec.IMAGE_SIZE, 3) and pixels.dtype == torch.uint8
        text_loss, aux_loss, trained = train_step(model, optimizer, losses, list(batch), ring, REPLAYED, 1.0)
        assert trained == FRESH + REPLAYED
        assert math.isfinite(text_loss.item()) and math.isfinite(aux_loss.item())
    moved = sum(not torch.equal(a, p.detach()) for a, p in zip(before, model.parameters(), strict=True))
    assert moved > 0.9 * len(before)


def test_the_loss_reads_each_channel_normalised_as_the_core_does() -> None:
    """A pure red image reaches the model as (1 - mean)/std in R and (0 - mean)/std in G and B."""
    seen = {}

    class Probe(torch.nn.Module):
        def forward(self, normalised):
            seen["pixels"] = normalised
            raise StopIteration

    model = OcrModel()
    model.vision = Probe()
    red = torch.zeros((1, spec.IMAGE_SIZE, spec.IMAGE_SIZE, 3), dtype=torch.uint8)
    red[..., 0] = 255
    text = torch.zeros((1, TEXT_SLOTS), dtype=torch.long)
    cells = torch.zeros((1, AUX_CELLS), dtype=torch.long)
    with pytest.raises(StopIteration):
        losses(model, red, text, text, cells, cells)
    mean, std = np.array(spec.MEAN), np.array(spec.STD)
    expected = (np.array([1.0, 0.0, 0.0]) - mean) / std
    got = seen["pixels"][0, :, 100, 100].numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_photometric_keeps_rgb_shape_and_tints_channels_apart() -> None:
    grey = torch.full((64, 8, 8, 3), 200, dtype=torch.uint8)
    first = photometric(grey, torch.Generator().manual_seed(1))
    again = photometric(grey, torch.Generator().manual_seed(1))
    assert first.shape == grey.shape and first.dtype == torch.uint8
    assert torch.equal(first, again)
    channels_differ = (first[..., 0] != first[..., 1]).flatten(1).any(1)
    assert 0 < int(channels_differ.sum()) < 64  # some samples tinted, not all
