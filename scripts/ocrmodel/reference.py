"""A plain numpy forward pass of spec.py's architecture, written for reading, not for speed.

The tests compare every ONNX file against it, and the trainer checks its PyTorch model against
it: same weights (spec names, Linear layout [out, in]), same inputs, same outputs.

    vision_embeds = vision_forward(weights, pixel_values)             # [1,256,512]
    logits, present_k, present_v = decoder_forward(weights, vision_embeds, token_ids,
                                                   position_ids, past_k, past_v)

Computation is float32 except erf (see _erf) and the rotary angles (float64, see rope).

What the builder also computes is restated here from its definition rather than imported, so a
bug there cannot hide on both sides of a test: the rotary embedding (its base, its pairing, its
positions) and the dequantisation of stored weights (int8 per output channel, com.microsoft
MatMulNBits blocks). Shapes and the architecture's sizes still come from spec.
"""

from __future__ import annotations

import numpy as np

from . import spec


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 in float64 (absolute error below 1.5e-7, under
    float32's resolution at 1), since numpy has no erf and scipy is not a dependency."""
    t64 = np.asarray(x, dtype=np.float64)
    sign = np.sign(t64)
    a = np.abs(t64)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)


def gelu(x: np.ndarray) -> np.ndarray:
    return (0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))).astype(np.float32)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + np.float32(spec.LAYER_NORM_EPS)) * weight + bias


def rms_norm(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + np.float32(spec.RMS_NORM_EPS)) * weight


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
    y = x @ weight.T
    return y if bias is None else y + bias


def conv2d(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, stride: int, pad: int) -> np.ndarray:
    """x [C,H,W], weight [O,C,k,k] -> [O,H',W'] by gathering patches (im2col)."""
    channels, height, width = x.shape
    out_channels, _, k, _ = weight.shape
    padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    out_h = (height + 2 * pad - k) // stride + 1
    out_w = (width + 2 * pad - k) // stride + 1
    patches = np.lib.stride_tricks.sliding_window_view(padded, (k, k), axis=(1, 2))[:, ::stride, ::stride]
    # patches [C, out_h, out_w, k, k] -> [out_h*out_w, C*k*k] in the weight's (c, kh, kw) order
    columns = patches.transpose(1, 2, 0, 3, 4).reshape(out_h * out_w, channels * k * k)
    out = columns @ weight.reshape(out_channels, -1).T + bias
    return out.T.reshape(out_channels, out_h, out_w).astype(np.float32)


def vision_forward(w: dict[str, np.ndarray], pixel_values: np.ndarray) -> np.ndarray:
    """pixel_values [1,3,224,224] float32 -> vision_embeds [1,256,512]."""
    x = conv2d(pixel_values[0], w["vision.stem1.weight"], w["vision.stem1.bias"], stride=2, pad=1)
    x = gelu(x)
    x = conv2d(x, w["vision.stem2.weight"], w["vision.stem2.bias"], stride=7, pad=0)
    x = x.reshape(spec.VISION_WIDTH, spec.VISION_TOKENS).T + w["vision.pos"]  # row-major tokens
    head_dim = spec.VISION_WIDTH // spec.VISION_HEADS
    for i in range(spec.VISION_LAYERS):
        p = f"vision.layers.{i}."
        h = layer_norm(x, w[p + "ln1.weight"], w[p + "ln1.bias"])
        qkv = linear(h, w[p + "attn.qkv.weight"], w[p + "attn.qkv.bias"])
        q, k, v = (
            qkv[:, j * spec.VISION_WIDTH : (j + 1) * spec.VISION_WIDTH]
            .reshape(spec.VISION_TOKENS, spec.VISION_HEADS, head_dim)
            .transpose(1, 0, 2)
            for j in range(3)
        )
        attention = softmax(q @ k.transpose(0, 2, 1) * np.float32(head_dim**-0.5)) @ v
        x = x + linear(
            attention.transpose(1, 0, 2).reshape(spec.VISION_TOKENS, spec.VISION_WIDTH),
            w[p + "attn.out.weight"],
            w[p + "attn.out.bias"],
        )
        h = layer_norm(x, w[p + "ln2.weight"], w[p + "ln2.bias"])
        x = x + linear(
            gelu(linear(h, w[p + "mlp.fc1.weight"], w[p + "mlp.fc1.bias"])),
            w[p + "mlp.fc2.weight"],
            w[p + "mlp.fc2.bias"],
        )
    x = layer_norm(x, w["vision.ln.weight"], w["vision.ln.bias"])
    return linear(x, w["vision.proj.weight"], w["vision.proj.bias"])[None].astype(np.float32)


