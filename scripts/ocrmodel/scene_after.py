"""What follows the text in reading order without being text: the marks a model reads on into.

Read from real crops, the model appended `！！`, `―`, `ケ` after the text: the balloon's tail,
a thought balloon's trailing bubbles, a neighbouring balloon cut by the crop, a panel border,
screentone, speed lines or art beside the last column. The scene renderer (`scene.py`) widens
the crop on the side where the text ends (left of the last column of vertical text, below or
right of the last line of horizontal text) and draws one or two of these there, never over the
text or inside its container, so the right reading stops where the text stops.
"""

from __future__ import annotations

import math
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

AFTER_KINDS = ("tail", "bubbles", "edge", "border", "tone", "speedlines", "art")
# The `marks` family's (families.py) marks, drawn close after the text on any side: the
# characters and symbols a letterer puts beside a balloon (which a reader must not read as part
# of it), sweat drops, and the kinds above that a reader read on into.
MARK_KINDS = ("glyphs", "glyphs", "glyphs", "sweat", "speedlines", "tail", "bubbles", "edge", "art")
MARK_GLYPHS = (
    "！",
    "！！",
    "！？",
    "？",
    "ー",
    "ーー",
    "♪",
    "♡",
    "…",
    "ッ",
    "っ",
    "〜",
    "ハ",
    "フ",
    "ゴ",
    "ド",
    "ガ",
    "キ",
)
SIDES = ("left", "below", "right", "above")


def extend_for_after(
    canvas_box,
    container_box,
    text_w: int,
    text_h: int,
    em: int,
    vertical: bool,
    rng: random.Random,
    any_side: bool = False,
):
    """The crop widened on the side where the text ends, and the strip (x0, y0, x1, y1) in the
    text's coordinates where the marks go: beyond the container when there is one. With
    `any_side`, any of SIDES, closer to the text (the `marks` family)."""
    x0, y0, x1, y1 = canvas_box
    near = container_box if container_box is not None else (0, 0, text_w, text_h)
    gap = rng.uniform(0.15, 0.6) * em
    depth = rng.uniform(0.8, 2.4) * em
    if any_side:
        gap = rng.uniform(0.0, 0.35) * em
        side = rng.choices(SIDES, weights=(3, 3, 2, 1) if vertical else (1, 3, 3, 1))[0]
    else:
        side = (
            ("left" if rng.random() < 0.75 else "below") if vertical else ("below" if rng.random() < 0.7 else "right")
        )
    if side == "above":
        inner = min(near[1], 0) - gap
        strip = (x0, inner - depth, x1, inner)
        y0 = min(y0, int(math.floor(inner - depth - rng.uniform(0.0, 0.3) * em)))
    elif side == "left":
        inner = min(near[0], 0) - gap
        strip = (inner - depth, y0, inner, y1)
        x0 = min(x0, int(math.floor(inner - depth - rng.uniform(0.0, 0.3) * em)))
    elif side == "below":
        inner = max(near[3], text_h) + gap
        strip = (x0, inner, x1, inner + depth)
        y1 = max(y1, int(math.ceil(inner + depth + rng.uniform(0.0, 0.3) * em)))
    else:
        inner = max(near[2], text_w) + gap
        strip = (inner, y0, inner + depth, y1)
        x1 = max(x1, int(math.ceil(inner + depth + rng.uniform(0.0, 0.3) * em)))
    return (x0, y0, x1, y1), strip, side


def draw_after(image: Image.Image, scene, strip, side: str, em: int, pattern, rng: random.Random, glyph=None) -> None:
    """Draws each of `scene.after` into `strip` (canvas coordinates) on `side` of the text;
    `pattern(kind, width, height, paper, rng)` gives the scene's tone, hatching or speed lines,
    `glyph(character, size)` a character's coverage in the text's faces (or None)."""
    box = tuple(int(v) for v in strip)
    if box[2] - box[0] < 3 or box[3] - box[1] < 3:
        return
    dark = not scene.inverted or scene.container == "none" and rng.random() < 0.5
    ink = rng.randint(0, 60) if dark else rng.randint(200, 255)
    paper = scene.paper if not scene.inverted else rng.randint(0, 50)
    for kind in scene.after:
        DRAWERS[kind](_Canvas(image, pattern, glyph), box, side, em, ink, paper, rng)


