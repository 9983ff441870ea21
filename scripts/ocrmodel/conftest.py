"""Shared fixtures: one build of every model file per test session, onnxruntime sessions, and
run_core, which asks the page's wasm core (in Node) for its answers on generated inputs.

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
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ocrmodel import build_models, spec  # noqa: E402
from ocrmodel.weights import load_weights, sha256_of  # noqa: E402

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
    if source["kind"] == "checkpoint" and (not Path(source["path"]).is_file()
                                           or sha256_of(Path(source["path"])) != source["sha256"]):
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
        build_models.main(["--synthetic-seed", str(SYNTHETIC_SEED), "--out", str(out),
                           "--manifest", str(manifest_path)])
        info = json.loads((out / "build-info.json").read_text())
    source = info["weightsSource"]
    if source["kind"] == "checkpoint":
        weights, _ = load_weights(Path(source["path"]), None)
    else:
        weights, _ = load_weights(None, source["seed"])
    return Build(out, manifest_path, info, weights)


_sessions: dict[str, ort.InferenceSession] = {}


def session(path: Path) -> ort.InferenceSession:
    """A cached CPU session that computes what the page's WebGPU session computes: fp32 MatMul
    on the dequantized weights. By default onnxruntime's CPU EP fuses DequantizeLinear + MatMul
    into MatMulNBits that quantizes activations to int8 (logits off by up to 0.15 here);
    `session.disable_quant_qdq` instead folds each constant DequantizeLinear into an fp32
    initializer at load, exact to ~1e-5 against the reference and as fast (a decode step
    0.018 s, where accuracy level 1 took 0.29 s)."""
    key = str(path)
    if key not in _sessions:
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.add_session_config_entry("session.disable_quant_qdq", "1")
        _sessions[key] = ort.InferenceSession(key, options, providers=["CPUExecutionProvider"])
    return _sessions[key]


def dequantized_matmulnbits(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """Float [out, in] weights of every MatMulNBits node (4-bit, symmetric: zero point 8), keyed by
    the linear layer's spec name (`vision.layers.0.attn.qkv`), so the reference can compute with
    exactly the file's values."""
    initializers = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    weights: dict[str, np.ndarray] = {}
    for node in model.graph.node:
        if node.op_type != "MatMulNBits":
            continue
        attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        assert attributes["bits"] == 4 and (len(node.input) <= 3 or node.input[3] == ""), node.name
        k, n, block = attributes["K"], attributes["N"], attributes["block_size"]
        packed = initializers[node.input[1]].reshape(n, -1)
        nibbles = np.stack([packed & 0x0F, packed >> 4], axis=-1).reshape(n, -1)[:, :k].astype(np.float32)
        scales = initializers[node.input[2]].reshape(n, -1).astype(np.float32)
        weights[node.input[1].removesuffix(".weight_t_Q4")] = (nibbles - 8.0) * np.repeat(scales, block, axis=1)[:, :k]
    return weights


def zero_cache(slots: int) -> dict[str, np.ndarray]:
    empty = np.zeros((1, spec.KV_HEADS, slots, spec.HEAD_DIM), dtype=np.float32)
    return {f"past_{kind}{layer}": empty for layer in range(spec.LAYERS) for kind in "kv"}


CORE_RUNNER = Path(__file__).resolve().parents[2] / "tests" / "python-core" / "run-core.mjs"
CORE_PKG = Path(__file__).resolve().parents[2] / "www" / "pkg" / "ocr_bench_core_bg.wasm"


def run_core(tmp_path: Path, request: dict, logits: np.ndarray | None = None) -> dict:
    """The page's wasm core (www/pkg, in Node) on `request` (tests/python-core/run-core.mjs says
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
