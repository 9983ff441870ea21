"""The renderer's faces: installed by the setup, drawing real glyphs, covering the vocabulary."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ocrmodel.fonts import FACES, FALLBACK_ONLY, FAMILIES, FontLibrary, drawable_vocabulary
from ocrmodel.render import font, glyph_mask

REPO = Path(__file__).resolve().parents[2]
VOCAB = json.loads((REPO / "models" / "vocab.json").read_text(encoding="utf-8"))


def test_the_setup_installs_every_faces_package() -> None:
    setup = (REPO / "scripts" / "setup").read_text(encoding="utf-8")
    missing = sorted({face.package for face in FACES + FALLBACK_ONLY if face.package not in setup.split()})
    assert not missing, f"scripts/setup does not install {missing}"


def test_every_family_has_faces() -> None:
    assert {face.family for face in FACES} == set(FAMILIES)


@pytest.mark.parametrize("face", FACES, ids=lambda face: face.name)
def test_each_face_draws_kana_and_kanji(face) -> None:
    library = FontLibrary()
    handle = library.handle(face)
    for character in "あカ漢字":
        assert library.covers(face, character), f"{face.name} lacks {character}"
        bitmap, _, _ = glyph_mask(handle, 32, character, False)
        assert bitmap.max() > 128 and bitmap.size > 50, f"{face.name} draws {character} empty"
    # Two different characters draw differently (no tofu standing in for both).
    first, _, _ = glyph_mask(handle, 32, "あ", False)
    second, _, _ = glyph_mask(handle, 32, "漢", False)
    assert first.shape != second.shape or not np.array_equal(first, second)
    assert font(handle, 32).getlength("漢") > 16


def test_every_vocabulary_character_is_drawable() -> None:
    drawable, missing = drawable_vocabulary(FontLibrary(), VOCAB)
    assert not missing, f"no face of the fallback chain maps {missing}"
    assert len(drawable) == len(VOCAB)


def test_a_font_folder_without_the_faces_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="fonts missing under .*noto-sans-regular.*fonts-noto-cjk"):
        FontLibrary(tmp_path)
