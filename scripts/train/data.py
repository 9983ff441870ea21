"""Training samples: random dialog strings rendered as manga dialog, squashed to 224x224 like the harness.

Each sample is one of the kinds of `ocrmodel/manga_styles.py` (balloons, narration, inverted,
text on art, horizontal, low resolution, long; text followed by marks that are not text, or no
text at all; sound effects; tilted lines; the families of `ocrmodel/families.py`) rendered by
`ocrmodel/scene.py` in one of the 29 faces of `ocrmodel/fonts.py`, or, for a few of them
(KIND_WEIGHTS["clean"]), the previous model's clean style
(`training_style` + `ocrmodel/render.render` in the four Noto faces), so the clean sets stay read.

Each sample is (pixels uint8 [224,224,3] RGB, decoder input ids [TEXT_SLOTS], targets
[TEXT_SLOTS], auxiliary grid cells [AUX_CELLS], their labels [AUX_CELLS]). Pixels stay uint8
until the GPU normalises them. The page feeds the model R, G and B as they are, so colour crops
(the `colour` family, and TINT_SHARE of the other kinds on tinted paper) keep three different
channels; grey crops are resized as one plane and repeated into three equal ones, which costs
a copy, not a resize, per sample (render_rate.py measures both).

The harness's preprocessing, reproduced exactly: composite over white (these canvases have no
alpha), `ocrmodel.resize.resize_for_model` (Pillow's `resize((224, 224), Image.LANCZOS,
reducing_gap=1.0)`: a box average over whole blocks, then Lanczos3, as the Rust core does), then
`(x/255 - mean)/std` per channel (in train.py, on the GPU).
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import numpy as np
from PIL import Image

from ocrmodel import spec
from ocrmodel.colour import gradient_map, paper_tint
from ocrmodel.dialog_text import CharacterDeck, manga_length, random_dialog, random_manga_dialog
from ocrmodel.eval_sets import evaluation_strings
from ocrmodel.families import FAMILIES
from ocrmodel.fonts import FontLibrary, drawable_vocabulary, face_named
from ocrmodel.manga_styles import KINDS, kind_text, render_kind, scene_for, text_style
from ocrmodel.render import Style, latin_heavy, render
from ocrmodel.resize import resize_for_model
from ocrmodel.scene import Scene, render_scene

MAX_CHARACTERS = 100
CLEAN_MAX_CHARACTERS = 48  # the previous model's strings, for the clean style
TEXT_SLOTS = MAX_CHARACTERS + 1  # BOS + characters as input; characters + EOS as targets
AUX_CELLS = 128  # at least one per character centre of the longest string
GRID = 16
IGNORE = -100
# Evaluation strings at least this long are also excluded as substrings of a training string;
# shorter ones (synth200 holds one of a single kanji) only as the whole string.
SUBSTRING_EXCLUSION_MIN = 6
FONT_SIZES = (16, 18, 20, 23, 26, 29, 32, 36, 40, 45)
VOCAB_PATH = Path(__file__).resolve().parents[2] / "models" / "vocab.json"


# The sample kinds and their shares: the clean style, then manga_styles.KINDS.
# The next run's mix (issue 55): the six families of `families.py` take 24 %, most of it
# (turned 6 %) for the kind that failed worst on crops from another renderer (0.32 nCER), 3-4 %
# each for the others. Low resolution gives up 3 points (36 -> 33 %), but an eighth of the
# families' crops are drawn on its scenes, so small text stays near run 9's 36 % (run 8 lost
# lowres at 30 %); the other kinds of run 9 give up about a quarter each, keeping their
# proportions, since run 9 reads each of them within 0.013.
KIND_WEIGHTS = {
    "clean": 0.06,
    "balloon": 0.04,
    "narration": 0.02,
    "inverted": 0.03,
    "art": 0.02,
    "horizontal": 0.04,
    "lowres": 0.33,
    "long": 0.08,
    "ending": 0.06,
    "sfx": 0.04,
    "tilted": 0.04,
    "turned": 0.06,
    "crossing": 0.04,
    "colour": 0.04,
    "boxed": 0.03,
    "thought": 0.03,
    "marks": 0.04,
}
# The mix the committed checkpoint's last run was trained with (run 9: KIND_WEIGHTS with low
# resolution back at 36 %, clean 9 %, long 10 %): calibration_set.py draws tier 121's rounding
# images from it, so they fit that model.
COMMITTED_SHARES = {
    "clean": 0.09,
    "balloon": 0.07,
    "narration": 0.03,
    "inverted": 0.05,
    "art": 0.03,
    "horizontal": 0.05,
    "lowres": 0.36,
    "long": 0.10,
    "ending": 0.10,
    "sfx": 0.06,
    "tilted": 0.06,
    **{family: 0.0 for family in FAMILIES},
}
assert set(COMMITTED_SHARES) == set(KIND_WEIGHTS)
# Kinds manga_styles renders whole (text and crop), rather than this module's samplers.
WHOLE_KINDS = ("ending", "sfx", "tilted", *FAMILIES)
assert set(KIND_WEIGHTS) == {"clean", *KINDS}

# Of the kinds drawn in grey (all but `clean`, kept as the previous model's style, and `colour`),
# the share put on tinted paper: cream, yellowed, sepia or grey-blue stock with black to brown
# or navy ink (`colour.paper_tint`), as scans and colour pages bring it.
TINT_SHARE = 0.1
UNTINTED_KINDS = ("clean", "colour")

# Low-resolution misses are dakuten against handakuten and dense kanji at the
# smallest sizes, so half of the low-resolution text over SMALLEST_EM[1] px is
# redrawn at SMALLEST_EM.
SMALLEST_EM = (10.0, 11.5)
SMALLEST_SHARE = 0.5
# The previous model's four faces, for the clean style.
CLEAN_FACES = ("noto-sans-bold", "noto-sans-regular", "noto-serif-bold", "noto-serif-regular")


def parse_shares(items: list[str]) -> dict[str, float]:
    """KIND=SHARE strings, as train.py --shares takes them."""
    shares = {}
    for item in items:
        kind, _, share = item.partition("=")
        try:
            shares[kind] = float(share)
        except ValueError:
            raise ValueError(f"{item!r} is not KIND=SHARE with a number for SHARE (say lowres=0.36)") from None
    return shares


def kind_weights(overrides: dict[str, float]) -> dict[str, float]:
    """KIND_WEIGHTS with some kinds' shares replaced (train.py --shares); the shares must still add to 1."""
    unknown = sorted(set(overrides) - set(KIND_WEIGHTS))
    if unknown:
        raise ValueError(f"unknown kind {', '.join(unknown)}; the kinds: {', '.join(KIND_WEIGHTS)}")
    weights = {**KIND_WEIGHTS, **overrides}
    if any(share < 0 for share in weights.values()):
        raise ValueError(f"a share below 0: {overrides}")
    if abs(sum(weights.values()) - 1) > 1e-6:
        raise ValueError(f"the shares add to {sum(weights.values()):.4f}, not 1: {weights}")
    return weights


