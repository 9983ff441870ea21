"""The training data generator: held-out strings never appear, samples match the model's inputs."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import numpy as np
import pytest
from PIL import Image

from ocrmodel import spec
from ocrmodel.colour import at_own_levels, gradient_map, gradient_table, grey_of
from ocrmodel.eval_sets import evaluation_strings
from ocrmodel.families import FAMILIES, LEAST_CONTRAST, widen
from ocrmodel.fonts import FontLibrary
from ocrmodel.manga_styles import scene_for, text_style
from ocrmodel.scene import render_scene
from train.data import (
    AUX_CELLS,
    IGNORE,
    KIND_WEIGHTS,
    MAX_CHARACTERS,
    SMALLEST_EM,
    TEXT_SLOTS,
    UNTINTED_KINDS,
    VOCAB_PATH,
    SampleMaker,
    kind_weights,
    parse_shares,
    smaller_text,
)

LIBRARY = FontLibrary()


def test_held_out_strings_are_refused() -> None:
    maker = SampleMaker(LIBRARY, "test")
    for text in evaluation_strings():
        assert not maker.allowed(text), text
    long_one = max(evaluation_strings(), key=len)
    assert not maker.allowed("あ" + long_one + "。")
    assert maker.allowed("かきくけこさしすせそ")


def test_samples_have_the_model_shapes_and_consistent_labels() -> None:
    vocabulary = json.loads(VOCAB_PATH.read_text(encoding="utf-8"))
    maker = SampleMaker(LIBRARY, "test")
    for _ in range(40):
        pixels, inputs, targets, cells, labels = maker.sample()
        assert pixels.shape == (spec.IMAGE_SIZE, spec.IMAGE_SIZE, 3) and pixels.dtype == np.uint8
        length = int((targets != IGNORE).sum()) - 1
        if length == 0:  # a text-free crop (the `ending` kind): the reading is EOS alone
            assert targets[0] == spec.EOS_ID and not (labels > 0).any()
            continue
        assert pixels.min() < 128 < pixels.max(), "ink and paper both present"
        assert 1 <= length <= MAX_CHARACTERS and inputs.shape == targets.shape == (TEXT_SLOTS,)
        assert inputs[0] == spec.BOS_ID and targets[length] == spec.EOS_ID
        assert list(inputs[1 : length + 1]) == list(targets[:length])
        text = "".join(vocabulary[t - spec.VOCAB_OFFSET] for t in targets[:length])
        assert maker.allowed(text)
        assert cells.shape == labels.shape == (AUX_CELLS,) and len(set(cells.tolist())) == AUX_CELLS
        assert set(labels[labels > 0].tolist()) <= set(targets[:length].tolist())
        assert (labels > 0).any()


def test_same_seed_same_samples() -> None:
    first = [SampleMaker(LIBRARY, "seeded").sample() for _ in range(1)][0]
    second = [SampleMaker(LIBRARY, "seeded").sample() for _ in range(1)][0]
    for a, b in zip(first, second, strict=True):
        assert np.array_equal(a, b)


def test_every_kind_renders_its_text_with_one_centre_per_character() -> None:
    maker = SampleMaker(LIBRARY, "kinds")
    for kind in KIND_WEIGHTS:
        for _ in range(5):
            text = maker.text(kind)
            rendered = maker.render(kind, text)
            assert len(rendered.centres) == len(text), kind
            width, height = rendered.image.size
            inside = [0 <= x <= width and 0 <= y <= height for x, y in rendered.centres]
            assert sum(inside) >= 0.9 * len(text), f"{kind}: centres outside the crop"
            if kind == "long":
                assert 49 <= len(text) <= MAX_CHARACTERS


def test_low_resolution_text_leans_to_the_smallest_sizes() -> None:
    """Half of the low-resolution text drawn over SMALLEST_EM[1] px is redrawn within SMALLEST_EM."""
    rng = random.Random("smallest")
    maker = SampleMaker(LIBRARY, "smallest")
    heights, redrawn = [], 0
    for _ in range(400):
        text = maker.text("lowres")
        style = text_style(text, "lowres", rng, LIBRARY)
        scene = scene_for("lowres", style, rng)
        smaller = smaller_text(scene, style.size, rng)
        if smaller is not scene:
            redrawn += 1
            assert scene.downscale * style.size > SMALLEST_EM[1]
            assert SMALLEST_EM[0] <= smaller.downscale * style.size <= SMALLEST_EM[1]
        heights.append(smaller.downscale * style.size)
    large = sum(height > SMALLEST_EM[1] for height in heights)
    assert 0.3 < redrawn / (redrawn + large) < 0.7, (redrawn, large)  # about SMALLEST_SHARE
    assert sum(height <= SMALLEST_EM[1] for height in heights) / len(heights) > 0.5


def test_shares_replace_the_named_kinds_and_must_add_to_one() -> None:
    weights = kind_weights(parse_shares(["clean=0.05", "long=0.09"]))
    assert (weights["clean"], weights["long"]) == (0.05, 0.09)
    assert {kind: share for kind, share in weights.items() if kind not in ("clean", "long")} == {
        kind: share for kind, share in KIND_WEIGHTS.items() if kind not in ("clean", "long")
    }
    assert kind_weights({}) == KIND_WEIGHTS
    with pytest.raises(ValueError, match="add to 1.0300, not 1"):
        kind_weights(parse_shares([f"clean={KIND_WEIGHTS['clean'] + 0.03}"]))
    with pytest.raises(ValueError, match="unknown kind manga; the kinds: clean, balloon"):
        kind_weights({"manga": 0.0})
    with pytest.raises(ValueError, match="'lowres' is not KIND=SHARE"):
        parse_shares(["lowres"])
    # The same seed, one kind each: the makers draw their kind, so their first samples differ.
    none = {kind: 0.0 for kind in KIND_WEIGHTS}
    clean = SampleMaker(LIBRARY, "one-kind", kind_weights(none | {"clean": 1.0})).sample()
    lowres = SampleMaker(LIBRARY, "one-kind", kind_weights(none | {"lowres": 1.0})).sample()
    assert not np.array_equal(clean[0], lowres[0])


def test_text_free_crops_teach_the_empty_reading() -> None:
    """A share of the `ending` kind has no text: EOS is the first target and no cell is labelled."""
    maker = SampleMaker(LIBRARY, "empty", kind_weights({kind: 0.0 for kind in KIND_WEIGHTS} | {"ending": 1.0}))
    empty = 0
    for _ in range(60):
        pixels, inputs, targets, cells, labels = maker.sample()
        if targets[0] == spec.EOS_ID:
            empty += 1
            assert inputs[0] == spec.BOS_ID and (targets[1:] == IGNORE).all() and not (labels > 0).any()
    assert 2 <= empty <= 20, f"{empty} of 60 text-free; EMPTY_SHARE is 0.15"


def _only(*kinds: str) -> dict[str, float]:
    return kind_weights({kind: 0.0 for kind in KIND_WEIGHTS} | {kind: 1.0 / len(kinds) for kind in kinds})


def test_families_are_seeded_and_shaped_like_every_sample() -> None:
    """Two makers of one seed draw the families' samples byte for byte; each has the model's shapes."""
    first, second = (SampleMaker(LIBRARY, "families", _only(*FAMILIES)) for _ in range(2))
    for _ in range(len(FAMILIES) * 2):
        ours, theirs = first.sample(), second.sample()
        for a, b in zip(ours, theirs, strict=True):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        pixels, inputs, targets, cells, labels = ours
        assert pixels.shape == (spec.IMAGE_SIZE, spec.IMAGE_SIZE, 3) and pixels.dtype == np.uint8
        assert inputs.shape == targets.shape == (TEXT_SLOTS,) and inputs.dtype == targets.dtype == np.int64
        assert cells.shape == labels.shape == (AUX_CELLS,)
        length = int((targets != IGNORE).sum()) - 1
        assert length >= 1 and targets[length] == spec.EOS_ID


@pytest.mark.parametrize("family", FAMILIES)
def test_each_family_draws_its_text_inside_the_crop(family: str) -> None:
    maker = SampleMaker(LIBRARY, f"family/{family}", _only(family))
    for _ in range(4):
        text = maker.text(family)
        assert text and maker.allowed(text)
        rendered = maker.render(family, text)
        width, height = rendered.image.size
        assert len(rendered.centres) == len(text)
        inside = sum(-1 <= x <= width + 1 and -1 <= y <= height + 1 for x, y in rendered.centres)
        assert inside == len(text), f"{family}: {len(text) - inside} centres outside the crop"


def test_marks_after_the_text_are_drawn_but_never_read() -> None:
    """The `marks` family's letterer's marks (！, ー, ♪, kana) change pixels beyond the text, and
    the expected reading is the text alone, ending in EOS."""
    vocabulary = json.loads(VOCAB_PATH.read_text(encoding="utf-8"))
    style = text_style("あいうえお", "balloon", random.Random(1), LIBRARY)
    plain = replace(
        scene_for("balloon", style, random.Random(1)), background="plain", noise=0.0, jpeg=0, blur=0.0, downscale=1.0
    )
    changed = 0
    for seed in range(6):
        bare = render_scene("あいうえお", style, replace(plain, after=(), after_any_side=True), random.Random(seed))
        marked = render_scene(
            "あいうえお", style, replace(plain, after=("glyphs",), after_any_side=True), random.Random(seed)
        )
        assert len(marked.centres) == 5
        changed += bare.image.size != marked.image.size or not np.array_equal(
            np.asarray(bare.image), np.asarray(marked.image)
        )
    assert changed == 6
    maker = SampleMaker(LIBRARY, "marks", _only("marks"))
    for _ in range(8):
        text = maker.text("marks")
        pixels, inputs, targets, cells, labels = maker.sample_of("marks", text)
        length = len(text)
        assert "".join(vocabulary[t - spec.VOCAB_OFFSET] for t in targets[:length]) == text
        assert targets[length] == spec.EOS_ID and (targets[length + 1 :] == IGNORE).all()


@pytest.mark.parametrize(
    "rgb",
    [(0, 0, 0), (255, 255, 255), (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 240, 200), (30, 90, 200), (128, 64, 200)],
)
def test_grey_of_a_colour_is_pillows_luma(rgb: tuple[int, int, int]) -> None:
    """The colour family's conversion is Pillow's RGB -> L, to the grey level."""
    assert grey_of(rgb) == Image.new("RGB", (1, 1), rgb).convert("L").getpixel((0, 0))
    assert grey_of(rgb) == round(0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2])


def test_coloured_text_keeps_a_readable_contrast() -> None:
    """Tinted fills and coloured text never come closer than LEAST_CONTRAST grey levels, and the
    scene's grey levels are those of the colours it maps them back to."""
    for seed in range(300):
        rng = random.Random(seed)
        base = replace(scene_for("balloon", text_style("あい", "balloon", rng, LIBRARY), rng), inverted=seed % 2 == 0)
        scene = widen("colour", base, None, rng)
        behind = scene.box_fill if scene.box_fill >= 0 else scene.page
        assert abs(scene.ink - behind) >= LEAST_CONTRAST or scene.ink in (0, 255), (seed, scene.ink, behind)
        (ink_level, ink), (fill_level, fill), (page_level, page) = scene.colours
        assert (ink_level, fill_level, page_level) == (grey_of(ink), grey_of(fill), grey_of(page))
        assert (scene.ink, scene.paper, scene.page) == (ink_level, fill_level, page_level)


