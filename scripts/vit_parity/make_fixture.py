"""Writes fixture.npz: Hugging Face's own ViT-family image processors (transformers 4.57,
requirements.txt here) run on evaluation images and synthetic ones, for test_vit_processor.py to
hold the core's VitImageProcessor to. Run in its own environment, from the repository root:

    python3 -m venv /tmp/vit-parity && /tmp/vit-parity/bin/pip install -r scripts/vit_parity/requirements.txt
    cd scripts && /tmp/vit-parity/bin/python -m vit_parity.make_fixture

The fixture holds each case's preprocessor_config.json text, the RGBA the core is given (the
synthetic images whole; an evaluation image by path and the SHA-256 of its RGBA) and transformers'
pixel_values, losslessly: per channel the distinct float32 values and a uint8 code per pixel
(a value depends only on the resized byte, so there are at most 256).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "fixture.npz"

EVAL_IMAGES = ["hayai13/01.png", "balloon/01.png", "long/01.png", "lowres/01.png"]

IMAGENET = {"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}
CONFIGS = {
    # microsoft/trocr-base-printed's file as published (and manga-ocr's, at 224).
    "trocr bilinear 384": {
        "feature_extractor_type": "ViTFeatureExtractor",
        "do_normalize": True,
        "do_resize": True,
        "image_mean": [0.5] * 3,
        "image_std": [0.5] * 3,
        "resample": 2,
        "size": 384,
    },
    "manga-ocr bilinear 224": {
        "feature_extractor_type": "ViTFeatureExtractor",
        "do_normalize": True,
        "do_resize": True,
        "image_mean": [0.5] * 3,
        "image_std": [0.5] * 3,
        "resample": 2,
        "size": 224,
    },
    # A file as transformers 4.57's save_pretrained writes it.
    "vit bicubic 224": {
        "image_processor_type": "ViTImageProcessor",
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "rescale_factor": 0.00392156862745098,
        "resample": 3,
        "size": {"height": 224, "width": 224},
        **IMAGENET,
    },
    "vit bicubic 384": {"image_processor_type": "ViTImageProcessor", "resample": 3, "size": 384},
    "vit nearest 224": {"image_processor_type": "ViTImageProcessor", "resample": 0, "size": 224},
    "vit lanczos 64x320": {
        "image_processor_type": "ViTImageProcessor",
        "resample": 1,
        "size": {"height": 64, "width": 320},
    },
    "vit box 224": {"image_processor_type": "ViTImageProcessor", "resample": 4, "size": 224},
    "vit hamming 224": {"image_processor_type": "ViTImageProcessor", "resample": 5, "size": 224},
    "deit bicubic 256 crop 224": {
        "feature_extractor_type": "DeiTFeatureExtractor",
        "crop_size": 224,
        "do_center_crop": True,
        "do_normalize": True,
        "do_resize": True,
        "resample": 3,
        "size": 256,
        **IMAGENET,
    },
}
# Every image through these; the other configs through the first two images only.
EVERY_IMAGE = {"manga-ocr bilinear 224", "vit bicubic 224", "vit nearest 224"}


def synthetic_images() -> dict[str, Image.Image]:
    """Odd sizes, smooth ramps with some noise and hard edges, one with graded alpha."""
    rng = np.random.default_rng(20261206)

    def ramp(width: int, height: int) -> np.ndarray:
        y, x = np.mgrid[0:height, 0:width]
        pixels = np.stack([x * 255 // max(width - 1, 1), y * 255 // max(height - 1, 1), (x * 7 + y * 3) % 256], axis=-1)
        pixels[(x // 9 + y // 13) % 5 == 0] = (10, 20, 30)  # hard edges
        return np.clip(pixels + rng.integers(-4, 5, pixels.shape), 0, 255).astype(np.uint8)

    alpha = rng.integers(0, 256, (53, 37), dtype=np.uint8)
    return {
        "synthetic rgba 37x53 (upscaled)": Image.fromarray(np.dstack([ramp(37, 53), alpha]), "RGBA"),
        "synthetic 301x97 (narrower, taller)": Image.fromarray(ramp(301, 97), "RGB"),
        "synthetic 80x500 (tall: the vertical pass first)": Image.fromarray(ramp(80, 500), "RGB"),
        "synthetic 700x100 (wide)": Image.fromarray(ramp(700, 100), "RGB"),
    }


def eval_image(relative: str) -> Image.Image:
    return Image.open(ROOT / "models" / "eval" / relative)


def processor(config: dict):
    from transformers import AutoImageProcessor

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "preprocessor_config.json").write_text(json.dumps(config), encoding="utf-8")
        return AutoImageProcessor.from_pretrained(folder, use_fast=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    import transformers

    images = {f"eval {name}": eval_image(name) for name in EVAL_IMAGES} | synthetic_images()
    arrays: dict[str, np.ndarray] = {}
    cases = []
    for config_name, config in CONFIGS.items():
        hf = processor(config)
        names = list(images) if config_name in EVERY_IMAGE else list(images)[:2]
        for image_name in names:
            image = images[image_name]
            rgba = np.asarray(image.convert("RGBA"), np.uint8)
            # With do_convert_rgb the processor converts itself; without, its callers do.
            given = image if config.get("do_convert_rgb") else image.convert("RGB")
            values = hf(given, return_tensors="np")["pixel_values"]
            assert values.dtype == np.float32 and values.shape[:2] == (1, 3), values.shape
            index = len(cases)
            codes, levels = [], np.zeros((3, 256), np.float32)
            for channel in range(3):
                distinct, code = np.unique(values[0, channel], return_inverse=True)
                assert distinct.size <= 256, (config_name, image_name, distinct.size)
                levels[channel, : distinct.size] = distinct
                codes.append(code.reshape(values.shape[2:]).astype(np.uint8))
            codes = np.stack(codes)
            assert np.array_equal(
                np.take_along_axis(levels, codes.reshape(3, -1).astype(np.intp), 1).reshape(values.shape[1:]), values[0]
            )
            arrays[f"codes{index}"], arrays[f"levels{index}"] = codes, levels
            case = {
                "config": config_name,
                "configText": json.dumps(config),
                "image": image_name,
                "width": image.width,
                "height": image.height,
                "rgbaSha256": hashlib.sha256(rgba.tobytes()).hexdigest(),
            }
            if image_name.startswith("eval "):
                case["evalPath"] = image_name.removeprefix("eval ")
            else:
                case["rgbaKey"] = f"rgba{list(images).index(image_name)}"
                arrays[case["rgbaKey"]] = rgba
            cases.append(case)
    arrays["cases"] = np.frombuffer(
        json.dumps({"transformers": transformers.__version__, "pillow": Image.__version__, "cases": cases}).encode(),
        np.uint8,
    )
    np.savez_compressed(args.out, **arrays)
    print(f"{args.out}: {len(cases)} cases, {args.out.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
