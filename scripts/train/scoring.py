"""The harness's preprocessing and scoring, without torch (shared by evaluate.py and compare_onnx.py).

Scoring is the core's (`crate/src/score.rs`, `crate/src/summary.rs`), which the page uses:
NFKC, then JS whitespace (`\\s`) removed; Levenshtein over code points; a case is exact when the
normalised texts are equal; nCER = total distance / total reference characters (None without
characters). test_scoring_matches_core.py holds these to the wasm core on generated inputs.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ocrmodel import spec
from ocrmodel.resize import resize_for_model

EVAL_DIR = Path(__file__).resolve().parents[2] / "models" / "eval"


def set_names() -> list[str]:
    """Every evaluation set under models/eval."""
    return sorted(path.parent.name for path in EVAL_DIR.glob("*/cases.json"))


def eval_cases(name: str, limit: int = 0) -> list[dict]:
    """The cases of the evaluation set models/eval/NAME; with `limit` > 0 only the first `limit`."""
    path = EVAL_DIR / name / "cases.json"
    if not path.is_file():
        raise ValueError(f"no evaluation set {name!r} (no {path}); known: {set_names()}")
    if limit < 0:
        raise ValueError(f"case limit {limit}: allowed: 0 (every case) or a positive count")
    cases = json.loads(path.read_text(encoding="utf-8"))
    return cases[:limit] if limit else cases


def preprocess(path: Path) -> np.ndarray:
    """The harness's preprocessing: over white, RGB, the model's resize to 224x224
    (ocrmodel.resize: box pre-reduction by whole factors, then Lanczos3), (x/255 - mean)/std,
    [1,3,224,224]."""
    with Image.open(path) as image:
        rgb = Image.alpha_composite(Image.new("RGBA", image.size, "white"), image.convert("RGBA")).convert("RGB")
    pixels = np.asarray(resize_for_model(rgb), np.float32) / 255.0
    mean, std = np.array(spec.MEAN, np.float32), np.array(spec.STD, np.float32)
    return ((pixels - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)


# JS `\s` (ECMA-262 WhiteSpace and LineTerminator), spelled out: Python's `\s` also matches
# U+001C..U+001F and U+0085, which JS keeps, and misses U+FEFF, which JS removes.
JS_WHITESPACE = re.compile("[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+")


def normalise(text: str) -> str:
    """The page's `normalize`: NFKC, then every JS-whitespace character removed."""
    return JS_WHITESPACE.sub("", unicodedata.normalize("NFKC", text))


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@dataclass(frozen=True)
class CaseScore:
    distance: int
    characters: int
    exact: bool
    # The reading is the expected text followed by extra characters (the core's `trailing_extras`).
    trailing_extras: bool


def score_case(expected: str, actual: str) -> CaseScore:
    """One case as the page scores it: normalised reference against normalised reading."""
    expected, actual = normalise(expected), normalise(actual)
    trailing = len(actual) > len(expected) and actual.startswith(expected)
    return CaseScore(levenshtein(expected, actual), len(expected), expected == actual, trailing)


def decode_text(tokens: list[int], characters: list[str]) -> str:
    """The text of decoded ids: vocab.json entry `id - VOCAB_OFFSET`; special ids add nothing."""
    return "".join(characters[token - spec.VOCAB_OFFSET] for token in tokens if token >= spec.VOCAB_OFFSET)


def summarise(scores: list[CaseScore]) -> dict:
    """The summary's accuracy fields, with the page's names."""
    distance = sum(score.distance for score in scores)
    characters = sum(score.characters for score in scores)
    return {
        "cases": len(scores),
        "nCER": distance / characters if characters else None,
        "distance": distance,
        "characters": characters,
        "exact": sum(score.exact for score in scores),
        "trailingExtras": sum(score.trailing_extras for score in scores),
    }


def format_ncer(summary: dict) -> str:
    ncer = summary["nCER"]
    return "n/a" if ncer is None else f"{ncer:.4f}"


def score_set(name: str, cases: list[dict], tokens: list[list[int]], characters: list[str]) -> dict:
    """An evaluation set's figures from the ids chosen for each case, in the layout of
    models/checkpoint/eval-pytorch.json: the summary, then every case's reading and tokens."""
    if len(tokens) != len(cases):
        raise ValueError(f"{len(cases)} cases of {name} but {len(tokens)} token lists")
    results, scores = [], []
    for case, chosen in zip(cases, tokens, strict=True):
        text = decode_text(chosen, characters)
        score = score_case(case["expected"], text)
        scores.append(score)
        results.append(
            {
                "id": case["id"],
                "expected": case["expected"],
                "actual": text,
                "tokens": list(chosen),
                "distance": score.distance,
                "characters": score.characters,
            }
        )
    scored = {"set": name, **summarise(scores), "results": results}
    styles = [case.get("style") for case in cases]
    if any(style is not None for style in styles):  # the core's perStyle: each style as the whole set
        groups: dict[str, list[CaseScore]] = {}
        for style, score in zip(styles, scores, strict=True):
            groups.setdefault(style if style is not None else "(none)", []).append(score)
        scored["perStyle"] = {style: summarise(group) for style, group in sorted(groups.items())}
    return scored
