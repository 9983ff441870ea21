"""Every built file stores the weights it was built from, quantised as its format defines, checked
without the builder's quantizer against the float weights of the build: the checkpoint's, read
by conftest.read_checkpoint, or the synthetic seed's:

- int8 (decoder linears, per output channel; embedding, per token): scale = max |row| / 127
  and each code the nearest one, |code * scale - w| <= scale / 2; from the trained checkpoint,
  whose matrices are already int8 per row, the very codes of the checkpoint come back;
- fp16 (fp16-matmul's first blocks, tier 242): the nearest fp16 of each weight;
- int4 MatMulNBits (tier 121, symmetric, blocks of 32 along K, codes rounded by GPTQ): every
  MatMul's stored weight changes that layer's output over the calibration images' inputs by
  less than half as much as plain rounding would (|scale| = max |block| / 8, each weight at its
  nearest code), the output error measured as trace(ΔW H ΔWᵀ) with H the inputs' XᵀX (seen:
  0.03-0.31 of it with the checkpoint, at most 0.05 with synthetic weights);
- everything else (norms, biases, convolutions, positions) unchanged.

Both towers store q divided by 8 (the attention scale 1/sqrt(64) folded in), so the truth for
those rows is the float32 weight divided by 8 (exact: a power of two) before any rounding.
Slack 1e-5 of a step covers float32 rounding of w / scale.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from ocrmodel import reference, spec
from ocrmodel.build_models import calibration_feeds
from ocrmodel.conftest import Q_FOLD, read_checkpoint, stored_tensors
from ocrmodel.graphs import gptq
from ocrmodel.graphs.vision import build_vision
from ocrmodel.variants import DECODER_VARIANTS, VISION_VARIANTS

STEP_SLACK = 1e-5
SCALE_RTOL = 1e-6


def decoder_operands(weights: dict[str, np.ndarray], layer: int) -> dict[str, np.ndarray]:
    """The float [out, in] matrices a decoder file stores for one block, by stored name."""
    p = f"decoder.layers.{layer}."
    return {
        p + "attn.qkv": np.concatenate(
            [weights[p + "attn.q.weight"] / Q_FOLD, weights[p + "attn.k.weight"], weights[p + "attn.v.weight"]]
        ),
        p + "attn.o": weights[p + "attn.o.weight"],
        p + "mlp.gate_up": np.concatenate([weights[p + "mlp.gate.weight"], weights[p + "mlp.up.weight"]]),
        p + "mlp.down": weights[p + "mlp.down.weight"],
    }


@pytest.fixture(scope="module")
def truth(build) -> dict[str, np.ndarray]:
    source = build.info["weightsSource"]
    return read_checkpoint(source["path"]) if source["kind"] == "checkpoint" else build.weights


def assert_int8_rows(codes: np.ndarray, scale: np.ndarray, truth: np.ndarray, label: str) -> None:
    """codes [rows, columns] int8 with one scale per row against the float truth of that shape."""
    assert codes.dtype == np.int8 and codes.shape == truth.shape, f"{label}: {codes.dtype} {codes.shape}"
    np.testing.assert_allclose(
        scale, np.abs(truth).max(axis=1) / 127.0, rtol=SCALE_RTOL, err_msg=f"{label}: scale is not max |row| / 127"
    )
    steps = np.abs(codes.astype(np.float64) * scale[:, None].astype(np.float64) - truth) / scale[:, None]
    worst = np.unravel_index(steps.argmax(), steps.shape)
    assert steps.max() <= 0.5 + STEP_SLACK, f"{label}: code at {worst} is {steps.max():.3f} steps off its weight"


def checkpoint_codes(build, name: str) -> np.ndarray | None:
    """The int8 codes the trained checkpoint stores for a spec matrix (None for synthetic builds)."""
    source = build.info["weightsSource"]
    if source["kind"] != "checkpoint":
        return None
    with np.load(source["path"]) as stored:
        return stored[name].reshape(stored[name].shape[0], -1)


# The seed's storage; test_gpu_decoders.py checks the pre-transposed and MatMulNBits tables.
SEED_FORMAT = [v for v in DECODER_VARIANTS if v.head == "tied-gemm"]


@pytest.mark.parametrize("variant", SEED_FORMAT, ids=[v.name for v in SEED_FORMAT])
def test_decoder_stores_its_weights_as_its_format_defines(build, truth, variant):
    tensors = stored_tensors(build.embedded(variant.file))
    w = truth
    assert_int8_rows(
        tensors["decoder.embed.int8"], tensors["decoder.embed.scale"], w["decoder.embed.weight"], "decoder.embed"
    )
    np.testing.assert_array_equal(tensors["decoder.norm.weight"], w["decoder.norm.weight"])
    for layer in range(spec.LAYERS):
        p = f"decoder.layers.{layer}."
        for norm in ("attn_norm.weight", "mlp_norm.weight"):
            np.testing.assert_array_equal(tensors[p + norm], w[p + norm], err_msg=p + norm)
        for name, matrix in decoder_operands(w, layer).items():
            if variant.layer_precision(layer) == "fp16":
                # stored [in, out] for MatMul
                np.testing.assert_array_equal(tensors[name + ".fp16"], matrix.T.astype(np.float16), err_msg=name)
                assert name + ".int8" not in tensors, name
            else:
                assert_int8_rows(tensors[name + ".int8"].T, tensors[name + ".scale"], matrix, name)
                assert name + ".fp16" not in tensors, name


def test_checkpoint_int8_codes_come_back_unchanged(build):
    """The checkpoint stores matrices as int8 per row already: requantising its values must give
    its codes back, so the int8 files compute with exactly the weights PyTorch evaluated."""
    if checkpoint_codes(build, "decoder.embed.weight") is None:
        pytest.skip("synthetic build: no checkpoint codes to compare")
    tensors = stored_tensors(build.embedded(DECODER_VARIANTS[0].file))
    np.testing.assert_array_equal(tensors["decoder.embed.int8"], checkpoint_codes(build, "decoder.embed.weight"))
    for layer in range(spec.LAYERS):
        p = f"decoder.layers.{layer}."
        fused = {
            "attn.qkv": ("attn.q", "attn.k", "attn.v"),
            "attn.o": ("attn.o",),
            "mlp.gate_up": ("mlp.gate", "mlp.up"),
            "mlp.down": ("mlp.down",),
        }
        for stored, parts in fused.items():
            codes = np.concatenate([checkpoint_codes(build, f"{p}{part}.weight") for part in parts])
            np.testing.assert_array_equal(tensors[f"{p}{stored}.int8"].T, codes, err_msg=p + stored)


def vision_truth(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The float values a vision file stores, by spec name: q rows of qkv divided by 8."""
    truth = {name: value for name, value in weights.items() if name.startswith("vision.")}
    for layer in range(spec.VISION_LAYERS):
        for kind in ("weight", "bias"):
            name = f"vision.layers.{layer}.attn.qkv.{kind}"
            truth[name] = truth[name].copy()
            truth[name][: spec.VISION_WIDTH] /= Q_FOLD
    return truth


