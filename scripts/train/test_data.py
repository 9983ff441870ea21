"""The training data generator: held-out strings never appear, samples match the model's inputs."""

from __future__ import annotations

import json

import numpy as np

from data import AUX_CELLS, IGNORE, KIND_WEIGHTS, MAX_CHARACTERS, TEXT_SLOTS, VOCAB_PATH, SampleMaker
from ocrmodel import spec
from ocrmodel.eval_sets import evaluation_strings
from ocrmodel.fonts import FontLibrary

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
        assert pixels.min() < 128 < pixels.max(), "ink and paper both present"
        length = int((targets != IGNORE).sum()) - 1
        assert 1 <= length <= MAX_CHARACTERS and inputs.shape == targets.shape == (TEXT_SLOTS,)
        assert inputs[0] == spec.BOS_ID and targets[length] == spec.EOS_ID
        assert list(inputs[1:length + 1]) == list(targets[:length])
        text = "".join(vocabulary[t - spec.VOCAB_OFFSET] for t in targets[:length])
        assert maker.allowed(text)
        assert cells.shape == labels.shape == (AUX_CELLS,) and len(set(cells.tolist())) == AUX_CELLS
        assert set(labels[labels > 0].tolist()) <= set(targets[:length].tolist())
        assert (labels > 0).any()


def test_same_seed_same_samples() -> None:
    first = [SampleMaker(LIBRARY, "seeded").sample() for _ in range(1)][0]
    second = [SampleMaker(LIBRARY, "seeded").sample() for _ in range(1)][0]
    for a, b in zip(first, second):
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
