"""A thin helper over onnx.helper: unique node names, initializers from numpy, typed constants."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# Opset 17: LayerNormalization is a standard op from 17 on, and every op used here has a
# kernel in onnxruntime-web 1.30's native WebGPU EP at this opset (DequantizeLinear with
# `axis` is opset 13).
OPSET = 17
MS_DOMAIN = "com.microsoft"
IR_VERSION = 8


class GraphBuilder:
    """Collects nodes and initializers; every helper returns the name of its output."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[onnx.ValueInfoProto] = []
        self._counter = 0
        self._constants: dict[tuple, str] = {}

    def fresh(self, hint: str) -> str:
        self._counter += 1
        return f"{hint}_{self._counter}"

    def op(
        self,
        op_type: str,
        inputs: Sequence[str],
        hint: str | None = None,
        outputs: int | Sequence[str] = 1,
        domain: str = "",
        **attributes,
    ) -> str | list[str]:
        """Add one node. `outputs` is a count (fresh names) or explicit names."""
        base = hint or op_type.lower()
        names = [self.fresh(base) for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        self.nodes.append(
            helper.make_node(
                op_type, list(inputs), names, name=self.fresh(f"{base}/{op_type}"), domain=domain or None, **attributes
            )
        )
        return names[0] if len(names) == 1 else names

    def initializer(self, name: str, value: np.ndarray) -> str:
        # np.ascontiguousarray would turn a 0-d scalar into shape [1]; np.array keeps the rank.
        self.initializers.append(numpy_helper.from_array(np.array(value, order="C"), name))
        return name

    def const(self, value, dtype=np.int64) -> str:
        """A small constant initializer, shared between uses of the same value."""
        array = np.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constants:
            self._constants[key] = self.initializer(self.fresh("const"), array)
        return self._constants[key]

    def input(self, name: str, elem_type: int, shape: Sequence[int | str]) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    def output(self, name: str, elem_type: int, shape: Sequence[int | str]) -> str:
        self.outputs.append(helper.make_tensor_value_info(name, elem_type, list(shape)))
        return name

    def model(self, doc: str, uses_ms_domain: bool = False) -> onnx.ModelProto:
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.initializers)
        opsets = [helper.make_opsetid("", OPSET)]
        if uses_ms_domain:
            opsets.append(helper.make_opsetid(MS_DOMAIN, 1))
        model = helper.make_model(graph, opset_imports=opsets, producer_name="webgpu-ocr-bench", doc_string=doc)
        model.ir_version = IR_VERSION
        return model


FLOAT = TensorProto.FLOAT
FLOAT16 = TensorProto.FLOAT16
INT32 = TensorProto.INT32
INT64 = TensorProto.INT64
