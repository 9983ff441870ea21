"""Colour for crops drawn in grey: a gradient map from grey levels to RGB, and the palettes that use it.

The scene renderer draws in grey levels. A coloured crop is drawn with each of its colours at
that colour's grey level (`grey_of`) and then mapped to RGB through anchors (grey level, colour)
(`at_own_levels`): a pixel at an anchor's level takes its colour exactly, one between two anchors the straight
mix of their colours. Flat regions (page, balloon, text) therefore get their colours, edges and
anti-aliasing blend between neighbouring ones, and noise, tone and JPEG follow the colours
around them. The harness core feeds the R, G and B planes as they are (crate/src/preprocess.rs),
so a coloured page reaches the model as three different channels, as it does here.

Two colours of one grey level cannot both be anchors: the scene keeps text and its fill
LEAST_CONTRAST levels apart in grey anyway (families.py), as a reader needs.
"""

from __future__ import annotations

import colorsys
import random

import numpy as np
from PIL import Image

Colour = tuple[int, int, int]


def grey_of(rgb: Colour) -> int:
    """Pillow's RGB -> L: (R·19595 + G·38470 + B·7471 + 2^15) >> 16, i.e. 0.299 R + 0.587 G + 0.114 B."""
    red, green, blue = rgb
    return (red * 19595 + green * 38470 + blue * 7471 + 0x8000) >> 16


def hsv_colour(rng: random.Random, saturation: tuple[float, float], value: tuple[float, float]) -> Colour:
    """A colour of any hue, its saturation and value drawn from the ranges."""
    red, green, blue = colorsys.hsv_to_rgb(rng.random(), rng.uniform(*saturation), rng.uniform(*value))
    return round(red * 255), round(green * 255), round(blue * 255)


Anchor = tuple[int, Colour]  # a grey level and the colour it becomes


def at_own_levels(*colours: Colour) -> tuple[Anchor, ...]:
    """Each colour anchored at its own grey level, so the map keeps every anchor's grey."""
    return tuple((grey_of(colour), colour) for colour in colours)


def gradient_table(anchors: tuple[Anchor, ...]) -> np.ndarray:
    """The [256, 3] uint8 map through `anchors`, straight lines between them; black at 0 and
    white at 255 unless an anchor sits there. Of two anchors at one level the first wins."""
    levels: dict[int, Colour] = {0: (0, 0, 0), 255: (255, 255, 255)}
    placed: set[int] = set()
    for level, colour in anchors:
        if not 0 <= level <= 255:
            raise ValueError(f"anchor level {level}: allowed 0-255")
        if level not in placed:
            levels[level] = colour
            placed.add(level)
    at = sorted(levels)
    colours = np.array([levels[level] for level in at], np.float64)
    grey = np.arange(256)
    table = np.stack([np.interp(grey, at, colours[:, channel]) for channel in range(3)], axis=1)
    return np.round(table).astype(np.uint8)


def gradient_map(image: Image.Image, anchors: tuple[Anchor, ...]) -> Image.Image:
    """A grey ("L") image as RGB through `gradient_table(anchors)`."""
    if image.mode != "L":
        raise ValueError(f"a gradient map takes a grey (L) image, not {image.mode}")
    # Pillow's point() per plane: a tenth of the time numpy's table lookup takes.
    table = gradient_table(anchors)
    return Image.merge("RGB", [image.point(table[:, channel].tolist()) for channel in range(3)])


# Paper that is not white and scans that are not neutral: cream, yellowed, sepia, grey-blue and
# pink stock, with ink from black to a deep brown or blue.
PAPER_SATURATION = (0.03, 0.3)
PAPER_VALUE = (0.8, 1.0)
INK_SATURATION = (0.0, 0.7)
INK_VALUE = (0.0, 0.3)


def paper_tint(rng: random.Random) -> tuple[Anchor, Anchor]:
    """Anchors that turn a grey crop into one on tinted paper: its black to a dark ink, its
    white to the paper's colour (a duotone, as a sepia or yellowed scan is)."""
    return (0, hsv_colour(rng, INK_SATURATION, INK_VALUE)), (255, hsv_colour(rng, PAPER_SATURATION, PAPER_VALUE))
