"""Shared fixtures: one build of every model file per test session, onnxruntime sessions, the
weights a built file computes with (read from its stored tensors), an evaluation case with
PyTorch's tokens, and run_core, which asks the page's wasm core (in Node) for its answers on
generated inputs.

The build in models/generated is reused when its build-info.json carries the current builder
digest (so tests check what the page loads); otherwise a synthetic set is built into a
temporary directory (about 10 s). OCRMODEL_TEST_SYNTHETIC=1 forces that synthetic build even
when models/generated is current (for example when it holds the trained checkpoint's files).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

from ocrmodel import build_models, reference, spec
from ocrmodel.oracle import cpu_session
from ocrmodel.weights import load_weights, sha256_of
from train import scoring

SYNTHETIC_SEED = 0


@dataclass
class Build:
    out: Path
    manifest_path: Path
    info: dict
    weights: dict[str, np.ndarray]

    @property
    def manifest(self) -> dict:
        return json.loads(self.manifest_path.read_text(encoding="utf-8"))

    def embedded(self, file: str) -> Path:
        return self.out / file

    def external(self, file: str) -> Path:
        return self.out / "external" / file


def _reusable(out: Path) -> dict | None:
    info_path = out / "build-info.json"
    if not info_path.is_file():
        return None
    info = json.loads(info_path.read_text())
    if info.get("builderDigest") != build_models.builder_digest():
        return None
    if any(not (out / name).is_file() or (out / name).stat().st_size != size for name, size in info["files"].items()):
        return None
    source = info["weightsSource"]
    if source["kind"] == "checkpoint" and (
        not Path(source["path"]).is_file() or sha256_of(Path(source["path"])) != source["sha256"]
    ):
        return None
    return info


@pytest.fixture(scope="session")
def build(tmp_path_factory) -> Build:
    force_synthetic = os.environ.get("OCRMODEL_TEST_SYNTHETIC") == "1"
    info = None if force_synthetic else _reusable(build_models.DEFAULT_OUT)
    if info is not None:
        out, manifest_path = build_models.DEFAULT_OUT, build_models.DEFAULT_MANIFEST
    else:
        out = tmp_path_factory.mktemp("generated")
        manifest_path = out.parent / "manifest.json"
        build_models.main(
            ["--synthetic-seed", str(SYNTHETIC_SEED), "--out", str(out), "--manifest", str(manifest_path)]
        )
        info = json.loads((out / "build-info.json").read_text())
    source = info["weightsSource"]
    if source["kind"] == "checkpoint":
        weights, _ = load_weights(Path(source["path"]), None)
    else:
        weights, _ = load_weights(None, source["seed"])
    return Build(out, manifest_path, info, weights)


@dataclass
class EvalCase:
    """One evaluation image as the harness feeds it, and what training's final PyTorch run
    (models/checkpoint/eval-pytorch.json) read from it with the checkpoint's weights."""

    pixels: np.ndarray  # [1,3,224,224]
    expected: str
    pytorch_tokens: list[int]


PYTORCH_REPORT = build_models.REPO / "models" / "checkpoint" / "eval-pytorch.json"


@pytest.fixture(scope="session")
def hayai_case() -> EvalCase:
    """hayai13 case 01: 16 tokens, so a few decode steps with real tokens are at hand. Pixels
    come from the harness's preprocessing in train/scoring.py (which needs no torch)."""
    case = scoring.eval_cases("hayai13", 1)[0]
    results = json.loads(PYTORCH_REPORT.read_text(encoding="utf-8"))["eval"]["hayai13"]["results"]
    tokens = next(result["tokens"] for result in results if result["id"] == case["id"])
    return EvalCase(scoring.preprocess(scoring.EVAL_DIR / "hayai13" / case["image"]), case["expected"], tokens)


_sessions: dict[str, ort.InferenceSession] = {}


def session(path: Path) -> ort.InferenceSession:
    """oracle.cpu_session, cached per path: a CPU session that computes what the page's WebGPU
    session computes."""
    key = str(path)
    if key not in _sessions:
        _sessions[key] = cpu_session(Path(key))
    return _sessions[key]


