"""Quantised files are smaller than fp32 by the expected factor on their MatMul weights, and a
size and parameter table is printed (`pytest -s` shows it)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from ocrmodel import spec
from ocrmodel.variants import DECODER_VARIANTS, VISION_VARIANTS

FILES = [variant.file for variant in VISION_VARIANTS] + [variant.file for variant in DECODER_VARIANTS]


def weight_bytes(path) -> dict[str, list[int]]:
    """Per storage format: [stored bytes, fp32 bytes of the same weights] over the weights that
    feed MatMul, MatMulNBits, Gemm, Gather and Einsum (scales counted with their weights)."""
    model = onnx.load(str(path))
    tensors = {t.name: t for t in model.graph.initializer}

    def size(name: str) -> int:
        return numpy_helper.to_array(tensors[name]).nbytes

    totals: dict[str, list[int]] = {}

    def add(kind: str, stored: int, elements: int) -> None:
        entry = totals.setdefault(kind, [0, 0])
        entry[0] += stored
        entry[1] += elements * 4

    casts = {
        node.output[0]: node.input[0]
        for node in model.graph.node
        if node.op_type == "Cast" and node.input[0] in tensors
    }
    for node in model.graph.node:
        if node.op_type == "Mul" and node.input[0] in casts and node.input[1] in tensors:
            # einsum-int8's weights: int8 codes cast to float and scaled, folded at load.
            weight = numpy_helper.to_array(tensors[casts[node.input[0]]])
            assert weight.dtype == np.int8, node.name
            add("int8", weight.nbytes + size(node.input[1]), weight.size)
        elif node.op_type == "DequantizeLinear" and node.input[0] in tensors:
            weight = numpy_helper.to_array(tensors[node.input[0]])
            assert weight.dtype == np.int8, node.name
            add("int8", weight.nbytes + size(node.input[1]), weight.size)
        elif node.op_type == "MatMulNBits":
            attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            kind = f"int{attributes.get('bits', 4)}-block{attributes['block_size']}"
            add(kind, size(node.input[1]) + size(node.input[2]), attributes["K"] * attributes["N"])
        elif node.op_type == "MatMul" and node.input[1] in tensors:
            weight = numpy_helper.to_array(tensors[node.input[1]])
            if weight.ndim == 2 and weight.size > 4096:  # not the 64x64 RoPE rotation
                add(weight.dtype.name, weight.nbytes, weight.size)
    return totals


def parameter_counts() -> tuple[int, int]:
    shapes = spec.parameter_shapes()
    vision = sum(int(np.prod(s)) for name, s in shapes.items() if name.startswith("vision."))
    decoder = sum(int(np.prod(s)) for name, s in shapes.items() if name.startswith("decoder."))
    return vision, decoder


@pytest.mark.parametrize("file", FILES)
def test_quantised_weights_shrink_by_the_expected_factor(build, file):
    # MatMulNBits blocks of 32 carry one fp32 scale each: 32 * 4 / (32 * bits / 8 + 4) at most.
    expected = {
        "int8": (3.9, 4.0),
        "int4-block32": (6.0, 8.0),
        "int8-block32": (3.5, 3.6),
        "float16": (2.0, 2.0),
        "float32": (1.0, 1.0),
    }
    totals = weight_bytes(build.embedded(file))
    assert totals, f"{file}: no MatMul weights found"
    for kind, (stored, fp32) in totals.items():
        low, high = expected[kind]
        assert low <= fp32 / stored <= high, f"{file} {kind}: {fp32 / stored:.2f}x, expected {low}-{high}x"


def test_print_size_and_parameter_table(build):
    vision_params, decoder_params = parameter_counts()
    rows = []
    for file in FILES:
        params = vision_params if file.startswith("vision") else decoder_params
        fp32 = params * 4
        embedded = build.embedded(file).stat().st_size
        data = build.external(file + ".data").stat().st_size
        graph = build.external(file).stat().st_size
        totals = weight_bytes(build.embedded(file))
        formats = ", ".join(f"{kind} {fp / stored:.2f}x" for kind, (stored, fp) in sorted(totals.items()))
        rows.append((file, params, fp32, embedded, graph, data, formats))
        assert embedded < fp32, f"{file} is not smaller than its fp32 weights"

    def mib(n: int) -> str:
        return f"{n / 2**20:8.2f}"

    print()
    print(
        f"{'file':40} {'params':>11} {'fp32 MiB':>9} {'file MiB':>9} {'ext .onnx':>9} {'ext .data':>9}  "
        f"MatMul weights vs fp32"
    )
    for file, params, fp32, embedded, graph, data, formats in rows:
        print(f"{file:40} {params:11,d} {mib(fp32)} {mib(embedded)} {mib(graph)} {mib(data)}  {formats}")