class _Canvas:
    """The image, the scene's pattern maker and glyph maker, for the drawers."""

    def __init__(self, image: Image.Image, pattern, glyph=None):
        self.image, self.pattern, self.glyph = image, pattern, glyph


def _outward(side: str) -> float:
    """The direction away from the text, radians (y grows downwards)."""
    return {"left": math.pi, "below": math.pi / 2, "right": 0.0, "above": -math.pi / 2}[side]


def _inner_point(box, side: str, rng: random.Random) -> tuple[float, float]:
    """A point on the strip's edge nearest the text."""
    x0, y0, x1, y1 = box
    if side == "left":
        return x1, rng.uniform(y0 + 0.2 * (y1 - y0), y1)
    if side == "right":
        return x0, rng.uniform(y0, y1)
    if side == "above":
        return rng.uniform(x0, x1), y1
    return rng.uniform(x0, x1), y0


def _tail(canvas, box, side, em, ink, paper, rng):
    """A balloon's tail: a wedge from the strip's inner edge outwards, outlined or solid."""
    draw = ImageDraw.Draw(canvas.image)
    bx, by = _inner_point(box, side, rng)
    angle = _outward(side) + rng.uniform(-1.0, 1.0)
    length = (
        rng.uniform(0.5, 1.0) * max(box[2] - box[0], box[3] - box[1])
        if side != "below"
        else rng.uniform(0.5, 1.0) * (box[3] - box[1])
    )
    half = rng.uniform(0.1, 0.3) * em
    normal = angle + math.pi / 2
    base = [
        (bx + half * math.cos(normal), by + half * math.sin(normal)),
        (bx - half * math.cos(normal), by - half * math.sin(normal)),
    ]
    tip = (bx + length * math.cos(angle), by + length * math.sin(angle))
    solid = rng.random() < 0.35
    draw.polygon([base[0], tip, base[1]], fill=ink if solid else paper, outline=ink, width=rng.randint(1, 4))


def _bubbles(canvas, box, side, em, ink, paper, rng):
    """A thought balloon's trail: two to four circles shrinking away from the text."""
    draw = ImageDraw.Draw(canvas.image)
    x, y = _inner_point(box, side, rng)
    angle = _outward(side) + rng.uniform(-0.8, 0.8)
    radius = rng.uniform(0.15, 0.45) * em
    width = rng.randint(1, 3)
    for _ in range(rng.randint(2, 4)):
        x += (radius * 1.6) * math.cos(angle)
        y += (radius * 1.6) * math.sin(angle)
        fill = ink if rng.random() < 0.2 else paper
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=fill, outline=ink, width=width)
        radius *= rng.uniform(0.55, 0.8)


def _edge(canvas, box, side, em, ink, paper, rng):
    """A neighbouring balloon cut by the crop: an arc of a large ellipse, filled or not."""
    draw = ImageDraw.Draw(canvas.image)
    x0, y0, x1, y1 = box
    reach = rng.uniform(2.0, 6.0) * em
    inset = rng.uniform(0.2, 0.8)
    if side == "left":
        cx, cy = x0 - reach + inset * (x1 - x0), rng.uniform(y0, y1)
    elif side == "right":
        cx, cy = x1 + reach - inset * (x1 - x0), rng.uniform(y0, y1)
    elif side == "above":
        cx, cy = rng.uniform(x0, x1), y0 - reach + inset * (y1 - y0)
    else:
        cx, cy = rng.uniform(x0, x1), y1 + reach - inset * (y1 - y0)
    rx, ry = reach * rng.uniform(0.8, 1.3), reach * rng.uniform(0.8, 1.3)
    draw.ellipse(
        (cx - rx, cy - ry, cx + rx, cy + ry),
        fill=paper if rng.random() < 0.6 else None,
        outline=ink,
        width=rng.randint(1, 6),
    )


