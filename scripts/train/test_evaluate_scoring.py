"""The scoring of evaluate.py (scoring.score_set; evaluate.py itself needs torch) reproduces
training's recorded evaluation, models/checkpoint/eval-pytorch.json, from its recorded tokens:
the checkpoint README's PyTorch figures (lowres: nCER 0.0273, 22/30 exact; hayai13: none of 238
characters missed, 13/13 exact) are what this code computes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ocrmodel import spec
from train.scoring import CaseScore, decode_text, eval_cases, format_ncer, score_set, summarise

REPO = Path(__file__).resolve().parents[2]
REPORT = json.loads((REPO / "models" / "checkpoint" / "eval-pytorch.json").read_text(encoding="utf-8"))
CHARACTERS = json.loads((REPO / "models" / "vocab.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(REPORT["eval"]))
def test_recorded_tokens_score_as_recorded(name):
    recorded = REPORT["eval"][name]
    cases = eval_cases(name)
    assert [case["id"] for case in cases] == [r["id"] for r in recorded["results"]]
    scored = score_set(name, cases, [r["tokens"] for r in recorded["results"]], CHARACTERS)
    if "trailingExtras" not in recorded:  # a report written before the figure existed
        del scored["trailingExtras"]
    if "perStyle" not in recorded:
        scored.pop("perStyle", None)
    assert scored == recorded


def test_the_readme_pytorch_figures():
    lowres = score_set(
        "lowres", eval_cases("lowres"), [r["tokens"] for r in REPORT["eval"]["lowres"]["results"]], CHARACTERS
    )
    assert (format_ncer(lowres), lowres["exact"], lowres["cases"]) == ("0.0273", 22, 30)
    hayai = REPORT["eval"]["hayai13"]
    assert (hayai["distance"], hayai["characters"], hayai["exact"], hayai["cases"]) == (0, 238, 13, 13)


def test_pure_pieces():
    # Special ids (pad, BOS, EOS, unknown) decode to nothing; id 4 is vocab.json's first entry.
    assert decode_text([0, 1, 4, 2, 3, 5], CHARACTERS) == CHARACTERS[0] + CHARACTERS[1]
    assert summarise([]) == {"cases": 0, "nCER": None, "distance": 0, "characters": 0, "exact": 0, "trailingExtras": 0}
    assert format_ncer(summarise([CaseScore(1, 3, False, False), CaseScore(0, 5, True, False)])) == "0.1250"
    with pytest.raises(ValueError, match="2 cases of smoke2 but 1 token lists"):
        score_set("smoke2", eval_cases("smoke2"), [[]], CHARACTERS)
    with pytest.raises(ValueError, match=r"known: \[.*'hayai13', .*'smoke2', 'synth200', 'tilted'\]"):
        eval_cases("nope")
    assert len(eval_cases("hayai13", 2)) == 2


def test_a_set_of_styles_is_scored_per_style():
    cases = [
        {"id": "1", "expected": "ドカーン", "style": "sfx"},
        {"id": "2", "expected": "あいう", "style": "ending"},
        {"id": "3", "expected": "かき"},
    ]
    ids = {character: index + spec.VOCAB_OFFSET for index, character in enumerate(CHARACTERS)}
    readings = ["ドカーン", "あいう！", "かき"]
    scored = score_set("mixed", cases, [[ids[c] for c in text] for text in readings], CHARACTERS)
    assert scored["perStyle"]["ending"] == {
        "cases": 1,
        "nCER": 1 / 3,
        "distance": 1,
        "characters": 3,
        "exact": 0,
        "trailingExtras": 1,
    }
    assert scored["perStyle"]["sfx"]["exact"] == 1 and scored["perStyle"]["(none)"]["cases"] == 1
    assert "perStyle" not in score_set("plain", cases[2:], [[ids[c] for c in "かき"]], CHARACTERS)
