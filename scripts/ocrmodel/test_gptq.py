"""GPTQ rounding (graphs/gptq.py) of the vision int4 tier and of the int4 decoder: plain rounding in
the vision's blocks is exactly onnxruntime's symmetric MatMulNBits quantizer, GPTQ changes a
layer's output over its inputs less than plain rounding does (in the decoder's blocks too, whose
plain rounding is graphs/nbits.py's, with a few input channels far larger than the rest, as the
decoder's are), and the Hessians are the inputs' XᵀX."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from ocrmodel.graphs import gptq, nbits

K, N, BLOCK = 96, 40, 32


def one_matmul(weight: np.ndarray) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "one-matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, weight.shape[0]])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, weight.shape[1]])],
        [numpy_helper.from_array(weight, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def correlated_inputs(rng: np.random.Generator, rows: int) -> np.ndarray:
    """Inputs whose features move together, as a layer's inputs do: a few shared directions plus
    a little noise (GPTQ has nothing to use in independent, equal-variance ones)."""
    shared = rng.normal(size=(rows, K // 4)) @ rng.normal(size=(K // 4, K))
    return (shared + 0.1 * rng.normal(size=(rows, K))).astype(np.float32)


def test_plain_rounding_is_onnxruntimes_symmetric_quantizer():
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    weight = np.random.default_rng(0).normal(size=(K, N)).astype(np.float32)
    quantizer = MatMulNBitsQuantizer(one_matmul(weight), bits=4, block_size=BLOCK, is_symmetric=True)
    quantizer.process()
    stored = {init.name: numpy_helper.to_array(init) for init in quantizer.model.model.graph.initializer}
    packed, scales = gptq.matmulnbits_tensors(*gptq.round_blocks(weight, None, BLOCK), BLOCK)
    np.testing.assert_array_equal(packed, stored["w_Q4"].reshape(packed.shape))
    np.testing.assert_array_equal(scales, stored["w_scales"].reshape(scales.shape))


def test_gptq_changes_the_layer_output_less_than_plain_rounding():
    rng = np.random.default_rng(1)
    weight = rng.normal(size=(K, N)).astype(np.float32)
    inputs = correlated_inputs(rng, 512)
    hessian = inputs.astype(np.float64).T @ inputs

    def output_error(codes, scales):
        dequantized = codes * np.repeat(scales, BLOCK, axis=0)
        return np.linalg.norm(inputs @ (dequantized - weight))

    plain = output_error(*gptq.round_blocks(weight, None, BLOCK))
    rounded = output_error(*gptq.round_blocks(weight, hessian, BLOCK))
    print(f"layer output error: plain rounding {plain:.2f}, GPTQ {rounded:.2f}")
    assert rounded < 0.7 * plain


def test_gptq_in_the_decoders_blocks_beats_nearest_rounding_under_outlier_inputs():
    rng = np.random.default_rng(4)
    weight = rng.normal(size=(K, N)).astype(np.float32)
    inputs = correlated_inputs(rng, 512)
    inputs[:, [3, 40, 77]] *= 20.0  # outlier channels: their weights' errors dominate the output's
    hessian = inputs.astype(np.float64).T @ inputs
    codes, scales = gptq.round_blocks(weight, hessian, BLOCK, gptq.SYMMETRIC_INT4)
    assert codes.min() >= -7 and codes.max() <= 7

    def output_error(dequantized):
        return np.linalg.norm(inputs @ (dequantized - weight))

    nearest = output_error(nbits.roundtrip(weight.T, 4, BLOCK).T)  # nbits rounds [N, K]
    rounded = output_error(codes * np.repeat(scales, BLOCK, axis=0))
    print(f"layer output error: nearest codes {nearest:.2f}, GPTQ {rounded:.2f}")
    assert rounded < 0.7 * nearest
    # Without a Hessian the decoder's rule is nbits.py's nearest rounding, code for code.
    plain, plain_scales = gptq.round_blocks(weight, None, BLOCK, gptq.SYMMETRIC_INT4)
    np.testing.assert_allclose(plain * np.repeat(plain_scales, BLOCK, axis=0), nbits.roundtrip(weight.T, 4, BLOCK).T)


def test_codes_stay_in_range_and_each_block_holds_its_scale():
    rng = np.random.default_rng(2)
    weight = rng.normal(size=(K, N)).astype(np.float32)
    inputs = correlated_inputs(rng, 256)
    codes, scales = gptq.round_blocks(weight, inputs.astype(np.float64).T @ inputs, BLOCK)
    assert codes.dtype == np.int8 and codes.min() >= -8 and codes.max() <= 7
    assert scales.shape == (K // BLOCK, N) and np.all(scales != 0)
    # A weight that only ever sees zeros in one input keeps that row rounded alone.
    hessian = np.eye(K)
    hessian[5, 5] = 0.0
    codes, _ = gptq.round_blocks(weight, hessian, BLOCK)
    assert codes.shape == (K, N)


def test_input_hessians_are_the_inputs_gram_matrix():
    rng = np.random.default_rng(3)
    weight = rng.normal(size=(K, N)).astype(np.float32)
    feeds = [{"x": correlated_inputs(rng, 7)} for _ in range(3)]
    hessians = gptq.input_hessians(one_matmul(weight), feeds)
    stacked = np.concatenate([feed["x"] for feed in feeds]).astype(np.float64)
    assert list(hessians) == ["w"]
    np.testing.assert_allclose(hessians["w"], stacked.T @ stacked, rtol=1e-6)


def test_a_k_outside_the_blocks_is_refused():
    with pytest.raises(ValueError, match="K = 40 is not a multiple of the block size 32"):
        gptq.round_blocks(np.zeros((40, 8), np.float32), None, 32)