# The base the checkpoint was trained with: scripts/train/model.py's rope_tables raised
# spec.ROPE_THETA = 10000.0 (unchanged since the training commit b25017a) to -2i/d. Restated
# here so that a changed spec constant moves the builder away from this reference instead of
# moving both.
ROPE_BASE = 10000.0


def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """x [heads, S, 64] rotated by positions [S], in the layout scripts/train/model.py trains
    with ("rotate half", GPT-NeoX / Hugging Face Llama): dimension i (i < d/2) pairs with
    i + d/2, not with its neighbour, and the pair turns by the angle p * theta_i with
    theta_i = base^(-2i/d):

        y[i]       = x[i] cos(p theta_i) - x[i + d/2] sin(p theta_i)
        y[i + d/2] = x[i + d/2] cos(p theta_i) + x[i] sin(p theta_i)

    The angles are float64; torch and the graph round theta_i and p * theta_i to float32, which
    moves an angle by at most 1.8e-5 rad over positions 0..383 (see test_reference.py)."""
    half = x.shape[-1] // 2
    theta = ROPE_BASE ** (-2.0 * np.arange(half, dtype=np.float64) / x.shape[-1])
    angles = np.asarray(positions, dtype=np.float64)[:, None] * theta[None, :]  # [S, d/2]
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * cos - second * sin, second * cos + first * sin], axis=-1)


def kv_head_of(query_head: int) -> int:
    """Grouped-query attention as scripts/train/model.py trains it: `repeat_interleave` of the
    KV heads, so query heads 0-3 read KV head 0 and 4-7 read KV head 1."""
    return query_head // (spec.HEADS // spec.KV_HEADS)


def dequantize_int8(quantized: np.ndarray, scale: np.ndarray, axis: int) -> np.ndarray:
    """Symmetric int8 (zero point 0) with one scale per index along `axis`: q * scale, as ONNX
    DequantizeLinear defines it for a 1-D scale. A Linear weight stored for MatMul is
    [in, out] with one scale per output channel (axis 1); the embedding table is
    [vocabulary, hidden] with one scale per token (axis 0)."""
    if quantized.dtype != np.int8:
        raise ValueError(f"expected int8 values, got {quantized.dtype}")
    if scale.ndim != 1 or scale.shape[0] != quantized.shape[axis]:
        raise ValueError(
            f"scale of shape {scale.shape} does not give one value per index of axis {axis} "
            f"of a {quantized.shape} tensor"
        )
    shape = [1] * quantized.ndim
    shape[axis] = -1
    return quantized.astype(np.float32) * scale.astype(np.float32).reshape(shape)


