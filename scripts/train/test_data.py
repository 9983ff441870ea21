"""The training data generator: held-out strings never appear, samples match the model's inputs."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from ocrmodel import spec
from ocrmodel.eval_sets import evaluation_strings
from ocrmodel.fonts import FontLibrary
from ocrmodel.manga_styles import scene_for, text_style
from train.data import (
    AUX_CELLS,
    IGNORE,
    KIND_WEIGHTS,
    MAX_CHARACTERS,
    SMALLEST_EM,
    TEXT_SLOTS,
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
        assert pixels.shape == (spec.IMAGE_SIZE, spec.IMAGE_SIZE) and pixels.dtype == np.uint8
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
    weights = kind_weights(parse_shares(["clean=0.1", "long=0.15"]))
    assert (weights["clean"], weights["long"]) == (0.1, 0.15)
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
