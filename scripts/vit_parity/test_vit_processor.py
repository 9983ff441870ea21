"""The core's VitImageProcessor (the page's wasm core, in Node) against Hugging Face's own
ViT-family processors: every value of pixel_values within 1e-4 of transformers' (a resize one
level off is 0.0078 after normalisation, so this holds the resize to Pillow's exact bytes).

transformers' output comes from fixture.npz (make_fixture.py says how it was made, and why it is
not run here live); the inputs are the evaluation images in the repository, checked against the
SHA-256 of the RGBA the fixture was made from, and synthetic images stored in the fixture.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixture.npz"
LOAD_CORE = ROOT / "tests" / "parity" / "load-core.mjs"
WASM = ROOT / "pkg" / "ocr_bench_core_bg.wasm"
TOLERANCE = 1e-4

# Reads a JSON list of {configText, rgba, width, height, out} from argv[2]: RGBA bytes in, the
# core's float32 pixel_values out.
NODE_SCRIPT = """
import { readFileSync, writeFileSync } from "node:fs";
const { loadCore } = await import(process.argv[1]);
const core = await loadCore();
for (const job of JSON.parse(readFileSync(process.argv[2], "utf8"))) {
	const processor = new core.VitImageProcessor(job.configText);
	const values = processor.pixelValues(new Uint8Array(readFileSync(job.rgba)), job.width, job.height);
	if (!(values instanceof Float32Array)) throw new Error("pixelValues must return a Float32Array");
	writeFileSync(job.out, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
}
"""


def load_fixture() -> tuple[dict, np.lib.npyio.NpzFile]:
    stored = np.load(FIXTURE)
    return json.loads(stored["cases"].tobytes()), stored


def case_rgba(case: dict, stored) -> np.ndarray:
    if "evalPath" in case:
        rgba = np.asarray(Image.open(ROOT / "models" / "eval" / case["evalPath"]).convert("RGBA"), np.uint8)
    else:
        rgba = stored[case["rgbaKey"]]
    assert hashlib.sha256(rgba.tobytes()).hexdigest() == case["rgbaSha256"], (
        f"{case['image']}: not the RGBA the fixture was made from; run make_fixture.py again"
    )
    return rgba


def transformers_values(index: int, stored) -> np.ndarray:
    codes, levels = stored[f"codes{index}"], stored[f"levels{index}"]
    return np.take_along_axis(levels, codes.reshape(3, -1).astype(np.intp), 1).reshape(codes.shape)


@pytest.fixture(scope="module")
def core_values(tmp_path_factory) -> list[np.ndarray]:
    """The core's pixel_values for every case, from one Node run."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the wasm core cannot run (scripts/setup installs it)")
    if not WASM.is_file():
        pytest.skip(f"{WASM} is missing: build the core with scripts/build-wasm")
    fixture, stored = load_fixture()
    tmp = tmp_path_factory.mktemp("vit")
    jobs = []
    for index, case in enumerate(fixture["cases"]):
        rgba_path = tmp / f"{index}.rgba"
        rgba_path.write_bytes(case_rgba(case, stored).tobytes())
        jobs.append(
            {
                "configText": case["configText"],
                "rgba": str(rgba_path),
                "width": case["width"],
                "height": case["height"],
                "out": str(tmp / f"{index}.f32"),
            }
        )
    (tmp / "jobs.json").write_text(json.dumps(jobs), encoding="utf-8")
    subprocess.run(
        ["node", "--input-type=module", "-e", NODE_SCRIPT, LOAD_CORE.as_uri(), str(tmp / "jobs.json")],
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    return [np.fromfile(job["out"], np.float32) for job in jobs]


CASES = load_fixture()[0]["cases"]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c['config']} | {c['image']}" for c in CASES])
def test_pixel_values_match_transformers(core_values: list[np.ndarray], index: int) -> None:
    _, stored = load_fixture()
    expected = transformers_values(index, stored)
    ours = core_values[index]
    assert ours.size == expected.size, f"{ours.size} values; transformers gave {expected.shape}"
    worst = float(np.abs(ours.reshape(expected.shape) - expected).max())
    assert worst <= TOLERANCE, f"max |core - transformers| = {worst:.6f}"


def test_the_fixture_covers_the_filters_sizes_and_images_it_claims() -> None:
    fixture, _ = load_fixture()
    configs = {case["config"]: json.loads(case["configText"]) for case in fixture["cases"]}
    assert {config.get("resample") for config in configs.values()} == {0, 1, 2, 3, 4, 5}
    images = {case["image"] for case in fixture["cases"]}
    assert any(name.startswith("eval ") for name in images) and any("rgba" in name for name in images)
    # Pillow 13 chose the pass order pil_resize.rs reproduces; transformers 4.57 the PIL path.
    assert fixture["transformers"].startswith("4.57.") and fixture["pillow"].startswith("13.")