def read_checkpoint(path: Path) -> dict[str, np.ndarray]:
    """A checkpoint's float32 weights by spec name, read from its format's definition
    (spec.save_checkpoint's docstring) rather than through spec.load_checkpoint, which the
    builder uses: rank >= 2 as int8 codes with `<name>.scale`, one float32 per output row;
    vectors as float16."""
    weights = {}
    with np.load(path) as stored:
        for name, shape in spec.parameter_shapes().items():
            value = stored[name]
            if value.dtype == np.int8:
                value = reference.dequantize_int8(value.reshape(shape[0], -1), stored[name + ".scale"], axis=0)
            weights[name] = value.astype(np.float32).reshape(shape)
    return weights


_stored: dict[str, dict[str, np.ndarray]] = {}


def stored_tensors(path: Path) -> dict[str, np.ndarray]:
    """Every initializer of an ONNX file as numpy, by name, cached per path."""
    key = str(path)
    if key not in _stored:
        _stored[key] = {t.name: numpy_helper.to_array(t) for t in onnx.load(key).graph.initializer}
    return _stored[key]


# Both towers fold attention's 1/sqrt(head_dim) = 1/8 into the stored q projection (weights and,
# in the vision tower, bias) rather than scaling the scores; the reference scales the scores, so
# it gets q back by this exact power of two.
Q_FOLD = np.float32(8.0)


def _stored_linear(tensors: dict[str, np.ndarray], name: str) -> np.ndarray:
    """A decoder linear layer [out, in] from its stored MatMul operand [in, out]: int8 codes with
    one scale per output channel, or fp16."""
    if name + ".int8" in tensors:
        return reference.dequantize_int8(tensors[name + ".int8"], tensors[name + ".scale"], axis=1).T
    if name + ".fp16" in tensors:
        return tensors[name + ".fp16"].astype(np.float32).T
    raise KeyError(f"{name}: neither {name}.int8 nor {name}.fp16 is stored")


def _check_names_and_shapes(weights: dict[str, np.ndarray], prefix: str, path: Path) -> dict[str, np.ndarray]:
    shapes = {name: shape for name, shape in spec.parameter_shapes().items() if name.startswith(prefix)}
    if set(weights) != set(shapes):
        raise ValueError(f"{path.name}: read {sorted(set(weights) ^ set(shapes))[:6]} unlike the spec")
    for name, shape in shapes.items():
        if weights[name].shape != shape:
            raise ValueError(f"{path.name}: {name} read as {weights[name].shape}, the spec says {shape}")
    return weights


def decoder_weights_from_file(path: Path) -> dict[str, np.ndarray]:
    """The float32 weights, by spec name, that a decoder file computes with, dequantized from its
    stored tensors by the reference's own definitions. The files store q, k, v as one
    `attn.qkv` operand ([q; k; v] along the output, q divided by 8), gate and up as one
    `mlp.gate_up` ([gate; up]), the embedding as int8 rows with one scale per token (the tied
    head uses the same table), norms in fp32."""
    tensors = stored_tensors(path)
    weights = {
        "decoder.embed.weight": reference.dequantize_int8(
            tensors["decoder.embed.int8"], tensors["decoder.embed.scale"], axis=0
        ),
        "decoder.norm.weight": tensors["decoder.norm.weight"],
    }
    q_rows, kv_rows = spec.HEADS * spec.HEAD_DIM, spec.KV_HEADS * spec.HEAD_DIM
    for layer in range(spec.LAYERS):
        p = f"decoder.layers.{layer}."
        qkv = _stored_linear(tensors, p + "attn.qkv")
        gate_up = _stored_linear(tensors, p + "mlp.gate_up")
        weights.update(
            {
                p + "attn_norm.weight": tensors[p + "attn_norm.weight"],
                p + "attn.q.weight": qkv[:q_rows] * Q_FOLD,
                p + "attn.k.weight": qkv[q_rows : q_rows + kv_rows],
                p + "attn.v.weight": qkv[q_rows + kv_rows :],
                p + "attn.o.weight": _stored_linear(tensors, p + "attn.o"),
                p + "mlp_norm.weight": tensors[p + "mlp_norm.weight"],
                p + "mlp.gate.weight": gate_up[: spec.MLP],
                p + "mlp.up.weight": gate_up[spec.MLP :],
                p + "mlp.down.weight": _stored_linear(tensors, p + "mlp.down"),
            }
        )
    return _check_names_and_shapes(weights, "decoder.", path)


