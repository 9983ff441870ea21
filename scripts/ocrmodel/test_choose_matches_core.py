"""decode.choose_token (the token choice of compare_onnx.py and evaluate.py) gives the page's
answer: the wasm core's TokenChooser (pkg/, run in Node) on the same generated decoding
states, at the real vocabulary size, must choose the same id or fail the same way.

The states are generated here with a fixed seed: tokens decoded so far (special, content and
other ids) ending in a run of one id whose length straddles the 12-run block; logits from a few
base distributions (spread, all negative, coarse levels full of ties, constant, all NaN, all
-Infinity), then special values placed on index 0, BOS, the run's id, a seen id or anywhere
(NaN, +-0, +-Infinity, +-float32 max, subnormals, the current maximum for ties), and near-ties
between a penalised seen score and an unpenalised one a few float32 steps from score / 1.2.
"""

from __future__ import annotations

import numpy as np
import pytest

from ocrmodel import spec
from ocrmodel.build_models import VOCAB
from ocrmodel.conftest import run_core
from ocrmodel.decode import RUN_LIMIT, NoCandidate, choose_token, content_ids

CASES = 3000
SEED = 20261201
F32_MAX = float(np.finfo(np.float32).max)
SPECIAL_VALUES = np.array(
    [np.nan, -0.0, 0.0, np.inf, -np.inf, F32_MAX, -F32_MAX, 1.4e-45, -1.4e-45, 1.1754944e-38, 50.0, 60.0, 72.0, -50.0],
    dtype=np.float32,
)
BASE_KINDS = ("spread", "negative", "levels", "constant", "eighths", "nan", "negative-infinity")


def base_logits(kind: str, rng: np.random.Generator) -> np.ndarray:
    u = rng.random(spec.VOCAB_IDS)
    values = {
        "spread": lambda: (u - 0.5) * 40,  # typical decoder scores, both signs
        "negative": lambda: -u * 30 - 1e-3,
        "levels": lambda: np.floor(u * 4) - 1,  # exact ties at -1, 0, 1, 2
        "constant": lambda: np.full(spec.VOCAB_IDS, 1.5),
        "eighths": lambda: np.round((u - 0.3) * 64) / 8,  # ties that the penalty makes or breaks
        "nan": lambda: np.full(spec.VOCAB_IDS, np.nan),  # placements decide what can be chosen
        "negative-infinity": lambda: np.full(spec.VOCAB_IDS, -np.inf),
    }[kind]()
    return values.astype(np.float32)


def float32_steps(value: np.float32, steps: int) -> np.float32:
    """The float32 `steps` representable values away from `value`."""
    for _ in range(abs(steps)):
        value = np.nextafter(value, np.float32(np.inf if steps > 0 else -np.inf), dtype=np.float32)
    return value


def generate_case(rng: np.random.Generator, content: list[int], other: list[int]) -> tuple[list[int], np.ndarray]:
    prefix = []
    for _ in range(rng.integers(0, 41)):
        kind = rng.integers(0, 3)
        prefix.append(
            int(rng.integers(0, 4))
            if kind == 0
            else int(rng.integers(0, spec.VOCAB_IDS))
            if kind == 1
            else content[rng.integers(len(content))]
        )
    run_id = content[rng.integers(len(content))] if rng.random() < 0.7 else other[rng.integers(len(other))]
    run_length = int(rng.integers(0, 21) if rng.random() < 0.5 else rng.integers(10, 15))
    tokens = prefix + [run_id] * run_length
    seen = sorted({spec.BOS_ID, *tokens})

    logits = base_logits(BASE_KINDS[rng.integers(len(BASE_KINDS))], rng)
    for _ in range(rng.integers(0, 9)):
        where = rng.integers(0, 6)
        index = (
            0,
            spec.BOS_ID,
            run_id,
            seen[rng.integers(len(seen))],
            spec.VOCAB_IDS - 1,
            int(rng.integers(0, spec.VOCAB_IDS)),
        )[where]
        finite = logits[np.isfinite(logits)]
        top = finite.max() if finite.size else np.float32(1.0)
        choice = rng.integers(0, 4)
        with np.errstate(over="ignore"):  # float32 max * 1.2 is Infinity, a fine score too
            logits[index] = (
                SPECIAL_VALUES[rng.integers(len(SPECIAL_VALUES))]
                if choice == 0
                else top
                if choice == 1  # a tie with the current maximum
                else top * np.float32(1.2)
                if choice == 2  # wins only when not penalised
                else np.float32(rng.normal() * 20)
            )
    if rng.random() < 0.25:
        # A penalised seen score against an unseen one a few float32 steps from score / 1.2:
        # decided only by doing the penalty in doubles, as the core does.
        value = np.float32(rng.choice([60.0, -60.0, 7.2, -7.2, rng.uniform(-100, 100)]))
        seen_id = seen[rng.integers(len(seen))]
        unseen = [i for i in other[::97] if i not in seen]
        unseen_id = unseen[rng.integers(len(unseen))]
        penalised = np.float32(value * 1.2 if value < 0 else value / 1.2)
        logits[seen_id] = value
        logits[unseen_id] = float32_steps(penalised, int(rng.integers(-2, 3)))
        rest = np.ones(spec.VOCAB_IDS, dtype=bool)
        rest[[seen_id, unseen_id]] = False
        logits[rest & (logits > penalised - 1e-3)] = -1e30
    return tokens, logits


