"""Random styles of manga dialog, per kind: the training mixture and the style evaluation sets
draw from the same samplers (with other seeds and other strings).

Kinds:
- balloon: speech balloons of every shape (ellipse, rounded box, spiky, cloud, thought), tails,
  outlines from 1 to 6 px, cut by the crop edge, on tones, hatching, speed lines or photos;
- narration: bordered boxes;
- inverted: light text on a dark panel or in a black balloon;
- art: no container, the text straight on a busy background, usually with a white halo;
- horizontal: the same scenes with horizontal lines (1-5);
- lowres: text 10-14 px high (drawn small or scanned down);
- long: 49-100 characters in up to five columns or lines.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache

from .fonts import FACES, Face, FontLibrary
from .render import Style, latin_heavy
from .scene import Scene

KINDS = ("balloon", "narration", "inverted", "art", "horizontal", "lowres", "long")
FAMILY_WEIGHTS = {"gothic": 0.34, "mincho": 0.34, "rounded": 0.1, "handwritten": 0.13, "brush": 0.09}
BALLOONS = ("ellipse", "roundbox", "spiky", "cloud", "thought")
BALLOON_WEIGHTS = (0.4, 0.17, 0.17, 0.14, 0.12)
BEHIND_BALLOONS = ("plain", "screentone", "hatching", "speedlines", "photo", "gradient")
BEHIND_WEIGHTS = (0.22, 0.3, 0.1, 0.12, 0.16, 0.1)
# Characters per column or line: manga balloons set short columns.
LINE_LENGTHS = (3, 16)


def pick_face(rng: random.Random) -> Face:
    family = rng.choices(list(FAMILY_WEIGHTS), weights=list(FAMILY_WEIGHTS.values()))[0]
    return rng.choice([face for face in FACES if face.family == family])


@lru_cache(maxsize=64)
def _resolver(library: FontLibrary, face: Face):
    cache: dict[str, tuple[str, int] | None] = {}

    def face_for(character: str) -> tuple[str, int] | None:
        if character not in cache:
            found = library.face_for(face, character)
            cache[character] = library.handle(found) if found is not None else None
        return cache[character]

    return face_for


def text_style(text: str, kind: str, rng: random.Random, library: FontLibrary, long_side: int = 700) -> Style:
    face = pick_face(rng)
    horizontal = kind == "horizontal" or (latin_heavy(text) and rng.random() < 0.9) or rng.random() < 0.12
    # Columns (or lines) for a block whose long side is 0.7-2.5 times its short side: a string
    # of n characters in k columns is about n/k by 1.4k ems. Up to five, eight for long
    # strings: the harness squashes the crop to 224x224, and 100 characters in five columns
    # would leave each character 11 pixels of the long side.
    aspect = rng.uniform(0.7, 2.5)
    most = 8 if len(text) >= 40 else 5
    lines = max(1, min(most, len(text), round(math.sqrt(len(text) / (1.4 * aspect)))))
    size = rng.randint(10, 14) if kind == "lowres" and rng.random() < 0.5 else rng.randint(18, 44)
    # The harness squashes every crop to 224x224; past ~700 px on the long side a larger em
    # only costs rendering time (and the evaluation sets' files grow).
    size = max(10, min(size, int(long_side / (1.15 * max(1, math.ceil(len(text) / lines))))))
    return Style(
        face=library.handle(face),
        size=size,
        vertical=not horizontal,
        lines=lines,
        char_spacing=rng.uniform(-0.05, 0.2),
        line_spacing=rng.uniform(0.1, 0.7),
        margins=(0.0, 0.0, 0.0, 0.0),
        jitter=rng.uniform(0.0, 0.05) if rng.random() < 0.2 else 0.0,
        halfwidth_latin=rng.random() < 0.75,
        face_for=_resolver(library, face),
        punctuation_top_right=rng.random() < 0.8,
        presentation_forms=rng.random() < 0.4,
        small_kana_top_right=rng.random() < 0.5,
        tate_chu_yoko=rng.random() < 0.5,
        ragged=rng.random() < 0.5,
    )


def scene_for(kind: str, style: Style, rng: random.Random) -> Scene:
    roll = rng.random()
    if kind == "narration":
        container = "narration"
    elif kind == "inverted":
        container = "none" if roll < 0.5 else rng.choice(["ellipse", "roundbox", "narration"])
    elif kind == "art":
        container = "none"
    elif kind in ("horizontal", "lowres", "long"):
        container = rng.choices(["balloon", "narration", "none"], weights=[0.6, 0.2, 0.2])[0]
    else:
        container = "balloon"
    if container == "balloon":
        container = rng.choices(BALLOONS, weights=BALLOON_WEIGHTS)[0]
    inverted = kind == "inverted"
    if inverted and container == "none":
        background = rng.choice(["dark", "dark", "photo"])
    elif container == "none":
        background = rng.choice(["screentone", "hatching", "speedlines", "photo", "gradient", "plain"])
    else:
        background = rng.choices(BEHIND_BALLOONS, weights=BEHIND_WEIGHTS)[0]
    cut = tuple(rng.uniform(0.05, 0.3) if rng.random() < 0.12 else 0.0 for _ in range(4))
    if container == "none":
        cut = (0.0, 0.0, 0.0, 0.0)
    downscale = 1.0
    if kind == "lowres" and style.size > 14:
        downscale = rng.uniform(10, 14) / style.size
    elif rng.random() < 0.12:
        downscale = max(12 / style.size, rng.uniform(0.5, 0.95))
    return Scene(
        container=container,
        outline=rng.choice([1, 1, 2, 2, 3, 4, 5, 6]) * (1.0 if style.size > 14 else 0.6),
        tail=container in ("ellipse", "roundbox", "spiky") and rng.random() < 0.45,
        cut=cut,
        background=background,
        inverted=inverted,
        halo=rng.randint(1, 3) if container == "none" and background != "plain" and rng.random() < 0.85 else 0,
        paper=rng.randint(225, 255),
        ink=rng.randint(200, 255) if inverted else rng.randint(0, 60),
        perspective=rng.uniform(0.01, 0.05) if rng.random() < 0.15 else 0.0,
        rotation=rng.uniform(-5.0, 5.0) if rng.random() < 0.3 else 0.0,
        blur=rng.uniform(0.3, 1.0) if rng.random() < 0.25 else 0.0,
        downscale=downscale,
        noise=rng.uniform(1.0, 10.0) if rng.random() < 0.4 else 0.0,
        jpeg=rng.randint(20, 85) if rng.random() < 0.25 else 0,
    )
