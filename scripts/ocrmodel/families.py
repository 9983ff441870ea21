"""The training-only families of the crops other renderers drew that the model misread.

Read on three sets from a renderer training never sees (issue 55), the default checkpoint
failed by kind of crop: a whole crop turned by a few degrees with the background in its
corners (0.32 nCER), a tail touching or crossing the text (0.20), light colour pages and
coloured text (0.18), white text on a black narration box (0.23), thought balloons (0.13),
horizontal dialog (0.10), and characters read on from marks beside the balloon. Each family
below draws one of these over wide ranges, on the layouts and scenes of the base kinds of
`manga_styles.py` (horizontal lines a quarter of them), so no single setting is learnt:

- turned: the whole crop turned by 0-8 degrees either way, its uncovered corners white, a grey,
  paper grain, tone, hatching, speed lines, art or a dark panel (`scene.CORNER_FILLS`);
- crossing: a tail reaching into or through the text, a neighbouring balloon's outline against
  it, tone over a corner, thin lines across it (`scene_touching.py`);
- colour: tinted pages, balloons and text as the grey levels `grey_of` gives them (see below);
- boxed: light text in a black or dark grey narration box, on any page;
- thought: thought and cloud balloons, with a trail of bubbles;
- marks: ！, ー, ♪, kana sounds, sweat drops, speed lines, tails or art right after the text on
  any side (`scene_after.MARK_KINDS`), so the end of the text is learnt beside them.

A quarter of every family's crops are also turned a little (TURN_SHARE). The families are never
drawn for an evaluation set: the held-out renderer measures them.

Colour: training pixels are grey (one channel, repeated into the model's three), so a coloured
page is drawn as the grey levels of its colours under `grey_of`, Pillow's `convert("L")`
(ITU-R 601-2 luma). The harness's core (`crate/src/preprocess.rs`) does not convert to grey: it
feeds the R, G and B planes as they are, so these crops teach the grey levels and contrasts of
coloured pages, not their channel differences.
"""

from __future__ import annotations

import colorsys
import random
from dataclasses import replace

from .render import Style
from .scene import CORNER_FILLS, Scene
from .scene_after import MARK_KINDS
from .scene_touching import TOUCHING_KINDS

FAMILIES = ("turned", "crossing", "colour", "boxed", "thought", "marks")
# The base kinds whose text layout and scene a family starts from (drawn uniformly).
BASES = ("balloon", "balloon", "horizontal", "horizontal", "narration", "art", "inverted", "lowres")
TURN = 8.0  # degrees either way, the whole crop
TURN_SHARE = 0.25  # of the other families' crops, also turned
LEAST_CONTRAST = 40  # grey levels between a coloured text and its fill: lower is unreadable in grey


def grey_of(rgb: tuple[int, int, int]) -> int:
    """Pillow's RGB -> L: (R·19595 + G·38470 + B·7471 + 2^15) >> 16, i.e. 0.299 R + 0.587 G + 0.114 B."""
    red, green, blue = rgb
    return (red * 19595 + green * 38470 + blue * 7471 + 0x8000) >> 16


def base_kind(family: str, rng: random.Random) -> str:
    if family == "boxed":
        return rng.choice(("narration", "narration", "horizontal"))
    if family == "thought":
        return rng.choice(("balloon", "horizontal"))
    return rng.choice(BASES)


def widen(family: str, scene: Scene, style: Style, rng: random.Random) -> Scene:
    """The base kind's scene changed into one of `family`'s."""
    if family == "turned":
        return _turned(scene, rng)
    if family == "crossing":
        touching = tuple(rng.sample(TOUCHING_KINDS, rng.choice([1, 1, 2])))
        scene = replace(scene, touching=touching, tail=scene.tail or scene.container in ("ellipse", "roundbox"))
    elif family == "colour":
        scene = _coloured(scene, rng)
    elif family == "boxed":
        scene = replace(
            scene,
            container=rng.choice(("narration", "narration", "roundbox")),
            inverted=True,
            box_fill=rng.randint(0, 90),
            ink=rng.randint(200, 255),
            line=rng.choice((-1, 0, 255)),
            background=rng.choice(("plain", "plain", "screentone", "photo", "gradient", "hatching")),
            page=rng.randint(200, 255),
            halo=0,
        )
    elif family == "thought":
        scene = replace(
            scene,
            container=rng.choice(("thought", "thought", "cloud")),
            outline=rng.choice((1.0, 1.0, 2.0, 2.0, 3.0, 4.0)),
            inverted=False,
            ink=rng.randint(0, 60),
            tail=False,
            after=("bubbles",) if rng.random() < 0.5 else (),
        )
    elif family == "marks":
        scene = replace(scene, after=tuple(rng.sample(MARK_KINDS, rng.choice([1, 1, 2]))), after_any_side=True)
    else:
        raise ValueError(f"unknown family {family!r}; the families: {', '.join(FAMILIES)}")
    return _turned(scene, rng) if rng.random() < TURN_SHARE else scene


def _turned(scene: Scene, rng: random.Random) -> Scene:
    return replace(
        scene,
        rotation=rng.uniform(-TURN, TURN),
        keep_corners=True,
        corner_fill=rng.choice(CORNER_FILLS),
        perspective=0.0,
    )


def _tint(rng: random.Random, saturation: tuple[float, float], value: tuple[float, float]) -> tuple[int, int, int]:
    red, green, blue = colorsys.hsv_to_rgb(rng.random(), rng.uniform(*saturation), rng.uniform(*value))
    return round(red * 255), round(green * 255), round(blue * 255)


def _coloured(scene: Scene, rng: random.Random) -> Scene:
    """Webtoon and colour-page crops: light tinted pages and balloons with dark or coloured text,
    or (from an inverted base) light text on a deep colour; contrasts down to LEAST_CONTRAST."""
    if scene.inverted:
        page = grey_of(_tint(rng, (0.3, 1.0), (0.15, 0.55)))
        fill = grey_of(_tint(rng, (0.3, 1.0), (0.1, 0.5))) if scene.container != "none" else page
        ink = grey_of(_tint(rng, (0.0, 0.3), (0.85, 1.0)))
        ink = max(ink, min(255, max(page, fill) + LEAST_CONTRAST))
    else:
        roll = rng.random()
        page = (
            grey_of(_tint(rng, (0.05, 0.5), (0.85, 1.0)))
            if roll < 0.6
            else grey_of(_tint(rng, (0.2, 0.7), (0.5, 0.85)))
            if roll < 0.85
            else rng.randint(245, 255)
        )
        fill = rng.randint(245, 255) if rng.random() < 0.5 else grey_of(_tint(rng, (0.05, 0.4), (0.88, 1.0)))
        if scene.container == "none":
            fill = page
        ink = grey_of(_tint(rng, (0.4, 1.0), (0.2, 0.9))) if rng.random() < 0.65 else rng.randint(0, 50)
        ink = min(ink, max(0, min(page, fill) - LEAST_CONTRAST))
    line = rng.choice((fill, ink, grey_of(_tint(rng, (0.3, 1.0), (0.2, 0.8)))))
    return replace(
        scene,
        # Text straight on the page keeps a flat tint: a gradient or art under it would take the
        # contrast below what a reader can read.
        background="plain" if scene.container == "none" else rng.choice(("plain", "plain", "gradient", "photo")),
        page=page,
        paper=fill,
        box_fill=fill if scene.container != "none" else -1,
        ink=ink,
        line=line,
        halo=0 if rng.random() < 0.7 else scene.halo,
    )