def plain_rounding(w: np.ndarray, block: int) -> np.ndarray:
    """w [n, k] -> its values at the nearest symmetric int4 code of blocks of `block` along k,
    |scale| = max |block| / 8, the largest magnitude at code -8."""
    n, k = w.shape
    blocks = w.reshape(n, k // block, block).astype(np.float64)
    largest = np.take_along_axis(blocks, np.abs(blocks).argmax(axis=-1)[..., None], axis=-1)
    scales = largest / -8.0
    scales[scales == 0] = 1.0
    return (np.clip(np.rint(blocks / scales), -8, 7) * scales).reshape(n, k)


def output_error(delta: np.ndarray, hessian: np.ndarray) -> float:
    """The error a weight change `delta` [n, k] adds to the layer's outputs, summed over the
    calibration inputs whose Hessian (X^T X) is `hessian` [k, k]."""
    return float(np.sum((delta @ hessian) * delta))


def test_int4_vision_stores_symmetric_blocks_closer_to_its_layers_than_plain_rounding(build, truth):
    variant = next(v for v in VISION_VARIANTS if v.precision == "int4")
    path = build.embedded(variant.file)
    tensors = stored_tensors(path)
    stored_truth = vision_truth(truth)
    hessians = gptq.input_hessians(build_vision(build.weights, fp16=False), calibration_feeds())
    quantised = set()
    for node in onnx.load(str(path)).graph.node:
        if node.op_type != "MatMulNBits":
            continue
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        assert (attributes["bits"], len([i for i in node.input if i])) == (4, 3), f"{node.name}: not symmetric int4"
        linear = node.input[1].removesuffix("_Q4").removesuffix(".weight_t")
        k, n, block = attributes["K"], attributes["N"], attributes["block_size"]
        w = stored_truth[linear + ".weight"].astype(np.float64)
        assert w.shape == (n, k) and k % block == 0, linear
        values = reference.unpack_matmulnbits(tensors[node.input[1]], tensors[node.input[2]], None, k, n, 4, block)
        hessian = hessians[node.input[1].removesuffix("_Q4")]
        stored = output_error(values.astype(np.float64) - w, hessian)
        plain = output_error(plain_rounding(w, block) - w, hessian)
        print(f"{linear}: output error {stored / plain:.2f} of plain rounding's")
        assert stored < 0.5 * plain, (
            f"{linear}: the stored codes keep {stored / plain:.2f} of plain rounding's output error"
        )
        quantised.add(linear + ".weight")
    expected_linears = {
        name
        for name, shape in spec.parameter_shapes().items()
        if name.startswith("vision.") and name.endswith(".weight") and len(shape) == 2 and name != "vision.pos"
    }
    assert quantised == expected_linears
    for name, value in stored_truth.items():
        if name not in quantised:
            np.testing.assert_array_equal(tensors[name], value, err_msg=name)


def test_fp16_vision_stores_the_nearest_fp16_of_every_weight(build, truth):
    variant = next(v for v in VISION_VARIANTS if v.precision == "fp16")
    tensors = stored_tensors(build.embedded(variant.file))
    for name, value in vision_truth(truth).items():
        stored = tensors[name + "_t"].T if name + "_t" in tensors else tensors[name]
        assert stored.dtype == np.float16, f"{name}: stored as {stored.dtype}"
        np.testing.assert_array_equal(stored, value.astype(np.float16), err_msg=name)
