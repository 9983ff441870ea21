"""The graph facts of a Hugging Face export folder (`optimum-cli export onnx --task
image-to-text-with-past`), printed as JSON for `ocr-bench import`, which checks them and writes
the manifest (runner/src/import_export.rs).

Per `.onnx` file: its size and external-data file, its inputs and outputs with element types and
shapes (a symbolic dimension as its name), its operators, its largest initializer and, at the
steps the page runs, its largest activation and the device limits they need. Besides: the
encoder's output shape, from one run of the fp32 encoder on onnxruntime CPU (its sequence
dimension is symbolic in the file).

This script judges nothing; the runner names every problem at once.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from .manifest import device_limits, graph_interface, largest_initializer

ENCODER = "encoder_model.onnx"
PAST = "past_key_values."


def _dtype(elem_type: int) -> str:
    return helper.tensor_dtype_to_np_dtype(elem_type).name if elem_type else "undefined"


def _values(values) -> list[dict]:
    """Name, element type and shape (an int or the symbolic dimension's name) of each value."""
    return [
        {
            "name": value.name,
            "dtype": _dtype(value.type.tensor_type.elem_type),
            "shape": [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim],
        }
        for value in values
    ]


def _concrete_shape(name: str, shape: list, image_size: int, vision_tokens: int, past: int) -> list[int]:
    """The input's shape at a step with `past` cached tokens: what the page feeds by name."""
    if name == "pixel_values":
        return [1, 3, image_size, image_size]
    if name == "input_ids":
        return [1, 1]
    if name == "use_cache_branch":
        return [1]
    if name == "encoder_hidden_states":
        return [1, vision_tokens, shape[2]]
    if name.startswith(PAST):
        length = vision_tokens if ".encoder." in name else past
        return [1, shape[1], length, shape[3]]
    raise ValueError(f"input {name} is not one the encoder-decoder loop feeds")


def _at_step(model: onnx.ModelProto, concrete: dict[str, list[int]]) -> onnx.ModelProto:
    """A copy of `model` whose inputs have the concrete shapes `concrete` gives."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for value in copy.graph.input:
        if value.name not in concrete:
            continue
        for dim, size in zip(value.type.tensor_type.shape.dim, concrete[value.name], strict=True):
            dim.Clear()
            dim.dim_value = size
    return copy


def _graphs(graph: onnx.GraphProto):
    """The graph and every subgraph of its nodes (the merged decoder's `If` branches)."""
    yield graph
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                yield from _graphs(attribute.g)
            for sub in attribute.graphs:
                yield from _graphs(sub)


def operators(model: onnx.ModelProto) -> list[str]:
    """The operator types of every node, subgraphs included, as `graph_interface` spells them."""
    return sorted(
        {
            f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
            for graph in _graphs(model.graph)
            for node in graph.node
        }
    )


CONTROL_FLOW = {"If", "Loop", "Scan"}


def _kernel_nodes(model: onnx.ModelProto) -> onnx.ModelProto:
    """A model whose graph lists the nodes that run as GPU programs: every subgraph's, less the
    control flow that only picks a branch (the merged decoder's If binds no buffers itself)."""
    flat = onnx.ModelProto()
    flat.graph.node.extend(
        node for graph in _graphs(model.graph) for node in graph.node if node.op_type not in CONTROL_FLOW
    )
    return flat


def largest_activation(model: onnx.ModelProto, steps: dict[str, dict[str, list[int]]]) -> dict:
    """The largest intermediate tensor, subgraphs included, over `steps`, by onnxruntime's
    symbolic shape inference; tensors it leaves without a concrete shape are counted in
    `unshaped` (an unknown one could be larger)."""
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    best: dict = {"bytes": -1}
    unshaped = 0
    for step, concrete in steps.items():
        at_step = _at_step(model, concrete)
        try:
            # On failure it writes its half-inferred model into the working directory.
            with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
                inferred = SymbolicShapeInference.infer_shapes(at_step, auto_merge=True)
        except Exception:  # it fails on the merged decoder's If (its branches' outputs differ
            # in rank); onnx's own inference shapes the branches, less the com.microsoft ops
            inferred = onnx.shape_inference.infer_shapes(at_step, data_prop=True)
        outputs = {value.name for value in inferred.graph.output}
        for graph in _graphs(inferred.graph):
            for value in graph.value_info:
                tensor = value.type.tensor_type
                shape = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
                if value.name in outputs:
                    continue
                if not tensor.HasField("shape") or None in shape or not tensor.elem_type:
                    unshaped += 1
                    continue
                size = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type)).itemsize * int(np.prod(shape))
                if size > best["bytes"]:
                    best = {"bytes": size, "tensor": value.name, "shape": shape, "step": step}
    return {**best, "unshaped": unshaped}