def training_style(text: str, rng: random.Random, faces: list[tuple[str, int]]) -> Style:
    """A wide spread around the evaluation sets' mild style: fonts, sizes, spacing, tones, noise."""
    heavy = latin_heavy(text)
    vertical = (rng.random() < 0.05) if heavy else (rng.random() < 0.85)
    length = len(text)
    base = 1 if length <= 9 else 2 if length <= 22 else 3
    lines = max(1, min(4, base + rng.choice([-1, 0, 0, 0, 1]), length))
    background = rng.choices(["plain", "bubble", "screentone"], weights=[6, 2, 2])[0]
    return Style(
        face=rng.choice(faces),
        # Ten sizes, so the per-worker glyph cache stays warm (31 sizes missed it 60% of the time).
        size=rng.choice(FONT_SIZES),
        vertical=vertical,
        lines=lines,
        char_spacing=rng.uniform(-0.05, 0.25),
        line_spacing=rng.uniform(0.1, 0.8),
        margins=tuple(rng.uniform(0.1, 1.4) for _ in range(4)),
        ink=rng.randint(0, 90),
        paper=rng.randint(195, 255),
        noise=rng.uniform(0.0, 8.0) if rng.random() < 0.6 else 0.0,
        speckle=rng.uniform(0.0, 0.03) if rng.random() < 0.5 else 0.0,
        blur=rng.uniform(0.2, 0.7) if rng.random() < 0.3 else 0.0,
        rotation=rng.uniform(-4.0, 4.0) if rng.random() < 0.4 else 0.0,
        background=background,
        jitter=rng.uniform(0.0, 0.06) if rng.random() < 0.3 else 0.0,
        halfwidth_latin=rng.random() < 0.75,
    )


def smaller_text(scene: Scene, size: int, rng: random.Random) -> Scene:
    """Redraws SMALLEST_SHARE of the low-resolution text over SMALLEST_EM[1] px at SMALLEST_EM."""
    if size * scene.downscale <= SMALLEST_EM[1] or rng.random() >= SMALLEST_SHARE:
        return scene
    return replace(scene, downscale=rng.uniform(*SMALLEST_EM) / size)


