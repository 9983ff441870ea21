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

The `gpu_only` variants (gpu-gather, nbits-*, gqa) also avoid every node that onnxruntime-web
1.30's WebGPU EP ran on the CPU in the four above (profile=ops on an H200: Add, LessOrEqual,
Range, Squeeze, Tile, Unsqueeze over int64 cache bookkeeping, 11 nodes, and the int8 Gather
with a Memcpy on each side), each a GPU->CPU->GPU round trip per step:
- the embedding row comes from a kernel the EP registers for the stored type: a float32 Gather
  of one column of the dequantized pre-transposed head, or com.microsoft GatherBlockQuantized
  over the head's MatMulNBits blocks (registered, with MatMulNBits and GroupQueryAttention, in
  onnxruntime/contrib_ops/webgpu/webgpu_contrib_kernels.cc; the float Gather is
  onnxruntime/core/providers/webgpu/tensor/gather.cc); profile=ops in Firefox placed every
  node of gpu-gather and nbits-* on the WebGPU EP;
- the causal mask compares float key counts (a CumSum of ones as long as the cache) with the
  float query positions from position_ids, which the contract makes equal to cache slots;
- indices are int32 constants; int64 appears only as constant shape/axes inputs that the EP's
  kernels read on the CPU from initializers (no per-step copy).
