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

from ocrmodel import reference
from ocrmodel.build_models import DEFAULT_CHECKPOINT, VOCAB
from ocrmodel.conftest import read_checkpoint
from ocrmodel.decode import ReferenceDecoder, content_ids, greedy_loop


def test_reference_reads_like_pytorch_with_the_checkpoint(hayai_case):
    weights = read_checkpoint(DEFAULT_CHECKPOINT)
    vision_embeds = reference.vision_forward(weights, hayai_case.pixels)
    decoder = ReferenceDecoder(weights)
    tokens = greedy_loop(
        lambda: decoder.prefill(vision_embeds), decoder.step, len(hayai_case.pytorch_tokens) + 1, content_ids(VOCAB)
    )
    assert tokens == hayai_case.pytorch_tokens, f"PyTorch read {hayai_case.expected!r}"