class SampleMaker:
    def __init__(
        self, library: FontLibrary, seed: str, weights: dict[str, float] = KIND_WEIGHTS, tint_share: float = TINT_SHARE
    ):
        if not 0 <= tint_share <= 1:
            raise ValueError(f"tint share {tint_share}: allowed 0-1")
        self.tint_share = tint_share
        vocabulary = json.loads(VOCAB_PATH.read_text(encoding="utf-8"))
        self.ids = {character: index + spec.VOCAB_OFFSET for index, character in enumerate(vocabulary)}
        self.library = library
        self.weights = weights
        self.faces = [library.handle(face_named(name)) for name in CLEAN_FACES]
        self.rng = random.Random(seed)
        drawable, _ = drawable_vocabulary(library, vocabulary)
        self.deck = CharacterDeck(drawable, random.Random(f"{seed}/deck"))
        held_out = evaluation_strings()
        self.excluded_exact = held_out
        self.excluded_inside = [text for text in held_out if len(text) >= SUBSTRING_EXCLUSION_MIN]

    def allowed(self, text: str) -> bool:
        return text not in self.excluded_exact and not any(held in text for held in self.excluded_inside)

    def text(self, kind: str) -> str:
        while True:
            if kind in WHOLE_KINDS:
                text = kind_text(kind, self.rng, self.deck, MAX_CHARACTERS)
            elif kind == "clean":
                text = random_dialog(self.rng, CLEAN_MAX_CHARACTERS)
            else:
                length = (
                    self.rng.randint(49, MAX_CHARACTERS) if kind == "long" else manga_length(self.rng, MAX_CHARACTERS)
                )
                text = random_manga_dialog(self.rng, self.deck, length)
            if self.allowed(text):
                return text

    def render(self, kind: str, text: str):
        rng = self.rng
        if kind == "clean":
            return render(text, training_style(text, rng, self.faces), rng)
        if kind in WHOLE_KINDS:
            return render_kind(kind, text, rng, self.library)
        style = text_style(text, kind, rng, self.library)
        scene = scene_for(kind, style, rng)
        if kind == "lowres":
            scene = smaller_text(scene, style.size, rng)
        return render_scene(text, style, scene, rng)

    def paper_tint(self, kind: str):
        """The duotone anchors that put this sample of `kind` on tinted paper, for `tint_share` of
        the kinds that may be, else None (no draw from the stream at a share of 0, so such a
        maker draws as before)."""
        if self.tint_share and kind not in UNTINTED_KINDS and self.rng.random() < self.tint_share:
            return paper_tint(self.rng)
        return None

    def kind(self) -> str:
        return self.rng.choices(list(self.weights), weights=list(self.weights.values()))[0]

    def sample(self):
        kind = self.kind()
        return self.sample_of(kind, self.text(kind))

    def sample_of(self, kind: str, text: str):
        """`text` rendered as `kind`, as the five training arrays."""
        rng = self.rng
        rendered = self.render(kind, text)
        width, height = rendered.image.size
        tint = self.paper_tint(kind)
        resized = resize_for_model(rendered.image)
        # A duotone is affine in each channel, so it is mapped after the resize, on 224x224 grey
        # pixels rather than the whole crop in RGB (0.9 against 1.9 ms for a 500x300 crop); the
        # two orders differ only where Lanczos overshoots past white or black.
        pixels = rgb_pixels(gradient_map(resized, tint) if tint else resized)
        ids = [self.ids[c] for c in text]
        inputs = np.zeros(TEXT_SLOTS, np.int64)
        targets = np.full(TEXT_SLOTS, IGNORE, np.int64)
        inputs[0] = spec.BOS_ID
        inputs[1 : len(ids) + 1] = ids
        targets[: len(ids)] = ids
        targets[len(ids)] = spec.EOS_ID
        # Auxiliary targets: which character's centre lies in each 14x14 cell of the 16x16 grid,
        # id 0 for none; every occupied cell plus random empty ones, AUX_CELLS in all.
        labels = np.zeros(GRID * GRID, np.int64)
        for (x, y), token in zip(rendered.centres, ids, strict=True):
            column = min(GRID - 1, max(0, int(x / width * GRID)))
            row = min(GRID - 1, max(0, int(y / height * GRID)))
            labels[row * GRID + column] = token
        occupied = np.flatnonzero(labels)[:AUX_CELLS]
        empty = np.flatnonzero(labels == 0)
        generator = np.random.default_rng(rng.getrandbits(63))
        fill = generator.choice(empty, AUX_CELLS - occupied.size, replace=False)
        cells = np.concatenate([occupied, fill]).astype(np.int64)
        return pixels, inputs, targets, cells, labels[cells]


def rgb_pixels(image: Image.Image) -> np.ndarray:
    """[H, W, 3] uint8: an RGB image's planes, or a grey one's repeated."""
    if image.mode == "RGB":
        return np.array(image, np.uint8)  # a writable copy: torch refuses read-only arrays
    if image.mode == "L":
        return np.repeat(np.asarray(image, np.uint8)[:, :, None], 3, axis=2)
    raise ValueError(f"a training crop is L or RGB, not {image.mode}")


def worker_seed(seed: int, worker: int) -> str:
    return f"train/{seed}/{worker}"
