"""A plain numpy forward pass of spec.py's architecture, written for reading, not for speed.

The tests compare every ONNX file against it, and the trainer checks its PyTorch model against
it: same weights (spec names, Linear layout [out, in]), same inputs, same outputs.

    vision_embeds = vision_forward(weights, pixel_values)             # [1,256,512]
    logits, present_k, present_v = decoder_forward(weights, vision_embeds, token_ids,
                                                   position_ids, past_k, past_v)

Computation is float32 except erf (see _erf).
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
        q, k, v = (qkv[:, j * spec.VISION_WIDTH:(j + 1) * spec.VISION_WIDTH]
                   .reshape(spec.VISION_TOKENS, spec.VISION_HEADS, head_dim).transpose(1, 0, 2) for j in range(3))
        attention = softmax(q @ k.transpose(0, 2, 1) * np.float32(head_dim ** -0.5)) @ v
        x = x + linear(attention.transpose(1, 0, 2).reshape(spec.VISION_TOKENS, spec.VISION_WIDTH),
                       w[p + "attn.out.weight"], w[p + "attn.out.bias"])
        h = layer_norm(x, w[p + "ln2.weight"], w[p + "ln2.bias"])
        x = x + linear(gelu(linear(h, w[p + "mlp.fc1.weight"], w[p + "mlp.fc1.bias"])),
                       w[p + "mlp.fc2.weight"], w[p + "mlp.fc2.bias"])
    x = layer_norm(x, w["vision.ln.weight"], w["vision.ln.bias"])
    return linear(x, w["vision.proj.weight"], w["vision.proj.bias"])[None].astype(np.float32)


def rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """x [heads, S, 64] rotated by positions [S] ("rotate half" layout)."""
    angles = positions.astype(np.float32)[:, None] * spec.rope_inverse_frequencies()[None, :]
    angles = np.concatenate([angles, angles], axis=-1)
    half = spec.HEAD_DIM // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * np.cos(angles) + rotated * np.sin(angles)


def decoder_forward(w: dict[str, np.ndarray], vision_embeds: np.ndarray, token_ids: np.ndarray,
                    position_ids: np.ndarray, past_k: list[np.ndarray], past_v: list[np.ndarray]
                    ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """One unified decoder call. vision_embeds [1,V,512], token_ids [1,1], position_ids [1,V+1],
    past_k/past_v per layer [1,2,P,64]. Returns logits [1,VOCAB_IDS] of the last position and
    the presents [1,2,P+V+1,64]."""
    x = np.concatenate([vision_embeds[0], w["decoder.embed.weight"][token_ids[0]]], axis=0)
    new = x.shape[0]
    positions = position_ids[0]
    group = spec.HEADS // spec.KV_HEADS
    present_k, present_v = [], []
    for layer in range(spec.LAYERS):
        p = f"decoder.layers.{layer}."
        h = rms_norm(x, w[p + "attn_norm.weight"])
        q = rope(linear(h, w[p + "attn.q.weight"]).reshape(new, spec.HEADS, spec.HEAD_DIM).transpose(1, 0, 2),
                 positions)
        k = rope(linear(h, w[p + "attn.k.weight"]).reshape(new, spec.KV_HEADS, spec.HEAD_DIM).transpose(1, 0, 2),
                 positions)
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
            kv = spec.kv_head_of(head)
            scores = q[head] @ keys[kv].T * np.float32(spec.HEAD_DIM ** -0.5)
            heads.append(softmax(np.where(visible, scores, -np.inf)) @ values[kv])
        assert group * spec.KV_HEADS == spec.HEADS
        x = x + linear(np.stack(heads, axis=1).reshape(new, spec.HEADS * spec.HEAD_DIM), w[p + "attn.o.weight"])
        h = rms_norm(x, w[p + "mlp_norm.weight"])
        gate = linear(h, w[p + "mlp.gate.weight"])
        x = x + linear(gate / (1.0 + np.exp(-gate)) * linear(h, w[p + "mlp.up.weight"]), w[p + "mlp.down.weight"])
    last = rms_norm(x[-1:], w["decoder.norm.weight"])
    return (last @ w["decoder.embed.weight"].T).astype(np.float32), present_k, present_v


def empty_cache() -> tuple[list[np.ndarray], list[np.ndarray]]:
    empty = np.zeros((1, spec.KV_HEADS, 0, spec.HEAD_DIM), dtype=np.float32)
    return [empty] * spec.LAYERS, [empty] * spec.LAYERS