def vision_weights_from_file(path: Path) -> dict[str, np.ndarray]:
    """The float32 weights, by spec name, that a vision file computes with: MatMulNBits blocks
    unpacked by reference.unpack_matmulnbits, fp16 or fp32 tensors widened, MatMul operands
    `<linear>.weight_t` [in, out] transposed back, and the q rows of every qkv weight and bias
    multiplied back by 8."""
    model = onnx.load(str(path))
    tensors = stored_tensors(path)
    weights: dict[str, np.ndarray] = {}
    for node in model.graph.node:
        if node.op_type != "MatMulNBits":
            continue
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if any(name for name in node.input[4:]):
            raise ValueError(f"{node.name}: g_idx or bias inputs are not read here")
        zero_points = tensors[node.input[3]] if len(node.input) > 3 and node.input[3] else None
        linear = node.input[1].removesuffix("_Q4").removesuffix(".weight_t")
        weights[linear + ".weight"] = reference.unpack_matmulnbits(
            tensors[node.input[1]],
            tensors[node.input[2]],
            zero_points,
            attributes["K"],
            attributes["N"],
            attributes.get("bits", 4),
            attributes["block_size"],
        )
    shapes = spec.parameter_shapes()
    for name, value in tensors.items():
        if name.endswith(".weight_t"):
            weights[name.removesuffix("_t")] = value.astype(np.float32).T
        elif name in shapes:
            weights[name] = value.astype(np.float32)
    for layer in range(spec.VISION_LAYERS):
        for kind in ("weight", "bias"):
            name = f"vision.layers.{layer}.attn.qkv.{kind}"
            weights[name] = weights[name].copy()
            weights[name][: spec.VISION_WIDTH] *= Q_FOLD
    return _check_names_and_shapes(weights, "vision.", path)


def zero_cache(slots: int) -> dict[str, np.ndarray]:
    empty = np.zeros((1, spec.KV_HEADS, slots, spec.HEAD_DIM), dtype=np.float32)
    return {f"past_{kind}{layer}": empty for layer in range(spec.LAYERS) for kind in "kv"}


CORE_RUNNER = Path(__file__).resolve().parents[2] / "tests" / "python-core" / "run-core.mjs"
CORE_PKG = Path(__file__).resolve().parents[2] / "pkg" / "ocr_bench_core_bg.wasm"


def run_core(tmp_path: Path, request: dict, logits: np.ndarray | None = None) -> dict:
    """The page's wasm core (pkg/, in Node) on `request` (tests/python-core/run-core.mjs says
    what it takes and gives back); `logits` is a [cases, vocabulary] array for request["choose"]."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH: the core's answers cannot be computed (scripts/setup installs it)")
    if not CORE_PKG.is_file():
        pytest.skip(f"{CORE_PKG} is missing: build the wasm core first (scripts/build-wasm)")
    request_path = tmp_path / "core-request.json"
    request_path.write_text(json.dumps(request), encoding="utf-8")
    arguments = [node, str(CORE_RUNNER), str(request_path)]
    if logits is not None:
        logits_path = tmp_path / "core-logits.f32"
        np.ascontiguousarray(logits, dtype="<f4").tofile(logits_path)
        arguments.append(str(logits_path))
    finished = subprocess.run(arguments, capture_output=True, text=True, encoding="utf-8")
    if finished.returncode != 0:
        raise RuntimeError(f"{CORE_RUNNER.name} exited {finished.returncode}:\n{finished.stderr}")
    return json.loads(finished.stdout)