def _channels_differ(pixels: np.ndarray) -> bool:
    return bool((pixels[..., 0] != pixels[..., 1]).any() or (pixels[..., 1] != pixels[..., 2]).any())


def test_grey_kinds_give_three_equal_channels() -> None:
    """Without tinted paper every kind but `colour` is grey: R = G = B in every pixel."""
    grey = [kind for kind in KIND_WEIGHTS if kind != "colour"]
    maker = SampleMaker(LIBRARY, "grey", _only(*grey), tint_share=0.0)
    for _ in range(24):
        pixels = maker.sample()[0]
        assert pixels.shape == (spec.IMAGE_SIZE, spec.IMAGE_SIZE, 3) and pixels.dtype == np.uint8
        assert not _channels_differ(pixels)


def test_the_colour_family_and_tinted_paper_give_unequal_channels() -> None:
    """The colour family is drawn in RGB (a few crops come out white, grey and black by chance),
    and a grey kind on tinted paper is too; the colour family's colours survive the resize."""
    colour = SampleMaker(LIBRARY, "colour", _only("colour"))
    coloured = sum(_channels_differ(colour.sample()[0]) for _ in range(20))
    assert coloured >= 16, f"{coloured} of 20 colour-family crops in colour"
    tinted = SampleMaker(LIBRARY, "tinted", _only("balloon", "lowres"), tint_share=1.0)
    assert all(_channels_differ(tinted.sample()[0]) for _ in range(6))
    with pytest.raises(ValueError, match="tint share 1.5: allowed 0-1"):
        SampleMaker(LIBRARY, "tinted", tint_share=1.5)


