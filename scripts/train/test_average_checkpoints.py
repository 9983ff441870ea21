"""Averaging checkpoints: the mean of the weights as the harness reads them, stored in the spec's format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ocrmodel import spec
from train.average_checkpoints import average

COMMITTED = Path(__file__).resolve().parents[2] / "models" / "checkpoint" / "ocr-bench-default.npz"


def test_the_mean_of_two_checkpoints_is_stored_within_one_int8_step(tmp_path: Path) -> None:
    weights = spec.load_checkpoint(COMMITTED)
    tripled = tmp_path / "tripled.npz"
    spec.save_checkpoint({name: 3 * value for name, value in weights.items()}, tripled)
    mean = average([COMMITTED, tripled])
    for name, value in spec.load_checkpoint(tripled).items():
        assert np.allclose(mean[name], (weights[name] + value) / 2, rtol=1e-6, atol=1e-7), name
    out = tmp_path / "mean.npz"
    spec.save_checkpoint(mean, out)
    stored = spec.load_checkpoint(out)
    for name, value in mean.items():
        if value.ndim >= 2:  # int8 rows: off by at most half a step of the row's scale
            step = np.abs(value.reshape(value.shape[0], -1)).max(axis=1) / 127
            error = np.abs(stored[name] - value).reshape(value.shape[0], -1).max(axis=1)
            assert (error <= step / 2 + 1e-7).all(), name
        else:  # float16 vectors
            assert np.allclose(stored[name], value, rtol=1e-3, atol=1e-6), name
        # 2w is w's int8 code with the scale doubled: the mean of w and 3w reads as 2w
        assert np.allclose(stored[name], 2 * weights[name], rtol=1e-3, atol=1e-6), name


def test_a_single_checkpoint_is_refused() -> None:
    with pytest.raises(ValueError, match="at least two checkpoints, got 1"):
        average([COMMITTED])


def test_a_weighted_mean_is_a_point_on_the_line_between_two_checkpoints(tmp_path: Path) -> None:
    weights = spec.load_checkpoint(COMMITTED)
    tripled = tmp_path / "tripled.npz"
    spec.save_checkpoint({name: 3 * value for name, value in weights.items()}, tripled)
    blend = average([COMMITTED, tripled], [0.75, 0.25])
    for name, value in spec.load_checkpoint(tripled).items():
        assert np.allclose(blend[name], 0.75 * weights[name] + 0.25 * value, rtol=1e-6, atol=1e-7), name


@pytest.mark.parametrize(
    ("weights", "refusal"),
    [([0.5], "1 weights for 2 checkpoints"), ([0.7, 0.7], "adding to 1"), ([1.5, -0.5], "each 0 or more")],
)
def test_weights_that_are_no_mean_are_refused(weights: list[float], refusal: str) -> None:
    with pytest.raises(ValueError, match=refusal):
        average([COMMITTED, COMMITTED], weights)
