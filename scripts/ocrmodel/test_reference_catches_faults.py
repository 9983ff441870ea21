"""The comparisons of test_reference.py have the power to see the faults they are there for: a
reference with one deliberate fault (patched in for one test, the module itself untouched)
misses onnxruntime by at least FAULT_MARGIN times test_reference.py's tolerance, on the same
inputs, while the reference as written stays within it. The same faults put into a built
baseline graph instead (base 10100, neighbouring pairs, positions one later) failed
test_reference.py the same way; a wrong scale stored in the file is computed with alike by
both sides, and test_stored_weights.py is the one that fails on it.

Seen (largest difference over prefill and three decode steps, in tolerances; logits / caches;
trained checkpoint, then synthetic seed 0):
- RoPE base 10100 instead of 10000: 950 / 1100; synthetic 50 / 930;
- base 100000, neighbouring pairs (interleaved), pairs turned the other way: 3e5 / 2e4;
  synthetic 2e3 / 2e4;
- every position one later: 0.14 / 1.0e4; synthetic 0.04 / 9500: the logits cannot see it,
  as RoPE scores depend only on distances, so the caches must be compared;
- decode positions one later: 1.3e4 / 1.0e4; synthetic 480 / 6800;
- int8 scales 0.1% large: 250 / 65; synthetic 96 / 22;
- int4 nibbles swapped: 4.6e5, zero point 7 instead of 8: 4.0e4 (vision_embeds; synthetic
  1.6e5 and 6.1e4).
"""

from __future__ import annotations

import numpy as np
import pytest

from ocrmodel import reference, spec
from ocrmodel.conftest import decoder_weights_from_file, session, vision_weights_from_file
from ocrmodel.decode import OnnxDecoder, ReferenceDecoder
from ocrmodel.test_reference import DECODER_LOGITS_ATOL, INT4_VISION_OF_MAX, PRESENT_OF_MAX, decoder_calls
from ocrmodel.variants import decoder_variant, vision_variant

FAULT_MARGIN = 10.0
CORRECT_ROPE = reference.rope
CORRECT_DEQUANTIZE = reference.dequantize_int8
CORRECT_UNPACK = reference.unpack_matmulnbits


def interleaved_rope(x: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The other common convention: dimension 2i pairs with 2i + 1."""
    pairs = x.reshape(*x.shape[:-1], -1, 2).swapaxes(-1, -2).reshape(x.shape)  # evens, then odds
    turned = CORRECT_ROPE(pairs, positions)
    return turned.reshape(*x.shape[:-1], 2, -1).swapaxes(-1, -2).reshape(x.shape)


DECODER_FAULTS = {
    "rope base 10100": ("ROPE_BASE", 10100.0),
    "rope base 100000": ("ROPE_BASE", 100000.0),
    "rope pairs interleaved": ("rope", interleaved_rope),
    "rope turned the other way": ("rope", lambda x, positions: CORRECT_ROPE(x, -positions)),
    "every position one later": ("rope", lambda x, positions: CORRECT_ROPE(x, positions + 1)),
    "decode positions one later": ("rope", lambda x, positions: CORRECT_ROPE(x, positions + (len(positions) == 1))),
    "int8 scales 0.1% large": (
        "dequantize_int8",
        lambda q, scale, axis: CORRECT_DEQUANTIZE(q, scale * np.float32(1.001), axis),
    ),
}


def swapped_nibbles(packed, scales, zero_points, k, n, bits, block_size):
    packed = np.asarray(packed, dtype=np.uint8)
    return CORRECT_UNPACK((packed >> 4) | (packed << 4), scales, zero_points, k, n, bits, block_size)


def zero_point_seven(packed, scales, zero_points, k, n, bits, block_size):
    sevens = np.full((n, -(-k // block_size)), 7.0, dtype=np.float32)
    return CORRECT_UNPACK(packed, scales, sevens, k, n, bits, block_size)


VISION_FAULTS = {"int4 nibbles swapped": swapped_nibbles, "int4 zero point 7": zero_point_seven}


@pytest.fixture(scope="module")
def baseline_runs(build, hayai_case) -> tuple[np.ndarray, list[tuple[np.ndarray, dict[str, np.ndarray]]]]:
    """The decoder input and onnxruntime's logits and caches after each call of test_reference.py's
    sequence on the baseline file."""
    vision_embeds = reference.vision_forward(build.weights, hayai_case.pixels)
    variant = decoder_variant("baseline")
    decoder = OnnxDecoder(session(build.embedded(variant.file)), variant.fixed_kv)
    runs = []
    for _, call in decoder_calls(vision_embeds, hayai_case.pytorch_tokens):
        logits = call(decoder)
        runs.append((logits, {name: value[:, :, : decoder.length] for name, value in decoder.cache.items()}))
    return vision_embeds, runs


def decoder_gap(build, hayai_case, baseline_runs) -> tuple[float, float]:
    """How far the reference misses onnxruntime on the baseline file, in tolerances: the largest
    logit difference and the largest cache difference over the whole sequence."""
    vision_embeds, runs = baseline_runs
    ours = ReferenceDecoder(decoder_weights_from_file(build.embedded(decoder_variant("baseline").file)))
    logits_gap = cache_gap = 0.0
    for (_, call), (logits, cache) in zip(decoder_calls(vision_embeds, hayai_case.pytorch_tokens), runs, strict=True):
        logits_gap = max(logits_gap, float(np.abs(call(ours) - logits).max()) / DECODER_LOGITS_ATOL)
        for layer in range(spec.LAYERS):
            for kind, present in (("k", ours.past_k[layer]), ("v", ours.past_v[layer])):
                difference = np.abs(cache[f"past_{kind}{layer}"] - present).max()
                cache_gap = max(cache_gap, float(difference / (PRESENT_OF_MAX * np.abs(present).max())))
    return logits_gap, cache_gap


def vision_gap(build, hayai_case) -> float:
    path = build.embedded(vision_variant("121").file)
    expected = reference.vision_forward(vision_weights_from_file(path), hayai_case.pixels)
    actual = session(path).run(None, {"pixel_values": hayai_case.pixels})[0]
    return float(np.abs(actual - expected).max() / (INT4_VISION_OF_MAX * np.abs(expected).max()))


def test_the_reference_as_written_is_within_tolerance(build, hayai_case, baseline_runs):
    assert max(decoder_gap(build, hayai_case, baseline_runs)) <= 1.0
    assert vision_gap(build, hayai_case) <= 1.0


@pytest.mark.parametrize("fault", DECODER_FAULTS, ids=list(DECODER_FAULTS))
def test_a_decoder_fault_is_caught(build, hayai_case, baseline_runs, monkeypatch, fault):
    attribute, value = DECODER_FAULTS[fault]
    monkeypatch.setattr(reference, attribute, value)
    logits_gap, cache_gap = decoder_gap(build, hayai_case, baseline_runs)
    print(f"{fault}: logits {logits_gap:.3g}, caches {cache_gap:.3g} tolerances off")
    assert max(logits_gap, cache_gap) >= FAULT_MARGIN


@pytest.mark.parametrize("fault", VISION_FAULTS, ids=list(VISION_FAULTS))
def test_an_int4_fault_is_caught(build, hayai_case, monkeypatch, fault):
    monkeypatch.setattr(reference, "unpack_matmulnbits", VISION_FAULTS[fault])
    gap = vision_gap(build, hayai_case)
    print(f"{fault}: vision_embeds {gap:.3g} tolerances off")
    assert gap >= FAULT_MARGIN
