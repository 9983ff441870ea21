"""The PyTorch model of ocrmodel/spec.py, with module names equal to the spec's parameter names.

Training runs the unified sequence in one pass: 256 vision embeddings (positions 0..255), BOS
(256), then the text (257..), causal attention over all of it, exactly as the ONNX decoder's
prefill + decode steps see it. The auxiliary head (`aux_norm`) exists only for training and
is not exported.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ocrmodel import spec


class RMSNorm(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + spec.RMS_NORM_EPS)
        return (x32 * self.weight.float()).to(x.dtype)


class VisionAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(spec.VISION_WIDTH, 3 * spec.VISION_WIDTH)
        self.out = nn.Linear(spec.VISION_WIDTH, spec.VISION_WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, width = x.shape
        head_dim = width // spec.VISION_HEADS
        q, k, v = self.qkv(x).view(batch, tokens, 3, spec.VISION_HEADS, head_dim).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(batch, tokens, width))


class VisionMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(spec.VISION_WIDTH, spec.VISION_MLP)
        self.fc2 = nn.Linear(spec.VISION_MLP, spec.VISION_WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


class VisionBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(spec.VISION_WIDTH, eps=spec.LAYER_NORM_EPS)
        self.attn = VisionAttention()
        self.ln2 = nn.LayerNorm(spec.VISION_WIDTH, eps=spec.LAYER_NORM_EPS)
        self.mlp = VisionMlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class VisionEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem1 = nn.Conv2d(3, spec.STEM_CHANNELS, 3, stride=2, padding=1)
        self.stem2 = nn.Conv2d(spec.STEM_CHANNELS, spec.VISION_WIDTH, 7, stride=7)
        self.pos = nn.Parameter(torch.randn(spec.VISION_TOKENS, spec.VISION_WIDTH) * 0.02)
        self.layers = nn.ModuleList(VisionBlock() for _ in range(spec.VISION_LAYERS))
        self.ln = nn.LayerNorm(spec.VISION_WIDTH, eps=spec.LAYER_NORM_EPS)
        self.proj = nn.Linear(spec.VISION_WIDTH, spec.HIDDEN)

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        x = self.stem2(F.gelu(self.stem1(pixels)))  # [B, 384, 16, 16]
        x = x.flatten(2).transpose(1, 2) + self.pos  # row-major grid -> tokens
        for layer in self.layers:
            x = layer(x)
        return self.proj(self.ln(x))


def rope_tables(positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin [S, 64] in the rotate-half layout (cat(freqs, freqs))."""
    exponents = torch.arange(0, spec.HEAD_DIM, 2, dtype=torch.float32, device=positions.device) / spec.HEAD_DIM
    inverse = 1.0 / (spec.ROPE_THETA**exponents)
    freqs = positions.float()[:, None] * inverse[None, :]
    angles = torch.cat([freqs, freqs], dim=-1)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, dim=-1)
    return torch.cat([-second, first], dim=-1)


class DecoderAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(spec.HIDDEN, spec.HEADS * spec.HEAD_DIM, bias=False)
        self.k = nn.Linear(spec.HIDDEN, spec.KV_HEADS * spec.HEAD_DIM, bias=False)
        self.v = nn.Linear(spec.HIDDEN, spec.KV_HEADS * spec.HEAD_DIM, bias=False)
        self.o = nn.Linear(spec.HEADS * spec.HEAD_DIM, spec.HIDDEN, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        batch, tokens, _ = x.shape
        q = self.q(x).view(batch, tokens, spec.HEADS, spec.HEAD_DIM).transpose(1, 2)
        k = self.k(x).view(batch, tokens, spec.KV_HEADS, spec.HEAD_DIM).transpose(1, 2)
        v = self.v(x).view(batch, tokens, spec.KV_HEADS, spec.HEAD_DIM).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # KV head j serves query heads 4j..4j+3.
        group = spec.HEADS // spec.KV_HEADS
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / spec.HEAD_DIM**0.5)
        return self.o(y.transpose(1, 2).reshape(batch, tokens, spec.HEADS * spec.HEAD_DIM))


class DecoderMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(spec.HIDDEN, spec.MLP, bias=False)
        self.up = nn.Linear(spec.HIDDEN, spec.MLP, bias=False)
        self.down = nn.Linear(spec.MLP, spec.HIDDEN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.silu(self.gate(x)) * self.up(x))


class DecoderBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(spec.HIDDEN)
        self.attn = DecoderAttention()
        self.mlp_norm = RMSNorm(spec.HIDDEN)
        self.mlp = DecoderMlp()

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(spec.VOCAB_IDS, spec.HIDDEN)
        self.layers = nn.ModuleList(DecoderBlock() for _ in range(spec.LAYERS))
        self.norm = RMSNorm(spec.HIDDEN)

    def forward(self, vision_embeds: torch.Tensor, token_ids: torch.Tensor) -> torch.Tensor:
        """Logits [B, T, vocab] for every text position (BOS included) of the unified sequence."""
        x = torch.cat([vision_embeds, self.embed(token_ids).to(vision_embeds.dtype)], dim=1)
        cos, sin = rope_tables(torch.arange(x.shape[1], device=x.device))
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        for layer in self.layers:
            x = layer(x, cos, sin)
        text = self.norm(x[:, vision_embeds.shape[1] :])
        return text @ self.embed.weight.to(text.dtype).t()


class OcrModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.vision = VisionEncoder()
        self.decoder = Decoder()
        self.aux_norm = RMSNorm(spec.HIDDEN)  # training only
        self._initialise()

    def _initialise(self) -> None:
        for name, parameter in self.named_parameters():
            if parameter.ndim == 2 and name != "vision.pos":
                nn.init.normal_(parameter, std=0.02)
            if name.endswith(("attn.o.weight", "mlp.down.weight", "attn.out.weight", "mlp.fc2.weight")):
                nn.init.normal_(parameter, std=0.02 / (2 * spec.LAYERS) ** 0.5)
            if name.endswith(".bias"):
                nn.init.zeros_(parameter)

    def aux_logits(self, vision_embeds: torch.Tensor, cells: torch.Tensor) -> torch.Tensor:
        """Which character's centre lies in each chosen grid cell, through the tied output layer."""
        picked = torch.gather(vision_embeds, 1, cells[..., None].expand(-1, -1, vision_embeds.shape[-1]))
        picked = self.aux_norm(picked)
        return picked @ self.decoder.embed.weight.to(picked.dtype).t()

    def exported_weights(self) -> dict[str, np.ndarray]:
        names = spec.parameter_shapes()
        state = {k: v for k, v in self.state_dict().items() if not k.startswith("aux_norm.")}
        if set(state) != set(names):
            raise RuntimeError(f"module names differ from the spec: {sorted(set(state) ^ set(names))[:8]}")
        return {name: state[name].detach().float().cpu().numpy() for name in names}

    def load_weights(self, weights: dict[str, np.ndarray]) -> None:
        state = self.state_dict()
        for name, value in weights.items():
            state[name].copy_(torch.from_numpy(value))
