"""The one architecture that the model builder (ONNX) and the trainer (PyTorch) both implement.

Anything that changes a tensor's name, shape or meaning changes it here first; the builder,
the trainer and the numpy reference read these constants and never restate them.

Vision encoder (pixel_values [1,3,224,224] -> vision_embeds [1,256,512]):
  stem1: Conv 3->64, kernel 3, stride 2, pad 1, then GELU (224 -> 112)
  stem2: Conv 64->384, kernel 7, stride 7 (112 -> 16x16 = 256 tokens), flattened row-major
  + pos [256,384]
  6 pre-LayerNorm ViT blocks of width 384: x += out(attn(ln1(x))) with 6 heads of 64 and a fused
  qkv projection laid out [q; k; v]; x += fc2(GELU(fc1(ln2(x)))) with MLP 1536
  final LayerNorm, then proj 384 -> 512.
  LayerNorm eps 1e-6; GELU is the exact erf form (torch's default).

Decoder (the contract's unified prefill/decode graph):
  x = concat(vision_embeds [1,V,512], embed[token_ids] [1,1,512]) along the sequence
  6 blocks: x += o(attn(rms(x))); x += down(silu(gate(rms(x))) * up(rms(x)))
  attention: 8 query heads, 2 KV heads (each serves 4 query heads), head dim 64, scale 1/8,
  causal over past + new positions (vision tokens included), RoPE on q and k from position_ids
  (theta 10000, "rotate half" layout: cos/sin = cat(freqs, freqs)), applied before k is cached.
  final RMSNorm, logits = last position @ embed^T (tied head). RMSNorm eps 1e-6, no biases.

Weights use PyTorch's Linear layout [out, in].
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

IMAGE_SIZE = 224
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

VISION_TOKENS = 256
VISION_WIDTH = 384
VISION_LAYERS = 6
VISION_HEADS = 6
VISION_MLP = 1536
STEM_CHANNELS = 64
LAYER_NORM_EPS = 1e-6

HIDDEN = 512
LAYERS = 6
HEADS = 8
KV_HEADS = 2
HEAD_DIM = 64
MLP = 1536
VOCAB_IDS = 14630
RMS_NORM_EPS = 1e-6
ROPE_THETA = 10000.0

BOS_ID = 1
EOS_ID = 2
VOCAB_OFFSET = 4
MAX_TOKENS = 128
KV_SLOTS = VISION_TOKENS + 1 + (MAX_TOKENS - 1)  # 384: vision, BOS, then every decoded token but the last


def parameter_shapes() -> dict[str, tuple[int, ...]]:
    """Every parameter of the model, by name, in a stable order."""
    shapes: dict[str, tuple[int, ...]] = {
        "vision.stem1.weight": (STEM_CHANNELS, 3, 3, 3),
        "vision.stem1.bias": (STEM_CHANNELS,),
        "vision.stem2.weight": (VISION_WIDTH, STEM_CHANNELS, 7, 7),
        "vision.stem2.bias": (VISION_WIDTH,),
        "vision.pos": (VISION_TOKENS, VISION_WIDTH),
    }
    for i in range(VISION_LAYERS):
        p = f"vision.layers.{i}."
        shapes.update(
            {
                p + "ln1.weight": (VISION_WIDTH,),
                p + "ln1.bias": (VISION_WIDTH,),
                p + "attn.qkv.weight": (3 * VISION_WIDTH, VISION_WIDTH),
                p + "attn.qkv.bias": (3 * VISION_WIDTH,),
                p + "attn.out.weight": (VISION_WIDTH, VISION_WIDTH),
                p + "attn.out.bias": (VISION_WIDTH,),
                p + "ln2.weight": (VISION_WIDTH,),
                p + "ln2.bias": (VISION_WIDTH,),
                p + "mlp.fc1.weight": (VISION_MLP, VISION_WIDTH),
                p + "mlp.fc1.bias": (VISION_MLP,),
                p + "mlp.fc2.weight": (VISION_WIDTH, VISION_MLP),
                p + "mlp.fc2.bias": (VISION_WIDTH,),
            }
        )
    shapes.update(
        {
            "vision.ln.weight": (VISION_WIDTH,),
            "vision.ln.bias": (VISION_WIDTH,),
            "vision.proj.weight": (HIDDEN, VISION_WIDTH),
            "vision.proj.bias": (HIDDEN,),
            "decoder.embed.weight": (VOCAB_IDS, HIDDEN),
        }
    )
    for i in range(LAYERS):
        p = f"decoder.layers.{i}."
        shapes.update(
            {
                p + "attn_norm.weight": (HIDDEN,),
                p + "attn.q.weight": (HEADS * HEAD_DIM, HIDDEN),
                p + "attn.k.weight": (KV_HEADS * HEAD_DIM, HIDDEN),
                p + "attn.v.weight": (KV_HEADS * HEAD_DIM, HIDDEN),
                p + "attn.o.weight": (HIDDEN, HEADS * HEAD_DIM),
                p + "mlp_norm.weight": (HIDDEN,),
                p + "mlp.gate.weight": (MLP, HIDDEN),
                p + "mlp.up.weight": (MLP, HIDDEN),
                p + "mlp.down.weight": (HIDDEN, MLP),
            }
        )
    shapes["decoder.norm.weight"] = (HIDDEN,)
    return shapes


def save_checkpoint(weights: dict[str, np.ndarray], path: Path) -> None:
    """Store weights compactly: tensors of rank >= 2 as int8 with one float32 scale per output
    row (symmetric, round to nearest), vectors as float16. About one byte per parameter."""
    shapes = parameter_shapes()
    if set(weights) != set(shapes):
        raise ValueError(f"checkpoint names differ from the spec: {sorted(set(weights) ^ set(shapes))[:8]}")
    arrays: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        value = np.asarray(weights[name], dtype=np.float32)
        if value.shape != shape:
            raise ValueError(f"{name}: shape {value.shape}, the spec says {shape}")
        if value.ndim >= 2:
            rows = value.reshape(shape[0], -1)
            scale = np.abs(rows).max(axis=1) / 127.0
            scale[scale == 0] = 1.0
            arrays[name] = np.clip(np.rint(rows / scale[:, None]), -127, 127).astype(np.int8).reshape(shape)
            arrays[name + ".scale"] = scale.astype(np.float32)
        else:
            arrays[name] = value.astype(np.float16)
    np.savez_compressed(path, **arrays)


def load_checkpoint(path: Path) -> dict[str, np.ndarray]:
    """Read a checkpoint written by save_checkpoint back as float32 arrays keyed by spec name."""
    with np.load(path) as stored:
        weights: dict[str, np.ndarray] = {}
        for name, shape in parameter_shapes().items():
            if name not in stored:
                raise ValueError(f"{path}: missing {name}")
            value = stored[name]
            if value.dtype == np.int8:
                scale = stored[name + ".scale"].astype(np.float32)
                value = (value.reshape(shape[0], -1).astype(np.float32) * scale[:, None]).reshape(shape)
            weights[name] = value.astype(np.float32)
            if weights[name].shape != shape:
                raise ValueError(f"{path}: {name} has shape {weights[name].shape}, the spec says {shape}")
    return weights


def rope_inverse_frequencies() -> np.ndarray:
    """RoPE inverse frequencies [HEAD_DIM // 2] as float32, computed the way torch does
    (`1 / theta ** (arange(0, d, 2).float() / d)` in float32)."""
    exponents = np.arange(0, HEAD_DIM, 2, dtype=np.float32) / np.float32(HEAD_DIM)
    return (np.float32(1.0) / np.power(np.float32(ROPE_THETA), exponents)).astype(np.float32)


def kv_head_of(query_head: int) -> int:
    """Grouped-query attention: query heads 0-3 read KV head 0, 4-7 read KV head 1 (the
    `repeat_interleave` layout, as in Hugging Face's repeat_kv)."""
    return query_head // (HEADS // KV_HEADS)
