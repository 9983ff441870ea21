"""Weight storage formats of the decoder variants, shared by the builder and the reference so
that both compute with exactly the values a file stores."""

from __future__ import annotations

import numpy as np


def int8_per_row(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 with one float32 scale per row (axis 0), round to nearest: the same rule
    as spec.save_checkpoint, so a trained checkpoint's int8 values come back unchanged."""
    rows = np.asarray(matrix, dtype=np.float32)
    scale = np.abs(rows).max(axis=1) / np.float32(127.0)
    scale[scale == 0] = 1.0
    quantized = np.clip(np.rint(rows / scale[:, None]), -127, 127).astype(np.int8)
    return quantized, scale.astype(np.float32)


def int8_roundtrip(matrix: np.ndarray) -> np.ndarray:
    """The float32 values a per-row int8 tensor dequantizes to (what DequantizeLinear yields)."""
    quantized, scale = int8_per_row(matrix)
    return quantized.astype(np.float32) * scale[:, None]


def fp16_roundtrip(matrix: np.ndarray) -> np.ndarray:
    return np.asarray(matrix, dtype=np.float32).astype(np.float16).astype(np.float32)