def _unpack_codes(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """Unsigned `bits`-wide codes packed low bits first in each byte, the first `count` per row."""
    if bits not in (2, 4, 8):
        raise ValueError(f"{bits}-bit codes: only 2, 4 and 8 bits fill whole bytes")
    per_byte = 8 // bits
    shifts = np.arange(per_byte, dtype=np.uint8) * bits
    codes = (packed[..., None] >> shifts) & np.uint8((1 << bits) - 1)
    return codes.reshape(*packed.shape[:-1], -1)[..., :count]


def unpack_matmulnbits(
    packed: np.ndarray, scales: np.ndarray, zero_points: np.ndarray | None, k: int, n: int, bits: int, block_size: int
) -> np.ndarray:
    """The float32 weight [N, K] (Linear layout [out, in]) of a com.microsoft MatMulNBits node,
    from onnxruntime's documented layout (docs/ContribOperators.md, MatMulNBits):
    - B: uint8 [N, ceil(K / block_size), block_size * bits / 8], the codes of each block packed
      along K, low bits first (for 4 bits: the first code in the low nibble);
    - scales: [N, blocks] (older files: flat [N * blocks]);
    - zero_points: absent (then 2^(bits-1), 8 for 4 bits), uint8 packed like B with shape
      [N, ceil(blocks * bits / 8)], or unpacked with the scales' type and shape;
    - weight = (code - zero_point) * scale, each block along K with its own scale and zero point."""
    blocks = -(-k // block_size)
    codes = _unpack_codes(np.asarray(packed, dtype=np.uint8).reshape(n, blocks, -1), bits, block_size)
    block_scales = np.asarray(scales, dtype=np.float32).reshape(n, blocks)
    if zero_points is None:
        zero = np.full((n, blocks), 2.0 ** (bits - 1), dtype=np.float32)
    elif zero_points.dtype == np.uint8:
        zero = _unpack_codes(zero_points.reshape(n, -1), bits, blocks).astype(np.float32)
    else:
        zero = np.asarray(zero_points, dtype=np.float32).reshape(n, blocks)
    weight = (codes.astype(np.float32) - zero[..., None]) * block_scales[..., None]  # [N, blocks, block]
    return weight.reshape(n, blocks * block_size)[:, :k]


def decoder_forward(
    w: dict[str, np.ndarray],
    vision_embeds: np.ndarray,
    token_ids: np.ndarray,
    position_ids: np.ndarray,
    past_k: list[np.ndarray],
    past_v: list[np.ndarray],
) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """One unified decoder call. vision_embeds [1,V,512], token_ids [1,1], position_ids [1,V+1],
    past_k/past_v per layer [1,2,P,64]. Returns logits [1,VOCAB_IDS] of the last position and
    the presents [1,2,P+V+1,64]."""
    x = np.concatenate([vision_embeds[0], w["decoder.embed.weight"][token_ids[0]]], axis=0)
    new = x.shape[0]
    positions = position_ids[0]
    present_k, present_v = [], []
    for layer in range(spec.LAYERS):
        p = f"decoder.layers.{layer}."
        h = rms_norm(x, w[p + "attn_norm.weight"])
        q = rope(
            linear(h, w[p + "attn.q.weight"]).reshape(new, spec.HEADS, spec.HEAD_DIM).transpose(1, 0, 2), positions
        )
        k = rope(
            linear(h, w[p + "attn.k.weight"]).reshape(new, spec.KV_HEADS, spec.HEAD_DIM).transpose(1, 0, 2), positions
        )
        v = linear(h, w[p + "attn.v.weight"]).reshape(new, spec.KV_HEADS, spec.HEAD_DIM).transpose(1, 0, 2)
        keys = np.concatenate([past_k[layer][0], k], axis=1)
        values = np.concatenate([past_v[layer][0], v], axis=1)
        present_k.append(keys[None].astype(np.float32))
        present_v.append(values[None].astype(np.float32))
        past = keys.shape[1] - new
        # query i sits at cache index past + i and sees indices 0..past + i
        visible = np.arange(keys.shape[1])[None, :] <= (past + np.arange(new))[:, None]
        heads = []
        for head in range(spec.HEADS):
            kv = kv_head_of(head)
            scores = q[head] @ keys[kv].T * np.float32(spec.HEAD_DIM**-0.5)
            heads.append(softmax(np.where(visible, scores, -np.inf)) @ values[kv])
        x = x + linear(np.stack(heads, axis=1).reshape(new, spec.HEADS * spec.HEAD_DIM), w[p + "attn.o.weight"])
        h = rms_norm(x, w[p + "mlp_norm.weight"])
        gate = linear(h, w[p + "mlp.gate.weight"])
        x = x + linear(gate / (1.0 + np.exp(-gate)) * linear(h, w[p + "mlp.up.weight"]), w[p + "mlp.down.weight"])
    last = rms_norm(x[-1:], w["decoder.norm.weight"])
    return (last @ w["decoder.embed.weight"].T).astype(np.float32), present_k, present_v


def empty_cache() -> tuple[list[np.ndarray], list[np.ndarray]]:
    empty = np.zeros((1, spec.KV_HEADS, 0, spec.HEAD_DIM), dtype=np.float32)
    return [empty] * spec.LAYERS, [empty] * spec.LAYERS
