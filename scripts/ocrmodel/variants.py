"""The files the harness sweeps: one entry per page parameter value (docs/model-contract.md, "Variants").

The builder, the manifest and the tests all read this table, so a variant is defined once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import spec
from .graphs import nbits
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
    # The seed's four keep the defaults, so their graphs are built exactly as before.
    # "int8": per-output-channel int8 QDQ; "nbits8" / "nbits4": weight-only com.microsoft
    # MatMulNBits, symmetric blocks of NBITS_BLOCK_SIZE along K.
    linear_format: str = "int8"
    # "tied-gemm": Gemm transB=1 against the [vocabulary, hidden] embedding (the seed's);
    # "pre-transposed": the tied table stored once as [hidden, vocabulary] (int8, one scale per
    # vocabulary column) and used by a plain MatMul; "nbits": a MatMulNBits over the table's
    # blocks (its B operand is [vocabulary, hidden] blocks by definition: no Transpose either).
    head: str = "tied-gemm"
    # "nbits" head only: the bits of the tied table's blocks (the head's MatMulNBits and the
    # embedding's GatherBlockQuantized read the same tensor); 0: the linears' bits.
    head_bits: int = 0
    # True: every node of a step has a WebGPU kernel for its types (no int64 Range/Tile/
    # LessOrEqual/Squeeze, int32 indices), see graphs/decoder.py.
    gpu_only: bool = False
    # "matmul": attention written out as MatMul/Softmax; "gqa": com.microsoft GroupQueryAttention;
    # "einsum": as "matmul" with the scores, the context and RoPE's rotation as Einsum;
    # "gqa-rotary": one GroupQueryAttention per block over the packed q/k/v that also applies
    # RoPE (do_rotary=1) and writes the fixed cache's slots (fixed_kv only, graphs/decoder.py).
    attention: str = "matmul"
    # "decomposed": each RMS norm written out as Pow/ReduceMean/Add/Sqrt/Div/Mul (six dispatches:
    # onnxruntime-web 1.30 does not fuse them on WebGPU); "simplified": one
    # SimplifiedLayerNormalization node, which onnxruntime registers for CPU and WebGPU;
    # "skip-simplified": the first norm as "simplified", every later one a com.microsoft
    # SkipSimplifiedLayerNormalization that also does the residual Add before it (one node for
    # the two) and outputs the sum for the next residual.
    norm: str = "decomposed"
    # "matmul": RoPE as Mul by cos, rotate-half MatMul, Mul by sin and Add on q and k (tables
    # computed from position_ids per call); "rotary-embedding": one com.microsoft RotaryEmbedding
    # node each for q and k over constant [KV_SLOTS, 32] cos/sin caches (graphs/decoder.py).
    rope: str = "matmul"

    def layer_precision(self, layer: int) -> str:
        return "fp16" if layer in self.fp16_layers else self.linear_format

    @property
    def table_bits(self) -> int:
        """The "nbits" head's bits: head_bits, else the linears'."""
        return self.head_bits or int(self.linear_format.removeprefix("nbits"))

    @property
    def capturable(self) -> bool:
        """Every step has the same shapes (fixed KV) and runs every node on WebGPU: what
        onnxruntime-web's graph capture (capture=on) needs."""
        return self.fixed_kv and self.gpu_only

    @property
    def kv_shared_in_place(self) -> bool:
        """Under graph capture onnxruntime-web's WebGPU GroupQueryAttention refuses a past and a
        present in different buffers ("Graph capture requires past/present KV cache to share
        the same buffer"): the captured loop binds each past's buffer as its present too
        (browser/decoding/decode-capture.js)."""
        return self.fixed_kv and self.attention == "gqa-rotary"

    @property
    def uses_ms_domain(self) -> bool:
        return (
            self.linear_format.startswith("nbits")
            or self.attention in ("gqa", "gqa-rotary")
            or self.norm == "skip-simplified"
            or self.rope == "rotary-embedding"
        )


# Block size 32: the quantizer's smallest common choice; every K here (384, 1536) divides by it,
# and a smaller block keeps the int4 error of these small matrices low at a cost of one fp32
# scale per 32 weights (4.5 bits per weight in all).
INT4_BLOCK_SIZE = 32
# The decoder's MatMulNBits variants use the vision int4 tier's block for both bit widths.
NBITS_BLOCK_SIZE = INT4_BLOCK_SIZE

