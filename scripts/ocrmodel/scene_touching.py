"""What touches or crosses the text without being text: the `crossing` family (families.py).

Crops from other pages showed a balloon's tail reaching into the text, a neighbouring
balloon's outline running against a column, and panel borders or speed lines drawn across the
lettering; a reader that has only seen these beside the text reads them as strokes (0.20 nCER on
the unseen sets for tails). The scene renderer (`scene.py`) calls `draw_touching` twice: before
the text is painted (tails, edges and tone, which the lettering covers) and after it (thin
lines over the glyphs). The reading stays the text's.
"""

from __future__ import annotations

import math
import random

import numpy as np
from PIL import Image, ImageDraw

TOUCHING_KINDS = ("tail", "edge", "tone", "line")
OVER_TEXT = ("line",)  # drawn over the glyphs; the rest under them


def draw_touching(
    image: Image.Image, scene, text_box, em: int, vertical: bool, rng: random.Random, under: bool
) -> None:
    """Draws `scene.touching`'s kinds of this pass (under the text or over it) against
    `text_box` (x0, y0, x1, y1, canvas pixels)."""
    ink = rng.randint(0, 70) if not scene.inverted else rng.randint(190, 255)
    paper = scene.box_fill if scene.box_fill >= 0 else scene.paper
    for kind in scene.touching:
        if (kind in OVER_TEXT) != under:
            DRAWERS[kind](image, text_box, em, vertical, ink, paper, rng)


def _side_point(box, em: int, rng: random.Random, outside: float) -> tuple[float, float, float]:
    """A point `outside` ems beyond a random side of `box`, and the direction back into it."""
    x0, y0, x1, y1 = box
    side = rng.randrange(4)
    if side == 0:
        return x0 - outside * em, rng.uniform(y0, y1), 0.0
    if side == 1:
        return x1 + outside * em, rng.uniform(y0, y1), math.pi
    if side == 2:
        return rng.uniform(x0, x1), y0 - outside * em, math.pi / 2
    return rng.uniform(x0, x1), y1 + outside * em, -math.pi / 2


def _tail(image, box, em, vertical, ink, paper, rng):
    """A tail whose tip reaches into the text or through it, outlined, its fill the balloon's."""
    bx, by, inward = _side_point(box, em, rng, rng.uniform(0.3, 1.5))
    inward += rng.uniform(-0.6, 0.6)
    length = rng.uniform(0.8, 3.0) * em
    half = rng.uniform(0.15, 0.5) * em
    normal = inward + math.pi / 2
    tip = (bx + length * math.cos(inward), by + length * math.sin(inward))
    base = [
        (bx + half * math.cos(normal), by + half * math.sin(normal)),
        (bx - half * math.cos(normal), by - half * math.sin(normal)),
    ]
    ImageDraw.Draw(image).polygon([base[0], tip, base[1]], fill=paper, outline=ink, width=rng.randint(1, 3))


def _edge(image, box, em, vertical, ink, paper, rng):
    """A neighbouring balloon's outline running against a side of the text, or just into it."""
    x, y, inward = _side_point(box, em, rng, rng.uniform(-0.3, 0.4))
    radius = rng.uniform(2.0, 6.0) * em
    cx, cy = x - radius * math.cos(inward), y - radius * math.sin(inward)
    ImageDraw.Draw(image).ellipse(
        (cx - radius, cy - radius, cx + radius, cy + radius), outline=ink, width=rng.randint(1, 4)
    )


def _tone(image, box, em, vertical, ink, paper, rng):
    """A patch of dot tone over a corner of the text (a neighbouring panel's shading, under the lettering)."""
    x0, y0, x1, y1 = box
    width, height = image.size
    px, py = rng.choice([x0, x1]), rng.choice([y0, y1])
    reach = rng.uniform(0.5, 2.0) * em
    left, top = int(max(0, px - reach)), int(max(0, py - reach))
    right, bottom = int(min(width, px + reach)), int(min(height, py + reach))
    if right - left < 2 or bottom - top < 2:
        return
    period = rng.uniform(3.0, 7.0)
    yy, xx = np.mgrid[top:bottom, left:right].astype(np.float32)
    dots = (np.cos(xx * 2 * math.pi / period) + np.cos(yy * 2 * math.pi / period)) > rng.uniform(0.0, 1.2)
    region = np.asarray(image.crop((left, top, right, bottom)), np.float32)
    region = np.where(dots, region - rng.uniform(60, 160), region)
    image.paste(Image.fromarray(np.clip(region, 0, 255).astype(np.uint8), "L"), (left, top))


def _line(image, box, em, vertical, ink, paper, rng):
    """One to three thin strokes across the text: a panel border, speed lines, a tail's edge."""
    x0, y0, x1, y1 = box
    draw = ImageDraw.Draw(image)
    for _ in range(rng.randint(1, 3)):
        angle = rng.uniform(0, math.pi)
        cx, cy = rng.uniform(x0, x1), rng.uniform(y0, y1)
        reach = rng.uniform(0.5, 3.0) * em
        end = (cx + reach * math.cos(angle), cy + reach * math.sin(angle))
        start = (cx - reach * math.cos(angle) * rng.uniform(0, 1), cy - reach * math.sin(angle) * rng.uniform(0, 1))
        draw.line([start, end], fill=ink, width=rng.randint(1, 2))


DRAWERS = {"tail": _tail, "edge": _edge, "tone": _tone, "line": _line}
assert set(DRAWERS) == set(TOUCHING_KINDS)
