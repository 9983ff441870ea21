"""One held-out crop: text set by layout.py inside a balloon of shapes.py on a page, with tails,
neighbours and marks, tinted, turned and damaged as its kind asks (STYLES).

A kind is what the case is scored as; every case also draws the other features at low rates,
so a kind is a family with wide ranges rather than one setting.
"""

from __future__ import annotations

import colorsys
import math
import random

from PIL import Image, ImageDraw

from . import damage, shapes
from .faces import HELDOUT_FACES, coverage, font
from .layout import SetText, glyph, set_horizontal, set_vertical

STYLES = (
    "vertical",
    "horizontal",
    "shout",
    "narration",
    "damaged",
    "neighbours",
    "ending",
    "tail",
    "rotated",
    "webtoon",
    "inverted",
    "thought",
)
GLYPH_MARKS = ("！", "ー", "♪", "！！", "？", "ドキ", "ガタ", "ハッ", "ゴゴ", "ぴく", "ざわ")
SHAPE_MARKS = ("sweat", "speed")
BLACK = (0, 0, 0)
WHITE = (255, 255, 255)


def _pastel(rng: random.Random, lightness: tuple[float, float], saturation: tuple[float, float]):
    red, green, blue = colorsys.hls_to_rgb(rng.random(), rng.uniform(*lightness), rng.uniform(*saturation))
    return (round(red * 255), round(green * 255), round(blue * 255))


def _colours(kind: str, rng: random.Random) -> tuple:
    """(page, balloon fill, outline, text) colours."""
    if kind == "webtoon":
        page = _pastel(rng, (0.82, 0.95), (0.3, 0.8))
        fill = WHITE if rng.random() < 0.5 else _pastel(rng, (0.88, 0.97), (0.2, 0.7))
        text = _pastel(rng, (0.15, 0.4), (0.4, 0.9)) if rng.random() < 0.7 else (40, 40, 40)
        outline = text if rng.random() < 0.5 else fill
        return page, fill, outline, text
    if kind == "inverted":
        dark = rng.randint(0, 45)
        return WHITE, (dark, dark, dark), (dark, dark, dark), (rng.randint(225, 255),) * 3
    grey = rng.randint(225, 255)
    paper = (grey, grey, grey)
    fill = WHITE if kind != "narration" or rng.random() < 0.6 else (rng.randint(215, 245),) * 3
    ink = (rng.randint(0, 40),) * 3
    return paper, fill, ink, ink


def _balloon_kind(kind: str, rng: random.Random) -> str:
    fixed = {"shout": "shout", "thought": "cloud", "narration": "box", "inverted": "box"}
    if kind in fixed:
        return fixed[kind]
    return rng.choice(["ellipse", "ellipse", "rounded", "rounded", "shout", "cloud", "box"])


