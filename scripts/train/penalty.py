"""The harness's repetition penalty applied to training logits, so the loss scores what the
greedy choice will see.

The page's token choice (ocrmodel.decode.choose_token) divides the positive logit of every id
already in the sequence, BOS included, by 1.2 and multiplies a negative one by 1.2. A model
trained on plain logits reads a character it has already read only while it beats every
look-alike by that factor, and a string that repeats a character (ペ…ペ, ぷ…ぷ) comes out
with ぺ or ぶ the second time (README.md gives the count). Teacher forcing feeds the true
string, so at position t the sequence is exactly BOS + the first t characters: inputs[0..t].

Training calls it on torch tensors. The same code runs on NumPy arrays (the operations are
spelled alike in both, but for marking the seen ids, `_mark`), so that test_penalty.py checks
it against the page's token choice where torch is not installed.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from ocrmodel.decode import REPETITION_PENALTY


def penalised_logits(logits: Any, inputs: Any) -> Any:
    """logits [B, T, V] for inputs [B, T] (BOS first), both torch tensors or both NumPy arrays:
    each position's logits as choose_token penalises them after the inputs up to and including
    that position."""
    xp = _namespace(logits)
    positions = inputs.shape[1]
    order = xp.arange(positions, device=inputs.device)
    earlier = order[None, :] <= order[:, None]  # [T, T]: position t has seen inputs[0..t]
    # Slots after t repeat BOS, which every position has seen anyway.
    ids = xp.where(earlier, inputs[:, None, :], inputs[:, :1, None])
    seen = _mark(xp.zeros(logits.shape, dtype=xp.bool, device=logits.device), ids)
    penalised = xp.where(logits < 0, logits * REPETITION_PENALTY, logits / REPETITION_PENALTY)
    return xp.where(seen, penalised, logits)


def _namespace(array: Any) -> ModuleType:
    """NumPy for an ndarray, else torch (imported only then: the tests run without it)."""
    if isinstance(array, np.ndarray):
        return np
    import torch

    return torch


def _mark(mask: Any, ids: Any) -> Any:
    """`mask` [B, T, V] with True at each id of `ids` [B, T, T] along the last axis."""
    if isinstance(mask, np.ndarray):
        np.put_along_axis(mask, ids, True, axis=-1)
        return mask
    return mask.scatter_(-1, ids, True)
