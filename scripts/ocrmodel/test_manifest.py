"""The manifest's byte sizes and largest activations: what the runner's floor is made of."""

from __future__ import annotations

import json

import onnx
import pytest
from onnx import TensorProto, helper

from ocrmodel import manifest as manifest_module
from ocrmodel import spec
from ocrmodel.manifest import device_limits, graph_interface, largest_activation, storage_buffers_per_stage
from ocrmodel.variants import DECODER_VARIANTS, VISION_VARIANTS


def test_every_file_size_is_the_file_on_disk(build):
    manifest = build.manifest
    root = build.manifest_path.parent
    for entry in [*manifest["vision"].values(), *manifest["decoder"].values()]:
        sizes = entry["bytes"]
        assert sizes["embedded"] == (root / entry["embedded"]).stat().st_size
        assert sizes["externalModel"] == (root / entry["external"]["model"]).stat().st_size
        assert sizes["externalData"] == (root / entry["external"]["data"]).stat().st_size


def test_the_largest_activations_are_the_graphs_known_large_tensors(build):
    manifest = build.manifest
    # Every Q/DQ decoder's tied head dequantizes the whole int8 table to fp32 for the logits
    # (stored [vocab, hidden], or pre-transposed [hidden, vocab]); the MatMulNBits decoders
    # never do, so their largest tensor is smaller.
    table = spec.VOCAB_IDS * spec.HIDDEN * 4
    for variant in DECODER_VARIANTS:
        largest = manifest["decoder"][variant.name]["largestActivation"]
        if variant.linear_format.startswith("nbits"):
            assert 0 < largest["bytes"] < table, variant.name
            continue
        assert largest["bytes"] == table, variant.name
        assert sorted(largest["shape"]) == sorted([spec.VOCAB_IDS, spec.HIDDEN]), variant.name
    # The vision stem's output: 64 channels at half the image size, fp32 in the int4 tier (fp16 in 242).
    stem = spec.STEM_CHANNELS * (spec.IMAGE_SIZE // 2) ** 2
    widths = {"int4": 4, "fp16": 2}
    for variant in VISION_VARIANTS:
        largest = manifest["vision"][variant.tier]["largestActivation"]
        assert largest["bytes"] == stem * widths[variant.precision], variant.tier
        assert largest["step"] == "encode"


def _graph(dim: str) -> onnx.ModelProto:
    """x [1, dim] -> Tile(x, [1, 1000]) -> Sum -> y: the tile is the largest intermediate."""
    repeats = helper.make_tensor("repeats", TensorProto.INT64, [2], [1, 1000])
    nodes = [
        helper.make_node("Tile", ["x", "repeats"], ["tiled"]),
        helper.make_node("ReduceSum", ["tiled"], ["y"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, dim])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
        [repeats],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_largest_step_wins_and_a_dimension_without_a_value_is_refused():
    steps = {"small": ({"n": 2}, {}), "large": ({"n": 8}, {})}
    largest = largest_activation(_graph("n"), steps)
    assert largest == {"bytes": 8 * 1000 * 4, "tensor": "tiled", "shape": [1, 8000], "step": "large"}
    with pytest.raises(ValueError, match="no step value for dimension 'n'"):
        largest_activation(_graph("n"), {"prefill": ({}, {})})


def test_the_interface_names_inputs_outputs_and_operators_by_domain():
    model = _graph("n")
    model.graph.node.append(helper.make_node("MatMulNBits", ["y"], ["z"], domain="com.microsoft"))
    assert graph_interface(model) == {
        "inputs": ["x"],
        "outputs": ["y"],
        "operators": ["ReduceSum", "Tile", "com.microsoft.MatMulNBits"],
    }


def test_each_variants_properties_are_written_as_the_core_reads_them(build):
    """crate/src/manifest.rs reads these fields (its test reads models/manifest.json back to the
    same JSON, and test_contract.py holds that file to what the builder writes): capturable,
    kvSharedInPlace, and each graph's interface from the file itself."""
    manifest = build.manifest
    root = build.manifest_path.parent
    for variant in DECODER_VARIANTS:
        entry = manifest["decoder"][variant.name]
        assert entry["capturable"] == (variant.fixed_kv and variant.gpu_only), variant.name
        assert entry["kvSharedInPlace"] == (variant.attention == "gqa-rotary"), variant.name
        interface = graph_interface(onnx.load(root / entry["external"]["model"], load_external_data=False))
        assert {key: entry[key] for key in interface} == interface, variant.name
        assert entry["outputs"][0] == "logits", variant.name
        # The runtime's WASM provider lacks GatherBlockQuantized (crate/src/runtime.rs).
        assert ("com.microsoft.GatherBlockQuantized" in entry["operators"]) == (
            variant.embedding == "gather-block-quantized"
        ), variant.name
    for variant in VISION_VARIANTS:
        entry = manifest["vision"][variant.tier]
        assert (entry["inputs"], entry["outputs"]) == (["pixel_values"], ["vision_embeds"]), variant.tier


def test_the_storage_buffers_leave_out_the_inputs_a_kernel_reads_on_the_cpu():
    """Tile's repeats are read on the CPU (ort-webgpu-kernels.json): 1 input and 1 output bound;
    a three-way Split binds its input and its outputs, not its split sizes."""
    kernels = {"cpuInputs": {"Tile": [1], "Split": [1]}}
    assert storage_buffers_per_stage(_graph("n"), kernels) == 2
    model = _graph("n")
    model.graph.node.append(helper.make_node("Split", ["tiled", "sizes"], ["a", "b", "c"]))
    assert storage_buffers_per_stage(model, kernels) == 4
    assert storage_buffers_per_stage(model, {"cpuInputs": {}}) == 5


def test_the_device_limits_are_the_most_any_runtime_version_needs(tmp_path, monkeypatch):
    """A section per onnxruntime-web version: a version whose Tile reads its repeats on the GPU
    binds one buffer more (3), and the manifest declares that, whatever the other needs."""
    kernels = tmp_path / "ort-webgpu-kernels.json"
    kernels.write_text(
        json.dumps(
            {
                "versions": {
                    "1.0.0": {"cpuInputs": {"Tile": [1]}, "workgroupStorageBytes": 16384},
                    "2.0.0": {"cpuInputs": {}, "workgroupStorageBytes": 32768},
                }
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(manifest_module, "ORT_WEBGPU_KERNELS", kernels)
    sized = {"bytes": 4}
    limits = device_limits(_graph("n"), sized, sized)
    assert limits["maxStorageBuffersPerShaderStage"] == 3
    assert limits["maxComputeWorkgroupStorageSize"] == 32768


def test_the_kernels_file_keeps_a_section_per_runtime_version():
    """What the builder reads of each section (crate/src/runtime.rs holds the versions to ort=)."""
    versions = json.loads(manifest_module.ORT_WEBGPU_KERNELS.read_text(encoding="utf-8"))["versions"]
    assert versions
    for version, section in versions.items():
        assert all(isinstance(inputs, list) for inputs in section["cpuInputs"].values()), version
        assert isinstance(section["workgroupStorageBytes"], int), version


def test_the_largest_initializer_is_the_largest_stored_tensor(build):
    manifest = build.manifest
    for entry in [*manifest["vision"].values(), *manifest["decoder"].values()]:
        stored = entry["largestInitializer"]
        assert 0 < stored["bytes"] <= entry["bytes"]["externalData"], entry["embedded"]
        assert entry["limits"]["maxBufferSize"] == max(stored["bytes"], entry["largestActivation"]["bytes"])
    # The int8 tied table is the Q/DQ decoders' largest stored tensor: one byte a weight.
    assert manifest["decoder"]["baseline"]["largestInitializer"]["bytes"] == spec.VOCAB_IDS * spec.HIDDEN
