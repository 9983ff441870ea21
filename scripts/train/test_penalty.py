"""penalty.penalised_logits (the training loss's repetition penalty) transforms each position's
logits exactly as the page's token choice does after that position's inputs, so the loss and
the greedy choice agree on which id wins.

The penalty runs here on NumPy arrays, the code training runs on torch tensors (penalty.py says
which line differs); its winner at every position of teacher-forced strings with repeats must be
the id the page's wasm core (pkg/, in Node) and decode.choose_token choose after the same ids.
No id runs 12 times, so the core's run block, which training does not model, never applies.
Where torch is installed (the training machine), the torch path must give the NumPy path's
values too.
"""

from __future__ import annotations

import numpy as np
import pytest

from ocrmodel import spec
from ocrmodel.conftest import run_core
from ocrmodel.decode import choose_token
from train.penalty import penalised_logits

SEED = 20261204
# Repeats, so that seen ids are penalised (punctuation ids here); more strings of the first
# content ids (characters, which the run block would count) are drawn below.
FIXED_STRINGS = [[5, 9, 5, 5, 12], [7, 7, 7], [30, 31, 32, 30, 31, 32, 6]]
RANDOM_STRINGS = 24


def teacher_forced(strings: list[list[int]]) -> np.ndarray:
    """inputs [B, T]: BOS, the string, then padding (id 0), as data.py lays them out."""
    width = 1 + max(map(len, strings))
    inputs = np.zeros((len(strings), width), np.int64)
    for row, string in enumerate(strings):
        inputs[row, 0] = spec.BOS_ID
        inputs[row, 1 : len(string) + 1] = string
    return inputs


def near_tie_logits(rng: np.random.Generator, strings: list[list[int]], width: int, vocabulary: int) -> np.ndarray:
    """Spread scores with, at every position, a seen id raised just above an unseen one so that
    the penalty decides between them, and fixed ids that trade places once seen."""
    logits = rng.normal(0.0, 2.0, (len(strings), width, vocabulary)).astype(np.float32)
    logits[..., 5], logits[..., 6] = 8.4, 8.0  # 5 wins until it is seen: 8.4 / 1.2 = 7.0 < 8.0
    logits[..., 30] = -np.abs(logits[..., 31]) * 0.9  # negative scores are multiplied instead
    for row, string in enumerate(strings):
        for position in range(1, len(string) + 1):
            seen_id = string[rng.integers(position)]
            unseen = int(rng.integers(100, vocabulary))
            top = np.float32(9.0 + rng.random())
            logits[row, position, unseen] = top
            logits[row, position, seen_id] = top * np.float32(rng.choice([1.1, 1.3]))
    return logits


def test_each_position_wins_as_the_page_and_the_greedy_choice_would(tmp_path):
    vocabulary = run_core(tmp_path, {})
    size, content = vocabulary["size"], set(vocabulary["contentIds"])
    assert size == spec.VOCAB_IDS
    rng = np.random.default_rng(SEED)
    pool = sorted(content)
    strings = FIXED_STRINGS + [
        [pool[i] for i in rng.choice(12, size=int(rng.integers(1, 11)))] for _ in range(RANDOM_STRINGS)
    ]
    inputs = teacher_forced(strings)
    logits = near_tie_logits(rng, strings, inputs.shape[1], size)

    scored = penalised_logits(logits, inputs)

    states = [(row, position) for row, string in enumerate(strings) for position in range(len(string) + 1)]
    request = {"choose": [{"tokens": strings[row][:position]} for row, position in states]}
    core = run_core(tmp_path, request, np.stack([logits[row, position] for row, position in states]))["choose"]
    decided = 0
    for (row, position), page_choice in zip(states, core, strict=True):
        tokens = strings[row][:position]
        sequence = [spec.BOS_ID, *tokens]
        expected = logits[row, position].astype(np.float64)
        seen = list(set(sequence))
        expected[seen] = np.where(expected[seen] < 0, expected[seen] * 1.2, expected[seen] / 1.2)
        np.testing.assert_allclose(scored[row, position], expected, rtol=1e-6)
        winner = int(np.argmax(scored[row, position]))
        assert winner == page_choice == choose_token(logits[row, position], sequence, tokens, content), (
            f"string {row} position {position}: the loss's winner {winner}, the page's {page_choice}"
        )
        decided += int(winner != np.argmax(logits[row, position]))
    print(f"{len(states)} positions, the penalty changed the winner at {decided}")
    assert decided > len(states) // 4, "the penalty rarely changed the winner: a missing penalty could pass"


def test_the_torch_path_gives_the_numpy_paths_values():
    torch = pytest.importorskip("torch", reason="torch is not installed here (the training machine has it)")
    rng = np.random.default_rng(SEED)
    inputs = teacher_forced(FIXED_STRINGS)
    logits = rng.normal(0.0, 2.0, (len(FIXED_STRINGS), inputs.shape[1], 40)).astype(np.float32)
    expected = penalised_logits(logits, inputs)
    actual = penalised_logits(torch.from_numpy(logits), torch.from_numpy(inputs)).numpy()
    np.testing.assert_array_equal(actual, expected)
