"""What a page's print, scan and compression do to a crop, and the whole crop's small rotation.

Each function takes the image and a seeded `random.Random`; pixel noise draws from a numpy
generator seeded from it, so the result is fixed by the case's seed.
"""

from __future__ import annotations

import io
import random

import numpy as np
from PIL import Image, ImageFilter

FILLS = ("white", "grey", "texture", "screentone")


def _numpy_rng(rng: random.Random) -> np.random.Generator:
    return np.random.default_rng(rng.getrandbits(64))


def screentone(size: tuple[int, int], rng: random.Random, paper: int, ink: int) -> Image.Image:
    """Round dots on a square grid turned by 45 degrees, the commonest screen of manga pages."""
    w, h = size
    pitch = rng.uniform(3.5, 8.0)
    coverage = rng.uniform(0.1, 0.45)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    u, v = (xs + ys) / (pitch * 1.414), (xs - ys) / (pitch * 1.414)
    distance = np.hypot(u - np.round(u), v - np.round(v))
    dots = distance < np.sqrt(coverage / np.pi)
    return Image.fromarray(np.where(dots, ink, paper).astype(np.uint8), "L").convert("RGB")


def fill_background(size: tuple[int, int], kind: str, rng: random.Random) -> Image.Image:
    if kind == "white":
        return Image.new("RGB", size, (255, 255, 255))
    if kind == "grey":
        level = rng.randint(150, 235)
        return Image.new("RGB", size, (level, level, level))
    if kind == "texture":
        grain = _numpy_rng(rng).normal(rng.randint(200, 240), rng.uniform(6, 18), (size[1], size[0]))
        return (
            Image.fromarray(np.clip(grain, 0, 255).astype(np.uint8), "L")
            .filter(ImageFilter.GaussianBlur(1.2))
            .convert("RGB")
        )
    if kind == "screentone":
        return screentone(size, rng, 250, rng.randint(40, 120))
    raise ValueError(f"unknown background fill {kind!r}; known: {FILLS}")


def rotate_whole(image: Image.Image, degrees: float, fill: str, rng: random.Random) -> Image.Image:
    """The crop turned by `degrees`, its new corners filled with `fill` (FILLS), then cut to a
    random inset so the corners show in various amounts."""
    turned = image.convert("RGBA").rotate(degrees, resample=Image.BICUBIC, expand=True)
    background = fill_background(turned.size, fill, rng)
    background.paste(turned, (0, 0), turned)
    w, h = background.size
    inset_x, inset_y = int(w * rng.uniform(0, 0.06)), int(h * rng.uniform(0, 0.06))
    return background.crop((inset_x, inset_y, w - inset_x, h - inset_y))


def blur(image: Image.Image, rng: random.Random) -> Image.Image:
    return image.filter(ImageFilter.GaussianBlur(rng.uniform(0.4, 1.3)))


def jpeg_blocks(image: Image.Image, rng: random.Random) -> Image.Image:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=rng.randint(12, 45))
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return decoded.convert("RGB")


def noise(image: Image.Image, rng: random.Random) -> Image.Image:
    pixels = np.asarray(image, np.float32)
    grain = _numpy_rng(rng).normal(0, rng.uniform(5, 18), pixels.shape[:2])[..., None]
    return Image.fromarray(np.clip(pixels + grain, 0, 255).astype(np.uint8), "RGB")


def halftone(image: Image.Image, rng: random.Random) -> Image.Image:
    """A fine screen multiplied over everything, as a scanned print's dot pattern."""
    screen = np.asarray(screentone(image.size, rng, 255, rng.randint(170, 225)), np.float32) / 255
    return Image.fromarray((np.asarray(image, np.float32) * screen).astype(np.uint8), "RGB")


def scan_skew(image: Image.Image, rng: random.Random) -> Image.Image:
    """A slight shear, as a page laid not quite square on the scanner."""
    shear = rng.uniform(-0.03, 0.03)
    w, h = image.size
    return image.transform(
        (w, h), Image.AFFINE, (1, shear, -shear * h / 2, 0, 1, 0), Image.BICUBIC, fillcolor=(255, 255, 255)
    )


DAMAGES = {"blur": blur, "jpeg": jpeg_blocks, "noise": noise, "halftone": halftone, "skew": scan_skew}
