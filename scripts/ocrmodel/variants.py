"""The files the harness sweeps: one entry per page parameter value (docs/model-contract.md, "Variants").

The builder, the manifest and the tests all read this table, so a variant is defined once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import spec
from .quantize import fp16_roundtrip, int8_roundtrip


@dataclass(frozen=True)
class VisionVariant:
    tier: str
    file: str
    precision: str  # "int4" (MatMulNBits) or "fp16"
    description: str
    requires: tuple[str, ...]


@dataclass(frozen=True)
class DecoderVariant:
    name: str
    file: str
    # "dequantize-whole": DequantizeLinear over the whole int8 embedding, then Gather (the seed's
    # baseline); "gather-first": Gather the int8 row (and its scale), dequantize only that row.
    embedding: str
    fp16_layers: tuple[int, ...]  # decoder blocks whose MatMuls are static fp16; the rest int8
    fixed_kv: bool
    description: str
    requires: tuple[str, ...]

    def layer_precision(self, layer: int) -> str:
        return "fp16" if layer in self.fp16_layers else "int8"


# Block size 32: the quantizer's smallest common choice; every K here (384, 1536) divides by it,
# and a smaller block keeps the int4 error of these small matrices low at a cost of one fp32
# scale per 32 weights (4.5 bits per weight in all).
INT4_BLOCK_SIZE = 32

VISION_VARIANTS: tuple[VisionVariant, ...] = (
    VisionVariant("121", "vision_int4.onnx", "int4",
                  "ViT encoder, int4 MatMulNBits weights (block 32, symmetric), fp32 convolutions", ()),
    VisionVariant("242", "vision_fp16.onnx", "fp16",
                  "ViT encoder computed in fp16 (fp32 pixel_values in, fp32 vision_embeds out)", ("shader-f16",)),
)

# "Layers 1-3" (docs/model-contract.md, "Variants") counts from one: the first three decoder blocks (0, 1, 2).
FP16_MATMUL_LAYERS = (0, 1, 2)

DECODER_VARIANTS: tuple[DecoderVariant, ...] = (
    DecoderVariant("baseline", "decoder_unified_gather_qdq_int8.onnx", "dequantize-whole", (), False,
                   "complete INT8-QDQ unified Gather: the whole int8 embedding is dequantized, then gathered", ()),
    DecoderVariant("gather-opt", "decoder_gather_before_dq_int8.onnx", "gather-first", (), False,
                   "complete INT8-QDQ Gather-before-DQ: the int8 row is gathered, then only it is dequantized", ()),
    DecoderVariant("fp16-matmul", "decoder_static_fp16_matmul.onnx", "gather-first", FP16_MATMUL_LAYERS, False,
                   "layers 1-3 (the first three blocks) as static fp16 MatMul, the rest INT8-QDQ, "
                   "Gather-before-DQ embedding", ("shader-f16",)),
    DecoderVariant("fixed-kv", "decoder_gather_dq_fixed_kv_int8.onnx", "gather-first", (), True,
                   f"complete INT8-QDQ Gather-before-DQ with fixed {spec.KV_SLOTS}-slot KV I/O and past_length", ()),
)

DECODER_LINEARS = ("attn.q", "attn.k", "attn.v", "attn.o", "mlp.gate", "mlp.up", "mlp.down")


def vision_variant(tier: str) -> VisionVariant:
    for variant in VISION_VARIANTS:
        if variant.tier == tier:
            return variant
    raise KeyError(f"unknown vision tier {tier!r}; known: {[v.tier for v in VISION_VARIANTS]}")


def decoder_variant(name: str) -> DecoderVariant:
    for variant in DECODER_VARIANTS:
        if variant.name == name:
            return variant
    raise KeyError(f"unknown decoder {name!r}; known: {[v.name for v in DECODER_VARIANTS]}")


def stored_decoder_weights(weights: dict[str, np.ndarray], variant: DecoderVariant) -> dict[str, np.ndarray]:
    """The float32 values the variant's file computes with: int8 per-output-channel for the
    embedding and int8 layers, fp16-rounded for fp16 layers, norms unchanged (kept in fp32)."""
    stored = dict(weights)
    stored["decoder.embed.weight"] = int8_roundtrip(weights["decoder.embed.weight"])
    for layer in range(spec.LAYERS):
        roundtrip = fp16_roundtrip if variant.layer_precision(layer) == "fp16" else int8_roundtrip
        for linear in DECODER_LINEARS:
            name = f"decoder.layers.{layer}.{linear}.weight"
            stored[name] = roundtrip(weights[name])
    return stored
