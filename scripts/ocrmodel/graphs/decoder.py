"""The unified prefill/decode decoder graph (docs/model-contract.md) for one DecoderVariant.

Choices made for speed on WebGPU (the seed's naive graph spent 2.5 s of a 3.4 s SwiftShader
decode step in MatMul, 0.8 s in DequantizeLinear and 1.3 s in the output projection):
- q, k, v share one MatMul and gate, up share one: fewer weight dequantizations and dispatches;
- the attention scale 1/8 is folded into the q weights (a power of two, so exact);
- grouped-query attention reshapes the 4 query heads of a KV head into rows of one MatMul, so
  K and V are never repeated;
- the tied head is one Gemm with transB=1 against the dequantized embedding, which baseline
  also feeds to its Gather: no Transpose of the 14630 x 512 table per step;
- only the last position goes through the final norm and the head.
"""

from __future__ import annotations

import numpy as np
import onnx

from .. import spec
from ..quantize import int8_per_row
from ..variants import DecoderVariant
from .builder import FLOAT, FLOAT16, INT32, INT64, GraphBuilder

MASKED_SCORE = -1e9
QUERY_GROUP = spec.HEADS // spec.KV_HEADS


def _rotate_half_matrix() -> np.ndarray:
    """R with x @ R == cat(-x[32:], x[:32]): one MatMul instead of Slice, Slice, Neg, Concat."""
    half = spec.HEAD_DIM // 2
    rotation = np.zeros((spec.HEAD_DIM, spec.HEAD_DIM), dtype=np.float32)
    for i in range(half):
        rotation[half + i, i] = -1.0
        rotation[i, half + i] = 1.0
    return rotation


