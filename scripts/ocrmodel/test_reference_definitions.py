"""The reference's own definitions, on their own: the rotary embedding has the properties that
define it, and its int8 and MatMulNBits dequantisation reads tensors the way onnxruntime's own
kernels do (DequantizeLinear per axis; MatMulNBits with and without zero points, packed or not),
on small graphs built here with random codes.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from ocrmodel import reference, spec

RNG_SEED = 3


def cpu_session(graph) -> ort.InferenceSession:
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 8
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_rope_turns_only_the_rotate_half_pairs_by_position_times_theta():
    half = spec.HEAD_DIM // 2
    eye = np.eye(spec.HEAD_DIM, dtype=np.float32)[None]  # one head, 64 inputs: row i is e_i
    for position in (0, 1, 257, 383):
        rotated = reference.rope(eye, np.full(spec.HEAD_DIM, position))[0]
        for i in (0, 1, half - 1):
            angle = position * reference.ROPE_BASE ** (-2 * i / spec.HEAD_DIM)
            expected = np.zeros(spec.HEAD_DIM)
            expected[i], expected[i + half] = np.cos(angle), np.sin(angle)
            np.testing.assert_allclose(rotated[i], expected, atol=1e-6, err_msg=f"e_{i} at position {position}")
            expected[i], expected[i + half] = -np.sin(angle), np.cos(angle)
            np.testing.assert_allclose(
                rotated[i + half], expected, atol=1e-6, err_msg=f"e_{i + half} at position {position}"
            )


def test_rope_scores_depend_only_on_the_distance():
    rng = np.random.default_rng(RNG_SEED)
    q, k = rng.standard_normal((2, 1, 1, spec.HEAD_DIM)).astype(np.float32)

    def score(m: int, n: int) -> float:
        return float(reference.rope(q, np.array([m]))[0, 0] @ reference.rope(k, np.array([n]))[0, 0])

    for m, n in ((5, 2), (300, 297), (383, 380)):
        assert score(m, n) == pytest.approx(score(3, 0), abs=1e-4)
        assert score(m, n) != pytest.approx(score(m, n - 1), abs=1e-3)
    np.testing.assert_allclose(np.linalg.norm(reference.rope(q, np.array([383]))), np.linalg.norm(q), rtol=1e-6)


@pytest.mark.parametrize("axis", [0, 1])
def test_int8_dequantisation_matches_dequantize_linear(axis):
    rng = np.random.default_rng(RNG_SEED)
    codes = rng.integers(-127, 128, size=(5, 7), dtype=np.int8)
    scale = rng.uniform(1e-3, 1e-1, size=codes.shape[axis]).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["codes", "scale"], ["values"], axis=axis)],
        "dq",
        [
            helper.make_tensor_value_info("codes", TensorProto.INT8, codes.shape),
            helper.make_tensor_value_info("scale", TensorProto.FLOAT, scale.shape),
        ],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, codes.shape)],
    )
    expected = cpu_session(graph).run(None, {"codes": codes, "scale": scale})[0]
    np.testing.assert_array_equal(reference.dequantize_int8(codes, scale, axis), expected)
    with pytest.raises(ValueError, match="one value per index of axis"):
        reference.dequantize_int8(codes, scale[:-1], axis)


@pytest.mark.parametrize("zero_points", ["default", "packed uint8", "float"])
def test_matmulnbits_unpacking_matches_onnxruntime(zero_points):
    """onnxruntime multiplies the identity by the block-quantised B: Y = I @ W^T gives W back."""
    rng = np.random.default_rng(RNG_SEED)
    k, n, block = 96, 6, 32  # 3 blocks per row: an odd count, so packed zero points pad each row
    blocks = k // block
    packed = rng.integers(0, 256, size=(n, blocks, block // 2), dtype=np.uint8)
    scales = rng.uniform(-0.1, 0.1, size=(n, blocks)).astype(np.float32)
    initializers = [
        helper.make_tensor("b", TensorProto.UINT8, packed.shape, packed.tobytes(), raw=True),
        helper.make_tensor("scales", TensorProto.FLOAT, scales.shape, scales.tobytes(), raw=True),
    ]
    names = ["a", "b", "scales"]
    zero = None
    if zero_points == "packed uint8":
        zero = rng.integers(0, 256, size=(n, (blocks * 4 + 7) // 8), dtype=np.uint8)
        initializers.append(helper.make_tensor("zp", TensorProto.UINT8, zero.shape, zero.tobytes(), raw=True))
        names.append("zp")
    elif zero_points == "float":
        zero = rng.integers(0, 16, size=(n, blocks)).astype(np.float32)
        initializers.append(helper.make_tensor("zp", TensorProto.FLOAT, zero.shape, zero.tobytes(), raw=True))
        names.append("zp")
    graph = helper.make_graph(
        [helper.make_node("MatMulNBits", names, ["y"], domain="com.microsoft", K=k, N=n, bits=4, block_size=block)],
        "nbits",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [k, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [k, n])],
        initializers,
    )
    expected = cpu_session(graph).run(None, {"a": np.eye(k, dtype=np.float32)})[0].T
    np.testing.assert_allclose(
        reference.unpack_matmulnbits(packed, scales, zero, k, n, 4, block), expected, rtol=0, atol=1e-6
    )