def python_choice(logits: np.ndarray, tokens: list[int], content: set[int]) -> int | str:
    try:
        return choose_token(logits, [spec.BOS_ID, *tokens], tokens, content)
    except NoCandidate:
        return "no candidate"


@pytest.fixture(scope="module")
def content() -> set[int]:
    return content_ids(VOCAB)


def test_content_ids_and_size_are_the_cores(tmp_path, content):
    reply = run_core(tmp_path, {})
    assert reply["size"] == spec.VOCAB_IDS
    assert set(reply["contentIds"]) == content
    # Astral letters (two UTF-16 units) are never content, as in the seed: the vocabulary has some.
    characters = VOCAB.read_text(encoding="utf-8")
    assert any(ord(c) > 0xFFFF for c in characters)


def test_choose_token_matches_the_core(tmp_path, content):
    rng = np.random.default_rng(SEED)
    content_list, other = sorted(content), [i for i in range(spec.VOCAB_IDS) if i not in content]
    cases = [generate_case(rng, content_list, other) for _ in range(CASES)]
    logits = np.stack([case_logits for _, case_logits in cases])
    reply = run_core(tmp_path, {"choose": [{"tokens": tokens} for tokens, _ in cases]}, logits)

    reached = {
        "same choice": 0,
        "no candidate": 0,
        "run blocked": 0,
        "NaN at index 0": 0,
        "seen id chosen": 0,
        "tie among the maximum": 0,
    }
    mismatches = []
    for number, ((tokens, case_logits), core_answer) in enumerate(zip(cases, reply["choose"], strict=True)):
        expected = "no candidate" if isinstance(core_answer, dict) else core_answer
        if isinstance(core_answer, dict):
            assert core_answer["error"].startswith("no token can be chosen"), core_answer
        actual = python_choice(case_logits, tokens, content)
        if actual != expected:
            mismatches.append(f"case {number}: python {actual}, core {expected}, tokens {tokens[-3:]}")
            continue
        reached["same choice"] += 1
        if expected == "no candidate":
            reached["no candidate"] += 1
            continue
        if np.isnan(case_logits[0]):
            reached["NaN at index 0"] += 1
        if len(tokens) >= RUN_LIMIT and tokens[-RUN_LIMIT:] == [tokens[-1]] * RUN_LIMIT and tokens[-1] in content:
            reached["run blocked"] += 1
        if expected in {spec.BOS_ID, *tokens}:
            reached["seen id chosen"] += 1
        if np.count_nonzero(case_logits == case_logits[expected]) > 1:
            reached["tie among the maximum"] += 1
    assert not mismatches, f"{len(mismatches)} of {CASES} differ:\n" + "\n".join(mismatches[:20])
    # The generator must reach every kind of case, or this test proves less than it says.
    assert all(count >= 20 for count in reached.values()), reached
    print(reached)


def test_python_rejects_what_the_core_rejects(content):
    blocked = min(content)
    only_blocked = np.full(spec.VOCAB_IDS, -np.inf, dtype=np.float32)
    only_blocked[blocked] = 1.0
    with pytest.raises(NoCandidate, match=f"blocked id: {blocked}"):
        choose_token(only_blocked, [spec.BOS_ID] + [blocked] * RUN_LIMIT, [blocked] * RUN_LIMIT, content)
    with pytest.raises(NoCandidate, match="blocked id: none"):
        choose_token(np.full(spec.VOCAB_IDS, np.nan, dtype=np.float32), [spec.BOS_ID], [], content)
    with pytest.raises(ValueError, match="sequence ids must lie in 0..14629"):
        choose_token(
            np.zeros(spec.VOCAB_IDS, dtype=np.float32), [spec.BOS_ID, spec.VOCAB_IDS], [spec.VOCAB_IDS], content
        )