class _DecoderGraph:
    def __init__(self, weights: dict[str, np.ndarray], variant: DecoderVariant) -> None:
        self.w = weights
        self.variant = variant
        self.b = GraphBuilder(f"decoder_{variant.name.replace('-', '_')}")

    def linear(self, x: str, weight_out_in: np.ndarray, name: str, precision: str) -> str:
        b = self.b
        if precision == "int8":
            quantized, scale = int8_per_row(weight_out_in)
            weight = b.op("DequantizeLinear", [b.initializer(name + ".int8", quantized.T),
                                                b.initializer(name + ".scale", scale)], hint=name + ".dq", axis=1)
            return b.op("MatMul", [x, weight], hint=name)
        if precision == "fp16":
            half = b.op("Cast", [x], hint=name + ".in16", to=FLOAT16)
            product = b.op("MatMul", [half, b.initializer(name + ".fp16", weight_out_in.T.astype(np.float16))],
                           hint=name)
            return b.op("Cast", [product], hint=name + ".out32", to=FLOAT)
        raise ValueError(f"{name}: unknown precision {precision!r}")

    def rms_norm(self, x: str, weight_name: str) -> str:
        # The Pow/ReduceMean/Add/Sqrt/Div/Mul chain that onnxruntime fuses into
        # SimplifiedLayerNormalization at session creation.
        b = self.b
        square = b.op("Pow", [x, b.const(2.0, np.float32)], hint="rms.sq")
        mean = b.op("ReduceMean", [square], hint="rms.mean", axes=[-1], keepdims=1)
        root = b.op("Sqrt", [b.op("Add", [mean, b.const(spec.RMS_NORM_EPS, np.float32)], hint="rms.eps")],
                    hint="rms.sqrt")
        normed = b.op("Div", [x, root], hint="rms.div")
        return b.op("Mul", [normed, b.initializer(weight_name, self.w[weight_name])], hint="rms.scale")

    def rope(self, x: str, cos: str, sin: str, rotation: str) -> str:
        b = self.b
        rotated = b.op("MatMul", [x, rotation], hint="rope.rot")
        return b.op("Add", [b.op("Mul", [x, cos], hint="rope.cos"), b.op("Mul", [rotated, sin], hint="rope.sin")],
                    hint="rope")

    def build(self) -> onnx.ModelProto:
        b, w, variant = self.b, self.w, self.variant
        fixed = variant.fixed_kv
        past_dim: int | str = spec.KV_SLOTS if fixed else "past_sequence"
        present_dim: int | str = spec.KV_SLOTS if fixed else "total_sequence"

        vision = b.input("vision_embeds", FLOAT, [1, "vision_tokens", spec.HIDDEN])
        token_ids = b.input("token_ids", INT32, [1, 1])
        position_ids = b.input("position_ids", INT32, [1, "sequence"])
        pasts = []
        for layer in range(spec.LAYERS):
            pasts.append((b.input(f"past_k{layer}", FLOAT, [1, spec.KV_HEADS, past_dim, spec.HEAD_DIM]),
                          b.input(f"past_v{layer}", FLOAT, [1, spec.KV_HEADS, past_dim, spec.HEAD_DIM])))
        past_length = b.input("past_length", INT64, [1]) if fixed else None

        # Embedding: int8 rows with one scale per token; the tied head needs the whole table.
        embed_int8, embed_scale = int8_per_row(w["decoder.embed.weight"])
        table_int8 = b.initializer("decoder.embed.int8", embed_int8)
        table_scale = b.initializer("decoder.embed.scale", embed_scale)
        table = b.op("DequantizeLinear", [table_int8, table_scale], hint="embed.dq", axis=0)
        if variant.embedding == "dequantize-whole":
            token = b.op("Gather", [table, token_ids], hint="embed.gather", axis=0)
        elif variant.embedding == "gather-first":
            rows = b.op("Gather", [table_int8, token_ids], hint="embed.gather_int8", axis=0)
            row_scale = b.op("Unsqueeze", [b.op("Gather", [table_scale, token_ids], hint="embed.gather_scale",
                                                axis=0), b.const([-1])], hint="embed.scale")
            unscaled = b.op("DequantizeLinear", [rows, b.const(1.0, np.float32)], hint="embed.row_dq")
            token = b.op("Mul", [unscaled, row_scale], hint="embed.row")
        else:
            raise ValueError(f"unknown embedding mode {variant.embedding!r}")
        x = b.op("Concat", [vision, token], hint="sequence", axis=1)

        # RoPE tables for this call's positions, [1, S, 1, 64], shared by every layer.
        frequencies = np.concatenate([spec.rope_inverse_frequencies()] * 2)
        angles = b.op("Mul", [b.op("Unsqueeze", [b.op("Cast", [position_ids], hint="pos.f32", to=FLOAT),
                                                  b.const([2])], hint="pos.col"),
                              b.const(frequencies, np.float32)], hint="rope.angles")
        cos = b.op("Unsqueeze", [b.op("Cos", [angles], hint="rope.cos_t"), b.const([2])], hint="rope.cos4")
        sin = b.op("Unsqueeze", [b.op("Sin", [angles], hint="rope.sin_t"), b.const([2])], hint="rope.sin4")
        rotation = b.initializer("rope.rotate_half", _rotate_half_matrix())

        # Cache slot bookkeeping: new positions go to slots [P, P+S); query i sees slots <= P+i.
        new_count = b.op("Shape", [x], hint="seq.len", start=1, end=2)
        if fixed:
            start = past_length
            total = b.const([spec.KV_SLOTS])
        else:
            start = b.op("Shape", [pasts[0][0]], hint="past.len", start=2, end=3)
            total = b.op("Add", [start, new_count], hint="total.len")
        scalar = lambda t, hint: b.op("Squeeze", [t, b.const([0])], hint=hint)  # noqa: E731
        start_s, new_s, total_s = scalar(start, "p0"), scalar(new_count, "s0"), scalar(total, "t0")
        query_slots = b.op("Range", [start_s, b.op("Add", [start_s, new_s], hint="p_end"), b.const(1)],
                           hint="query.slots")
        key_slots = b.op("Range", [b.const(0), total_s, b.const(1)], hint="key.slots")
        # Rows of the grouped scores are (query head within group, position): tile the slots 4x.
        grouped_query_slots = b.op("Tile", [query_slots, b.const([QUERY_GROUP])], hint="query.slots4")
        allowed = b.op("LessOrEqual", [b.op("Unsqueeze", [key_slots, b.const([0])], hint="key.row"),
                                       b.op("Unsqueeze", [grouped_query_slots, b.const([1])], hint="query.col")],
                       hint="mask.allowed")
        if fixed:
            # placement [T, S] is 1 where slot j receives new position i: a MatMul writes the new
            # K/V into their slots exactly (one 1.0 per row), and Where keeps every other slot.
            placement = b.op("Cast", [b.op("Equal", [b.op("Unsqueeze", [key_slots, b.const([1])], hint="key.col"),
                                                     b.op("Unsqueeze", [query_slots, b.const([0])], hint="q.row")],
                                            hint="placement.eq")], hint="placement", to=FLOAT)
            end_s = b.op("Add", [start, new_count], hint="new.end")
            keep = b.op("Unsqueeze", [b.op("Or", [b.op("Less", [key_slots, start], hint="keep.before"),
                                                   b.op("GreaterOrEqual", [key_slots, end_s], hint="keep.after")],
                                           hint="keep.or"), b.const([1])], hint="keep")

        masked = b.const(MASKED_SCORE, np.float32)
        presents = []
        for layer in range(spec.LAYERS):
            p = f"decoder.layers.{layer}."
            precision = variant.layer_precision(layer)
            h = self.rms_norm(x, p + "attn_norm.weight")
            qkv_weight = np.concatenate([w[p + "attn.q.weight"] * np.float32(spec.HEAD_DIM ** -0.5),
                                         w[p + "attn.k.weight"], w[p + "attn.v.weight"]], axis=0)
            qkv = self.linear(h, qkv_weight, p + "attn.qkv", precision)
            q, k, v = b.op("Split", [qkv, b.const([spec.HEADS * spec.HEAD_DIM, spec.KV_HEADS * spec.HEAD_DIM,
                                                  spec.KV_HEADS * spec.HEAD_DIM])], hint=f"l{layer}.split",
                           outputs=3, axis=-1)
            q = self.rope(b.op("Reshape", [q, b.const([0, 0, spec.HEADS, spec.HEAD_DIM])], hint=f"l{layer}.q4"),
                          cos, sin, rotation)
            q = b.op("Reshape", [b.op("Transpose", [q], hint=f"l{layer}.qT", perm=[0, 2, 1, 3]),
                                 b.const([0, spec.KV_HEADS, -1, spec.HEAD_DIM])], hint=f"l{layer}.qgroups")
            k = self.rope(b.op("Reshape", [k, b.const([0, 0, spec.KV_HEADS, spec.HEAD_DIM])], hint=f"l{layer}.k4"),
                          cos, sin, rotation)
            k = b.op("Transpose", [k], hint=f"l{layer}.kT", perm=[0, 2, 1, 3])
            v = b.op("Transpose", [b.op("Reshape", [v, b.const([0, 0, spec.KV_HEADS, spec.HEAD_DIM])],
                                        hint=f"l{layer}.v4")], hint=f"l{layer}.vT", perm=[0, 2, 1, 3])
            past_k, past_v = pasts[layer]
            if fixed:
                present_k = b.op("Where", [keep, past_k, b.op("MatMul", [placement, k], hint=f"l{layer}.placek")],
                                 outputs=[f"present_k{layer}"])
                present_v = b.op("Where", [keep, past_v, b.op("MatMul", [placement, v], hint=f"l{layer}.placev")],
                                 outputs=[f"present_v{layer}"])
            else:
                present_k = b.op("Concat", [past_k, k], outputs=[f"present_k{layer}"], axis=2)
                present_v = b.op("Concat", [past_v, v], outputs=[f"present_v{layer}"], axis=2)
            presents.append((present_k, present_v))
            scores = b.op("MatMul", [q, b.op("Transpose", [present_k], hint=f"l{layer}.kt", perm=[0, 1, 3, 2])],
                          hint=f"l{layer}.scores")
            probabilities = b.op("Softmax", [b.op("Where", [allowed, scores, masked], hint=f"l{layer}.masked")],
                                 hint=f"l{layer}.probs", axis=-1)
            context = b.op("MatMul", [probabilities, present_v], hint=f"l{layer}.context")
            context = b.op("Reshape", [context, b.const([0, spec.HEADS, -1, spec.HEAD_DIM])], hint=f"l{layer}.ctx4")
            context = b.op("Reshape", [b.op("Transpose", [context], hint=f"l{layer}.ctxT", perm=[0, 2, 1, 3]),
                                       b.const([0, 0, spec.HEADS * spec.HEAD_DIM])], hint=f"l{layer}.ctx")
            x = b.op("Add", [x, self.linear(context, w[p + "attn.o.weight"], p + "attn.o", precision)],
                     hint=f"l{layer}.res1")

            h = self.rms_norm(x, p + "mlp_norm.weight")
            gate_up = self.linear(h, np.concatenate([w[p + "mlp.gate.weight"], w[p + "mlp.up.weight"]], axis=0),
                                  p + "mlp.gate_up", precision)
            gate, up = b.op("Split", [gate_up, b.const([spec.MLP, spec.MLP])], hint=f"l{layer}.gu", outputs=2,
                            axis=-1)
            activated = b.op("Mul", [b.op("Mul", [gate, b.op("Sigmoid", [gate], hint=f"l{layer}.sig")],
                                          hint=f"l{layer}.silu"), up], hint=f"l{layer}.glu")
            x = b.op("Add", [x, self.linear(activated, w[p + "mlp.down.weight"], p + "mlp.down", precision)],
                     hint=f"l{layer}.res2")

        last = b.op("Gather", [x, b.const(-1)], hint="last", axis=1)
        normed = self.rms_norm(last, "decoder.norm.weight")
        b.op("Gemm", [normed, table], outputs=["logits"], transB=1)
        b.output("logits", FLOAT, [1, spec.VOCAB_IDS])
        for layer, (present_k, present_v) in enumerate(presents):
            b.output(present_k, FLOAT, [1, spec.KV_HEADS, present_dim, spec.HEAD_DIM])
            b.output(present_v, FLOAT, [1, spec.KV_HEADS, present_dim, spec.HEAD_DIM])
        return b.model(f"webgpu-ocr-bench decoder '{variant.name}': {variant.description}")


def build_decoder(weights: dict[str, np.ndarray], variant: DecoderVariant) -> onnx.ModelProto:
    return _DecoderGraph(weights, variant).build()
