"""models/manifest.json in the schema of docs/architecture.md, from the variant table.

The manifest names files, their byte sizes, each graph's largest activation and the capability
numbers, so it is the same for trained and synthetic weights (a tensor's size does not depend
on its values); which weights a build used is in the build's build-info.json.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path, PurePosixPath

import numpy as np
import onnx
from onnx import helper, numpy_helper

from . import spec
from .variants import DECODER_VARIANTS, VISION_VARIANTS

# The steps the page runs, as concrete input dimensions and the values shapes depend on: the
# vision encoder's one call; the decoder's prefill (vision tokens and BOS, empty cache) and its
# last decode step at capability.maxTokens (one token, the cache full but for it).
LAST_PAST = spec.KV_SLOTS - 1
VISION_STEPS = {"encode": ({}, {})}
DECODER_STEPS = {
    "prefill": (
        {"vision_tokens": spec.VISION_TOKENS, "sequence": spec.VISION_TOKENS + 1, "past_sequence": 0},
        {"past_length": 0},
    ),
    "last-decode": ({"vision_tokens": 0, "sequence": 1, "past_sequence": LAST_PAST}, {"past_length": LAST_PAST}),
}


def _at_step(model: onnx.ModelProto, dims: dict[str, int], values: dict[str, int]) -> onnx.ModelProto:
    """A copy of `model` whose symbolic input dimensions are `dims` and whose inputs named in
    `values` are constants (past_length decides the fixed-KV graph's Range lengths)."""
    concrete = onnx.ModelProto()
    concrete.CopyFrom(model)
    graph = concrete.graph
    for value in graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param:
                if dim.dim_param not in dims:
                    raise ValueError(f"input {value.name}: no step value for dimension {dim.dim_param!r}")
                size = dims[dim.dim_param]
                dim.Clear()
                dim.dim_value = size
    for value in list(graph.input):
        if value.name in values:
            tensor = value.type.tensor_type
            shape = [d.dim_value for d in tensor.shape.dim]
            array = np.full(shape, values[value.name], dtype=helper.tensor_dtype_to_np_dtype(tensor.elem_type))
            graph.initializer.append(numpy_helper.from_array(array, value.name))
            graph.input.remove(value)
    return concrete


def largest_activation(model: onnx.ModelProto, steps: dict[str, tuple[dict, dict]]) -> dict:
    """The largest single intermediate tensor (a node output that is neither a graph input nor
    output nor an initializer) over `steps`, by onnxruntime's symbolic shape inference, which
    knows the com.microsoft operators (MatMulNBits) that onnx's own inference leaves unshaped.
    Every intermediate must get a concrete shape: an unknown one could be the largest."""
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    best = {"bytes": -1}
    for step, (dims, values) in steps.items():
        concrete = _at_step(model, dims, values)
        try:
            # On failure it writes its half-inferred model (sym_shape_infer_temp.onnx and a
            # uuid-named .data file of ~16 MB) into the working directory: keep that out of ours.
            with tempfile.TemporaryDirectory() as scratch, contextlib.chdir(scratch):
                inferred = SymbolicShapeInference.infer_shapes(concrete, auto_merge=False)
        except Exception:  # it raises a bare Exception on operators it lacks
            # (GatherBlockQuantized, GroupQueryAttention): measure the shapes by running the step.
            best = max([best, *_measured(concrete, step)], key=lambda entry: entry["bytes"])
            continue
        outputs = {value.name for value in inferred.graph.output}
        unknown = []
        for value in inferred.graph.value_info:
            if value.name in outputs:
                continue
            tensor = value.type.tensor_type
            shape = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
            if None in shape or not tensor.HasField("shape"):
                unknown.append(value.name)
                continue
            size = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.elem_type)).itemsize * int(np.prod(shape))
            if size > best["bytes"]:
                best = {"bytes": size, "tensor": value.name, "shape": shape, "step": step}
        if unknown:
            raise ValueError(f"step {step}: no concrete shape for {len(unknown)} tensors, such as {unknown[:3]}")
    return best


def _measured(concrete: onnx.ModelProto, step: str) -> list[dict]:
    """Every intermediate tensor's size, from one run of the step on onnxruntime CPU with zero
    inputs of the step's shapes (shapes here depend only on the inputs' shapes and on the
    constants `_at_step` fixed)."""
    import onnxruntime as ort

    exposed = onnx.ModelProto()
    exposed.CopyFrom(concrete)
    outputs = {value.name for value in exposed.graph.output}
    names = [name for node in exposed.graph.node for name in node.output if name and name not in outputs]
    exposed.graph.output.extend(onnx.ValueInfoProto(name=name) for name in names)
    feeds = {}
    for value in exposed.graph.input:
        tensor = value.type.tensor_type
        shape = [d.dim_value for d in tensor.shape.dim]
        feeds[value.name] = np.zeros(shape, helper.tensor_dtype_to_np_dtype(tensor.elem_type))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    session = ort.InferenceSession(exposed.SerializeToString(), options, providers=["CPUExecutionProvider"])
    values = session.run(names, feeds)
    return [
        {"bytes": int(value.nbytes), "tensor": name, "shape": list(value.shape), "step": step}
        for name, value in zip(names, values, strict=True)
    ]


