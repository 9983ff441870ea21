"""The harness's repetition penalty applied to training logits, so the loss scores what the
greedy choice will see.

The page's token choice (ocrmodel.decode.choose_token) divides the positive logit of every id
already in the sequence, BOS included, by 1.2 and multiplies a negative one by 1.2. A model
trained on plain logits reads a character it has already read only while it beats every
look-alike by that factor, and a string that repeats a character (ペ…ペ, ぷ…ぷ) comes out
with ぺ or ぶ the second time (README.md gives the count). Teacher forcing feeds the true
string, so at position t the sequence is exactly BOS + the first t characters: inputs[0..t].
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ocrmodel.decode import REPETITION_PENALTY  # noqa: E402


def penalised_logits(logits: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
    """logits [B, T, V] for inputs [B, T] (BOS first): each position's logits as choose_token
    penalises them after the inputs up to and including that position."""
    positions = inputs.shape[1]
    order = torch.arange(positions, device=inputs.device)
    earlier = order[None, :] <= order[:, None]  # [T, T]: position t has seen inputs[0..t]
    # Slots after t repeat BOS, which every position has seen anyway.
    ids = torch.where(earlier, inputs[:, None, :], inputs[:, :1, None])
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device).scatter_(-1, ids, True)
    penalised = torch.where(logits < 0, logits * REPETITION_PENALTY, logits / REPETITION_PENALTY)
    return torch.where(seen, penalised, logits)
