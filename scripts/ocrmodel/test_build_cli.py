"""The builder's command line refuses contradictory or missing weights sources, synthetic
weights are deterministic, and int8 storage keeps a trained checkpoint's int8 values."""

from __future__ import annotations

import numpy as np
import pytest

from ocrmodel import build_models, spec
from ocrmodel.quantize import int8_per_row
from ocrmodel.weights import synthetic_weights


def test_checkpoint_and_seed_together_are_refused(tmp_path, capsys):
    checkpoint = tmp_path / "weights.npz"
    checkpoint.write_bytes(b"")
    with pytest.raises(SystemExit):
        build_models.main(["--checkpoint", str(checkpoint), "--synthetic-seed", "1", "--out", str(tmp_path)])
    assert "exclude each other" in capsys.readouterr().err


def test_missing_checkpoint_is_named(tmp_path, capsys):
    missing = tmp_path / "nowhere.npz"
    with pytest.raises(SystemExit):
        build_models.main(["--checkpoint", str(missing), "--out", str(tmp_path)])
    assert str(missing) in capsys.readouterr().err


def test_synthetic_weights_are_deterministic_per_seed(build):
    first, again = synthetic_weights(3), synthetic_weights(3)
    other = build.weights  # seed 0, or a trained checkpoint
    assert set(first) == set(spec.parameter_shapes())
    for name, value in first.items():
        assert value.dtype == np.float32 and value.shape == spec.parameter_shapes()[name]
        np.testing.assert_array_equal(value, again[name])
    assert not np.array_equal(first["decoder.embed.weight"], other["decoder.embed.weight"])


def test_int8_storage_keeps_checkpoint_values():
    """A checkpoint stores int8 * per-row scale (spec.save_checkpoint); quantizing what
    load_checkpoint returns gives back the same int8 values, so a trained model's decoder
    files carry exactly the trained int8 weights."""
    matrix = np.random.default_rng(0).standard_normal((spec.MLP, spec.HIDDEN)).astype(np.float32)
    stored, scale = int8_per_row(matrix)
    loaded = stored.astype(np.float32) * scale[:, None]
    again, scale_again = int8_per_row(loaded)
    np.testing.assert_array_equal(again, stored)
    np.testing.assert_allclose(scale_again, scale, rtol=1e-6)
