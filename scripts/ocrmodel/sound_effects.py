"""Sound effects (onomatopoeia) as manga letters them: short kana strings in display lettering.

The strings follow the shapes sound effects take (`ドカーン`, `ズキューン`, `バタバタ`, `ゴゴゴ`,
`ガシャッ`, `ぱちっ`): a repeated mora or two, a mora stretched by `ー` ending in `ン`, a mora
cut short by `ッ`, in katakana mostly, hiragana sometimes, 1-8 characters.

The lettering: a heavy face (black gothic, brush), 1.5-5 times a balloon's em, one line or
column (two for longer ones), thick outlines in a contrasting grey (a double stroke: dark, light,
dark), a drop shadow, stretched or sheared, turned, on busy art and never in a balloon's calm.
"""

from __future__ import annotations

import math
import random

from .fonts import FontLibrary, face_named
from .render import Style
from .scene import Scene

# Morae that sound effects are made of: voiced and plosive ones weigh more.
STRONG = list("ドガバズゴダザボブビベギグジデヅパピプペポ")
PLAIN = list("カキクケコサシスセソタチツテトハヒフヘホマミムメモラリルレロワヤユヨナニヌネノ")
VOWELS = list("アイウエオ")
GLIDES = list("ャュョ")
I_ROW = set("キギシジチヂニヒビピミリ")  # the morae a glide (ャュョ) follows
HEAVY_FACES = (
    "noto-sans-black",
    "noto-sans-bold",
    "mplus1-black",
    "bizud-gothic-bold",
    "noto-serif-black",
    "kouzan-brush",
    "aoyagi-kouzan",
    "aoyagi-soseki",
    "klee-semibold",
    "motoya-cedar",
)
MAX_LENGTH = 8


def _mora(rng: random.Random) -> str:
    head = rng.choice(STRONG) if rng.random() < 0.6 else rng.choice(PLAIN + VOWELS)
    if head in I_ROW and rng.random() < 0.4:
        head += rng.choice(GLIDES)
    return head


def _to_hiragana(text: str) -> str:
    return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in text)


def random_sound_effect(rng: random.Random) -> str:
    """One sound effect, 1-MAX_LENGTH characters."""
    shape = rng.choices(["repeat", "stretch", "cut", "single"], weights=[0.35, 0.3, 0.25, 0.1])[0]
    if shape == "repeat":
        unit = _mora(rng) + (_mora(rng) if rng.random() < 0.6 else "")
        if rng.random() < 0.2:
            unit += "ッ"
        text = unit * rng.randint(2, 4)
    elif shape == "stretch":
        text = _mora(rng) + ("ッ" if rng.random() < 0.2 else "") + _mora(rng) * (rng.random() < 0.6)
        text += "ー" * rng.randint(1, 2) + ("ン" if rng.random() < 0.8 else "")
    elif shape == "cut":
        text = "".join(_mora(rng) for _ in range(rng.randint(1, 3))) + "ッ"
    else:
        text = _mora(rng) + ("ー" if rng.random() < 0.3 else "")
    text = text[:MAX_LENGTH]
    if len(text) < MAX_LENGTH and rng.random() < 0.15:
        text += rng.choice(["！", "！！", "…"])[: MAX_LENGTH - len(text)]
    return _to_hiragana(text) if rng.random() < 0.3 else text


def sound_effect_style(text: str, rng: random.Random, library: FontLibrary, long_side: int, resolver) -> Style:
    """`resolver(library, face)`: the per-character face chooser (`manga_styles`' cached one)."""
    vertical = rng.random() < 0.55
    lines = 2 if len(text) >= 6 and rng.random() < 0.3 else 1
    per_line = math.ceil(len(text) / lines)
    size = rng.randint(40, 120)
    size = max(24, min(size, int(long_side / (1.1 * per_line))))
    face = face_named(rng.choice(HEAVY_FACES))
    return Style(
        face=library.handle(face),
        size=size,
        vertical=vertical,
        lines=lines,
        char_spacing=rng.uniform(-0.12, 0.1),
        line_spacing=rng.uniform(0.05, 0.4),
        margins=(0.0, 0.0, 0.0, 0.0),
        jitter=rng.uniform(0.03, 0.12) if rng.random() < 0.6 else 0.0,
        halfwidth_latin=False,
        face_for=resolver(library, face),
        punctuation_top_right=True,
        small_kana_top_right=rng.random() < 0.5,
    )


def sound_effect_scene(style: Style, rng: random.Random) -> Scene:
    em = style.size
    light_text = rng.random() < 0.4  # white letters outlined in black, or black outlined in white
    ink = rng.randint(225, 255) if light_text else rng.randint(0, 40)
    contrast = rng.randint(0, 40) if light_text else rng.randint(225, 255)
    inner = max(2, round(rng.uniform(0.05, 0.16) * em))
    layers = [(inner, contrast)]
    if rng.random() < 0.45:  # a double stroke: a thin line of the text's grey outside the outline
        layers.insert(
            0, (inner + max(1, round(rng.uniform(0.02, 0.06) * em)), ink if not light_text else rng.randint(0, 40))
        )
    shadow = (0, 0, 0)
    if rng.random() < 0.4:
        reach = max(2, round(rng.uniform(0.04, 0.1) * em))
        shadow = (rng.choice([-1, 1]) * reach, reach, rng.randint(0, 90))
    stretch = (1.0, 1.0)
    if rng.random() < 0.4:
        factor = rng.uniform(0.6, 1.5)
        stretch = (factor, 1.0) if rng.random() < 0.5 else (1.0, factor)
    return Scene(
        container="spiky" if rng.random() < 0.12 else "none",
        outline=rng.choice([2, 3, 4]),
        background=rng.choice(["photo", "speedlines", "screentone", "hatching", "gradient", "dark", "plain"]),
        paper=rng.randint(225, 255),
        ink=ink,
        perspective=rng.uniform(0.02, 0.08) if rng.random() < 0.3 else 0.0,
        rotation=rng.uniform(-20.0, 20.0) if rng.random() < 0.5 else 0.0,
        keep_corners=True,
        blur=rng.uniform(0.3, 1.0) if rng.random() < 0.2 else 0.0,
        # Down to 20 px an em: smaller display lettering is rare.
        downscale=max(20 / em, rng.uniform(0.35, 0.9)) if rng.random() < 0.4 else 1.0,
        noise=rng.uniform(1.0, 8.0) if rng.random() < 0.3 else 0.0,
        jpeg=rng.randint(30, 85) if rng.random() < 0.2 else 0,
        outline_layers=tuple(layers),
        shadow=shadow,
        stretch=stretch,
        shear=rng.uniform(-0.25, 0.25) if rng.random() < 0.25 else 0.0,
    )
