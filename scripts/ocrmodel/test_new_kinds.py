"""The kinds that teach where text ends, sound effects and tilted lines (manga_styles' last three)."""

from __future__ import annotations

import json
import random
from itertools import pairwise
from pathlib import Path

import pytest

from ocrmodel.fonts import FontLibrary
from ocrmodel.manga_styles import kind_text, render_kind
from ocrmodel.scene_after import AFTER_KINDS, extend_for_after
from ocrmodel.sound_effects import I_ROW, MAX_LENGTH, random_sound_effect

VOCAB = set(json.loads((Path(__file__).resolve().parents[2] / "models" / "vocab.json").read_text(encoding="utf-8")))
LIBRARY = FontLibrary()


def _overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize("vertical", [True, False])
@pytest.mark.parametrize("container", [None, (-30, -20, 130, 90)])
def test_marks_go_beyond_the_text_and_its_container_inside_the_crop(vertical, container) -> None:
    text_w, text_h, em = 100, 70, 24
    canvas = (-40, -30, 140, 100)
    sides = set()
    for seed in range(200):
        grown, strip, side = extend_for_after(canvas, container, text_w, text_h, em, vertical, random.Random(seed))
        sides.add(side)
        assert not _overlaps(strip, (0, 0, text_w, text_h)), (seed, strip)
        if container is not None:
            assert not _overlaps(strip, container), (seed, strip)
        assert grown[0] <= min(canvas[0], strip[0]) and grown[2] >= max(canvas[2], strip[2] - 1)
        assert grown[1] <= canvas[1] and grown[3] >= max(canvas[3], strip[3] - 1)
    # Vertical text ends in its leftmost column (or at its foot); horizontal text in its last line.
    assert sides == ({"left", "below"} if vertical else {"below", "right"})


def test_sound_effects_are_short_kana_inside_the_vocabulary() -> None:
    rng = random.Random("sfx-test")
    seen = [random_sound_effect(rng) for _ in range(2000)]
    assert all(1 <= len(text) <= MAX_LENGTH for text in seen)
    assert set("".join(seen)) <= VOCAB
    hiragana_rows = {chr(ord(c) - 0x60) for c in I_ROW}
    for text in seen:
        for before, glide in pairwise(text):
            if glide in "ャュョゃゅょ":
                assert before in I_ROW | hiragana_rows, text  # キャ, しゅ: never コュ
    assert len(set(seen)) > 1000, "the generator repeats itself"
    assert any("ー" in t for t in seen) and any(t.endswith("ッ") or t.endswith("っ") for t in seen)


@pytest.mark.parametrize("kind", ["ending", "sfx", "tilted"])
def test_each_kind_lays_every_character_inside_the_crop(kind) -> None:
    rng = random.Random(f"{kind}-centres")
    for _ in range(12):
        text = kind_text(kind, rng)
        assert set(text) <= VOCAB
        rendered = render_kind(kind, text, rng, LIBRARY, long_side=480)
        width, height = rendered.image.size
        assert len(rendered.centres) == len(text)
        assert all(-1 <= x <= width + 1 and -1 <= y <= height + 1 for x, y in rendered.centres), (kind, text)


def test_every_mark_kind_draws_something() -> None:
    """Each kind of mark changes the pixels of a plain crop's strip."""
    from dataclasses import replace

    import numpy as np

    from ocrmodel.manga_styles import scene_for, text_style
    from ocrmodel.scene import render_scene

    for mark in AFTER_KINDS:
        drawn = 0
        for seed in range(6):
            style = text_style("あいうえお", "art", random.Random(seed), LIBRARY)
            scene = replace(
                scene_for("art", style, random.Random(seed)),
                background="plain",
                after=(mark,),
                blank=True,
                noise=0.0,
                jpeg=0,
                blur=0.0,
                halo=0,
            )
            pixels = np.asarray(render_scene("あいうえお", style, scene, random.Random(seed)).image)
            drawn += int(pixels.min() < scene.paper - 40)
        assert drawn >= 4, f"{mark} drew nothing in {6 - drawn} of 6 crops"