def _border(canvas, box, side, em, ink, paper, rng):
    """A panel border parallel to the text's lines, with the next panel's tone or fill beyond it."""
    draw = ImageDraw.Draw(canvas.image)
    x0, y0, x1, y1 = box
    width = rng.randint(1, 8)
    share = rng.uniform(0.15, 0.85)
    if side in ("left", "right"):
        at = x0 + share * (x1 - x0)
        draw.line([(at, y0), (at, y1)], fill=ink, width=width)
        beyond = (x0, y0, int(at) - width, y1) if side == "left" else (int(at) + width, y0, x1, y1)
    else:
        at = y0 + share * (y1 - y0)
        draw.line([(x0, at), (x1, at)], fill=ink, width=width)
        beyond = (x0, int(at) + width, x1, y1) if side == "below" else (x0, y0, x1, int(at) - width)
    roll = rng.random()
    if beyond[2] <= beyond[0] or beyond[3] <= beyond[1]:
        return  # the border sits at the strip's far edge: no next panel shows
    if roll < 0.3:
        draw.rectangle(beyond, fill=rng.randint(0, 80))
    elif roll < 0.6:
        _pattern(canvas, beyond, rng.choice(["screentone", "hatching"]), rng)


def _tone(canvas, box, side, em, ink, paper, rng):
    _pattern(canvas, _part(box, side, rng), "screentone", rng)


def _speedlines(canvas, box, side, em, ink, paper, rng):
    _pattern(canvas, _part(box, side, rng), rng.choice(["speedlines", "hatching"]), rng)


def _art(canvas, box, side, em, ink, paper, rng):
    """Strokes of a drawing: curved lines of several weights and a filled shape or two."""
    draw = ImageDraw.Draw(canvas.image)
    x0, y0, x1, y1 = box
    for _ in range(rng.randint(2, 6)):
        points = [(rng.uniform(x0, x1), rng.uniform(y0, y1))]
        for _ in range(rng.randint(2, 5)):
            px, py = points[-1]
            step = rng.uniform(0.3, 1.2) * em
            turn = rng.uniform(0, 2 * math.pi)
            points.append((min(x1, max(x0, px + step * math.cos(turn))), min(y1, max(y0, py + step * math.sin(turn)))))
        draw.line(points, fill=ink, width=rng.randint(1, 5), joint="curve")
    for _ in range(rng.randint(0, 2)):
        cx, cy, r = rng.uniform(x0, x1), rng.uniform(y0, y1), rng.uniform(0.1, 0.5) * em
        draw.ellipse((cx - r, cy - r * rng.uniform(0.4, 1.0), cx + r, cy + r), fill=ink)


