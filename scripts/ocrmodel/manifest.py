"""models/manifest.json in the schema of docs/architecture.md, from the variant table.

The manifest names files and capability numbers only, so it is the same for trained and
synthetic weights; which weights a build used is in the build's build-info.json.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from . import spec
from .variants import DECODER_VARIANTS, VISION_VARIANTS

MODEL_NAME = "ocr-bench-default"
# The decoder's logits output: the last position's scores, one row.
LOGITS_SHAPE = [1, spec.VOCAB_IDS]


def _files(generated: PurePosixPath, file: str) -> dict:
    return {
        "embedded": str(generated / file),
        "external": {"model": str(generated / "external" / file),
                     "data": str(generated / "external" / (file + ".data"))},
    }


def build_manifest(generated: PurePosixPath, vocab: PurePosixPath, checkpoint: PurePosixPath) -> dict:
    """`generated`, `vocab` and `checkpoint` are relative to the manifest's own directory."""
    return {
        "name": MODEL_NAME,
        "weightsSource": f"checkpoint {checkpoint} when present at build time, else synthetic weights from a "
                         f"seed; {generated / 'build-info.json'} records which",
        "buildInfo": str(generated / "build-info.json"),
        "vocab": str(vocab),
        "tokens": {"bos": spec.BOS_ID, "eos": spec.EOS_ID, "vocabOffset": spec.VOCAB_OFFSET},
        "capability": {
            "layers": spec.LAYERS, "hiddenSize": spec.HIDDEN, "intermediateSize": spec.MLP,
            "attentionHeads": spec.HEADS, "kvHeads": spec.KV_HEADS, "headDim": spec.HEAD_DIM,
            "vocabulary": spec.VOCAB_IDS, "imageSize": spec.IMAGE_SIZE, "visionTokens": spec.VISION_TOKENS,
            "kvSlots": spec.KV_SLOTS, "maxTokens": spec.MAX_TOKENS,
        },
        "logitsShape": LOGITS_SHAPE,
        "vision": {
            v.tier: {"description": v.description, "requires": list(v.requires), **_files(generated, v.file)}
            for v in VISION_VARIANTS
        },
        "decoder": {
            d.name: {"description": d.description, "requires": list(d.requires), "fixedKv": d.fixed_kv,
                     **_files(generated, d.file)}
            for d in DECODER_VARIANTS
        },
    }