def graph_interface(model: onnx.ModelProto) -> dict:
    """The graph's input and output names in its order, and its operator types, sorted:
    `Type` in the default domain, `domain.Type` in another (crate/src/manifest.rs's `Graph`)."""
    initializers = {tensor.name for tensor in model.graph.initializer}
    return {
        "inputs": [value.name for value in model.graph.input if value.name not in initializers],
        "outputs": [value.name for value in model.graph.output],
        "operators": sorted(
            {
                f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
                for node in model.graph.node
            }
        ),
    }


# What onnxruntime-web's WebGPU kernels bind, a section per version the page loads (ort=): a fact
# of the runtime, kept beside crate/src/runtime.rs (whose test holds its versions to the page's).
ORT_WEBGPU_KERNELS = Path(__file__).resolve().parents[2] / "crate" / "src" / "runtime" / "ort-webgpu-kernels.json"


def largest_initializer(model: onnx.ModelProto) -> dict:
    """The largest stored tensor: onnxruntime uploads each initializer as one GPU buffer."""
    best = {"bytes": -1}
    for tensor in model.graph.initializer:
        shape = list(tensor.dims)
        size = np.dtype(helper.tensor_dtype_to_np_dtype(tensor.data_type)).itemsize * int(np.prod(shape))
        if size > best["bytes"]:
            best = {"bytes": size, "tensor": tensor.name, "shape": shape}
    return best


def storage_buffers_per_stage(model: onnx.ModelProto, kernels: dict) -> int:
    """The most storage buffers one node's WebGPU program binds: its tensor inputs and outputs,
    less the inputs its kernel reads on the CPU (ort-webgpu-kernels.json says how this was found)."""
    most = 0
    for node in model.graph.node:
        operator = f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
        on_cpu = set(kernels["cpuInputs"].get(operator, ()))
        inputs = [name for index, name in enumerate(node.input) if name and index not in on_cpu]
        most = max(most, len(inputs) + len([name for name in node.output if name]))
    return most


def device_limits(model: onnx.ModelProto, largest: dict, initializer: dict) -> dict:
    """The adapter limits the graph needs (docs/model-contract.md, "Device limits"): one buffer
    holds the largest tensor, stored or computed, and is bound whole; the bindings per shader
    and the workgroup storage come from the runtime's kernels."""
    versions = json.loads(ORT_WEBGPU_KERNELS.read_text(encoding="utf-8"))["versions"].values()
    tensor = max(largest["bytes"], initializer["bytes"])
    # One figure whatever ort= names: the most any version's kernels need, which the page's
    # device-limit guard (www/limit-guard.js) compares with the adapter's.
    return {
        "maxBufferSize": tensor,
        "maxStorageBufferBindingSize": tensor,
        "maxStorageBuffersPerShaderStage": max(storage_buffers_per_stage(model, kernels) for kernels in versions),
        "maxComputeWorkgroupStorageSize": max(kernels["workgroupStorageBytes"] for kernels in versions),
    }


def graph_facts(model: onnx.ModelProto, role: str) -> dict:
    """What the manifest stores of one graph beyond its files: its largest activation and
    initializer, the device limits they and its kernels need, and its interface."""
    steps = {"vision": VISION_STEPS, "decoder": DECODER_STEPS}[role]
    largest = largest_activation(model, steps)
    initializer = largest_initializer(model)
    return {
        "largestActivation": largest,
        "largestInitializer": initializer,
        "limits": device_limits(model, largest, initializer),
        **graph_interface(model),
    }


MODEL_NAME = "ocr-bench-default"
# The decoder's logits output: the last position's scores, one row.
LOGITS_SHAPE = [1, spec.VOCAB_IDS]


def _files(generated: PurePosixPath, file: str, sizes: dict[str, int], graphs: dict[str, dict]) -> dict:
    external = f"external/{file}"
    return {
        "embedded": str(generated / file),
        "external": {"model": str(generated / external), "data": str(generated / (external + ".data"))},
        "bytes": {"embedded": sizes[file], "externalModel": sizes[external], "externalData": sizes[external + ".data"]},
        **graphs[file],
    }


def build_manifest(
    generated: PurePosixPath,
    vocab: PurePosixPath,
    checkpoint: PurePosixPath,
    sizes: dict[str, int],
    graphs: dict[str, dict],
) -> dict:
    """`generated`, `vocab` and `checkpoint` are relative to the manifest's own directory;
    `sizes` are the bytes of every written file by its path under `generated` (build-info's
    `files`), `graphs` each model file's graph_facts by its file name."""
    return {
        "name": MODEL_NAME,
        "weightsSource": f"checkpoint {checkpoint} when present at build time, else synthetic weights from a "
        f"seed; {generated / 'build-info.json'} records which",
        "buildInfo": str(generated / "build-info.json"),
        "vocab": str(vocab),
        "tokens": {"bos": spec.BOS_ID, "eos": spec.EOS_ID, "vocabOffset": spec.VOCAB_OFFSET},
        "capability": {
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
        },
        "logitsShape": LOGITS_SHAPE,
        "vision": {
            v.tier: {
                "description": v.description,
                "requires": list(v.requires),
                **_files(generated, v.file, sizes, graphs),
            }
            for v in VISION_VARIANTS
        },
        "decoder": {
            d.name: {
                "description": d.description,
                "requires": list(d.requires),
                "fixedKv": d.fixed_kv,
                "capturable": d.capturable,
                "kvSharedInPlace": d.kv_shared_in_place,
                **_files(generated, d.file, sizes, graphs),
            }
            for d in DECODER_VARIANTS
        },
    }
