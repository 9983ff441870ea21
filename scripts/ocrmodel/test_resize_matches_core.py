"""The harness core's preprocessing (wasm, run in Node) against the Python resize that makes the
training images and scores the evaluations (ocrmodel.resize.resize_for_model).

The core claims Pillow's `resize((224, 224), Image.LANCZOS, reducing_gap=1.0)` with the pass
order pinned (across, then down; resize_for_model does the same with two single-axis resizes):
Image.reduce's box step bit for bit, then Lanczos3 as fast_image_resize computes it, within 2 levels
of Pillow with a few values off. Both sides are compared as bytes: every float of the core's tensor is looked
up in the per-channel normalisation table ((v/255 - mean)/std in doubles, stored as float32, as
the core builds it), which also asserts that each float is one of the table's 256 values.

scripts/test builds pkg/ (scripts/build-wasm, stage "build") before its "python tests"
stage, so there the core is always present; the test skips only when Node or the wasm build is
missing (a bare `pytest` run on a machine without them).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from ocrmodel import spec
from ocrmodel.resize import resize_for_model

ROOT = Path(__file__).resolve().parents[2]
LOAD_CORE = ROOT / "tests" / "parity" / "load-core.mjs"
WASM = ROOT / "pkg" / "ocr_bench_core_bg.wasm"

MAX_LEVELS = 2  # largest |core - Pillow| allowed for any value
MAX_DIFFERING_SHARE = 0.02  # share of values allowed to differ at all

# Reads `raw w h out` triples from argv: RGBA bytes in, the core's float32 tensor out.
NODE_SCRIPT = """
import { readFileSync, writeFileSync } from "node:fs";
const { loadCore } = await import(process.argv[1]);
const core = await loadCore();
const jobs = process.argv.slice(2);
for (let i = 0; i < jobs.length; i += 4) {
	const [raw, width, height, out] = jobs.slice(i, i + 4);
	const values = core.preprocess(new Uint8Array(readFileSync(raw)), Number(width), Number(height));
	if (!(values instanceof Float32Array)) throw new Error("preprocess must return a Float32Array");
	writeFileSync(out, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
}
"""


def text_page(width: int, height: int, seed: int) -> Image.Image:
    """Lines of dark text in Pillow's default font on off-white, with a few thick rules."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (width, height), (246, 243, 236))
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default()
    words = ["invoice", "total", "Lanczos", "42.50", "reduce", "page", "WGSL", "tensor", "(x/255)"]
    for top in range(12, height - 14, 15):
        line = " ".join(words[int(i)] for i in rng.integers(0, len(words), 14))
        ink = tuple(int(v) for v in rng.integers(0, 70, 3))
        draw.text((10 + int(rng.integers(0, 20)), top), line, fill=ink, font=font)
    for _ in range(6):
        x, y = int(rng.integers(0, width - 60)), int(rng.integers(0, height - 10))
        draw.rectangle([x, y, x + int(rng.integers(20, 60)), y + int(rng.integers(2, 8))], fill=(25, 25, 30))
    return image


def noise(width: int, height: int, seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (height, width, 3), dtype=np.uint8), "RGB")


