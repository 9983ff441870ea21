"""GPTQ rounding (Frantar et al., 2022, "GPTQ: Accurate Post-Training Quantization for Generative
Pre-trained Transformers") of 4-bit MatMulNBits blocks, in either of the repository's two rules
(BlockRule): the vision int4 tier's, onnxruntime's symmetric quantizer (per block of `block_size`
weights along K the value of largest magnitude maps to code -8, scale = that value / -8, codes
-8..7 around the implicit zero point 8), and the int4 decoder's, graphs/nbits.py's (scale
max |block| / 7, codes -7..7; graphs/decoder_gptq.py gathers its Hessians).

Plain rounding picks each code alone. GPTQ rounds the K rows of a [K, N] weight one at a time and
moves each row's rounding error onto the rows not yet rounded, weighted by the inverse Hessian
XᵀX of the inputs X the layer sees, so the layer's output over those inputs changes least. A
block's scale is fixed from the updated rows when rounding reaches the block.

onnxruntime ships GPTQ too, but its implementation needs torch, which the builder does not
install. On the default checkpoint this rounding halves the int4 vision's error (relative error
of vision_embeds 0.095 -> 0.054 on 30 evaluation images; docs/model-contract.md, "The int4 vision
tier's rounding").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

from .nbits import pack_codes

# Dampening added to the Hessian's diagonal, as a share of its mean (the paper's 1 %).
DAMPING = 0.01


@dataclass(frozen=True)
class BlockRule:
    """How a block's scale and codes are chosen, the two conventions of the repository's files."""

    code_min: int
    code_max: int
    # True: the block's largest-magnitude value maps to code_min (scale = that value / code_min,
    # signed); False: scale = max |block| / code_max, codes symmetric around zero.
    largest_at_code_min: bool

    def scales(self, rows: np.ndarray) -> np.ndarray:
        """rows [block, N] -> the scale of each column's block [N]."""
        if self.largest_at_code_min:
            largest = rows[np.abs(rows).argmax(axis=0), np.arange(rows.shape[1])]
            scales = largest / np.float64(self.code_min)
        else:
            scales = np.abs(rows).max(axis=0) / np.float64(self.code_max)
        scales[scales == 0] = 1.0
        return scales


# onnxruntime's symmetric MatMulNBits quantizer (the vision int4 tier): codes -8..7.
ORT_INT4 = BlockRule(-8, 7, largest_at_code_min=True)
# graphs/nbits.py's blocks (the decoder's nbits-int4): codes -7..7, scale max |block| / 7.
SYMMETRIC_INT4 = BlockRule(-7, 7, largest_at_code_min=False)


def round_blocks(
    weight_kn: np.ndarray, hessian: np.ndarray | None, block_size: int, rule: BlockRule = ORT_INT4
) -> tuple[np.ndarray, np.ndarray]:
    """weight [K, N] (MatMul's B) -> (codes int8 [K, N], scales float32 [K / block_size, N]).
    With `hessian` [K, K] (XᵀX of the layer's inputs) GPTQ; with None plain rounding.

    Rows are rounded one at a time inside a block; the block's error reaches the rows after it
    in one matrix product (the paper's lazy batch update: the same arithmetic, in BLAS-sized
    pieces, which keeps the decoder's 14630-column head to seconds)."""
    weight = np.array(weight_kn, dtype=np.float64)
    k, n = weight.shape
    if k % block_size:
        raise ValueError(f"K = {k} is not a multiple of the block size {block_size}")
    if hessian is None:
        inverse_factor = np.eye(k)
    else:
        h = np.array(hessian, dtype=np.float64)
        unused = np.diag(h) == 0  # inputs that never vary: any code serves, so round them alone
        h[unused, unused] = 1.0
        h += DAMPING * np.mean(np.diag(h)) * np.eye(k)
        # Upper Cholesky factor of H⁻¹: row i holds how row i's error spreads to the rows after it.
        inverse_factor = np.linalg.cholesky(np.linalg.inv(h)).T
    codes = np.zeros((k, n), dtype=np.int8)
    scales = np.zeros((k // block_size, n))
    for block, start in enumerate(range(0, k, block_size)):
        end = start + block_size
        scales[block] = rule.scales(weight[start:end])
        errors = np.zeros((block_size, n))
        for row in range(start, end):
            code = np.clip(np.rint(weight[row] / scales[block]), rule.code_min, rule.code_max)
            codes[row] = code
            errors[row - start] = (weight[row] - code * scales[block]) / inverse_factor[row, row]
            weight[row + 1 : end] -= np.outer(inverse_factor[row, row + 1 : end], errors[row - start])
        weight[end:] -= inverse_factor[start:end, end:].T @ errors
    return codes, scales.astype(np.float32)


def matmulnbits_tensors(codes_kn: np.ndarray, scales: np.ndarray, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """round_blocks' result in MatMulNBits' layout: B uint8 [N, K / block_size, block_size / 2],
    scales float32 [N, K / block_size]."""
    k, n = codes_kn.shape
    blocks = codes_kn.T.reshape(n, k // block_size, block_size)
    return pack_codes(blocks, 4), np.ascontiguousarray(scales.T, dtype=np.float32)


def input_hessians(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """For each MatMul whose B is an initializer: B's name -> XᵀX [K, K] of its input A over every
    row of every feed (onnxruntime CPU, float64 sums)."""
    constants = {init.name for init in model.graph.initializer}
    matmuls = [
        (node.input[0], node.input[1])
        for node in model.graph.node
        if node.op_type == "MatMul" and node.input[1] in constants
    ]
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known_outputs = {output.name for output in probe.graph.output}
    inputs = list(dict.fromkeys(a for a, _ in matmuls))
    for name in inputs:
        if name not in known_outputs:
            probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
    sums: dict[str, np.ndarray] = {}
    for feed in feeds:
        for name, values in zip(inputs, session.run(inputs, feed), strict=True):
            rows = values.reshape(-1, values.shape[-1]).astype(np.float64)
            sums[name] = sums.get(name, 0.0) + rows.T @ rows
    return {weight: sums[a] for a, weight in matmuls}