def test_tinted_paper_is_a_share_of_the_grey_kinds() -> None:
    maker = SampleMaker(LIBRARY, "share", _only("balloon"), tint_share=0.5)
    tinted = sum(maker.paper_tint("balloon") is not None for _ in range(60))
    assert all(maker.paper_tint(kind) is None for kind in UNTINTED_KINDS for _ in range(20))
    assert 15 <= tinted <= 45, f"{tinted} of 60 tinted at a share of 0.5"


def test_gradient_map_keeps_each_anchor_exact_and_blends_between() -> None:
    red, cream = (200, 30, 40), (250, 240, 210)
    anchors = at_own_levels(red, cream)
    table = gradient_table(anchors)
    assert tuple(table[grey_of(red)]) == red and tuple(table[grey_of(cream)]) == cream
    assert tuple(table[0]) == (0, 0, 0) and tuple(table[255]) == (255, 255, 255)
    middle = (grey_of(red) + grey_of(cream)) // 2
    assert all(min(a, b) <= c <= max(a, b) for a, b, c in zip(red, cream, table[middle], strict=True))
    image = Image.fromarray(np.array([[0, grey_of(red), grey_of(cream), 255]], np.uint8), "L")
    mapped = np.asarray(gradient_map(image, anchors))
    assert mapped.shape == (1, 4, 3) and [tuple(p) for p in mapped[0, 1:3]] == [red, cream]
    duotone = gradient_table(((0, (40, 20, 10)), (255, cream)))
    assert tuple(duotone[0]) == (40, 20, 10) and tuple(duotone[255]) == cream
    with pytest.raises(ValueError, match="not RGB"):
        gradient_map(image.convert("RGB"), anchors)
    with pytest.raises(ValueError, match="anchor level 300"):
        gradient_table(((300, red),))
