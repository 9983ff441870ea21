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
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
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

SMALL_KANA = set("ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿ")
# Unicode's vertical presentation forms (U+FE10..FE19, U+FE30..FE48) of horizontal characters.
PRESENTATION_FORMS = dict(
    zip(
        "，、。：；！？〖〗…‥—–（）｛｝〔〕【】《》〈〉「」『』［］",
        "︐︑︒︓︔︕︖︗︘︙︰︱︲︵︶︷︸︹︺︻︼︽︾︿﹀﹁﹂﹃﹄﹇﹈",
        strict=True,
    )
)
TATE_CHU_YOKO = set("０１２３４５６７８９！？0123456789!?")
ROTATED_IN_VERTICAL = set("「」『』（）【】〔〕〈〉《》［］｛｝ー～〜…‥―－—–~-()[]{}<>＜＞＝=")
TOP_RIGHT_IN_VERTICAL = set("、。，．,.")
FULLWIDTH_ALPHANUMERIC = (
    {chr(c) for c in range(0xFF10, 0xFF1A)}
    | {chr(c) for c in range(0xFF21, 0xFF3B)}
    | {chr(c) for c in range(0xFF41, 0xFF5B)}
)
LATIN = set(
    "ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺａｂｃｄｅｆｇｈｉｊｋｌｍｎｏｐｑｒｓｔｕｖｗｘｙｚ"
    "０１２３４５６７８９＇"
) | {chr(c) for c in range(0x21, 0x7F)}


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
    # The rest are the manga renderer's (scene.py); their defaults keep the evaluation sets'
    # images byte-identical.
    # Per character, the face that draws it when `face` lacks it (fonts.FontLibrary.face_for);
    # None: every character in `face`.
    face_for: Callable[[str], tuple[str, int]] | None = None
    # Vertical text: 、。，． at the top-right of their cell (the vertical form's position) or
    # where horizontal text puts them (bottom-left), as some letterers and fonts do.
    punctuation_top_right: bool = True
    # Vertical text: draw brackets, 、。…！？ etc. as their Unicode vertical presentation forms
    # (U+FE10.., U+FE30..) where the face has them, instead of turning the horizontal glyph.
    presentation_forms: bool = False
    # Vertical text: small kana nudged to the top-right of their cell, as vertical fonts set them.
    small_kana_top_right: bool = False
    # Vertical text: runs of two or three digits or !? set side by side in one cell
    # (tate-chu-yoko).
    tate_chu_yoko: bool = False
    # Line breaks at random places instead of balanced lines (speech balloons break by phrase).
    ragged: bool = False


@dataclass
class Rendered:
    image: Image.Image  # mode "L", or "RGB" for a scene with colours; the evaluation sets save it as RGB
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


def glyph_mask(face: tuple[str, int], size: int, character: str, rotated: bool) -> tuple[np.ndarray, int, int]:
    """`glyph`'s answer straight from FreeType's mask (about 6x faster, offsets within a pixel of
    `glyph`'s): the manga renderer's path. `glyph` stays as it is for the evaluation sets'
    byte-identical images."""
    key = (face[0], face[1], size, character, rotated, "mask")
    cached = _glyphs.get(key)
    if cached is not None:
        return cached
    mask, (dx, dy) = font(face, size).getmask2(character, mode="L", anchor="mm")
    width, height = mask.size
    coverage = (
        np.frombuffer(bytes(mask), np.uint8).reshape(height, width) if width and height else np.zeros((1, 1), np.uint8)
    )
    if rotated:  # a quarter turn clockwise about the em centre: (x, y) -> (-y, x)
        coverage = np.ascontiguousarray(np.rot90(coverage, k=-1))
        dx, dy = -(dy + coverage.shape[1]), dx
    if len(_glyphs) > 250_000:
        _glyphs.clear()
    result = (coverage, int(dx), int(dy))
    _glyphs[key] = result
    return result


def split_lines(text: str, lines: int) -> list[str]:
    """Balanced chunks in reading order."""
    lines = max(1, min(lines, len(text)))
    per_line = math.ceil(len(text) / lines)
    return [text[i : i + per_line] for i in range(0, len(text), per_line)]


def ragged_lines(text: str, lines: int, rng: random.Random) -> list[str]:
    """Chunks broken up to a third of a line away from the balanced breaks, in reading order."""
    lines = max(1, min(lines, len(text)))
    per_line = len(text) / lines
    bounds = [0]
    for index in range(1, lines):
        at = round(index * per_line + rng.uniform(-per_line / 3, per_line / 3))
        bounds.append(min(len(text) - (lines - index), max(bounds[-1] + 1, at)))
    bounds.append(len(text))
    return [text[a:b] for a, b in pairwise(bounds)]


def _drawn(style: Style, character: str) -> str:
    if style.halfwidth_latin and not style.vertical and character in FULLWIDTH_ALPHANUMERIC:
        return chr(ord(character) - 0xFEE0)
    return character


def _face(style: Style, character: str) -> tuple[str, int]:
    if style.face_for is None:
        return style.face
    return style.face_for(character) or style.face


