"""Render a string manga-style and report where each character's centre lies.

Shared by the evaluation sets (`eval_sets.py`, mild style) and the training data generator
(`scripts/train/data.py`, augmented style), so both see the same layout rules:

- vertical for Japanese lines: glyph by glyph, columns right to left; brackets, ー, ～ and …
  rotated a quarter turn clockwise and 、。，． moved to the top-right of their cell, because
  PIL draws no vertical forms (no `vert` feature without raqm's vertical layout);
- horizontal for Latin-heavy lines, lines top to bottom;
- dark ink on a light background, mild noise, canvases of varied size and aspect (like real
  crops, which the harness squashes to 224x224).

Everything random comes from the `random.Random` passed in, so a seed fixes the image.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

SYSTEM_FONT_DIR = Path("/usr/share/fonts/opentype/noto")
# (file, face index): index 0 of each Noto CJK collection is the JP face.
SYSTEM_FACES = {
    "sans-regular": ("NotoSansCJK-Regular.ttc", 0),
    "sans-bold": ("NotoSansCJK-Bold.ttc", 0),
    "serif-regular": ("NotoSerifCJK-Regular.ttc", 0),
    "serif-bold": ("NotoSerifCJK-Bold.ttc", 0),
}

ROTATED_IN_VERTICAL = set("「」『』（）【】〔〕〈〉《》［］｛｝ー～〜…‥―－—–~-()[]{}<>＜＞＝=")
TOP_RIGHT_IN_VERTICAL = set("、。，．,.")
FULLWIDTH_ALPHANUMERIC = {chr(c) for c in range(0xFF10, 0xFF1A)} | {chr(c) for c in range(0xFF21, 0xFF3B)} | {
    chr(c) for c in range(0xFF41, 0xFF5B)}
LATIN = set("ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ"
            "０１２３４５６７８９＇") | {chr(c) for c in range(0x21, 0x7F)}


def latin_heavy(text: str) -> bool:
    """Half or more Latin letters, digits and ASCII: such lines are set horizontally."""
    return sum(c in LATIN for c in text) * 2 >= len(text)


@dataclass(frozen=True)
class Style:
    face: tuple[str, int]  # font file path, face index
    size: int  # em size in pixels
    vertical: bool
    lines: int  # columns when vertical
    char_spacing: float = 0.05  # extra space between glyphs, in em
    line_spacing: float = 0.35  # extra space between lines, in em
    margins: tuple[float, float, float, float] = (0.5, 0.5, 0.5, 0.5)  # left, top, right, bottom, in em
    ink: int = 20
    paper: int = 245
    noise: float = 3.0  # Gaussian noise sigma, in grey levels
    speckle: float = 0.0  # fraction of pixels knocked by up to +-40 grey levels (dust, paper grain)
    blur: float = 0.0  # Gaussian blur radius, pixels
    rotation: float = 0.0  # degrees, counter-clockwise
    background: str = "plain"  # plain | bubble | screentone
    jitter: float = 0.0  # per-glyph position jitter, in em
    # Draw fullwidth Latin letters and digits with their proportional ASCII glyphs when set
    # horizontally, as printed Latin looks; the expected text keeps the fullwidth forms.
    halfwidth_latin: bool = True


@dataclass
class Rendered:
    image: Image.Image  # mode "L"; the evaluation sets save it as RGB
    centres: list[tuple[float, float]] = field(default_factory=list)  # per character, image pixels


_fonts: dict[tuple[str, int, int], ImageFont.FreeTypeFont] = {}
_glyphs: dict[tuple[str, int, int, str, bool], tuple[np.ndarray, int, int]] = {}


def font(face: tuple[str, int], size: int) -> ImageFont.FreeTypeFont:
    key = (face[0], face[1], size)
    if key not in _fonts:
        # BASIC layout: one character at a time needs no shaping, and raqm costs time per call.
        _fonts[key] = ImageFont.truetype(face[0], size, index=face[1], layout_engine=ImageFont.Layout.BASIC)
    return _fonts[key]


def glyph(face: tuple[str, int], size: int, character: str, rotated: bool) -> tuple[np.ndarray, int, int]:
    """Coverage bitmap (uint8) of one glyph and the offset of its top-left from the em-box centre."""
    key = (face[0], face[1], size, character, rotated)
    cached = _glyphs.get(key)
    if cached is not None:
        return cached
    box = 2 * size
    canvas = Image.new("L", (box, box), 0)
    ImageDraw.Draw(canvas).text((size, size), character, font=font(face, size), fill=255, anchor="mm")
    coverage = np.asarray(canvas)
    if rotated:
        coverage = np.rot90(coverage, k=-1)  # a quarter turn clockwise, like the vertical forms
    rows = np.flatnonzero(coverage.any(axis=1))
    cols = np.flatnonzero(coverage.any(axis=0))
    if rows.size == 0:
        result = (np.zeros((1, 1), np.uint8), 0, 0)
    else:
        top, bottom, left, right = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
        result = (np.ascontiguousarray(coverage[top:bottom, left:right]), int(left) - size, int(top) - size)
    if len(_glyphs) > 250_000:
        _glyphs.clear()  # bounded memory per data worker (~1 KB a glyph)
    _glyphs[key] = result
    return result


def split_lines(text: str, lines: int) -> list[str]:
    """Balanced chunks in reading order."""
    lines = max(1, min(lines, len(text)))
    per_line = math.ceil(len(text) / lines)
    return [text[i:i + per_line] for i in range(0, len(text), per_line)]


def _drawn(style: Style, character: str) -> str:
    if style.halfwidth_latin and not style.vertical and character in FULLWIDTH_ALPHANUMERIC:
        return chr(ord(character) - 0xFEE0)
    return character


def _advance(style: Style, character: str) -> float:
    if style.vertical:
        return style.size * (1.0 + style.char_spacing)
    return font(style.face, style.size).getlength(_drawn(style, character)) + style.size * style.char_spacing


def render(text: str, style: Style, rng: random.Random) -> Rendered:
    if not text:
        raise ValueError("render needs at least one character")
    size = style.size
    chunks = split_lines(text, style.lines)
    pitch = size * (1.0 + style.line_spacing)
    lengths = [sum(_advance(style, c) for c in chunk) for chunk in chunks]
    longest = max(lengths)
    left, top, right, bottom = (m * size for m in style.margins)
    if style.vertical:
        width, height = left + right + pitch * len(chunks) - size * style.line_spacing, top + bottom + longest
    else:
        width, height = left + right + longest, top + bottom + pitch * len(chunks) - size * style.line_spacing
    width, height = max(8, int(math.ceil(width))), max(8, int(math.ceil(height)))
    coverage = np.zeros((height, width), np.uint8)
    centres: list[tuple[float, float]] = []
    for index, chunk in enumerate(chunks):
        # Centre each line on the long axis, like a speech bubble does.
        offset = (longest - lengths[index]) / 2
        pen = offset + (top if style.vertical else left)
        for character in chunk:
            advance = _advance(style, character)
            if style.vertical:
                cx = width - right - pitch * index - size / 2
                cy = pen + advance / 2
            else:
                cx = pen + advance / 2
                cy = top + pitch * index + size / 2
            pen += advance
            centres.append((cx, cy))
            if style.jitter:
                cx += rng.uniform(-style.jitter, style.jitter) * size
                cy += rng.uniform(-style.jitter, style.jitter) * size
            rotated = style.vertical and character in ROTATED_IN_VERTICAL
            bitmap, dx, dy = glyph(style.face, size, _drawn(style, character), rotated)
            if style.vertical and character in TOP_RIGHT_IN_VERTICAL:
                cx += 0.5 * size
                cy -= 0.5 * size
            x0, y0 = int(round(cx)) + dx, int(round(cy)) + dy
            _stamp(coverage, bitmap, x0, y0)
    image = _compose(coverage, style, rng)
    if style.rotation:
        image, centres = _rotate(image, centres, style.rotation, style.paper)
    if style.blur > 0:
        image = image.filter(ImageFilter.GaussianBlur(style.blur))
    if style.noise > 0:
        pixels = np.asarray(image, np.float32)
        noise = np.random.default_rng(rng.getrandbits(63)).normal(0.0, style.noise, pixels.shape)
        image = Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8), "L")
    if style.speckle > 0:
        pixels = np.asarray(image, np.int16).copy()
        generator = np.random.default_rng(rng.getrandbits(63))
        hit = generator.random(pixels.shape) < style.speckle
        pixels[hit] += generator.integers(-40, 41, int(hit.sum()), dtype=np.int16)
        image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L")
    return Rendered(image, centres)


def _stamp(coverage: np.ndarray, bitmap: np.ndarray, x0: int, y0: int) -> None:
    h, w = bitmap.shape
    ys, xs = max(0, y0), max(0, x0)
    ye, xe = min(coverage.shape[0], y0 + h), min(coverage.shape[1], x0 + w)
    if ye <= ys or xe <= xs:
        return
    target = coverage[ys:ye, xs:xe]
    np.maximum(target, bitmap[ys - y0:ye - y0, xs - x0:xe - x0], out=target)


def _compose(coverage: np.ndarray, style: Style, rng: random.Random) -> Image.Image:
    """Paper, background pattern, then ink through the glyph coverage."""
    height, width = coverage.shape
    paper = np.full((height, width), float(style.paper), np.float32)
    if style.background == "screentone":
        period = rng.randint(3, 6)
        yy, xx = np.mgrid[0:height, 0:width]
        dots = ((yy % period) < period / 2) & ((xx % period) < period / 2)
        paper -= dots * rng.uniform(25, 70)
    elif style.background == "bubble":
        # A white ellipse with an outline around the text, grey tone outside.
        outside = rng.uniform(120, 215)
        yy, xx = np.mgrid[0:height, 0:width]
        # Radii past sqrt(2) of the half-canvas keep the text rectangle inside the ellipse.
        ry, rx = height / 2 * rng.uniform(1.45, 1.6), width / 2 * rng.uniform(1.45, 1.6)
        distance = ((yy - height / 2) / ry) ** 2 + ((xx - width / 2) / rx) ** 2
        paper = np.where(distance > 1.0, outside, paper)
        ring = np.abs(np.sqrt(distance) - 1.0) * min(rx, ry) < rng.uniform(0.8, 2.5)
        paper = np.where(ring, float(style.ink), paper)
    alpha = coverage.astype(np.float32) / 255.0
    pixels = paper * (1.0 - alpha) + style.ink * alpha
    return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L")


def _rotate(image: Image.Image, centres: list[tuple[float, float]], degrees: float, fill: int):
    width, height = image.size
    rotated = image.rotate(degrees, resample=Image.BILINEAR, fillcolor=fill)
    angle = math.radians(degrees)
    cos, sin = math.cos(angle), math.sin(angle)
    cx, cy = width / 2, height / 2
    # PIL rotates counter-clockwise on screen (y down): x' = c(x-cx) + s(y-cy), y' = -s(x-cx) + c(y-cy).
    moved = [(cx + cos * (x - cx) + sin * (y - cy), cy - sin * (x - cx) + cos * (y - cy)) for x, y in centres]
    return rotated, moved


def system_face(name: str) -> tuple[str, int]:
    file, index = SYSTEM_FACES[name]
    return (str(SYSTEM_FONT_DIR / file), index)


def mild_style(text: str, rng: random.Random, faces: list[tuple[str, int]]) -> Style:
    """The evaluation sets' style: clean scans of a speech bubble's text, sizes like real crops."""
    vertical = not latin_heavy(text)
    length = len(text)
    lines = 1 if length <= 9 else 2 if length <= 22 else 3
    if length > 12 and rng.random() < 0.3:
        lines += 1
    return Style(
        face=rng.choice(faces),
        size=rng.randint(22, 40),
        vertical=vertical,
        lines=min(lines, 4),
        char_spacing=rng.uniform(0.0, 0.12),
        line_spacing=rng.uniform(0.2, 0.6),
        margins=tuple(rng.uniform(0.25, 1.0) for _ in range(4)),
        ink=rng.randint(0, 45),
        paper=rng.randint(232, 255),
        # Sparse speckle rather than dense Gaussian noise: the PNGs stay small enough to commit
        # (dense sigma-2 noise made synth200 7.7 MB).
        noise=0.0,
        speckle=rng.uniform(0.005, 0.02),
    )
