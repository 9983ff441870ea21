"""The evaluation preprocessing uses the model's resize (not a resize of its own)."""

from __future__ import annotations

import numpy as np
from PIL import Image

from ocrmodel import spec
from ocrmodel.resize import resize_for_model
from train.scoring import preprocess


def test_preprocess_composites_resizes_and_normalises(tmp_path) -> None:
    rng = np.random.default_rng(3)
    rgba = rng.integers(0, 256, (768, 1024, 4), dtype=np.uint8)
    path = tmp_path / "page.png"
    Image.fromarray(rgba, "RGBA").save(path)
    over_white = Image.alpha_composite(Image.new("RGBA", (1024, 768), "white"), Image.open(path)).convert("RGB")
    expected = (
        np.asarray(resize_for_model(over_white), np.float32) / 255.0 - np.array(spec.MEAN, np.float32)
    ) / np.array(spec.STD, np.float32)
    tensor = preprocess(path)
    assert tensor.shape == (1, 3, spec.IMAGE_SIZE, spec.IMAGE_SIZE) and tensor.dtype == np.float32
    assert np.array_equal(tensor[0], expected.transpose(2, 0, 1))
    plain = (
        np.asarray(over_white.resize((spec.IMAGE_SIZE, spec.IMAGE_SIZE), Image.LANCZOS), np.float32) / 255.0
        - np.array(spec.MEAN, np.float32)
    ) / np.array(spec.STD, np.float32)
    assert not np.array_equal(tensor[0], plain.transpose(2, 0, 1))
