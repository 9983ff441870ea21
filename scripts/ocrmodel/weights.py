"""Where the model's float32 weights come from: a checkpoint (spec.save_checkpoint) or a seed."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import spec

# Matrices written after a residual branch get this extra factor so that six blocks of random
# weights keep the residual stream near unit scale instead of growing by sqrt(2) per block.
RESIDUAL_BRANCH_SCALE = 0.5
# Token embedding scale: the tied head's logits spread over a few units (std about
# sqrt(512) * 0.05 = 1.1), in the range where fp16 and int4 errors are visible but small.
EMBED_STD = 0.05
POSITION_STD = 0.1
BIAS_STD = 0.02
NORM_JITTER = 0.05


@dataclass(frozen=True)
class WeightsSource:
    """What the weights were made from, as recorded in build-info.json."""

    kind: str  # "checkpoint" or "synthetic"
    path: str | None = None
    sha256: str | None = None
    seed: int | None = None

    def describe(self) -> str:
        if self.kind == "checkpoint":
            return f"checkpoint {self.path} sha256 {self.sha256}"
        return f"synthetic seed {self.seed}"

    def as_json(self) -> dict:
        if self.kind == "checkpoint":
            return {"kind": "checkpoint", "path": self.path, "sha256": self.sha256}
        return {"kind": "synthetic", "seed": self.seed}


def synthetic_weights(seed: int) -> dict[str, np.ndarray]:
    """Deterministic random weights of the spec's shapes, scaled so activations stay near unit
    size through both towers and the greedy loop neither stops at once nor repeats one token."""
    rng = np.random.default_rng(seed)
    weights: dict[str, np.ndarray] = {}
    for name, shape in spec.parameter_shapes().items():
        if (
            name.endswith("norm.weight")
            or name.endswith("ln1.weight")
            or name.endswith("ln2.weight")
            or name == "vision.ln.weight"
        ):
            value = 1.0 + NORM_JITTER * rng.standard_normal(shape, dtype=np.float32)
        elif name.endswith(".bias") and len(shape) == 1:
            value = BIAS_STD * rng.standard_normal(shape, dtype=np.float32)
        elif name == "decoder.embed.weight":
            value = EMBED_STD * rng.standard_normal(shape, dtype=np.float32)
        elif name == "vision.pos":
            value = POSITION_STD * rng.standard_normal(shape, dtype=np.float32)
        else:
            fan_in = int(np.prod(shape[1:]))
            std = 1.0 / np.sqrt(fan_in)
            if name.endswith(("attn.out.weight", "mlp.fc2.weight", "attn.o.weight", "mlp.down.weight")):
                std *= RESIDUAL_BRANCH_SCALE
            value = std * rng.standard_normal(shape, dtype=np.float32)
        weights[name] = value.astype(np.float32)
    # With a tied head, h . embed[t] is largest for the token t just fed in, so random weights
    # repeat one token until the run block stops it (seen: 12 x 4163, 12 x 6542, ...). Random
    # signs on the final norm's gain make that self-score average zero; then each step's token
    # depends on the previous one and on the image (seen: 12 distinct tokens in 12 steps).
    signs = np.where(rng.random(spec.HIDDEN) < 0.5, -1.0, 1.0).astype(np.float32)
    weights["decoder.norm.weight"] = weights["decoder.norm.weight"] * signs
    return weights


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for chunk in iter(lambda: file.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load_weights(checkpoint: Path | None, seed: int | None) -> tuple[dict[str, np.ndarray], WeightsSource]:
    """Weights from the checkpoint when one is given, else synthetic from the seed."""
    if checkpoint is not None:
        return spec.load_checkpoint(checkpoint), WeightsSource("checkpoint", str(checkpoint), sha256_of(checkpoint))
    if seed is None:
        raise ValueError("neither a checkpoint nor a synthetic seed was given")
    return synthetic_weights(seed), WeightsSource("synthetic", seed=seed)