def _mark(image: Image.Image, at: tuple[float, float], heading: float, em: int, rng: random.Random, ink) -> None:
    draw = ImageDraw.Draw(image)
    choice = rng.choice(GLYPH_MARKS + SHAPE_MARKS)
    if choice == "sweat":
        shapes.sweat_drop(draw, at, em, ink, max(1, em // 14))
        return
    if choice == "speed":
        shapes.speed_lines(draw, at, heading, em, rng, ink)
        return
    size = max(10, int(em * rng.uniform(0.7, 1.5)))
    face = rng.choice([f for f in HELDOUT_FACES if set(choice) <= coverage(f)])
    angle = rng.uniform(-30, 30)
    for index, character in enumerate(choice):
        cell = glyph(character, font(face, size), size, False).rotate(angle)
        x = at[0] + math.cos(heading) * size * index * 0.9
        y = at[1] + math.sin(heading) * size * index * 0.9
        image.paste(ink, (int(x - size), int(y - size)), cell)


def _set_text(kind: str, text: str, face, em: int, rng: random.Random) -> SetText:
    vertical_share = {"horizontal": 0.0, "webtoon": 0.2, "narration": 0.5, "inverted": 0.5}.get(kind, 0.8)
    typeface = font(face, em)
    if rng.random() < vertical_share:
        return set_vertical(text, typeface, em, rng.randint(3, 9), rng.uniform(-0.05, 0.15), rng.uniform(0.1, 0.5))
    return set_horizontal(text, typeface, em, rng.randint(5, 14), rng.uniform(0.1, 0.45), rng.random() < 0.7)


def render_case(kind: str, text: str, rng: random.Random, extras: dict[str, float]) -> Image.Image:
    """The crop of `text` as `kind`; `extras` gives the rate of each feature a case draws on
    top of its kind (tail, marks, rotated, neighbours, damaged)."""
    if kind not in STYLES:
        raise ValueError(f"unknown held-out style {kind!r}; known: {STYLES}")
    faces = [face for face in HELDOUT_FACES if set(text) <= coverage(face)]
    if not faces:
        raise ValueError(f"no held-out face maps every character of {text!r}")
    face = rng.choice(faces)
    em = rng.randint(22, 46)
    setting = _set_text(kind, text, face, em, rng)
    page, fill, outline, ink = _colours(kind, rng)
    balloon_kind = _balloon_kind(kind, rng)
    tw, th = setting.mask.size
    pad = {"box": 0.25, "rounded": 0.35, "ellipse": 0.75, "shout": 0.7, "cloud": 0.9}[balloon_kind]
    bw, bh = tw + 2 * pad * em + tw * (pad / 3), th + 2 * pad * em + th * (pad / 3)
    margins = [em * rng.uniform(0.1, 1.8) for _ in range(4)]  # left, top, right, bottom
    width, height = int(bw + margins[0] + margins[2]), int(bh + margins[1] + margins[3])
    canvas = Image.new("RGB", (width, height), page)
    if kind != "webtoon" and rng.random() < 0.2:
        canvas = damage.screentone((width, height), rng, page[0], rng.randint(60, 160))
    draw = ImageDraw.Draw(canvas)
    line = max(1, int(em * rng.uniform(0.05, 0.12)))
    if kind == "neighbours" or rng.random() < extras.get("neighbours", 0.15):
        for _ in range(rng.randint(1, 2)):
            shapes.neighbour(draw, (width, height), rng, fill, outline, line)
    box = (margins[0], margins[1], margins[0] + bw, margins[1] + bh)
    centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
    tail_mode = rng.choice(["touch", "cross"]) if kind == "tail" else None
    if tail_mode is None and balloon_kind != "box" and rng.random() < extras.get("tail", 0.25):
        tail_mode = rng.choice(["outside", "outside", "touch", "cross"])
    heading = rng.uniform(0, math.tau)
    edge = (centre[0] + math.cos(heading) * bw / 2, centre[1] + math.sin(heading) * bh / 2)
    if tail_mode == "outside":
        tip = (edge[0] + math.cos(heading) * em * 2, edge[1] + math.sin(heading) * em * 2)
        spread = em * rng.uniform(0.25, 0.6)
        nx, ny = -math.sin(heading) * spread, math.cos(heading) * spread
        base_in = (centre[0] + (edge[0] - centre[0]) * 0.8, centre[1] + (edge[1] - centre[1]) * 0.8)
        draw.polygon(
            [(base_in[0] + nx, base_in[1] + ny), tip, (base_in[0] - nx, base_in[1] - ny)],
            fill=fill,
            outline=outline,
            width=line,
        )
    shapes.balloon(draw, balloon_kind, box, rng, fill, outline, line)
    if balloon_kind == "cloud" and rng.random() < 0.85:
        shapes.thought_trail(draw, edge, heading, em, rng, fill, outline, line)
    origin = (int(centre[0] - tw / 2), int(centre[1] - th / 2))
    canvas.paste(ink, origin, setting.mask)
    if tail_mode in ("touch", "cross"):
        text_box = setting.mask.getbbox() or (0, 0, tw, th)
        if tail_mode == "cross":
            tip = (origin[0] + rng.uniform(text_box[0], text_box[2]), origin[1] + rng.uniform(text_box[1], text_box[3]))
        else:
            tip = (
                origin[0] + (text_box[0] + text_box[2]) / 2 + math.cos(heading) * (text_box[2] - text_box[0]) / 2,
                origin[1] + (text_box[1] + text_box[3]) / 2 + math.sin(heading) * (text_box[3] - text_box[1]) / 2,
            )
        base = (edge[0] + math.cos(heading) * em * 2, edge[1] + math.sin(heading) * em * 2)
        shapes.tail(draw, base, tip, em * rng.uniform(0.2, 0.5), outline, line)
    if kind == "ending" or rng.random() < extras.get("marks", 0.1):
        # Right after the text: in the reading direction, or across it, at a gap of its own.
        end = (origin[0] + setting.end[0], origin[1] + setting.end[1])
        direction = math.atan2(setting.direction[1], setting.direction[0])
        mark_heading = direction if rng.random() < 0.5 else direction + rng.choice([-1, 1]) * rng.uniform(0.5, 1.6)
        gap = em * rng.uniform(0.5, 1.1)
        at = (end[0] + math.cos(mark_heading) * gap, end[1] + math.sin(mark_heading) * gap)
        for _ in range(rng.randint(1, 2)):
            _mark(canvas, at, mark_heading, em, rng, outline if kind != "inverted" else BLACK)
            at = (at[0] + rng.uniform(-em, em), at[1] + rng.uniform(-em, em))
    image = canvas
    if kind == "rotated" or rng.random() < extras.get("rotated", 0.1):
        degrees = rng.choice([-1, 1]) * rng.uniform(1, 6)
        image = damage.rotate_whole(image, degrees, rng.choice(damage.FILLS), rng)
    harms = list(damage.DAMAGES)
    chosen = (
        rng.sample(harms, rng.randint(2, 3))
        if kind == "damaged"
        else [h for h in harms if rng.random() < extras.get("damaged", 0.12)]
    )
    for harm in sorted(chosen, key=harms.index):
        image = damage.DAMAGES[harm](image, rng)
    long_side = rng.randint(200, 440)
    scale = long_side / max(image.size)
    image = image.resize((max(16, round(image.width * scale)), max(16, round(image.height * scale))), Image.LANCZOS)
    return image if kind == "webtoon" else image.convert("L")
