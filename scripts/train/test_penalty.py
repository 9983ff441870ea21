"""penalty.penalised_logits transforms each position's logits exactly as the page's token
choice (ocrmodel.decode.choose_token) does after that position's inputs, so the loss and the
greedy choice agree on which id wins. Needs torch (the training machine has it)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ocrmodel import spec  # noqa: E402
from ocrmodel.decode import choose_token  # noqa: E402
from penalty import penalised_logits  # noqa: E402

VOCAB = 40


def test_each_position_wins_as_the_greedy_choice_would():
    generator = np.random.default_rng(7)
    # Repeats, so that seen ids are penalised; padding (id 0) after the string, as in data.py.
    strings = [[5, 9, 5, 5, 12], [7, 7, 7], [30, 31, 32, 30, 31, 32, 6]]
    width = 1 + max(map(len, strings))
    inputs = np.zeros((len(strings), width), np.int64)
    for row, string in enumerate(strings):
        inputs[row, 0] = spec.BOS_ID
        inputs[row, 1:len(string) + 1] = string
    # Near-ties between seen and unseen ids, of both signs.
    logits = generator.normal(0.0, 1.0, (len(strings), width, VOCAB)).astype(np.float32)
    logits[..., 5], logits[..., 6] = 3.3, 3.0  # 5 wins until it is seen: 3.3 / 1.2 < 3.0
    logits[..., 30] = -np.abs(logits[..., 31]) * 0.9
    scored = penalised_logits(torch.from_numpy(logits), torch.from_numpy(inputs)).numpy()
    checked = decided = 0
    for row, string in enumerate(strings):
        for position in range(len(string) + 1):
            tokens = string[:position]
            sequence = [spec.BOS_ID, *tokens]
            expected = logits[row, position].astype(np.float64)
            seen = list(set(sequence))
            expected[seen] = np.where(expected[seen] < 0, expected[seen] * 1.2, expected[seen] / 1.2)
            np.testing.assert_allclose(scored[row, position], expected, rtol=1e-6)
            # No id has run 12 times here, so nothing is blocked and the winners must agree.
            assert int(np.argmax(scored[row, position])) == choose_token(logits[row, position], sequence, tokens, set())
            checked += 1
            decided += int(np.argmax(scored[row, position]) != np.argmax(logits[row, position]))
    assert checked == sum(len(s) + 1 for s in strings)
    assert decided > 0, "no position where the penalty changed the winner: the test would not catch a missing penalty"
