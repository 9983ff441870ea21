"""The committed evaluation sets: readable, inside the vocabulary, and reproducible bit for bit."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from PIL import Image

from ocrmodel.eval_sets import DEFAULT_OUT, STYLE_SETS, evaluation_sets, write_set
from ocrmodel.make_vocab import SEED_EXPECTED

VOCAB = Path(__file__).resolve().parents[2] / "models" / "vocab.json"
SIZES = {"hayai13": 13, "synth200": 200, "smoke2": 2, **STYLE_SETS}


def _digest(directory: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(directory.iterdir()):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.mark.parametrize("name", sorted(SIZES))
def test_committed_set_is_readable_and_inside_the_vocabulary(name: str) -> None:
    vocabulary = set(json.loads(VOCAB.read_text(encoding="utf-8")))
    cases = json.loads((DEFAULT_OUT / name / "cases.json").read_text(encoding="utf-8"))
    assert len(cases) == SIZES[name]
    assert len({case["id"] for case in cases}) == len(cases)
    for case in cases:
        assert set(case) == (
            {"id", "image", "expected", "style"} if name in STYLE_SETS else {"id", "image", "expected"}
        )
        assert case.get("style", name) == name
        missing = set(case["expected"]) - vocabulary
        assert not missing, f"{name}/{case['id']}: characters outside vocab.json: {sorted(missing)}"
        with Image.open(DEFAULT_OUT / name / case["image"]) as image:
            image.load()
            assert image.mode == ("L" if name in STYLE_SETS else "RGB")
            assert image.size != (224, 224) and min(image.size) >= 16


def test_hayai13_holds_the_seed_strings_in_order() -> None:
    cases = json.loads((DEFAULT_OUT / "hayai13" / "cases.json").read_text(encoding="utf-8"))
    assert [case["id"] for case in cases] == [f"{i:02d}" for i in range(1, 14)]
    assert [case["expected"] for case in cases] == SEED_EXPECTED


def test_sets_do_not_share_strings() -> None:
    sets = {name: {text for _, text in cases} for name, cases in evaluation_sets().items()}
    names = sorted(sets)
    for index, name in enumerate(names):
        for other in names[index + 1 :]:
            assert not sets[name] & sets[other], (name, other)


def test_long_set_holds_49_to_100_characters() -> None:
    lengths = [len(text) for _, text in evaluation_sets()["long"]]
    assert min(lengths) >= 49 and max(lengths) <= 100


@pytest.mark.parametrize("name", ["hayai13", "smoke2", "lowres", "ending", "sfx", "tilted"])
def test_regeneration_matches_the_committed_files(name: str, tmp_path: Path) -> None:
    # synth200 takes ~10 s to render on one core; hayai13 and smoke2 cover the same code path.
    write_set(name, evaluation_sets()[name], tmp_path)
    assert _digest(tmp_path / name) == _digest(DEFAULT_OUT / name)