"""

from __future__ import annotations

import numpy as np
import onnx

from .. import spec
from ..quantize import int8_per_row
from ..variants import NBITS_BLOCK_SIZE, DecoderVariant
from . import nbits
from .builder import FLOAT, FLOAT16, INT32, INT64, MS_DOMAIN, GraphBuilder

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
    def __init__(
        self, weights: dict[str, np.ndarray], variant: DecoderVariant, blocks: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> None:
        self.w = weights
        self.variant = variant
        self.blocks = blocks
        self.b = GraphBuilder(f"decoder_{variant.name.replace('-', '_')}")

    def linear(self, x: str, weight_out_in: np.ndarray, name: str, precision: str) -> str:
        b = self.b
        if precision == "int8":
            quantized, scale = int8_per_row(weight_out_in)
            weight = b.op(
                "DequantizeLinear",
                [b.initializer(name + ".int8", quantized.T), b.initializer(name + ".scale", scale)],
                hint=name + ".dq",
                axis=1,
            )
            return b.op("MatMul", [x, weight], hint=name)
        if precision == "fp16":
            half = b.op("Cast", [x], hint=name + ".in16", to=FLOAT16)
            product = b.op(
                "MatMul", [half, b.initializer(name + ".fp16", weight_out_in.T.astype(np.float16))], hint=name
            )
            return b.op("Cast", [product], hint=name + ".out32", to=FLOAT)
        if precision.startswith("nbits"):
            return self.matmul_nbits(x, weight_out_in, name, int(precision.removeprefix("nbits")))
        if precision == "einsum8":
            return b.op("Einsum", [x, self.folded_int8(weight_out_in, name)], hint=name, equation="bsk,kn->bsn")
        raise ValueError(f"{name}: unknown precision {precision!r}")

    def folded_int8(self, weight_out_in: np.ndarray, name: str) -> str:
        """weight.T as [K, N] float32 from its per-output-row int8 codes and scales, as Cast and Mul
        of initializers alone: onnxruntime folds them into one float32 initializer when the session
        is created, so the file keeps int8 and no step dequantizes (DequantizeLinear is never folded)."""
        b = self.b
        codes, scale = int8_per_row(weight_out_in)
        return b.op(
            "Mul",
            [
                b.op("Cast", [b.initializer(name + ".int8", codes.T)], hint=name + ".f32", to=FLOAT),
                b.initializer(name + ".scale", scale),
            ],
            hint=name + ".weight",
        )

    def matmul_nbits(self, x: str, weight_out_in: np.ndarray, name: str, bits: int) -> str:
        """x @ weight.T as weight-only MatMulNBits."""
        b = self.b
        packed, scales = self.nbits_blocks(weight_out_in, name, bits)
        n, k = weight_out_in.shape
        packed_name = b.initializer(f"{name}.nbits{bits}", packed)
        scales_name = b.initializer(f"{name}.nbits_scale", scales)
        return b.op(
            "MatMulNBits",
            [x, packed_name, scales_name],
            hint=name,
            domain=MS_DOMAIN,
            K=k,
            N=n,
            bits=bits,
            block_size=NBITS_BLOCK_SIZE,
        )

    def nbits_blocks(self, weight_out_in: np.ndarray, name: str, bits: int) -> tuple[np.ndarray, np.ndarray]:
        """An operand's MatMulNBits B and scales: those the builder rounded already (the int4
        decoder's optional GPTQ, graphs/decoder_gptq.py), else nbits.quantize_blocks' nearest codes."""
        if name in self.blocks:
            packed, scales = self.blocks[name]
            expected = NBITS_BLOCK_SIZE * bits // 8
            if packed.shape[-1] != expected:
                raise ValueError(
                    f"{name}: rounded blocks hold {packed.shape[-1]} bytes; "
                    f"{bits}-bit blocks of {NBITS_BLOCK_SIZE} weights hold {expected}"
                )
            return packed, scales
        return nbits.quantize_blocks(weight_out_in, bits, NBITS_BLOCK_SIZE)

    def seed_embedding(self, token_ids: str) -> tuple[str, object]:
        """The seed's int8 rows with one scale per token; the tied head (Gemm transB=1) needs the
        whole dequantized table."""
        b, variant = self.b, self.variant
        embed_int8, embed_scale = int8_per_row(self.w["decoder.embed.weight"])
        table_int8 = b.initializer("decoder.embed.int8", embed_int8)
        table_scale = b.initializer("decoder.embed.scale", embed_scale)
        table = b.op("DequantizeLinear", [table_int8, table_scale], hint="embed.dq", axis=0)
        if variant.embedding == "dequantize-whole":
            token = b.op("Gather", [table, token_ids], hint="embed.gather", axis=0)
        elif variant.embedding == "gather-first":
            rows = b.op("Gather", [table_int8, token_ids], hint="embed.gather_int8", axis=0)
            row_scale = b.op(
                "Unsqueeze",
                [b.op("Gather", [table_scale, token_ids], hint="embed.gather_scale", axis=0), b.const([-1])],
                hint="embed.scale",
            )
            unscaled = b.op("DequantizeLinear", [rows, b.const(1.0, np.float32)], hint="embed.row_dq")
            token = b.op("Mul", [unscaled, row_scale], hint="embed.row")
        else:
            raise ValueError(f"unknown embedding mode {variant.embedding!r}")
        return token, lambda normed: b.op("Gemm", [normed, table], outputs=["logits"], transB=1)

    def tied_table(self, token_ids: str) -> tuple[str, object]:
        """The gpu_only embedding lookup and the head it shares its table with: (the token's
        row [1, 1, H], a function from the normed last position [1, H] to logits)."""
        b, variant = self.b, self.variant
        embed = self.w["decoder.embed.weight"]
        if variant.head == "pre-transposed":
            # Stored [H, N] with one scale per vocabulary column: the per-token int8 of the others.
            codes, scale = int8_per_row(embed)
            table = b.op(
                "DequantizeLinear",
                [b.initializer("decoder.head.int8", codes.T), b.initializer("decoder.head.scale", scale)],
                hint="head.dq",
                axis=1,
            )
            if variant.embedding != "gather-head-column":
                raise ValueError(f"{variant.name}: embedding {variant.embedding!r} with a pre-transposed head")
            column = b.op("Gather", [table, token_ids], hint="embed.gather_column", axis=1)  # [H, 1, 1]
            token = b.op("Reshape", [column, b.const([1, 1, spec.HIDDEN])], hint="embed.row")
            return token, lambda normed: b.op("MatMul", [normed, table], outputs=["logits"])
        if variant.head == "nbits":
            bits = variant.table_bits
            if variant.embedding != "gather-block-quantized":
                raise ValueError(f"{variant.name}: embedding {variant.embedding!r} with an nbits head")
            packed, scales = self.nbits_blocks(embed, "decoder.embed", bits)
            packed_name = b.initializer(f"decoder.embed.nbits{bits}", packed)
            scales_name = b.initializer("decoder.embed.nbits_scale", scales)
            # GatherBlockQuantized reads the same bytes as [N, K * bits / 8]: a Reshape of B.
            rows = b.op("Reshape", [packed_name, b.const([spec.VOCAB_IDS, -1])], hint="embed.rows")
            token = b.op(
                "GatherBlockQuantized",
                [rows, token_ids, scales_name],
                hint="embed.gather",
                domain=MS_DOMAIN,
                gather_axis=0,
                quantize_axis=1,
                block_size=NBITS_BLOCK_SIZE,
                bits=bits,
            )
            return token, lambda normed: b.op(
                "MatMulNBits",
                [normed, packed_name, scales_name],
                outputs=["logits"],
                domain=MS_DOMAIN,
                K=spec.HIDDEN,
                N=spec.VOCAB_IDS,
                bits=bits,
                block_size=NBITS_BLOCK_SIZE,
            )
        if variant.head == "einsum":
            if variant.embedding != "gather-head-column":
                raise ValueError(f"{variant.name}: embedding {variant.embedding!r} with an einsum head")
            table = self.folded_int8(embed, "decoder.head")
            column = b.op("Gather", [table, token_ids], hint="embed.gather_column", axis=1)  # [H, 1, 1]
            token = b.op("Reshape", [column, b.const([1, 1, spec.HIDDEN])], hint="embed.row")
            return token, lambda normed: b.op("Einsum", [normed, table], outputs=["logits"], equation="bh,hn->bn")
        raise ValueError(f"{variant.name}: unknown head {variant.head!r}")

    def float_mask(self, present_k: str, position_ids: str) -> str:
        """allowed [4 * S, T]: key slot j is visible to the query at position p iff j <= p, in
        float32 (slots and positions below 2^24 are exact), rows in the grouped scores' order
        (query head within the KV group, then position)."""
        b = self.b
        one = b.const(1.0, np.float32)
        key_column = b.op("Slice", [present_k, b.const([0, 0]), b.const([1, 1]), b.const([1, 3])], hint="key.slice")
        key_ones = b.op(
            "Add",
            [
                b.op(
                    "Mul",
                    [b.op("Reshape", [key_column, b.const([1, -1])], hint="key.flat"), b.const(0.0, np.float32)],
                    hint="key.zero",
                ),
                one,
            ],
            hint="key.ones",
        )
        key_count = b.op("CumSum", [key_ones, b.const(1, np.int32)], hint="key.count")  # slot + 1
        query_next = b.op(
            "Add",
            [
                b.op(
                    "Reshape",
                    [b.op("Cast", [position_ids], hint="mask.pos", to=FLOAT), b.const([-1, 1])],
                    hint="mask.pos_col",
                ),
                one,
            ],
            hint="query.next",
        )
        grouped = b.op("Concat", [query_next] * QUERY_GROUP, hint="query.next4", axis=0)
        return b.op("LessOrEqual", [key_count, grouped], hint="mask.allowed")

    def rms_norm(self, x: str, weight_name: str) -> str:
        # The Pow/ReduceMean/Add/Sqrt/Div/Mul chain that onnxruntime's CPU EP fuses into
        # SimplifiedLayerNormalization at session creation (its WebGPU EP does not), or that node.
        b = self.b
        if self.variant.norm in ("simplified", "skip-simplified"):
            return b.op(
                "SimplifiedLayerNormalization",
                [x, b.initializer(weight_name, self.w[weight_name])],
                hint="rms",
                axis=-1,
                epsilon=spec.RMS_NORM_EPS,
            )
        if self.variant.norm != "decomposed":
            raise ValueError(f"{self.variant.name}: unknown norm {self.variant.norm!r}")
        square = b.op("Pow", [x, b.const(2.0, np.float32)], hint="rms.sq")
        mean = b.op("ReduceMean", [square], hint="rms.mean", axes=[-1], keepdims=1)
        root = b.op(
            "Sqrt", [b.op("Add", [mean, b.const(spec.RMS_NORM_EPS, np.float32)], hint="rms.eps")], hint="rms.sqrt"
        )
        normed = b.op("Div", [x, root], hint="rms.div")
        return b.op("Mul", [normed, b.initializer(weight_name, self.w[weight_name])], hint="rms.scale")

    def skip_rms_norm(self, x: str, residual: str, weight_name: str, keep_sum: bool) -> tuple[str, str | None]:
        """(rms(residual + x) * weight, residual + x) as one com.microsoft SkipSimplifiedLayerNormalization
        (registered for CPU and, in onnxruntime/contrib_ops/webgpu/bert/skip_layer_norm.cc, WebGPU):
        the residual Add and the norm after it in one dispatch. Outputs 1 and 2 (mean, inverse
        standard deviation) are not asked for; the sum (output 3) only where a later residual reads it."""
        b = self.b
        weight = b.initializer(weight_name, self.w[weight_name])
        normed = b.fresh("skiprms")
        total = b.fresh("residual") if keep_sum else ""
        outputs = [normed, "", "", total] if keep_sum else [normed]
        b.op(
            "SkipSimplifiedLayerNormalization",
            [x, residual, weight],
            hint="skiprms",
            outputs=outputs,
            domain=MS_DOMAIN,
            epsilon=spec.RMS_NORM_EPS,
        )
        return normed, total or None

    def rotary_embedding(self, x: str, position_ids: str, caches: tuple[str, str]) -> str:
        """RoPE on x [1, S, heads * 64] as one com.microsoft RotaryEmbedding (interleaved=0 is the
        spec's rotate-half layout; the head size is twice the caches' 32 columns); position_ids
        int64, as the operator's schema types it."""
        cos_cache, sin_cache = caches
        return self.b.op(
            "RotaryEmbedding", [x, position_ids, cos_cache, sin_cache], hint="rotary", domain=MS_DOMAIN, interleaved=0
        )

    def rope(self, x: str, cos: str, sin: str, rotation: str) -> str:
        b = self.b
        # Einsum for the einsum decoder: a tiled MatMul over a step's 2-8 rows computes mostly
        # padding, which a CPU rasteriser pays for.
        rotated = (
            b.op("Einsum", [x, rotation], hint="rope.rot", equation="bshd,de->bshe")
            if self.variant.attention == "einsum"
            else b.op("MatMul", [x, rotation], hint="rope.rot")
        )
        return b.op(
            "Add", [b.op("Mul", [x, cos], hint="rope.cos"), b.op("Mul", [rotated, sin], hint="rope.sin")], hint="rope"
        )

    def seed_slots(self, x: str, pasts: list[tuple[str, str]], past_length: str | None) -> tuple[str, str, str]:
        """The seed's int64 cache slot bookkeeping: (allowed [4 * S, T], and for fixed KV the
        placement [T, S] and keep [T, 1]; None otherwise). New positions go to slots [P, P+S);
        query i sees slots <= P+i."""
        b, fixed = self.b, self.variant.fixed_kv
        new_count = b.op("Shape", [x], hint="seq.len", start=1, end=2)
        if fixed:
            start = past_length
            total = b.const([spec.KV_SLOTS])
        else:
            start = b.op("Shape", [pasts[0][0]], hint="past.len", start=2, end=3)
            total = b.op("Add", [start, new_count], hint="total.len")

        def scalar(t: str, hint: str) -> str:
            return b.op("Squeeze", [t, b.const([0])], hint=hint)

        start_s, new_s, total_s = scalar(start, "p0"), scalar(new_count, "s0"), scalar(total, "t0")
        query_slots = b.op(
            "Range", [start_s, b.op("Add", [start_s, new_s], hint="p_end"), b.const(1)], hint="query.slots"
        )
        key_slots = b.op("Range", [b.const(0), total_s, b.const(1)], hint="key.slots")
        # Rows of the grouped scores are (query head within group, position): tile the slots 4x.
        grouped_query_slots = b.op("Tile", [query_slots, b.const([QUERY_GROUP])], hint="query.slots4")
        allowed = b.op(
            "LessOrEqual",
            [
                b.op("Unsqueeze", [key_slots, b.const([0])], hint="key.row"),
                b.op("Unsqueeze", [grouped_query_slots, b.const([1])], hint="query.col"),
            ],
            hint="mask.allowed",
        )
        if not fixed:
            return allowed, None, None
        # placement [T, S] is 1 where slot j receives new position i: a MatMul writes the new
        # K/V into their slots exactly (one 1.0 per row), and Where keeps every other slot.
        placement = b.op(
            "Cast",
            [
                b.op(
                    "Equal",
                    [
                        b.op("Unsqueeze", [key_slots, b.const([1])], hint="key.col"),
                        b.op("Unsqueeze", [query_slots, b.const([0])], hint="q.row"),
                    ],
                    hint="placement.eq",
                )
            ],
            hint="placement",
            to=FLOAT,
        )
        end_s = b.op("Add", [start, new_count], hint="new.end")
        keep = b.op(
            "Unsqueeze",
            [
                b.op(
                    "Or",
                    [
                        b.op("Less", [key_slots, start], hint="keep.before"),
                        b.op("GreaterOrEqual", [key_slots, end_s], hint="keep.after"),
                    ],
                    hint="keep.or",
                ),
                b.const([1]),
            ],
            hint="keep",
        )
        return allowed, placement, keep

    def float_slots(self, position_ids: str) -> tuple[str, str]:
        """(placement [T, S], keep [T, 1]) of the fixed cache without the seed's int64
        bookkeeping, for a gpu_only fixed-KV graph: slot j receives the new position i iff
        j == position_ids[i] (the contract makes positions cache slots), compared in float32
        against a constant column of the T slots; a slot no new position lands in keeps its
        past value. Every node has a WebGPU kernel, so the step can be captured; past_length
        stays an input of the contract and goes unused."""
        b = self.b
        slots = b.const(np.arange(spec.KV_SLOTS, dtype=np.float32).reshape(-1, 1), np.float32)
        positions = b.op(
            "Reshape",
            [b.op("Cast", [position_ids], hint="slots.pos", to=FLOAT), b.const([1, -1])],
            hint="slots.pos_row",
        )
        placement = b.op("Cast", [b.op("Equal", [slots, positions], hint="placement.eq")], hint="placement", to=FLOAT)
        covered = b.op("ReduceMax", [placement], hint="slots.covered", axes=[1], keepdims=1)
        keep = b.op("Less", [covered, b.const(0.5, np.float32)], hint="keep")
        return placement, keep

    def gqa_lengths(self, position_ids: str, past_k: str) -> tuple[str, str]:
        """GroupQueryAttention's (seqlens_k [1], total_sequence_length [1]), int32.

        total_sequence_length is a CPU input of the WebGPU kernel (InputMemoryType CPU for input
        6 in onnxruntime/contrib_ops/webgpu/bert/group_query_attention.cc). Computed from the
        last position id on the GPU it cost a MemcpyToHost, a GPU->CPU wait, per call
        (profile=ops, Firefox); from the shapes of past_k0 and position_ids (Shape reads no
        tensor data) it stays on the CPU without waiting on the GPU. seqlens_k = total - 1 is a
        GPU input, the last position id (the contract makes positions cache slots)."""
        b = self.b
        past = b.op("Shape", [past_k], hint="gqa.past_len", start=2, end=3)
        new = b.op("Shape", [position_ids], hint="gqa.new_len", start=1, end=2)
        total = b.op("Cast", [b.op("Add", [past, new], hint="gqa.total64")], hint="gqa.total", to=INT32)
        last_position = b.op("Gather", [position_ids, b.const(-1, np.int32)], hint="gqa.last_pos", axis=1)
        return last_position, total

    def fixed_gqa_lengths(self, position_ids: str) -> tuple[str, str]:
        """GroupQueryAttention's (seqlens_k [1], total_sequence_length [1]), int32, over the fixed
        cache. total_sequence_length is the constant KV_SLOTS: every call has the same value, so
        the kernel's CPU read of it (group_query_attention_helper.h's CheckInputs) never waits
        on the GPU, and a captured step replays it unchanged. The valid length rides in
        seqlens_k, computed on the GPU: the last position id (the contract makes positions cache
        slots), so past length = seqlens_k + 1 - sequence and the new rows land in the slots
        [past length, seqlens_k]."""
        b = self.b
        last_position = b.op("Gather", [position_ids, b.const(-1, np.int32)], hint="gqa.last_pos", axis=1)
        return last_position, b.const([spec.KV_SLOTS], np.int32)

    def fixed_gqa(self, layer: int, qkv: str, past: tuple[str, str], masking: dict) -> tuple[str, str, str]:
        """(context [1, S, 512], present_k, present_v) of one block as one GroupQueryAttention:
        q, k and v packed as the qkv MatMul gives them ([1, S, (8 + 2 + 2) * 64], key and value
        left empty), RoPE by the operator (do_rotary=1, rotate-half: rotary_interleaved=0) at
        each row's position past length + row, from the [KV_SLOTS, 32] caches; past and present
        in the contract's [1, kv heads, KV_SLOTS, 64]. scale 1: the 1/8 is folded into q's weights."""
        seqlens_k, total_length = masking["gqa"]
        cos_cache, sin_cache = masking["rotary_caches"]
        past_k, past_v = past
        return self.b.op(
            "GroupQueryAttention",
            [qkv, "", "", past_k, past_v, seqlens_k, total_length, cos_cache, sin_cache],
            outputs=[self.b.fresh(f"l{layer}.context"), f"present_k{layer}", f"present_v{layer}"],
            domain=MS_DOMAIN,
            num_heads=spec.HEADS,
            kv_num_heads=spec.KV_HEADS,
            scale=1.0,
            do_rotary=1,
            rotary_interleaved=0,
        )

    def attention(
        self, layer: int, q: str, k: str, v: str, past: tuple[str, str], masking: dict
    ) -> tuple[str, str, str]:
        """(context [1, S, 512], present_k, present_v) for one block; q, k, v as split, [1, S, *]."""
        b, variant = self.b, self.variant
        cos, sin, rotation = masking.get("rope", (None, None, None))
        past_k, past_v = past
        if variant.attention == "gqa":
            # The op's own layout: q, k, v as [1, S, heads * 64] (RoPE applied here, do_rotary=0),
            # past/present as [1, kv heads, sequence, 64], the contract's past_k{i}/present_k{i}.
            # scale 1: the 1/8 is folded into q's weights.
            q = b.op(
                "Reshape",
                [
                    self.rope(
                        b.op("Reshape", [q, b.const([0, 0, spec.HEADS, spec.HEAD_DIM])], hint=f"l{layer}.q4"),
                        cos,
                        sin,
                        rotation,
                    ),
                    b.const([0, 0, spec.HEADS * spec.HEAD_DIM]),
                ],
                hint=f"l{layer}.q3",
            )
            k = b.op(
                "Reshape",
                [
                    self.rope(
                        b.op("Reshape", [k, b.const([0, 0, spec.KV_HEADS, spec.HEAD_DIM])], hint=f"l{layer}.k4"),
                        cos,
                        sin,
                        rotation,
                    ),
                    b.const([0, 0, spec.KV_HEADS * spec.HEAD_DIM]),
                ],
                hint=f"l{layer}.k3",
            )
            seqlens_k, total_length = masking["gqa"]
            return b.op(
                "GroupQueryAttention",
                [q, k, v, past_k, past_v, seqlens_k, total_length],
                outputs=[b.fresh(f"l{layer}.context"), f"present_k{layer}", f"present_v{layer}"],
                domain=MS_DOMAIN,
                num_heads=spec.HEADS,
                kv_num_heads=spec.KV_HEADS,
                scale=1.0,
            )
        rotary = variant.rope == "rotary-embedding"  # on [1, S, heads * 64], then split into heads

        def heads(x: str, count: int, hint: str) -> str:
            if rotary:
                positions, caches = masking["rotary"]
                return b.op(
                    "Reshape",
                    [self.rotary_embedding(x, positions, caches), b.const([0, 0, count, spec.HEAD_DIM])],
                    hint=hint,
                )
            return self.rope(b.op("Reshape", [x, b.const([0, 0, count, spec.HEAD_DIM])], hint=hint), cos, sin, rotation)

        q = b.op(
            "Reshape",
            [
                b.op("Transpose", [heads(q, spec.HEADS, f"l{layer}.q4")], hint=f"l{layer}.qT", perm=[0, 2, 1, 3]),
                b.const([0, spec.KV_HEADS, -1, spec.HEAD_DIM]),
            ],
            hint=f"l{layer}.qgroups",
        )
        k = b.op("Transpose", [heads(k, spec.KV_HEADS, f"l{layer}.k4")], hint=f"l{layer}.kT", perm=[0, 2, 1, 3])
        v = b.op(
            "Transpose",
            [b.op("Reshape", [v, b.const([0, 0, spec.KV_HEADS, spec.HEAD_DIM])], hint=f"l{layer}.v4")],
            hint=f"l{layer}.vT",
            perm=[0, 2, 1, 3],
        )
        if variant.fixed_kv:
            placement, keep = masking["placement"], masking["keep"]
            present_k = b.op(
                "Where",
                [keep, past_k, b.op("MatMul", [placement, k], hint=f"l{layer}.placek")],
                outputs=[f"present_k{layer}"],
            )
            present_v = b.op(
                "Where",
                [keep, past_v, b.op("MatMul", [placement, v], hint=f"l{layer}.placev")],
                outputs=[f"present_v{layer}"],
            )
        else:
            present_k = b.op("Concat", [past_k, k], outputs=[f"present_k{layer}"], axis=2)
            present_v = b.op("Concat", [past_v, v], outputs=[f"present_v{layer}"], axis=2)
        if masking["allowed"] is None:
            masking["allowed"] = self.float_mask(present_k, masking["position_ids"])
        if variant.attention == "einsum":  # contracts over d of present_k as it is: no Transpose
            scores = b.op("Einsum", [q, present_k], hint=f"l{layer}.scores", equation="bgqd,bgtd->bgqt")
        else:
            scores = b.op(
                "MatMul",
                [q, b.op("Transpose", [present_k], hint=f"l{layer}.kt", perm=[0, 1, 3, 2])],
                hint=f"l{layer}.scores",
            )
        probabilities = b.op(
            "Softmax",
            [b.op("Where", [masking["allowed"], scores, masking["masked"]], hint=f"l{layer}.masked")],
            hint=f"l{layer}.probs",
            axis=-1,
        )
        context = (
            b.op("Einsum", [probabilities, present_v], hint=f"l{layer}.context", equation="bgqt,bgtd->bgqd")
            if variant.attention == "einsum"
            else b.op("MatMul", [probabilities, present_v], hint=f"l{layer}.context")
        )
        context = b.op("Reshape", [context, b.const([0, spec.HEADS, -1, spec.HEAD_DIM])], hint=f"l{layer}.ctx4")
        context = b.op(
            "Reshape",
            [
                b.op("Transpose", [context], hint=f"l{layer}.ctxT", perm=[0, 2, 1, 3]),
                b.const([0, 0, spec.HEADS * spec.HEAD_DIM]),
            ],
            hint=f"l{layer}.ctx",
        )
        return context, present_k, present_v

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
            pasts.append(
                (
                    b.input(f"past_k{layer}", FLOAT, [1, spec.KV_HEADS, past_dim, spec.HEAD_DIM]),
                    b.input(f"past_v{layer}", FLOAT, [1, spec.KV_HEADS, past_dim, spec.HEAD_DIM]),
                )
            )
        past_length = b.input("past_length", INT64, [1]) if fixed else None

        token, head = self.tied_table(token_ids) if variant.head != "tied-gemm" else self.seed_embedding(token_ids)
        x = b.op("Concat", [vision, token], hint="sequence", axis=1)

        masking: dict = {"position_ids": position_ids, "allowed": None}
        if variant.rope == "rotary-embedding":
            # cos/sin of float32 angles (position times frequency, rounded to float32 as the
            # "matmul" graph's Mul rounds them) for every cache slot, [KV_SLOTS, 32] each.
            angles = (
                np.arange(spec.KV_SLOTS, dtype=np.float32)[:, None] * spec.rope_inverse_frequencies()[None, :]
            ).astype(np.float64)
            caches = (
                b.initializer("rope.cos_cache", np.cos(angles).astype(np.float32)),
                b.initializer("rope.sin_cache", np.sin(angles).astype(np.float32)),
            )
            if variant.attention == "gqa-rotary":  # the operator finds each row's position itself
                masking["rotary_caches"] = caches
            else:
                masking["rotary"] = (b.op("Cast", [position_ids], hint="pos.i64", to=INT64), caches)
        elif variant.rope == "matmul":
            # RoPE tables for this call's positions, [1, S, 1, 64], shared by every layer.
            frequencies = np.concatenate([spec.rope_inverse_frequencies()] * 2)
            angles = b.op(
                "Mul",
                [
                    b.op(
                        "Unsqueeze",
                        [b.op("Cast", [position_ids], hint="pos.f32", to=FLOAT), b.const([2])],
                        hint="pos.col",
                    ),
                    b.const(frequencies, np.float32),
                ],
                hint="rope.angles",
            )
            cos = b.op("Unsqueeze", [b.op("Cos", [angles], hint="rope.cos_t"), b.const([2])], hint="rope.cos4")
            sin = b.op("Unsqueeze", [b.op("Sin", [angles], hint="rope.sin_t"), b.const([2])], hint="rope.sin4")
            masking["rope"] = (cos, sin, b.initializer("rope.rotate_half", _rotate_half_matrix()))
        else:
            raise ValueError(f"{variant.name}: unknown rope {variant.rope!r}")
        if variant.attention == "gqa":
            masking["gqa"] = self.gqa_lengths(position_ids, pasts[0][0])
        elif variant.attention == "gqa-rotary":
            masking["gqa"] = self.fixed_gqa_lengths(position_ids)
        elif not variant.gpu_only:
            masking["allowed"], masking["placement"], masking["keep"] = self.seed_slots(x, pasts, past_length)
        elif fixed:
            masking["placement"], masking["keep"] = self.float_slots(position_ids)
        if variant.attention != "gqa-rotary":  # the operator masks by itself
            masking["masked"] = b.const(MASKED_SCORE, np.float32)

        # "skip-simplified": each residual Add is done by the norm after it, which hands the
        # sum on; the last one is the final norm, over every position (a per-row norm, so
        # gathering the last row afterwards is the same), its sum unused.
        fused_norms = variant.norm == "skip-simplified"
        presents = []
        h = self.rms_norm(x, "decoder.layers.0.attn_norm.weight") if fused_norms else None
        for layer in range(spec.LAYERS):
            p = f"decoder.layers.{layer}."
            precision = variant.layer_precision(layer)
            if not fused_norms:
                h = self.rms_norm(x, p + "attn_norm.weight")
            qkv_weight = np.concatenate(
                [
                    w[p + "attn.q.weight"] * np.float32(spec.HEAD_DIM**-0.5),
                    w[p + "attn.k.weight"],
                    w[p + "attn.v.weight"],
                ],
                axis=0,
            )
            qkv = self.linear(h, qkv_weight, p + "attn.qkv", precision)
            if variant.attention == "gqa-rotary":
                context, present_k, present_v = self.fixed_gqa(layer, qkv, pasts[layer], masking)
            else:
                q, k, v = b.op(
                    "Split",
                    [
                        qkv,
                        b.const(
                            [spec.HEADS * spec.HEAD_DIM, spec.KV_HEADS * spec.HEAD_DIM, spec.KV_HEADS * spec.HEAD_DIM]
                        ),
                    ],
                    hint=f"l{layer}.split",
                    outputs=3,
                    axis=-1,
                )
                context, present_k, present_v = self.attention(layer, q, k, v, pasts[layer], masking)
            presents.append((present_k, present_v))
            attended = self.linear(context, w[p + "attn.o.weight"], p + "attn.o", precision)
            if fused_norms:
                h, x = self.skip_rms_norm(attended, x, p + "mlp_norm.weight", keep_sum=True)
            else:
                x = b.op("Add", [x, attended], hint=f"l{layer}.res1")
                h = self.rms_norm(x, p + "mlp_norm.weight")
            gate_up = self.linear(
                h,
                np.concatenate([w[p + "mlp.gate.weight"], w[p + "mlp.up.weight"]], axis=0),
                p + "mlp.gate_up",
                precision,
            )
            gate, up = b.op("Split", [gate_up, b.const([spec.MLP, spec.MLP])], hint=f"l{layer}.gu", outputs=2, axis=-1)
            activated = b.op(
                "Mul",
                [b.op("Mul", [gate, b.op("Sigmoid", [gate], hint=f"l{layer}.sig")], hint=f"l{layer}.silu"), up],
                hint=f"l{layer}.glu",
            )
            down = self.linear(activated, w[p + "mlp.down.weight"], p + "mlp.down", precision)
            if fused_norms:
                final = layer == spec.LAYERS - 1
                next_norm = "decoder.norm.weight" if final else f"decoder.layers.{layer + 1}.attn_norm.weight"
                h, x = self.skip_rms_norm(down, x, next_norm, keep_sum=not final)
            else:
                x = b.op("Add", [x, down], hint=f"l{layer}.res2")

        last_index = b.const(-1, np.int32) if variant.gpu_only else b.const(-1)
        if fused_norms:
            head(b.op("Gather", [h, last_index], hint="last", axis=1))
        else:
            head(self.rms_norm(b.op("Gather", [x, last_index], hint="last", axis=1), "decoder.norm.weight"))
        b.output("logits", FLOAT, [1, spec.VOCAB_IDS])
        for present_k, present_v in presents:
            b.output(present_k, FLOAT, [1, spec.KV_HEADS, present_dim, spec.HEAD_DIM])
            b.output(present_v, FLOAT, [1, spec.KV_HEADS, present_dim, spec.HEAD_DIM])
        return b.model(
            f"webgpu-ocr-bench decoder '{variant.name}': {variant.description}", uses_ms_domain=variant.uses_ms_domain
        )


def build_decoder(
    weights: dict[str, np.ndarray],
    variant: DecoderVariant,
    blocks: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
) -> onnx.ModelProto:
    """`blocks`: MatMulNBits (B, scales) already rounded, by operand name ("decoder.embed",
    "decoder.layers.<i>.attn.qkv", ...); the other nbits operands are rounded to nearest."""
    return _DecoderGraph(weights, variant, blocks or {}).build()
