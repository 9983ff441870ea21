"""The numpy reference and onnxruntime (CPU) agree on every built file, given the values the file
stores. The expected side takes nothing from the builder: the weights are read back from the
file's own tensors and dequantized by the reference's definitions (int8 codes times their
per-channel scale, MatMulNBits blocks unpacked from onnxruntime's documented layout, fp16
widened), and RoPE is the reference's own rotary formula (reference.rope). Inputs are what the
harness feeds: hayai13 case 01 through the model's preprocessing, and PyTorch's tokens for it
as the decode steps' tokens (positions 257, 258, 259).

Tolerances (max absolute difference, rtol 0), each well above what was seen and well below
what a fault moves (test_reference_catches_faults.py measures those):
- decoder logits, prefill and three decode steps: 1e-4 (seen: 1.4e-5 with the trained
  checkpoint, 3.8e-6 synthetic; logits spread with std about 1.7 trained, 1.1 synthetic). The
  fp16-matmul file matches as closely because onnxruntime's CPU EP has no fp16 MatMul and runs
  it in fp32 on the fp16-rounded weights; WebGPU with shader-f16 rounds activations too.
- every present_k / present_v: 1e-4 of its largest |value| (seen: 8.8e-6 trained, 6.9e-6
  synthetic). The reference turns each pair by float64 angles where the graph rounds
  theta_i and p * theta_i to float32: over positions 0..383 that moves an angle by at most
  1.8e-5 rad (every position and frequency computed), which moves a rotated pair by that
  fraction of its length, then the next layers carry it on; cached keys reach 17. With
  float32 angles like the graph's, the caches agree to 1.5e-6 of their largest value.
- vision tier 121 against the reference with the file's int4 weights: 1e-5 of the largest
  |vision_embeds| (seen: 8.5e-7 of 38 trained, 9.3e-7 of 4.4 synthetic; 2.4e-6 on noise).
- vision tier 242 against the reference with the file's fp16 weights: 1% of the largest
  |vision_embeds|, as onnxruntime computes every activation in fp16 (seen: 0.055% with
  the trained checkpoint, 0.053% synthetic; 0.30% on noise pixels, 0.086 where values reach 28.8).
"""

from __future__ import annotations

import numpy as np
import pytest

from ocrmodel import reference, spec
from ocrmodel.conftest import decoder_weights_from_file, session, vision_weights_from_file
from ocrmodel.decode import OnnxDecoder, ReferenceDecoder
from ocrmodel.test_gpu_decoders import gpu_decoder_weights_from_file
from ocrmodel.variants import DECODER_VARIANTS, vision_variant

DECODER_LOGITS_ATOL = 1e-4
PRESENT_OF_MAX = 1e-4
INT4_VISION_OF_MAX = 1e-5
FP16_VISION_OF_MAX = 0.01
DECODE_STEPS = 3


def decoder_calls(vision_embeds: np.ndarray, tokens: list[int]) -> list[tuple[str, object]]:
    """Prefill, then DECODE_STEPS steps fed the given tokens: (label, call on a decoder)."""
    calls = [("prefill", lambda decoder: decoder.prefill(vision_embeds))]
    for iteration, token in enumerate(tokens[:DECODE_STEPS]):
        calls.append(
            (
                f"step {iteration} (position {spec.VISION_TOKENS + 1 + iteration})",
                lambda decoder, token=token, iteration=iteration: decoder.step(token, iteration),
            )
        )
    return calls


def assert_decoders_agree(onnx_decoder: OnnxDecoder, reference_decoder: ReferenceDecoder, label: str) -> None:
    """The presents of the last call: every valid cache slot of every layer."""
    valid = onnx_decoder.length
    for layer in range(spec.LAYERS):
        for kind, expected in (("k", reference_decoder.past_k[layer]), ("v", reference_decoder.past_v[layer])):
            actual = onnx_decoder.cache[f"past_{kind}{layer}"][:, :, :valid]
            np.testing.assert_allclose(
                actual,
                expected,
                rtol=0,
                atol=PRESENT_OF_MAX * np.abs(expected).max(),
                err_msg=f"{label}: present_{kind}{layer}",
            )


@pytest.fixture(scope="module")
def vision_embeds(build, hayai_case) -> np.ndarray:
    return reference.vision_forward(build.weights, hayai_case.pixels)


@pytest.mark.parametrize("variant", DECODER_VARIANTS, ids=[v.name for v in DECODER_VARIANTS])
def test_decoder_matches_reference(build, variant, vision_embeds, hayai_case):
    path = build.embedded(variant.file)
    onnx_decoder = OnnxDecoder(session(path), variant.fixed_kv)
    read = decoder_weights_from_file if variant.head == "tied-gemm" else gpu_decoder_weights_from_file
    reference_decoder = ReferenceDecoder(read(path))
    for label, call in decoder_calls(vision_embeds, hayai_case.pytorch_tokens):
        np.testing.assert_allclose(
            call(onnx_decoder),
            call(reference_decoder),
            rtol=0,
            atol=DECODER_LOGITS_ATOL,
            err_msg=f"{variant.name} {label}: logits",
        )
        assert_decoders_agree(onnx_decoder, reference_decoder, f"{variant.name} {label}")


@pytest.mark.parametrize("tier,of_max", [("121", INT4_VISION_OF_MAX), ("242", FP16_VISION_OF_MAX)])
def test_vision_matches_reference_with_its_own_weights(build, hayai_case, tier, of_max):
    path = build.embedded(vision_variant(tier).file)
    expected = reference.vision_forward(vision_weights_from_file(path), hayai_case.pixels)
    actual = session(path).run(None, {"pixel_values": hayai_case.pixels})[0]
    np.testing.assert_allclose(actual, expected, rtol=0, atol=of_max * np.abs(expected).max())


def test_external_data_files_compute_what_the_embedded_ones_do(build, hayai_case):
    for file in (vision_variant("121").file, DECODER_VARIANTS[0].file):
        embedded, external = session(build.embedded(file)), session(build.external(file))
        if file.startswith("vision"):
            feeds = {"pixel_values": hayai_case.pixels}
        else:
            feeds = {
                "vision_embeds": np.ones((1, spec.VISION_TOKENS, spec.HIDDEN), np.float32),
                "token_ids": np.array([[1]], np.int32),
                "position_ids": np.arange(spec.VISION_TOKENS + 1, dtype=np.int32)[None],
                **{
                    f"past_{kind}{layer}": np.zeros((1, spec.KV_HEADS, 0, spec.HEAD_DIM), np.float32)
                    for layer in range(spec.LAYERS)
                    for kind in "kv"
                },
            }
        for got, want in zip(external.run(None, feeds), embedded.run(None, feeds), strict=True):
            np.testing.assert_array_equal(got, want)