def encoder_output(path: Path, image_size: int) -> dict:
    """The encoder's `last_hidden_state` shape for one image, from a run on onnxruntime CPU."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    pixels = np.zeros([1, 3, image_size, image_size], np.float32)
    (hidden,) = session.run(["last_hidden_state"], {"pixel_values": pixels})
    return {"visionTokens": int(hidden.shape[1]), "hidden": int(hidden.shape[2])}


def graph_facts(path: Path, image_size: int | None, vision_tokens: int | None, max_tokens: int) -> dict:
    model = onnx.load(str(path), load_external_data=False)
    data = {
        tensor.external_data[0].value
        for tensor in model.graph.initializer
        if tensor.data_location == onnx.TensorProto.EXTERNAL
    }
    external = sorted(data)[0] if data else None
    if external is not None:
        model = onnx.load(str(path))
    facts = {
        "bytes": path.stat().st_size,
        "external": None if external is None else {"file": external, "bytes": (path.parent / external).stat().st_size},
        "inputsTyped": _values(v for v in model.graph.input if v.name not in {i.name for i in model.graph.initializer}),
        "outputsTyped": _values(model.graph.output),
        **graph_interface(model),
        "operators": operators(model),
        "largestInitializer": largest_initializer(model),
        "largestActivation": None,
        "limits": None,
        "activationError": None,
    }
    if image_size is None or vision_tokens is None:
        facts["activationError"] = "no image size or encoder sequence to run the steps at"
        return facts
    try:
        inputs = facts["inputsTyped"]
        steps = {
            step: {i["name"]: _concrete_shape(i["name"], i["shape"], image_size, vision_tokens, past) for i in inputs}
            for step, past in (("first-step", 0), ("last-step", max_tokens - 1))
        }
        if not any(i["name"].startswith(PAST) for i in inputs):
            steps = {"encode" if path.name.startswith("encoder") else "first-step": steps["first-step"]}
        largest = largest_activation(model, steps)
        facts["largestActivation"] = largest
        facts["limits"] = device_limits(_kernel_nodes(model), largest, facts["largestInitializer"])
    except Exception as error:  # symbolic inference raises bare Exceptions on operators it lacks
        facts["activationError"] = f"{type(error).__name__}: {error}"
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--image-size", type=int, help="the preprocessor's square size (no activations without it)")
    parser.add_argument("--max-tokens", type=int, default=1, help="tokens decoded at most: the last step's cache")
    args = parser.parse_args(argv)
    encoder = None
    if args.image_size is not None and (args.folder / ENCODER).is_file():
        try:
            encoder = encoder_output(args.folder / ENCODER, args.image_size)
        except Exception as error:  # onnxruntime's own errors carry no common type
            encoder = {"error": f"{type(error).__name__}: {error}"}
    vision_tokens = encoder.get("visionTokens") if encoder else None
    graphs = {
        path.name: graph_facts(path, args.image_size, vision_tokens, args.max_tokens)
        for path in sorted(args.folder.glob("*.onnx"))
    }
    json.dump({"encoder": encoder, "graphs": graphs}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
