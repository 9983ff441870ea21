"""Weight-only block quantisation in com.microsoft MatMulNBits' layout, for the decoder's nbits
variants (the vision int4 tier uses onnxruntime's own quantizer on a plain MatMul graph).

Symmetric, no zero-point input: each block of `block_size` weights along K gets the float32
scale max |block| / (2^(bits-1) - 1) and codes -(2^(bits-1) - 1)..(2^(bits-1) - 1), stored
unsigned as code + 2^(bits-1), the zero point both MatMulNBits and GatherBlockQuantized assume
when none is given (onnxruntime docs/ContribOperators.md). Codes are packed along K, low bits
first, which is also GatherBlockQuantized's packing of uint8 data, so the tied table's blocks
serve the head (MatMulNBits) and the embedding lookup (GatherBlockQuantized) from one tensor.

quantize_blocks picks each weight's nearest code, the builder's rounding of every nbits decoder.
`build_models --int4-decoder-rounding gptq` rounds the 4-bit one's blocks by GPTQ instead
(graphs/decoder_gptq.py); measured, that reads no better (docs/model-contract.md).
"""

from __future__ import annotations

import numpy as np


def quantize_blocks(weight_out_in: np.ndarray, bits: int, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """weight [N, K] (Linear layout [out, in]) -> (B uint8 [N, K / block_size, block_size * bits / 8],
    scales float32 [N, K / block_size])."""
    if bits not in (4, 8):
        raise ValueError(f"{bits}-bit blocks: only 4 and 8 are built")
    weight = np.asarray(weight_out_in, dtype=np.float32)
    n, k = weight.shape
    if k % block_size:
        raise ValueError(f"K = {k} is not a multiple of the block size {block_size}")
    largest = (1 << (bits - 1)) - 1
    blocks = weight.reshape(n, k // block_size, block_size)
    scales = np.abs(blocks).max(axis=-1) / np.float32(largest)
    scales[scales == 0] = 1.0
    codes = np.clip(np.rint(blocks / scales[..., None]), -largest, largest).astype(np.int16)
    return pack_codes(codes, bits), scales.astype(np.float32)


def pack_codes(codes: np.ndarray, bits: int) -> np.ndarray:
    """Signed codes [N, K / block_size, block_size] -> MatMulNBits' B: stored as code + 2^(bits-1),
    two 4-bit codes to a byte, low bits first."""
    stored = (np.asarray(codes, dtype=np.int16) + (1 << (bits - 1))).astype(np.uint8)
    if bits == 4:
        stored = stored[..., 0::2] | (stored[..., 1::2] << 4)
    return np.ascontiguousarray(stored)


def roundtrip(weight_out_in: np.ndarray, bits: int, block_size: int) -> np.ndarray:
    """The float32 values a quantize_blocks weight computes with, [N, K]."""
    weight = np.asarray(weight_out_in, dtype=np.float32)
    n, k = weight.shape
    largest = (1 << (bits - 1)) - 1
    blocks = weight.reshape(n, k // block_size, block_size)
    scales = np.abs(blocks).max(axis=-1) / np.float32(largest)
    scales[scales == 0] = 1.0
    codes = np.clip(np.rint(blocks / scales[..., None]), -largest, largest)
    return (codes.astype(np.float32) * scales[..., None]).reshape(n, k)
