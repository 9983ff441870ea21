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
- long: 49-100 characters in up to five columns or lines;
- ending: one of the kinds above with marks after the text's end that are not text (a tail,
  thought bubbles, a neighbouring balloon's edge, a panel border, tone, speed lines, art;
  `scene_after.py`), or, for EMPTY_SHARE of them, a crop with no text whose reading is empty;
- sfx: sound effects in display lettering (`sound_effects.py`);
- tilted: balloon, narration, art or horizontal text turned by 8-25 degrees, some sheared;
- turned, crossing, colour, boxed, thought, marks: the training-only families of `families.py`
  (whole crops turned by 0-8 degrees, tails and lines touching the text, colour pages in grey,
  white text in black boxes, thought balloons, marks right after the text on any side).

`render_kind` renders any kind; the first seven draw exactly what `text_style` and `scene_for`
drew before the others existed, and `ending`, `sfx` and `tilted` what they drew before the
families, so their evaluation sets keep their bytes.
"""

from __future__ import annotations

import math
import random
from dataclasses import replace
from functools import lru_cache

from .dialog_text import manga_length, random_manga_dialog, small_kana_phrase
from .families import FAMILIES, base_kind, widen
from .fonts import FACES, Face, FontLibrary
from .render import Rendered, Style, latin_heavy
from .scene import Scene, render_scene
from .scene_after import AFTER_KINDS
from .sound_effects import random_sound_effect, sound_effect_scene, sound_effect_style

KINDS = (
    "balloon",
    "narration",
    "inverted",
    "art",
    "horizontal",
    "lowres",
    "long",
    "ending",
    "sfx",
    "tilted",
    *FAMILIES,
)
# The kinds each of the last three draws its text and scene from.
ENDING_BASES = ("balloon", "balloon", "narration", "inverted", "art", "horizontal", "lowres")
TILTED_BASES = ("balloon", "narration", "art", "horizontal")
EMPTY_SHARE = 0.15  # of `ending` crops: no text at all, so the end is learnt as a decision
TILT = (8.0, 25.0)  # degrees either way
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


def kind_text(kind: str, rng: random.Random, deck=None, max_length: int = 100) -> str:
    """A string for `ending`, `sfx`, `tilted` or a family (the first seven take the caller's dialog)."""
    if kind == "sfx":
        return random_sound_effect(rng)
    if kind in FAMILIES:
        return random_manga_dialog(rng, deck, manga_length(rng, min(max_length, 60)))
    if kind == "ending" and rng.random() < EMPTY_SHARE:
        return ""
    length = manga_length(rng, min(max_length, 48))
    if kind == "tilted" and rng.random() < 0.5:
        return small_kana_phrase(rng, max(2, min(length, 16)))
    return random_manga_dialog(rng, deck, length)


def render_kind(kind: str, text: str, rng: random.Random, library: FontLibrary, long_side: int = 700) -> Rendered:
    """`text` as a crop of `kind`; an empty `text` (the `ending` kind) gives a crop with no text."""
    if kind == "sfx":
        style = sound_effect_style(text, rng, library, long_side, _resolver)
        return render_scene(text, style, sound_effect_scene(style, rng), rng)
    if kind == "ending":
        base = rng.choice(ENDING_BASES)
        laid_out = text or random_manga_dialog(rng, None, manga_length(rng, 48))
        style = text_style(laid_out, base, rng, library, long_side)
        scene = scene_for(base, style, rng)
        marks = tuple(rng.sample(AFTER_KINDS, rng.choice([1, 1, 2])))
        if not text and rng.random() < 0.5:
            marks = ()  # an empty balloon or bare art: nothing to read at all
        return render_scene(laid_out, style, replace(scene, after=marks, blank=not text), rng)
    if kind in FAMILIES:
        base = base_kind(kind, rng)
        style = text_style(text, base, rng, library, long_side)
        return render_scene(text, style, widen(kind, scene_for(base, style, rng), style, rng), rng)
    if kind == "tilted":
        base = rng.choice(TILTED_BASES)
        style = text_style(text, base, rng, library, long_side)
        scene = scene_for(base, style, rng)
        angle = rng.uniform(*TILT) * rng.choice([-1, 1])
        shear = rng.uniform(-0.3, 0.3) if rng.random() < 0.35 else 0.0
        return render_scene(text, style, replace(scene, rotation=angle, keep_corners=True, shear=shear), rng)
    style = text_style(text, kind, rng, library, long_side)
    return render_scene(text, style, scene_for(kind, style, rng), rng)