VISION_VARIANTS: tuple[VisionVariant, ...] = (
    VisionVariant(
        "121",
        "vision_int4.onnx",
        "int4",
        "ViT encoder, int4 MatMulNBits weights (block 32, symmetric), fp32 convolutions",
        (),
    ),
    VisionVariant(
        "242",
        "vision_fp16.onnx",
        "fp16",
        "ViT encoder computed in fp16 (fp32 pixel_values in, fp32 vision_embeds out)",
        ("shader-f16",),
    ),
)

# "Layers 1-3" (docs/model-contract.md, "Variants") counts from one: the first three decoder blocks (0, 1, 2).
FP16_MATMUL_LAYERS = (0, 1, 2)

DECODER_VARIANTS: tuple[DecoderVariant, ...] = (
    DecoderVariant(
        "baseline",
        "decoder_unified_gather_qdq_int8.onnx",
        "dequantize-whole",
        (),
        False,
        "complete INT8-QDQ unified Gather: the whole int8 embedding is dequantized, then gathered",
        (),
    ),
    DecoderVariant(
        "gather-opt",
        "decoder_gather_before_dq_int8.onnx",
        "gather-first",
        (),
        False,
        "complete INT8-QDQ Gather-before-DQ: the int8 row is gathered, then only it is dequantized",
        (),
    ),
    DecoderVariant(
        "fp16-matmul",
        "decoder_static_fp16_matmul.onnx",
        "gather-first",
        FP16_MATMUL_LAYERS,
        False,
        "layers 1-3 (the first three blocks) as static fp16 MatMul, the rest INT8-QDQ, Gather-before-DQ embedding",
        ("shader-f16",),
    ),
    DecoderVariant(
        "fixed-kv",
        "decoder_gather_dq_fixed_kv_int8.onnx",
        "gather-first",
        (),
        True,
        f"complete INT8-QDQ Gather-before-DQ with fixed {spec.KV_SLOTS}-slot KV I/O and past_length",
        (),
    ),
    DecoderVariant(
        "gpu-gather",
        "decoder_gpu_gather_int8.onnx",
        "gather-head-column",
        (),
        False,
        "INT8-QDQ with every step node on WebGPU: float32 Gather of the token's column of the "
        "dequantized pre-transposed [hidden, vocabulary] head, mask from position_ids in float, "
        "int32 indices",
        (),
        head="pre-transposed",
        gpu_only=True,
    ),
    DecoderVariant(
        "nbits-int8",
        "decoder_matmulnbits_int8.onnx",
        "gather-block-quantized",
        (),
        False,
        f"weight-only 8-bit MatMulNBits (block {INT4_BLOCK_SIZE}) for every linear and the tied head, "
        "GatherBlockQuantized embedding over the head's blocks, gpu-gather structure",
        (),
        linear_format="nbits8",
        head="nbits",
        gpu_only=True,
    ),
    DecoderVariant(
        "nbits-int4",
        "decoder_matmulnbits_int4.onnx",
        "gather-block-quantized",
        (),
        False,
        f"weight-only 4-bit MatMulNBits (block {INT4_BLOCK_SIZE}) for every linear, the tied head at 8 bits, "
        "GatherBlockQuantized embedding over the head's blocks, gpu-gather structure",
        (),
        linear_format="nbits4",
        head="nbits",
        # At 4 bits the table's error cost the held-out sets up to 7 characters; at 8 they read
        # within one of baseline (docs/model-contract.md, "MatMulNBits blocks").
        head_bits=8,
        gpu_only=True,
    ),
    DecoderVariant(
        "gqa",
        "decoder_gqa_int8.onnx",
        "gather-head-column",
        (),
        False,
        "gpu-gather with attention as com.microsoft GroupQueryAttention (past/present KV in the "
        "contract's [1, kv heads, sequence, 64] layout)",
        (),
        head="pre-transposed",
        gpu_only=True,
        attention="gqa",
    ),
    DecoderVariant(
        "fixed-kv-gpu",
        "decoder_gpu_gather_fixed_kv_int8.onnx",
        "gather-head-column",
        (),
        True,
        f"gpu-gather with fixed {spec.KV_SLOTS}-slot KV I/O: the new K/V placed by slots compared with "
        "position_ids in float, past_length unused; static step shapes, every node on WebGPU, "
        "so onnxruntime-web can capture a step (capture=on)",
        (),
        head="pre-transposed",
        gpu_only=True,
    ),
    DecoderVariant(
        "einsum-int8",
        "decoder_einsum_int8.onnx",
        "gather-head-column",
        (),
        False,
        "every linear and the pre-transposed tied head as an Einsum over int8 weights that "
        "onnxruntime casts to float32 once, when the session is created (Cast and Mul of "
        "initializers, folded), and the attention's products and RoPE's rotation as Einsum "
        "too: a plain loop per output value, gpu-gather structure",
        (),
        head="einsum",
        gpu_only=True,
        linear_format="einsum8",
        attention="einsum",
    ),
    DecoderVariant(
        "fixed-kv-fused",
        "decoder_nbits_int8_fixed_kv_fused.onnx",
        "gather-block-quantized",
        (),
        True,
        f"nbits-int8 with fixed-kv-gpu's {spec.KV_SLOTS}-slot KV I/O and each RMS norm as one "
        "SimplifiedLayerNormalization: fewer dispatches per step than fixed-kv-gpu (no per-step "
        "DequantizeLinear of the weights, one node per norm), static step shapes, every node on "
        "WebGPU, so capture=on applies",
        (),
        linear_format="nbits8",
        head="nbits",
        gpu_only=True,
        norm="simplified",
    ),
    DecoderVariant(
        "fixed-kv-ops",
        "decoder_nbits_int8_fixed_kv_ops.onnx",
        "gather-block-quantized",
        (),
        True,
        "fixed-kv-fused with onnxruntime's fused com.microsoft operators: each residual Add and the "
        "RMS norm after it as one SkipSimplifiedLayerNormalization, RoPE on q and k as one "
        f"RotaryEmbedding each over constant [{spec.KV_SLOTS}, 32] cos/sin caches; fewer dispatches per "
        "step and per prefill, static step shapes, every node on WebGPU, so capture=on applies",
        (),
        linear_format="nbits8",
        head="nbits",
        gpu_only=True,
        norm="skip-simplified",
        rope="rotary-embedding",
    ),
    DecoderVariant(
        "fixed-kv-gqa",
        "decoder_nbits_int8_fixed_kv_gqa.onnx",
        "gather-block-quantized",
        (),
        True,
        "fixed-kv-ops with each block's attention as one com.microsoft GroupQueryAttention over the "
        f"{spec.KV_SLOTS}-slot cache: packed q/k/v in, RoPE applied by the operator from constant "
        f"[{spec.KV_SLOTS}, 32] cos/sin caches (do_rotary), total_sequence_length the constant "
        f"{spec.KV_SLOTS} and the valid length carried by seqlens_k on the GPU; static step shapes, "
        "every node on WebGPU; captured with each past and its present one buffer, written in "
        "place",
        (),
        linear_format="nbits8",
        head="nbits",
        gpu_only=True,
        norm="skip-simplified",
        rope="rotary-embedding",
        attention="gqa-rotary",
    ),
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
    embedding and int8 layers (the embedding per token, also when stored pre-transposed),
    fp16-rounded for fp16 layers, MatMulNBits blocks for nbits layers and their tied table,
    norms unchanged (kept in fp32). The fused q/k/v and gate/up blocks of 32 never straddle two
    of the parts (every part's rows are whole rows), so quantising each part alone is the same."""

    def roundtrip(matrix: np.ndarray, precision: str) -> np.ndarray:
        if precision == "fp16":
            return fp16_roundtrip(matrix)
        if precision in ("int8", "einsum8"):
            return int8_roundtrip(matrix)
        return nbits.roundtrip(matrix, int(precision.removeprefix("nbits")), NBITS_BLOCK_SIZE)

    stored = dict(weights)
    table = f"nbits{variant.table_bits}" if variant.head == "nbits" else variant.linear_format
    stored["decoder.embed.weight"] = roundtrip(weights["decoder.embed.weight"], table)
    for layer in range(spec.LAYERS):
        for linear in DECODER_LINEARS:
            name = f"decoder.layers.{layer}.{linear}.weight"
            stored[name] = roundtrip(weights[name], variant.layer_precision(layer))
    return stored
