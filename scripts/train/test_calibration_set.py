"""The committed calibration images (models/calibration/vision-pixels.npz) are what
calibration_set.py draws: training samples at the model's input size, reproducible from the seed."""

from __future__ import annotations

import numpy as np

from ocrmodel import spec
from ocrmodel.build_models import CALIBRATION, calibration_feeds
from train.calibration_set import COUNT, calibration_pixels


def test_the_committed_images_are_the_writers():
    with np.load(CALIBRATION) as stored:
        pixels = stored["pixels"]
    assert pixels.shape == (COUNT, 224, 224) and pixels.dtype == np.uint8
    np.testing.assert_array_equal(calibration_pixels(3), pixels[:3])
    assert len({image.tobytes() for image in pixels}) == COUNT  # no sample twice


def test_the_builder_feeds_them_normalised():
    feeds = calibration_feeds()
    assert len(feeds) == COUNT
    first = feeds[0]["pixel_values"]
    assert first.shape == (1, 3, 224, 224) and first.dtype == np.float32
    with np.load(CALIBRATION) as stored:
        white = stored["pixels"][0] == 255
    # A white pixel is (1 - mean) / std in each channel (float32 arithmetic).
    expected = (1 - np.array(spec.MEAN)) / np.array(spec.STD)
    np.testing.assert_allclose(first[0, :, white], np.broadcast_to(expected, (int(white.sum()), 3)), rtol=1e-5)
