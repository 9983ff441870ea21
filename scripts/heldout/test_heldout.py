"""The held-out sets: reproducible bit for bit, drawn only in faces training never uses, and
left out of training's strings."""

from __future__ import annotations

import hashlib
import io
import json
import random

import pytest
from PIL import Image

from heldout.faces import HELDOUT_FACES, face_file
from heldout.make_sets import SETS, render_set_case, set_cases
from heldout.scenes import STYLES, render_case
from heldout.texts import EVAL_DIR, VOCAB, heldout_strings
from ocrmodel.eval_sets import evaluation_strings
from ocrmodel.fonts import FACES, FALLBACK_ONLY

# The training faces' design families: a held-out face whose file or package names one of them
# may share its glyphs (Takao and Monapo are IPA, Umeplus and Komatuna M+).
TRAINING_LINEAGES = ("mplus", "m+", "ipa", "takao", "ume", "komatuna", "noto", "monapo", "ricty")


def test_no_heldout_face_is_a_training_face_or_derived_from_one() -> None:
    training = FACES + FALLBACK_ONLY
    assert not {face.package for face in HELDOUT_FACES} & {face.package for face in training}
    assert not {face.path for face in HELDOUT_FACES} & {face.path for face in training}
    for face in HELDOUT_FACES:
        named = f"{face.package} {face.path}".lower()
        assert not any(lineage in named for lineage in TRAINING_LINEAGES), face


@pytest.mark.parametrize("name", sorted(SETS))
def test_committed_set_matches_its_definition(name: str) -> None:
    vocabulary = set(json.loads(VOCAB.read_text(encoding="utf-8")))
    cases = json.loads((EVAL_DIR / name / "cases.json").read_text(encoding="utf-8"))
    assert [(c["id"], c["style"], c["expected"]) for c in cases] == set_cases(name)
    for case in cases:
        assert case["style"] in STYLES
        assert not set(case["expected"]) - vocabulary, case


@pytest.mark.parametrize("name", sorted(SETS))
def test_rendering_is_byte_identical_to_the_committed_files(name: str) -> None:
    if any(not face_file(face).is_file() for face in HELDOUT_FACES):
        pytest.skip("held-out faces not installed (scripts/setup installs them)")
    # Every third case: each style of every set, about 1.5 s in all on one core.
    for case_id, style, text in set_cases(name)[::3]:
        buffer = io.BytesIO()
        render_set_case(name, case_id, style, text).save(buffer, "PNG", optimize=True)
        committed = (EVAL_DIR / name / f"{case_id}.png").read_bytes()
        assert hashlib.sha256(buffer.getvalue()).digest() == hashlib.sha256(committed).digest(), f"{name}/{case_id}"


def test_a_case_renders_the_same_twice() -> None:
    if any(not face_file(face).is_file() for face in HELDOUT_FACES):
        pytest.skip("held-out faces not installed (scripts/setup installs them)")
    case_id, style, text = set_cases("heldout-b")[0]
    first, second = (render_set_case("heldout-b", case_id, style, text) for _ in range(2))
    assert first.tobytes() == second.tobytes()
    with Image.open(EVAL_DIR / "heldout-b" / f"{case_id}.png") as committed:
        assert committed.size == first.size


def test_training_leaves_every_heldout_string_out() -> None:
    strings = heldout_strings()
    assert len(strings) == sum(spec.count for spec in SETS.values())
    assert strings <= evaluation_strings()


def test_an_unknown_style_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: \\('vertical'"):
        render_case("sideways", "テスト", random.Random(0), {})
