"""The seed page's prefill/decode loop and token choice in Python, over an onnxruntime session
or over the numpy reference, so tests can run exactly what the page runs.

Token choice (the core's `TokenChooser`, crate/src/choose.rs, the seed's `chooseToken` rule):
greedy over the logits after dividing positive (multiplying negative) scores of every id already
in the sequence (BOS included) by 1.2, in doubles, with a content character that already ran 12
times in a row blocked; the first index wins a tie, NaN never wins, and when nothing scores
above -Infinity it is an error. test_choose_matches_core.py holds this to the wasm core.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np

from . import reference, spec

REPETITION_PENALTY = 1.2
RUN_LIMIT = 12
NOT_CONTENT = "ーｰ〜~"


def content_ids(vocab_path: Path) -> set[int]:
    """Ids of one-UTF-16-unit letters and numbers (the seed's `/[\\p{Letter}\\p{Number}]/u` test
    on `character.length === 1`), minus the long-vowel and wave marks."""
    characters = json.loads(Path(vocab_path).read_text(encoding="utf-8"))
    return {
        index + spec.VOCAB_OFFSET
        for index, character in enumerate(characters)
        if len(character) == 1
        and ord(character) <= 0xFFFF
        and character not in NOT_CONTENT
        and unicodedata.category(character)[0] in "LN"
    }


class NoCandidate(ValueError):
    """No id scores above -Infinity: every score is NaN, -Infinity or blocked."""


def penalised_scores(
    logits: np.ndarray, sequence: list[int], tokens: list[int], content: set[int]
) -> tuple[np.ndarray, int | None]:
    """The scores the choice compares (float64, NaN and a blocked id at -Infinity) and the
    blocked id, if any. `sequence` is BOS followed by `tokens`, the ids decoded so far."""
    scores = np.asarray(logits, dtype=np.float64).reshape(-1).copy()  # JS numbers are doubles
    seen = np.fromiter(set(sequence), dtype=np.int64)
    if seen.size and not (0 <= seen.min() and seen.max() < scores.size):
        raise ValueError(
            f"sequence ids must lie in 0..{scores.size - 1} (the logits' length); got {seen.min()}..{seen.max()}"
        )
    values = scores[seen]
    scores[seen] = np.where(values < 0, values * REPETITION_PENALTY, values / REPETITION_PENALTY)
    blocked = None
    if tokens and tokens[-1] in content:
        last = tokens[-1]
        run = 0
        for token in reversed(tokens):
            if token != last:
                break
            run += 1
        if run >= RUN_LIMIT:
            blocked = last
            scores[last] = -np.inf
    scores[np.isnan(scores)] = -np.inf  # np.argmax would pick the first NaN
    return scores, blocked


def choose_token(logits: np.ndarray, sequence: list[int], tokens: list[int], content: set[int]) -> int:
    """The next id. `sequence` is BOS followed by `tokens`, the ids decoded so far."""
    scores, blocked = penalised_scores(logits, sequence, tokens, content)
    best = int(np.argmax(scores))  # the first maximum, as the seed's strict `>` scan
    if not scores[best] > -np.inf:
        raise NoCandidate(
            f"no token can be chosen: every score is NaN, -Infinity or blocked "
            f"({scores.size} logits, blocked id: {'none' if blocked is None else blocked})"
        )
    return best


Chooser = Callable[[np.ndarray, list[int], list[int], set[int]], int]


def greedy_loop(
    prefill: Callable[[], np.ndarray],
    step: Callable[[int, int], np.ndarray],
    max_tokens: int,
    content: set[int],
    choose: Chooser = choose_token,
) -> list[int]:
    """The seed's `decode`: prefill, then one step per chosen token until EOS or max_tokens.
    `choose` takes choose_token's arguments (the reading oracle's also records near ties)."""
    logits = prefill()
    sequence = [spec.BOS_ID]
    tokens: list[int] = []
    for iteration in range(max_tokens):
        token = choose(logits, sequence, tokens, content)
        if token == spec.EOS_ID:
            break
        tokens.append(token)
        sequence.append(token)
        if len(tokens) >= max_tokens:
            break
        logits = step(token, iteration)
    return tokens


def prefill_positions() -> np.ndarray:
    return np.arange(spec.VISION_TOKENS + 1, dtype=np.int32)[None]


def step_position(iteration: int) -> np.ndarray:
    return np.array([[spec.VISION_TOKENS + 1 + iteration]], dtype=np.int32)


class OnnxDecoder:
    """Drives one decoder session the way the page does, keeping the presents as next pasts."""

    def __init__(self, session, fixed_kv: bool) -> None:
        self.session = session
        self.fixed_kv = fixed_kv
        self.cache: dict[str, np.ndarray] = {}
        self.length = 0  # valid cache positions after the last call
        self.last_outputs: dict[str, np.ndarray] = {}

    def run(self, vision_embeds: np.ndarray, token: int, positions: np.ndarray, past_length: int) -> np.ndarray:
        feeds = {
            "vision_embeds": vision_embeds,
            "token_ids": np.array([[token]], dtype=np.int32),
            "position_ids": positions,
            **self.cache,
        }
        if self.fixed_kv:
            feeds["past_length"] = np.array([past_length], dtype=np.int64)
        names = [output.name for output in self.session.get_outputs()]
        self.last_outputs = dict(zip(names, self.session.run(names, feeds), strict=True))
        self.cache = {
            name.replace("present_", "past_"): value
            for name, value in self.last_outputs.items()
            if name.startswith("present_")
        }
        self.length = past_length + positions.shape[1]
        return self.last_outputs["logits"]

    def prefill(self, vision_embeds: np.ndarray, initial_cache: dict[str, np.ndarray] | None = None) -> np.ndarray:
        if initial_cache is not None:
            self.cache = dict(initial_cache)
        else:
            slots = spec.KV_SLOTS if self.fixed_kv else 0
            empty = np.zeros((1, spec.KV_HEADS, slots, spec.HEAD_DIM), dtype=np.float32)
            self.cache = {f"past_{kind}{layer}": empty for layer in range(spec.LAYERS) for kind in "kv"}
        return self.run(vision_embeds, spec.BOS_ID, prefill_positions(), 0)

    def step(self, token: int, iteration: int) -> np.ndarray:
        empty_vision = np.zeros((1, 0, spec.HIDDEN), dtype=np.float32)
        return self.run(empty_vision, token, step_position(iteration), spec.VISION_TOKENS + 1 + iteration)


class ReferenceDecoder:
    """The same loop over reference.decoder_forward."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.weights = weights
        self.past_k, self.past_v = reference.empty_cache()

    def prefill(self, vision_embeds: np.ndarray) -> np.ndarray:
        self.past_k, self.past_v = reference.empty_cache()
        return self._run(vision_embeds, spec.BOS_ID, prefill_positions())

    def step(self, token: int, iteration: int) -> np.ndarray:
        return self._run(np.zeros((1, 0, spec.HIDDEN), dtype=np.float32), token, step_position(iteration))

    def _run(self, vision_embeds: np.ndarray, token: int, positions: np.ndarray) -> np.ndarray:
        logits, self.past_k, self.past_v = reference.decoder_forward(
            self.weights, vision_embeds, np.array([[token]]), positions, self.past_k, self.past_v
        )
        return logits
