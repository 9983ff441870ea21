"""Reuse of rendered samples on the GPU, so that the renderer does not set the step rate.

On an H200 the model trains about 12.7 steps/s of batch 256 while 15 rendering workers make
about 1,500 samples/s (5.9 steps/s). Each step therefore takes part of its batch fresh from
the workers and the rest from a ring of recent samples kept on the GPU, those drawn again with
a photometric change (contrast, brightness, a tint, noise, now and then inverted) so that a
sample seen twice is not seen identically. Labels stay as rendered: nothing here moves a character.

The ring holds RGB uint8 pixels [capacity, 224, 224, 3], 150,528 bytes a sample: the default
16,384 samples take 2.47 GB (2.30 GiB) of GPU memory (0.82 GB when the pixels were one grey
plane), with the other four tensors 16,384 × 3,664 bytes (60 MB) more.
"""

from __future__ import annotations

import torch

TINT = 20.0  # largest shift of one channel, levels


class ReplayRing:
    """The last `capacity` fresh samples, as the five training tensors, on one device."""

    def __init__(self, capacity: int, device: torch.device, generator: torch.Generator):
        self.capacity = capacity
        self.device = device
        self.generator = generator
        self.slots: list[torch.Tensor] | None = None
        self.filled = 0
        self.next = 0

    def add(self, batch: list[torch.Tensor]) -> None:
        if self.slots is None:
            self.slots = [torch.empty((self.capacity, *t.shape[1:]), dtype=t.dtype, device=self.device) for t in batch]
        count = batch[0].shape[0]
        where = (torch.arange(count, device=self.device) + self.next) % self.capacity
        for slot, tensor in zip(self.slots, batch, strict=True):
            slot[where] = tensor
        self.next = (self.next + count) % self.capacity
        self.filled = min(self.capacity, self.filled + count)

    def draw(self, count: int) -> list[torch.Tensor]:
        """`count` samples chosen uniformly (with replacement) among those held, pixels changed."""
        if self.slots is None:
            raise ValueError("the ring is empty: add a batch before drawing from it")
        index = torch.randint(self.filled, (count,), device=self.device, generator=self.generator)
        pixels, *rest = (slot[index] for slot in self.slots)
        return [photometric(pixels, self.generator), *rest]


def photometric(pixels: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Per sample of RGB pixels [N, H, W, 3]: contrast 0.6-1.2 about mid-grey, brightness ±30, on
    half of them a tint (each channel shifted by up to ±TINT, as paper and scans differ in
    colour), Gaussian noise of σ up to 10 (one field for the three channels) on half of them, and
    a tenth inverted (light text on dark, a style of its own)."""
    count = pixels.shape[0]
    per_sample = (count, *([1] * (pixels.ndim - 1)))
    per_channel = (count, *([1] * (pixels.ndim - 2)), pixels.shape[-1])

    def uniform(low: float, high: float, shape: tuple[int, ...] = per_sample) -> torch.Tensor:
        return torch.rand(shape, device=pixels.device, generator=generator) * (high - low) + low

    values = pixels.float()
    values = (values - 128.0) * uniform(0.6, 1.2) + 128.0 + uniform(-30.0, 30.0)
    values = values + uniform(-TINT, TINT, per_channel) * (uniform(0.0, 1.0) < 0.5)
    sigma = uniform(0.0, 10.0) * (uniform(0.0, 1.0) < 0.5)
    field = (*pixels.shape[:-1], 1)
    values = values + sigma * torch.randn(field, device=pixels.device, generator=generator)
    inverted = uniform(0.0, 1.0) < 0.1
    values = torch.where(inverted, 255.0 - values, values)
    return values.round().clamp(0, 255).to(pixels.dtype)