def _glyphs(canvas, box, side, em, ink, paper, rng):
    """Letterer's marks beside the text: ！, ー, ♪ or a kana sound, upright or turned a little,
    from half to twice the text's size, sometimes with a white outline."""
    if canvas.glyph is None:
        return
    x0, y0, x1, y1 = box
    pixels = np.asarray(canvas.image, np.float32).copy()
    for _ in range(rng.randint(1, 3)):
        mark = rng.choice(MARK_GLYPHS)
        # A run along the strip's long side, sized to fit in it: a mark over the text would
        # change the reading.
        column = y1 - y0 >= x1 - x0
        across, along = (x1 - x0, y1 - y0) if column else (y1 - y0, x1 - x0)
        size = int(min(em * rng.uniform(0.5, 1.8), 0.9 * across, 0.9 * along / len(mark)))
        if size < 6:
            continue
        x, y = _inner_point(box, side, rng)
        run_w, run_h = (size, size * len(mark)) if column else (size * len(mark), size)
        x = min(max(x, x0 + size / 2), x1 - run_w + size / 2)
        y = min(max(y, y0 + size / 2), y1 - run_h + size / 2)
        outlined = rng.random() < 0.3
        for character in mark:
            drawn = canvas.glyph(character, size)
            if drawn is None:
                continue
            coverage, dx, dy = drawn
            if rng.random() < 0.4:  # turned a little, as hand-placed marks are
                turned = Image.fromarray(coverage, "L").rotate(rng.uniform(-25, 25), Image.BILINEAR, expand=True)
                dx -= (turned.size[0] - coverage.shape[1]) // 2
                dy -= (turned.size[1] - coverage.shape[0]) // 2
                coverage = np.asarray(turned)
            if outlined:
                _lay(
                    pixels,
                    np.asarray(Image.fromarray(coverage, "L").filter(ImageFilter.MaxFilter(5))),
                    x + dx,
                    y + dy,
                    255,
                )
            _lay(pixels, coverage, x + dx, y + dy, ink)
            x, y = (x, y + size) if column else (x + size, y)
    canvas.image.paste(Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L"))


def _lay(pixels: np.ndarray, coverage: np.ndarray, left: float, top: float, level: int) -> None:
    """`coverage` laid over `pixels` in grey `level` with its top-left at (left, top), clipped."""
    left, top = int(round(left)), int(round(top))
    height, width = pixels.shape
    xs, ys = max(0, left), max(0, top)
    xe, ye = min(width, left + coverage.shape[1]), min(height, top + coverage.shape[0])
    if xe <= xs or ye <= ys:
        return
    alpha = coverage[ys - top : ye - top, xs - left : xe - left].astype(np.float32) / 255.0
    region = pixels[ys:ye, xs:xe]
    region[:] = region * (1.0 - alpha) + level * alpha


def _sweat(canvas, box, side, em, ink, paper, rng):
    """Sweat drops: one to three teardrops, outlined or solid, pointing up or away from the text."""
    draw = ImageDraw.Draw(canvas.image)
    for _ in range(rng.randint(1, 3)):
        x, y = _inner_point(box, side, rng)
        angle = _outward(side) + rng.uniform(-0.6, 0.6)
        reach = rng.uniform(0.1, 0.6) * em
        x, y = x + reach * math.cos(angle), y + reach * math.sin(angle)
        radius = rng.uniform(0.12, 0.35) * em
        tip = -math.pi / 2 + rng.uniform(-0.7, 0.7)
        points = [
            (x + radius * math.cos(a / 12 * 2 * math.pi), y + radius * math.sin(a / 12 * 2 * math.pi))
            for a in range(12)
        ]
        points = [p for p in points if math.cos(math.atan2(p[1] - y, p[0] - x) - tip) < 0.6]
        points.insert(0, (x + 2.2 * radius * math.cos(tip), y + 2.2 * radius * math.sin(tip)))
        solid = rng.random() < 0.3
        draw.polygon(points, fill=ink if solid else paper, outline=ink, width=rng.randint(1, 3))


def _part(box, side: str, rng: random.Random):
    """The part of the strip farther from the text, or all of it."""
    x0, y0, x1, y1 = box
    share = rng.uniform(0.0, 0.6)
    if side == "left":
        return (x0, y0, int(x1 - share * (x1 - x0)), y1)
    if side == "right":
        return (int(x0 + share * (x1 - x0)), y0, x1, y1)
    if side == "above":
        return (x0, y0, x1, int(y1 - share * (y1 - y0)))
    return (x0, int(y0 + share * (y1 - y0)), x1, y1)


def _pattern(canvas: _Canvas, box, kind: str, rng: random.Random) -> None:
    """Screentone dots, hatching or speed lines pasted into `box` (the scene's own patterns)."""
    image = canvas.image
    x0, y0, x1, y1 = (int(v) for v in box)
    x0, y0 = max(0, x0), max(0, y0)
    x1, y1 = min(image.size[0], x1), min(image.size[1], y1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return
    patch = canvas.pattern(kind, x1 - x0, y1 - y0, int(np.asarray(image)[y0, x0]), rng)
    image.paste(Image.fromarray(patch, "L"), (x0, y0))


DRAWERS = {
    "tail": _tail,
    "bubbles": _bubbles,
    "edge": _edge,
    "border": _border,
    "tone": _tone,
    "speedlines": _speedlines,
    "art": _art,
    "glyphs": _glyphs,
    "sweat": _sweat,
}
assert set(DRAWERS) == set(AFTER_KINDS) | set(MARK_KINDS)
