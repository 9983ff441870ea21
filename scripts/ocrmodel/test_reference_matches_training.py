"""The reference computes what the trained model computed: with the checkpoint's weights, read
straight from the .npz (int8 codes times their per-row scale, float16 vectors widened) and no
built file involved, it reads hayai13 case 01 with exactly the tokens training's final PyTorch
evaluation chose (models/checkpoint/eval-pytorch.json). PyTorch ran scripts/train/model.py:
rotate-half RoPE with base 10000, repeat_interleave grouped-query attention. A reference that
pairs neighbouring dimensions (interleaved), turns the pairs the other way, or uses base 1000
or 100000 does not read this line (seen: the first or second token differs). Tokens are too
coarse for small faults (base 10100, decode positions one off: the same 16 tokens); the
logit and cache comparisons of test_reference.py catch those.
"""

from __future__ import annotations

import numpy as np

from ocrmodel import reference, spec
from ocrmodel.build_models import DEFAULT_CHECKPOINT, VOCAB
from ocrmodel.decode import ReferenceDecoder, content_ids, greedy_loop


def checkpoint_weights() -> dict[str, np.ndarray]:
    """The checkpoint format (spec.save_checkpoint): rank >= 2 as int8 with `<name>.scale`, one
    float32 per output row; vectors as float16."""
    weights = {}
    with np.load(DEFAULT_CHECKPOINT) as stored:
        for name, shape in spec.parameter_shapes().items():
            value = stored[name]
            if value.dtype == np.int8:
                value = reference.dequantize_int8(value.reshape(shape[0], -1), stored[name + ".scale"], axis=0)
            weights[name] = value.astype(np.float32).reshape(shape)
    return weights


def test_reference_reads_like_pytorch_with_the_checkpoint(hayai_case):
    weights = checkpoint_weights()
    vision_embeds = reference.vision_forward(weights, hayai_case.pixels)
    decoder = ReferenceDecoder(weights)
    tokens = greedy_loop(lambda: decoder.prefill(vision_embeds), decoder.step, len(hayai_case.pytorch_tokens) + 1,
                         content_ids(VOCAB))
    assert tokens == hayai_case.pytorch_tokens, f"PyTorch read {hayai_case.expected!r}"
