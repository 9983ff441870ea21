"""GPTQ rounding of the int4 decoder (`nbits-int4`) over the decoder's own activations, built with
`build_models --int4-decoder-rounding gptq`. Not the default: with the default checkpoint it
cut each layer's output error over the calibration inputs to about a third of nearest
rounding's, yet read the evaluation sets no better (docs/model-contract.md, "MatMulNBits
blocks", has the table).

Round to nearest picks each 4-bit code alone. Here each MatMulNBits operand (a block's fused
q/k/v, o, fused gate/up, down; the tied head only where it is 4-bit) is rounded by gptq.round_blocks in
graphs/nbits.py's own blocks (symmetric, scale max |block| / 7), with the Hessian XᵀX of the
inputs X that operand sees while the decoder reads the calibration images: their float32
vision_embeds, then a greedy decode, prefill and every step. The inputs are those of
`nbits-int8`, whose operands are the same fused matrices at 8 bits (within 1/254 of a block's
largest weight of float32), so the Hessians are the float decoder's up to that rounding.

The result is each operand's MatMulNBits B and scales, which build_decoder stores in place of
nbits.quantize_blocks' nearest codes: the graph and its contract are unchanged. A block's scale
is fixed from the updated weights when rounding reaches the block, as in the vision tier; the
rows rounded after the first can move the block's largest value, so a block's codes need not
reach ±7 and its scale can differ from max |block| / 7 of the values it computes with (seen:
0.71-1.68 times the float weights' max |block| / 7).
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

from .. import spec
from ..decode import OnnxDecoder, greedy_loop
from ..variants import NBITS_BLOCK_SIZE, decoder_variant
from . import gptq
from .decoder import build_decoder

# The decoder whose activations are recorded: the int4 decoder's graph at 8 bits.
RECORDING_VARIANT = "nbits-int8"
Q_SCALE = np.float32(spec.HEAD_DIM**-0.5)  # folded into q's rows of the fused q/k/v operand


def operands(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The [out, in] matrices the decoder graph hands to MatMulNBits, by initializer prefix
    (graphs/decoder.py: q scaled by 1/8 and fused with k and v; gate fused with up)."""
    found = {"decoder.embed": weights["decoder.embed.weight"]}
    for layer in range(spec.LAYERS):
        p = f"decoder.layers.{layer}."
        found[p + "attn.qkv"] = np.concatenate(
            [weights[p + "attn.q.weight"] * Q_SCALE, weights[p + "attn.k.weight"], weights[p + "attn.v.weight"]]
        )
        found[p + "attn.o"] = weights[p + "attn.o.weight"]
        found[p + "mlp.gate_up"] = np.concatenate([weights[p + "mlp.gate.weight"], weights[p + "mlp.up.weight"]])
        found[p + "mlp.down"] = weights[p + "mlp.down.weight"]
    return found


def decoder_hessians(
    weights: dict[str, np.ndarray], vision_embeds: list[np.ndarray], content: set[int]
) -> dict[str, np.ndarray]:
    """Operand prefix -> XᵀX [K, K] (float64) of the inputs that operand sees over a greedy
    decode of each vision_embeds by RECORDING_VARIANT on onnxruntime CPU."""
    model = build_decoder(weights, decoder_variant(RECORDING_VARIANT))
    inputs = {}
    for node in model.graph.node:
        if node.op_type == "MatMulNBits":
            inputs[node.input[0]] = node.input[1].rsplit(".nbits", 1)[0]
    for name in inputs:
        model.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    decoder = OnnxDecoder(session, fixed_kv=False)
    sums: dict[str, np.ndarray] = {}

    def recorded(logits: np.ndarray) -> np.ndarray:
        for name, operand in inputs.items():
            values = decoder.last_outputs[name]
            rows = values.reshape(-1, values.shape[-1]).astype(np.float64)
            sums[operand] = sums.get(operand, 0.0) + rows.T @ rows
        return logits

    for embeds in vision_embeds:
        greedy_loop(
            lambda embeds=embeds: recorded(decoder.prefill(embeds)),
            lambda token, i: recorded(decoder.step(token, i)),
            spec.MAX_TOKENS,
            content,
        )
    return sums


def round_operands(
    weights: dict[str, np.ndarray], hessians: dict[str, np.ndarray]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """MatMulNBits (B, scales) of every 4-bit operand that has a Hessian, rounded by GPTQ (the
    tied table too where the int4 decoder stores it at 4 bits: variants.py, head_bits)."""
    table_at_4_bits = decoder_variant("nbits-int4").table_bits == 4
    blocks = {}
    for name, operand in operands(weights).items():
        if name in hessians and (name != "decoder.embed" or table_at_4_bits):
            codes, scales = gptq.round_blocks(operand.T, hessians[name], NBITS_BLOCK_SIZE, gptq.SYMMETRIC_INT4)
            blocks[name] = gptq.matmulnbits_tensors(codes, scales, NBITS_BLOCK_SIZE)
    return blocks


def gptq_int4_blocks(
    weights: dict[str, np.ndarray], vision_embeds: list[np.ndarray], content: set[int]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The int4 decoder's 4-bit MatMulNBits blocks (build_decoder's `blocks`), each by GPTQ."""
    return round_operands(weights, decoder_hessians(weights, vision_embeds, content))