def _cells(style: Style, chunk: str) -> list[str]:
    """A line's cells: one character each, or a tate-chu-yoko run of two or three."""
    if not (style.vertical and style.tate_chu_yoko):
        return list(chunk)
    cells: list[str] = []
    index = 0
    while index < len(chunk):
        end = index
        while end < len(chunk) and chunk[end] in TATE_CHU_YOKO:
            end += 1
        if 2 <= end - index <= 3:
            cells.append(chunk[index:end])
            index = end
        else:
            cells.extend(chunk[index : max(end, index + 1)])
            index = max(end, index + 1)
    return cells


def _advance(style: Style, cell: str) -> float:
    if style.vertical:
        return style.size * (1.0 + style.char_spacing)
    return font(_face(style, cell), style.size).getlength(_drawn(style, cell)) + style.size * style.char_spacing


def _halfwidth(character: str) -> str:
    return chr(ord(character) - 0xFEE0) if 0xFF01 <= ord(character) <= 0xFF5E else character


def _draw_cell(
    coverage: np.ndarray,
    style: Style,
    cell: str,
    cx: float,
    cy: float,
    rng: random.Random,
    centres: list[tuple[float, float]],
) -> None:
    """Stamps one cell centred at (cx, cy) and appends each character's centre."""
    size = style.size
    if len(cell) > 1:  # tate-chu-yoko: halfwidth glyphs side by side, shrunk to fit the em
        glyphs = [_halfwidth(c) for c in cell]
        face = _face(style, glyphs[0])
        widths = [font(face, size).getlength(g) for g in glyphs]
        small = max(6, int(size * min(1.0, 0.95 * size / max(1.0, sum(widths)))))
        widths = [font(face, small).getlength(g) for g in glyphs]
        pen = cx - sum(widths) / 2
        for drawn, width in zip(glyphs, widths, strict=True):
            x = pen + width / 2
            pen += width
            centres.append((x, cy))
            bitmap, dx, dy = glyph_mask(_face(style, drawn), small, drawn, False)
            _stamp(coverage, bitmap, int(round(x)) + dx, int(round(cy)) + dy)
        return
    character = cell
    centres.append((cx, cy))
    if style.jitter:
        cx += rng.uniform(-style.jitter, style.jitter) * size
        cy += rng.uniform(-style.jitter, style.jitter) * size
    drawn = _drawn(style, character)
    rotated = style.vertical and character in ROTATED_IN_VERTICAL
    top_right = style.vertical and character in TOP_RIGHT_IN_VERTICAL and style.punctuation_top_right
    if style.vertical and style.presentation_forms and character in PRESENTATION_FORMS:
        form = PRESENTATION_FORMS[character]
        if style.face_for is None or style.face_for(form) is not None:
            drawn, rotated, top_right = form, False, False
    draw = glyph if style.face_for is None else glyph_mask
    bitmap, dx, dy = draw(_face(style, drawn), size, drawn, rotated)
    if top_right:
        cx += 0.5 * size
        cy -= 0.5 * size
    elif style.vertical and style.small_kana_top_right and character in SMALL_KANA:
        cx += 0.12 * size
        cy -= 0.12 * size
    _stamp(coverage, bitmap, int(round(cx)) + dx, int(round(cy)) + dy)


def layout(text: str, style: Style, rng: random.Random) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """The text's ink coverage (uint8, canvas with the style's margins) and each character's centre."""
    if not text:
        raise ValueError("render needs at least one character")
    size = style.size
    chunks = ragged_lines(text, style.lines, rng) if style.ragged else split_lines(text, style.lines)
    lines = [_cells(style, chunk) for chunk in chunks]
    pitch = size * (1.0 + style.line_spacing)
    lengths = [sum(_advance(style, cell) for cell in cells) for cells in lines]
    longest = max(lengths)
    left, top, right, bottom = (m * size for m in style.margins)
    if style.vertical:
        width, height = left + right + pitch * len(lines) - size * style.line_spacing, top + bottom + longest
    else:
        width, height = left + right + longest, top + bottom + pitch * len(lines) - size * style.line_spacing
    width, height = max(8, int(math.ceil(width))), max(8, int(math.ceil(height)))
    coverage = np.zeros((height, width), np.uint8)
    centres: list[tuple[float, float]] = []
    for index, cells in enumerate(lines):
        # Centre each line on the long axis, like a speech bubble does.
        offset = (longest - lengths[index]) / 2
        pen = offset + (top if style.vertical else left)
        for cell in cells:
            advance = _advance(style, cell)
            if style.vertical:
                cx = width - right - pitch * index - size / 2
                cy = pen + advance / 2
            else:
                cx = pen + advance / 2
                cy = top + pitch * index + size / 2
            pen += advance
            _draw_cell(coverage, style, cell, cx, cy, rng, centres)
    return coverage, centres


def render(text: str, style: Style, rng: random.Random) -> Rendered:
    """The evaluation sets' renderer: the layout on paper with the style's plain, bubble or
    screentone background, then rotation, blur, noise and speckle."""
    coverage, centres = layout(text, style, rng)
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
    np.maximum(target, bitmap[ys - y0 : ye - y0, xs - x0 : xe - x0], out=target)


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
