"""scoring.py (the scoring of compare_onnx.py and evaluate.py) gives the page's answers: the wasm
core (pkg/, run in Node) normalises, measures distances and summarises the same generated
texts, and every answer must be identical.

The texts mix every character JS `\\s` removes, the whitespace only Python's `\\s` knows
(U+001C..U+001F, U+0085), look-alikes that are whitespace in neither (U+180E, U+200B, U+2060),
characters NFKC rewrites (full-width and half-width forms, ligatures, circled and parenthesised
numbers, squared words, compatibility ideographs, combining sequences, characters whose NFKC
form starts with a space), astral characters, and random assigned code points.

Python's unicodedata is Unicode 14.0 (Python 3.11), the core's normalisation a later version;
Unicode's normalisation stability keeps NFKC of characters assigned by 14.0 the same in every
later version, so random code points come only from those, and the evaluation sets and the
vocabulary are checked to hold no other.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from ocrmodel.conftest import run_core
from train.scoring import CaseScore, levenshtein, normalise, score_case, summarise

REPO = Path(__file__).resolve().parents[2]
SEED = 20261201
TEXTS = 4000
PAIRS = 2000

JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
PYTHON_ONLY_WHITESPACE = "\x1c\x1d\x1e\x1f\x85"
NOT_WHITESPACE = "\u180e\u200b\u2060\u00ad"
NFKC_SENSITIVE = [
    "Ａ",
    "ｚ",
    "０",
    "９",
    "～",
    "＇",
    "（",
    "）",
    "．",
    "ｶ",
    "ﾅ",
    "ﾃ",
    "ﾞ",
    "ﾟ",
    "ｰ",
    "ﾠ",
    "ﬁ",
    "ﬀ",
    "①",
    "⑴",
    "⒈",
    "²",
    "₃",
    "Ⅻ",
    "ⅳ",
    "½",
    "㍻",
    "㌔",
    "㈱",
    "豈",
    "樂",
    "Å",
    "Ω",
    "K",
    "ǅ",
    "ſ",
    "µ",
    "…",
    "‥",
    "․",
    "e\u0301",
    "\u0301",
    "か\u3099",
    "ﾊﾟ",
    "\u3099",
    "ᄀ",
    "ᅡ",
    "ᆨ",
    "\u1e9b\u0323",
    "𝐀",
    "𝟘",
    "🄀",
    "\ufe10",
    "︵",
    # NFKC turns these into a space followed by a combining mark (or a space alone).
    "¨",
    "¯",
    "´",
    "¸",
    "˘",
    "˜",
    "΄",
    "῁",
    "‗",
    "‾",
    "﹉",
    "￣",
    "\u2007",
    "\u00a0",
    "\u3000",
]
PLAIN = ["a", "b", "Z", "1", "あ", "ア", "漢", "字", "。", "、", "!", "?", "ー", "〜", "𠮷", "😀", "\u0000"]


def assigned(character: str) -> bool:
    return unicodedata.category(character) not in ("Cn", "Cs")


def random_text(rng: np.random.Generator) -> str:
    pieces = []
    for _ in range(rng.integers(0, 25)):
        pool = rng.integers(0, 6)
        if pool == 0:
            pieces.append(JS_WHITESPACE[rng.integers(len(JS_WHITESPACE))])
        elif pool == 1:
            pieces.append((PYTHON_ONLY_WHITESPACE + NOT_WHITESPACE)[rng.integers(9)])
        elif pool == 2:
            pieces.append(NFKC_SENSITIVE[rng.integers(len(NFKC_SENSITIVE))])
        elif pool == 3:
            pieces.append(PLAIN[rng.integers(len(PLAIN))])
        else:
            while True:  # an assigned code point of the BMP or planes 1-2
                character = chr(int(rng.integers(0x20, 0x10000 if pool == 4 else 0x30000)))
                if assigned(character):
                    pieces.append(character)
                    break
    return "".join(pieces)


def reading_of(expected: str, rng: np.random.Generator) -> str:
    """A model reading of `expected`: equal, equal but for spacing and width, or a few edits off."""
    kind = rng.integers(0, 3)
    if kind == 0:
        return expected
    if kind == 1:
        return " ".join(unicodedata.normalize("NFKC", expected)) + "\u3000\ufeff"
    characters = list(expected)
    for _ in range(rng.integers(1, 4)):
        position = int(rng.integers(0, len(characters) + 1))
        edit = rng.integers(0, 3)
        if edit == 0 or not characters[position:]:
            characters.insert(position, PLAIN[rng.integers(len(PLAIN))])
        elif edit == 1:
            del characters[position]
        else:
            characters[position] = NFKC_SENSITIVE[rng.integers(len(NFKC_SENSITIVE))]
    return "".join(characters)


def evaluation_texts() -> list[str]:
    return [
        case["expected"]
        for path in sorted((REPO / "models" / "eval").glob("*/cases.json"))
        for case in json.loads(path.read_text(encoding="utf-8"))
    ]


def vocabulary() -> list[str]:
    return json.loads((REPO / "models" / "vocab.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def generated():
    rng = np.random.default_rng(SEED)
    texts = [random_text(rng) for _ in range(TEXTS)]
    pairs = []
    for _ in range(PAIRS):
        left = random_text(rng)
        pairs.append((left, reading_of(left, rng) if rng.random() < 0.5 else random_text(rng)))
    return texts, pairs


def core_case_score(per_case: dict) -> CaseScore:
    return CaseScore(per_case["distance"], per_case["characters"], per_case["exact"], per_case["trailingExtras"])


def test_python_whitespace_is_not_js_whitespace():
    """Why scoring spells the set out: Python's `\\s` differs from JS's in both directions."""
    import re

    python_set = {chr(c) for c in range(0x110000) if re.fullmatch(r"\s", chr(c))}
    assert python_set - set(JS_WHITESPACE) == set(PYTHON_ONLY_WHITESPACE)
    assert set(JS_WHITESPACE) - python_set == {"\ufeff"}
    assert normalise("a\x1cb\x85c\ufeffd\u3000e") == "a\x1cb\x85cde"


def test_normalise_matches_the_core(tmp_path, generated):
    texts, _ = generated
    evaluation, entries = evaluation_texts(), vocabulary()
    assert all(assigned(c) for text in evaluation + entries for c in text), (
        "an evaluation or vocabulary character is unknown to Python's unicodedata: its NFKC may differ from the core's"
    )
    inputs = texts + evaluation + entries
    reply = run_core(tmp_path, {"normalize": inputs})
    mismatches = [
        f"{text!r}: python {normalise(text)!r}, core {core!r}"
        for text, core in zip(inputs, reply["normalize"], strict=True)
        if normalise(text) != core
    ]
    assert not mismatches, f"{len(mismatches)} of {len(inputs)} differ:\n" + "\n".join(mismatches[:20])
    # The inputs reach what they are meant to: whitespace of each kind, NFKC rewrites.
    joined = "".join(texts)
    assert all(c in joined for c in JS_WHITESPACE + PYTHON_ONLY_WHITESPACE)
    assert sum(unicodedata.normalize("NFKC", t) != t for t in texts) > TEXTS // 2
    assert any("\x85" in core for core in reply["normalize"])  # kept, as JS keeps it


def test_levenshtein_matches_the_core(tmp_path, generated):
    _, pairs = generated
    reply = run_core(tmp_path, {"editDistance": pairs})
    ours = [levenshtein(left, right) for left, right in pairs]
    assert ours == reply["editDistance"]
    assert sum(0 < distance <= 3 for distance in ours) > PAIRS // 10  # near misses, not only strangers
    assert levenshtein("𠮷野家", "吉野家") == 1  # code points, as the core counts


def test_score_case_and_summary_match_the_core(tmp_path, generated):
    _, pairs = generated
    sets = [
        [{"id": str(index), "expected": left, "actual": right} for index, (left, right) in enumerate(pairs)],
        [
            {"id": case["id"], "expected": case["expected"], "actual": case["expected"] + " "}
            for case in json.loads((REPO / "models" / "eval" / "hayai13" / "cases.json").read_text("utf-8"))
        ],
        [{"id": "blank", "expected": " \u3000", "actual": "x"}],  # no reference characters: nCER is None
        # Readings that run on past the text, stop short of it, or add in front of it.
        [
            {"id": f"{index}-{way}", "expected": left, "actual": actual}
            for index, (left, right) in enumerate(pairs[:400])
            for way, actual in (("after", left + right), ("short", left[:-1]), ("before", right + left))
        ],
        [],
    ]
    reply = run_core(tmp_path, {"summarize": sets})
    for cases, core in zip(sets, reply["summarize"], strict=True):
        scores = [score_case(case["expected"], case["actual"]) for case in cases]
        assert scores == [core_case_score(per_case) for per_case in core["perCase"]]
        ours = summarise(scores)
        assert ours == {
            key: core[key] for key in ("cases", "nCER", "distance", "characters", "exact", "trailingExtras")
        }, (ours, core)
    first = summarise([score_case(c["expected"], c["actual"]) for c in sets[0]])
    assert 0 < first["exact"] < first["cases"]
    assert reply["summarize"][1]["exact"] == 13 and reply["summarize"][2]["nCER"] is None
    extras = reply["summarize"][1]["trailingExtras"], reply["summarize"][3]["trailingExtras"]
    assert extras[0] == 0 and 100 < extras[1] < 1200, extras  # hayai13 + " ": whitespace is not extra
