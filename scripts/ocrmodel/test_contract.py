"""Every built file honours the model contract (docs/model-contract.md): names, dtypes, shapes at prefill and at
decode, external data beside the graph, and fixed-KV slots beyond past_length never matter."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from ocrmodel import spec
from ocrmodel.conftest import session, zero_cache
from ocrmodel.decode import OnnxDecoder, step_position
from ocrmodel.variants import DECODER_VARIANTS, VISION_VARIANTS

DECODERS = [variant.name for variant in DECODER_VARIANTS]
FILES = [variant.file for variant in VISION_VARIANTS] + [variant.file for variant in DECODER_VARIANTS]


def dims(value_info) -> list:
    return [d.dim_param or d.dim_value for d in value_info.type.tensor_type.shape.dim]


def signature(path) -> dict[str, tuple[str, list]]:
    model = onnx.load(str(path), load_external_data=False)
    return {
        value.name: (onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type).name, dims(value))
        for value in [*model.graph.input, *model.graph.output]
    }


def expected_decoder_signature(fixed_kv: bool) -> dict[str, tuple[str, list]]:
    past = spec.KV_SLOTS if fixed_kv else "past_sequence"
    present = spec.KV_SLOTS if fixed_kv else "total_sequence"
    expected = {
        "vision_embeds": ("float32", [1, "vision_tokens", spec.HIDDEN]),
        "token_ids": ("int32", [1, 1]),
        "position_ids": ("int32", [1, "sequence"]),
        "logits": ("float32", [1, spec.VOCAB_IDS]),
    }
    for layer in range(spec.LAYERS):
        for kind in "kv":
            expected[f"past_{kind}{layer}"] = ("float32", [1, spec.KV_HEADS, past, spec.HEAD_DIM])
            expected[f"present_{kind}{layer}"] = ("float32", [1, spec.KV_HEADS, present, spec.HEAD_DIM])
    if fixed_kv:
        expected["past_length"] = ("int64", [1])
    return expected


@pytest.mark.parametrize("variant", DECODER_VARIANTS, ids=DECODERS)
@pytest.mark.parametrize("storage", ["embedded", "external"])
def test_decoder_signature(build, variant, storage):
    path = build.embedded(variant.file) if storage == "embedded" else build.external(variant.file)
    assert signature(path) == expected_decoder_signature(variant.fixed_kv)


@pytest.mark.parametrize("variant", VISION_VARIANTS, ids=[v.tier for v in VISION_VARIANTS])
@pytest.mark.parametrize("storage", ["embedded", "external"])
def test_vision_signature(build, variant, storage):
    path = build.embedded(variant.file) if storage == "embedded" else build.external(variant.file)
    assert signature(path) == {
        "pixel_values": ("float32", [1, 3, spec.IMAGE_SIZE, spec.IMAGE_SIZE]),
        "vision_embeds": ("float32", [1, spec.VISION_TOKENS, spec.HIDDEN]),
    }


@pytest.mark.parametrize("file", FILES)
def test_external_data_is_one_file_named_as_the_manifest_says(build, file):
    model = onnx.load(str(build.external(file)), load_external_data=False)
    locations = set()
    external_bytes = 0
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            entries = {entry.key: entry.value for entry in tensor.external_data}
            locations.add(entries["location"])
            external_bytes += int(entries["length"])
    assert locations == {file + ".data"}
    assert build.external(file + ".data").stat().st_size >= external_bytes
    # what stays inside the graph file is small: shapes, norms, scales of small tensors
    assert build.external(file).stat().st_size < 256 * 1024
    assert abs(build.embedded(file).stat().st_size - external_bytes) < 256 * 1024


def test_manifest_names_every_file_and_matches_the_spec(build):
    manifest = build.manifest
    root = build.manifest_path.parent
    assert manifest["capability"] == {
        "layers": spec.LAYERS,
        "hiddenSize": spec.HIDDEN,
        "intermediateSize": spec.MLP,
        "attentionHeads": spec.HEADS,
        "kvHeads": spec.KV_HEADS,
        "headDim": spec.HEAD_DIM,
        "vocabulary": spec.VOCAB_IDS,
        "imageSize": spec.IMAGE_SIZE,
        "visionTokens": spec.VISION_TOKENS,
        "kvSlots": spec.KV_SLOTS,
        "maxTokens": spec.MAX_TOKENS,
    }
    assert manifest["tokens"] == {"bos": spec.BOS_ID, "eos": spec.EOS_ID, "vocabOffset": spec.VOCAB_OFFSET}
    vocab = json.loads((root / manifest["vocab"]).read_text(encoding="utf-8"))
    assert len(vocab) + spec.VOCAB_OFFSET == spec.VOCAB_IDS
    assert sorted(manifest["vision"]) == sorted(v.tier for v in VISION_VARIANTS)
    assert sorted(manifest["decoder"]) == sorted(DECODERS)
    for entry in [*manifest["vision"].values(), *manifest["decoder"].values()]:
        for relative in (entry["embedded"], entry["external"]["model"], entry["external"]["data"]):
            assert (root / relative).is_file(), relative
    for variant in DECODER_VARIANTS:
        assert manifest["decoder"][variant.name]["fixedKv"] == variant.fixed_kv


def test_committed_manifest_does_not_depend_on_the_weights(build, tmp_path):
    """models/manifest.json is committed: a build into another place writes the same content
    apart from the paths, whichever weights were used."""
    from pathlib import PurePosixPath

    from ocrmodel.build_models import DEFAULT_MANIFEST
    from ocrmodel.manifest import build_manifest

    committed = json.loads(DEFAULT_MANIFEST.read_text(encoding="utf-8"))
    assert committed == build_manifest(
        PurePosixPath("generated"),
        PurePosixPath("vocab.json"),
        PurePosixPath("checkpoint/ocr-bench-default.npz"),
        build.info["files"],
        build.info["graphs"],
    )


@pytest.mark.parametrize("variant", DECODER_VARIANTS, ids=DECODERS)
def test_decoder_shapes_at_prefill_and_decode(build, variant):
    decoder = OnnxDecoder(session(build.embedded(variant.file)), variant.fixed_kv)
    vision = np.random.default_rng(3).standard_normal((1, spec.VISION_TOKENS, spec.HIDDEN)).astype(np.float32)
    for call in (lambda: decoder.prefill(vision), lambda: decoder.step(7, 0), lambda: decoder.step(8, 1)):
        logits = call()
        assert logits.shape == (1, spec.VOCAB_IDS) and logits.dtype == np.float32
        assert np.isfinite(logits).all()
        slots = spec.KV_SLOTS if variant.fixed_kv else decoder.length
        for name, value in decoder.last_outputs.items():
            if name.startswith("present_"):
                assert value.shape == (1, spec.KV_HEADS, slots, spec.HEAD_DIM), name


def test_fixed_kv_slots_beyond_past_length_never_change_the_result(build):
    variant = next(v for v in DECODER_VARIANTS if v.fixed_kv)
    clean = OnnxDecoder(session(build.embedded(variant.file)), fixed_kv=True)
    dirty = OnnxDecoder(session(build.embedded(variant.file)), fixed_kv=True)
    rng = np.random.default_rng(11)
    vision = rng.standard_normal((1, spec.VISION_TOKENS, spec.HIDDEN)).astype(np.float32)
    garbage = {
        name: (rng.standard_normal(value.shape) * 50).astype(np.float32)
        for name, value in zero_cache(spec.KV_SLOTS).items()
    }
    np.testing.assert_array_equal(clean.prefill(vision), dirty.prefill(vision, initial_cache=garbage))
    for iteration, token in enumerate((4, 900, 13000)):
        valid = spec.VISION_TOKENS + 1 + iteration
        # scramble every slot the next call may not read: [past_length, 384)
        for name, value in dirty.cache.items():
            value = value.copy()
            value[:, :, valid:] = rng.standard_normal(value[:, :, valid:].shape) * 50
            dirty.cache[name] = value
        np.testing.assert_array_equal(clean.step(token, iteration), dirty.step(token, iteration))
        for name in clean.cache:
            np.testing.assert_array_equal(clean.cache[name][:, :, : valid + 1], dirty.cache[name][:, :, : valid + 1])
    assert step_position(0)[0, 0] == spec.VISION_TOKENS + 1
