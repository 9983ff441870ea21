"""Balloons, tails, neighbours and marks, drawn with ImageDraw onto an RGB canvas.

Every shape takes its own `random.Random`, so a case's drawing depends on its seed alone.
"""

from __future__ import annotations

import math
import random

from PIL import ImageDraw

Box = tuple[float, float, float, float]
Colour = tuple[int, int, int]
BALLOONS = ("ellipse", "rounded", "shout", "cloud", "box")


def _outline_points(box: Box, rng: random.Random, wobble: float, count: int) -> list[tuple[float, float]]:
    """An ellipse through `box` whose radius wanders smoothly by up to `wobble`."""
    left, top, right, bottom = box
    cx, cy, rx, ry = (left + right) / 2, (top + bottom) / 2, (right - left) / 2, (bottom - top) / 2
    phases = [rng.uniform(0, math.tau) for _ in range(3)]
    points = []
    for step in range(count):
        angle = math.tau * step / count
        scale = 1 + wobble * sum(math.sin((k + 2) * angle + p) / (k + 1) for k, p in enumerate(phases)) / 1.8
        points.append((cx + rx * scale * math.cos(angle), cy + ry * scale * math.sin(angle)))
    return points


def balloon(draw: ImageDraw.ImageDraw, kind: str, box: Box, rng: random.Random, fill: Colour, ink: Colour, width: int):
    left, top, right, bottom = box
    if kind == "ellipse":
        draw.polygon(_outline_points(box, rng, rng.uniform(0.0, 0.08), 90), fill=fill, outline=ink, width=width)
    elif kind == "rounded":
        radius = min(right - left, bottom - top) * rng.uniform(0.15, 0.45)
        draw.rounded_rectangle(box, radius=radius, fill=fill, outline=ink, width=width)
    elif kind == "shout":
        spikes = rng.randint(14, 26)
        points = []
        for step, (x, y) in enumerate(_outline_points(box, rng, 0.04, spikes * 2)):
            cx, cy = (left + right) / 2, (top + bottom) / 2
            reach = rng.uniform(1.18, 1.45) if step % 2 else rng.uniform(0.95, 1.02)
            points.append((cx + (x - cx) * reach, cy + (y - cy) * reach))
        draw.polygon(points, fill=fill, outline=ink, width=width)
    elif kind == "cloud":
        cloud(draw, box, rng, fill, ink, width)
    elif kind == "box":
        draw.rectangle(box, fill=fill, outline=ink, width=width)
    else:
        raise ValueError(f"unknown balloon {kind!r}; known: {BALLOONS}")


def cloud(draw: ImageDraw.ImageDraw, box: Box, rng: random.Random, fill: Colour, ink: Colour, width: int):
    """Puffs along an ellipse: each drawn outlined, then every puff's inside and the middle
    filled again, so only the outer scallops keep their outline."""
    left, top, right, bottom = box
    cx, cy, rx, ry = (left + right) / 2, (top + bottom) / 2, (right - left) / 2, (bottom - top) / 2
    count = rng.randint(9, 15)
    puffs = []
    for step in range(count):
        angle = math.tau * (step + rng.uniform(-0.2, 0.2)) / count
        radius = min(rx, ry) * rng.uniform(0.28, 0.42)
        puffs.append((cx + rx * math.cos(angle), cy + ry * math.sin(angle), radius))
    for x, y, r in puffs:
        draw.ellipse((x - r - width, y - r - width, x + r + width, y + r + width), fill=ink)
    for x, y, r in puffs:
        draw.ellipse((x - r, y - r, x + r, y + r), fill=fill)
    draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=fill)


def thought_trail(
    draw: ImageDraw.ImageDraw, start: tuple[float, float], heading: float, em: float, rng, fill, ink, width
):
    """Two to four bubbles shrinking away from the cloud."""
    x, y = start
    radius = em * rng.uniform(0.35, 0.55)
    for _ in range(rng.randint(2, 4)):
        x += math.cos(heading) * radius * 2.4
        y += math.sin(heading) * radius * 2.4
        draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=fill, outline=ink, width=max(1, width - 1))
        radius *= rng.uniform(0.55, 0.75)


def tail(draw: ImageDraw.ImageDraw, base: tuple[float, float], tip: tuple[float, float], spread: float, ink, width):
    """A tail's two sides from either side of `base` to `tip`; drawn after the text, so when the
    tip lies inside the balloon its lines cross the text as a pointer drawn over it does."""
    bx, by = base
    tx, ty = tip
    length = math.hypot(tx - bx, ty - by) or 1.0
    nx, ny = -(ty - by) / length * spread, (tx - bx) / length * spread
    draw.line([(bx + nx, by + ny), (tx, ty), (bx - nx, by - ny)], fill=ink, width=width, joint="curve")


def neighbour(draw: ImageDraw.ImageDraw, size: tuple[int, int], rng: random.Random, fill, ink, width):
    """A balloon or a panel border of the next panel, cut by the crop's edge."""
    w, h = size
    side = rng.choice("lrtb")
    if rng.random() < 0.5:  # a panel border: a straight or slanted line near one edge
        inset = rng.uniform(0.02, 0.1)
        slant = rng.uniform(-0.08, 0.08)
        if side in "lr":
            x = w * (inset if side == "l" else 1 - inset)
            draw.line([(x, 0), (x + slant * w, h)], fill=ink, width=width + 1)
        else:
            y = h * (inset if side == "t" else 1 - inset)
            draw.line([(0, y), (w, y + slant * h)], fill=ink, width=width + 1)
        return
    rx, ry = w * rng.uniform(0.2, 0.4), h * rng.uniform(0.25, 0.5)
    cx = {"l": -rx * 0.7, "r": w + rx * 0.7}.get(side, rng.uniform(0, w))
    cy = {"t": -ry * 0.7, "b": h + ry * 0.7}.get(side, rng.uniform(0, h))
    draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=fill, outline=ink, width=width)


def sweat_drop(draw: ImageDraw.ImageDraw, at: tuple[float, float], em: float, ink, width):
    x, y = at
    r = em * 0.22
    draw.ellipse((x - r, y - r, x + r, y + r), outline=ink, width=width)
    draw.line([(x - r * 0.8, y - r * 0.5), (x, y - r * 2.4), (x + r * 0.8, y - r * 0.5)], fill=ink, width=width)


def speed_lines(draw: ImageDraw.ImageDraw, at: tuple[float, float], heading: float, em: float, rng, ink):
    x, y = at
    for _ in range(rng.randint(3, 6)):
        offset = rng.uniform(-em, em)
        length = em * rng.uniform(0.8, 2.2)
        sx = x - math.sin(heading) * offset
        sy = y + math.cos(heading) * offset
        draw.line([(sx, sy), (sx + math.cos(heading) * length, sy + math.sin(heading) * length)], fill=ink, width=1)