def gradient_with_text(width: int, height: int, seed: int) -> Image.Image:
    """A colour ramp plus noise under text: every level occurs, edges everywhere."""
    y, x = np.mgrid[0:height, 0:width]
    rng = np.random.default_rng(seed)
    pixels = np.stack([x * 255 // (width - 1), y * 255 // (height - 1), (x + y) % 256], axis=-1)
    pixels = np.clip(pixels + rng.integers(-20, 21, pixels.shape), 0, 255).astype(np.uint8)
    image = Image.fromarray(pixels, "RGB")
    page = text_page(width, height, seed)
    mask = Image.fromarray((np.asarray(page.convert("L")) < 128).astype(np.uint8) * 255, "L")
    image.paste((0, 0, 0), mask=mask)
    return image


def with_transparency(width: int, height: int, seed: int) -> Image.Image:
    """A text page whose alpha is opaque in the middle, fully transparent in a border band and
    graded in between, with some half-transparent colour blocks: an RGBA the core composites."""
    rng = np.random.default_rng(seed)
    rgb = np.asarray(gradient_with_text(width, height, seed)).copy()
    alpha = np.full((height, width), 255, np.uint8)
    alpha[:, : width // 8] = 0  # transparent (its colour must not show)
    alpha[:, width // 8 : width // 4] = np.linspace(0, 255, width // 4 - width // 8, dtype=np.uint8)[None, :]
    for _ in range(12):
        x, y = int(rng.integers(0, width - 80)), int(rng.integers(0, height - 80))
        alpha[y : y + 80, x : x + 80] = int(rng.integers(1, 255))
        rgb[y : y + 80, x : x + 80] = rng.integers(0, 256, 3, dtype=np.uint8)
    return Image.fromarray(np.dstack([rgb, alpha]), "RGBA")


IMAGES = {
    # name: (image, whether a box step runs: either side >= 2 * 224)
    "page 1024x768": (text_page(1024, 768, seed=1), True),
    "noise 700x500": (noise(700, 500, seed=2), True),
    "ramp+text 1001x333": (gradient_with_text(1001, 333, seed=3), True),
    "page 300x200": (text_page(300, 200, seed=4), False),
    "transparent 900x600": (with_transparency(900, 600, seed=5), True),
}


def over_white(image: Image.Image) -> Image.Image:
    """What the Python side does before resizing (train/scoring.py preprocess)."""
    return Image.alpha_composite(Image.new("RGBA", image.size, "white"), image.convert("RGBA")).convert("RGB")


def core_bytes(images: dict[str, Image.Image], tmp: Path) -> dict[str, np.ndarray]:
    """Runs the wasm core's preprocess on each image's RGBA bytes; returns [224, 224, 3] uint8."""
    args, outs = [], {}
    for i, (name, image) in enumerate(images.items()):
        raw, out = tmp / f"{i}.rgba", tmp / f"{i}.f32"
        raw.write_bytes(np.asarray(image.convert("RGBA"), np.uint8).tobytes())
        args += [str(raw), str(image.width), str(image.height), str(out)]
        outs[name] = out
    subprocess.run(
        ["node", "--input-type=module", "-e", NODE_SCRIPT, LOAD_CORE.as_uri(), *args], check=True, cwd=ROOT, timeout=120
    )
    size = spec.IMAGE_SIZE
    tables = [
        ((np.arange(256, dtype=np.float64) / 255.0 - spec.MEAN[c]) / spec.STD[c]).astype(np.float32) for c in range(3)
    ]
    result = {}
    for name, out in outs.items():
        values = np.fromfile(out, np.float32)
        assert values.size == 3 * size * size, (name, values.size)
        planes = values.reshape(3, size, size)
        channels = []
        for c, table in enumerate(tables):
            assert np.all(np.diff(table) > 0)
            index = np.clip(np.searchsorted(table, planes[c]), 0, 255)
            exact = table[index] == planes[c]
            assert exact.all(), f"{name}: channel {c} has {int((~exact).sum())} floats outside the table"
            channels.append(index.astype(np.uint8))
        result[name] = np.stack(channels, axis=-1)
    return result


def compare(core: np.ndarray, python: Image.Image) -> tuple[int, float, float]:
    """max |difference|, share of values that differ, mean |difference|."""
    difference = np.abs(core.astype(np.int16) - np.asarray(python, np.int16))
    return int(difference.max()), float((difference != 0).mean()), float(difference.mean())


@pytest.fixture(scope="module")
def core(tmp_path_factory) -> dict[str, np.ndarray]:
    """The core's output for every image, from one Node run."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the wasm core cannot run (scripts/setup installs it)")
    if not WASM.is_file():
        pytest.skip(f"{WASM} is missing: build the core with scripts/build-wasm")
    return core_bytes({name: image for name, (image, _) in IMAGES.items()}, tmp_path_factory.mktemp("core"))


@pytest.mark.parametrize("name", list(IMAGES))
def test_core_preprocess_matches_the_python_resize(core: dict[str, np.ndarray], name: str) -> None:
    image, boxed = IMAGES[name]
    rgb = over_white(image)
    if image.mode == "RGBA":
        # Pillow's composite over opaque white is the core's rounded integer formula.
        rgba = np.asarray(image, np.int32)
        c, a = rgba[..., :3], rgba[..., 3:]
        assert np.array_equal(np.asarray(rgb), (c * a + 255 * (255 - a) + 127) // 255), name
        assert (a == 0).any() and ((a > 0) & (a < 255)).any(), name
    worst, share, mean = compare(core[name], resize_for_model(rgb))
    line = f"{name}: max |core - resize_for_model| {worst}, {share:.3%} of values differ (mean {mean:.4f})"
    if boxed:
        plain_worst, plain_share, plain_mean = compare(
            core[name], rgb.resize((spec.IMAGE_SIZE, spec.IMAGE_SIZE), Image.LANCZOS, reducing_gap=None)
        )
        line += f"; against plain Lanczos3: max {plain_worst}, {plain_share:.3%} differ (mean {plain_mean:.4f})"
    print(line)
    assert worst <= MAX_LEVELS and share <= MAX_DIFFERING_SHARE, line
    if boxed:
        # The core must be nearer the reducing_gap resize than the plain one: going back to a
        # plain Lanczos3 would make the plain comparison the exact one.
        assert plain_mean > mean and plain_share > share, f"{line}: not nearer the reducing_gap=1.0 resize"
