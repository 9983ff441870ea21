"""Training samples: random dialog strings rendered manga-style, squashed to 224x224 like the harness.

Each sample is (pixels uint8 [224,224], decoder input ids [TEXT_SLOTS], targets [TEXT_SLOTS],
auxiliary grid cells [AUX_CELLS], their labels [AUX_CELLS]). Pixels stay uint8 and grey until
the GPU normalises them: the images are grey, so the three RGB channels are equal, and a
quarter of the bytes cross the worker pipes.

The harness's preprocessing, reproduced exactly: composite over white (these canvases have no
alpha), `ocrmodel.resize.resize_for_model` (Pillow's `resize((224, 224), Image.LANCZOS,
reducing_gap=1.0)`: a box average over whole blocks, then Lanczos3, as the Rust core does), then
`(x/255 - mean)/std` per channel (in train.py, on the GPU). The committed checkpoint was trained
before the box pre-reduction, with a plain Lanczos3 resize.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ocrmodel import spec  # noqa: E402
from ocrmodel.dialog_text import random_dialog  # noqa: E402
from ocrmodel.eval_sets import evaluation_strings  # noqa: E402
from ocrmodel.render import Style, latin_heavy, render, system_face, SYSTEM_FACES  # noqa: E402
from ocrmodel.resize import resize_for_model  # noqa: E402

MAX_CHARACTERS = 48
TEXT_SLOTS = MAX_CHARACTERS + 1  # BOS + characters as input; characters + EOS as targets
AUX_CELLS = 48
GRID = 16
IGNORE = -100
# Evaluation strings at least this long are also excluded as substrings of a training string;
# shorter ones (synth200 holds one of a single kanji) only as the whole string.
SUBSTRING_EXCLUSION_MIN = 6
FONT_SIZES = (16, 18, 20, 23, 26, 29, 32, 36, 40, 45)
VOCAB_PATH = Path(__file__).resolve().parents[2] / "models" / "vocab.json"


def load_faces(font_dir: Path | None) -> list[tuple[str, int]]:
    """The JP faces: the system's Noto CJK collections, or single-face files (subsets) in font_dir."""
    if font_dir is None:
        # Sorted like the subset files' names (NotoSans-Bold..., NotoSans-Regular..., NotoSerif-...),
        # so both routes draw the same face for the same seed.
        return [system_face(name) for name in sorted(SYSTEM_FACES)]
    faces = [(str(path), 0) for path in sorted(font_dir.glob("*.otf"))]
    if not faces:
        raise SystemExit(f"{font_dir}: no .otf fonts found (expected the Noto CJK JP faces or subsets of them)")
    return faces


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


class SampleMaker:
    def __init__(self, faces: list[tuple[str, int]], seed: str):
        vocabulary = json.loads(VOCAB_PATH.read_text(encoding="utf-8"))
        self.ids = {character: index + spec.VOCAB_OFFSET for index, character in enumerate(vocabulary)}
        self.faces = faces
        self.rng = random.Random(seed)
        held_out = evaluation_strings()
        self.excluded_exact = held_out
        self.excluded_inside = [text for text in held_out if len(text) >= SUBSTRING_EXCLUSION_MIN]

    def allowed(self, text: str) -> bool:
        return text not in self.excluded_exact and not any(held in text for held in self.excluded_inside)

    def text(self) -> str:
        while True:
            text = random_dialog(self.rng, MAX_CHARACTERS)
            if self.allowed(text):
                return text

    def sample(self):
        rng = self.rng
        text = self.text()
        rendered = render(text, training_style(text, rng, self.faces), rng)
        width, height = rendered.image.size
        pixels = np.array(resize_for_model(rendered.image), np.uint8)
        ids = [self.ids[c] for c in text]
        inputs = np.zeros(TEXT_SLOTS, np.int64)
        targets = np.full(TEXT_SLOTS, IGNORE, np.int64)
        inputs[0] = spec.BOS_ID
        inputs[1:len(ids) + 1] = ids
        targets[:len(ids)] = ids
        targets[len(ids)] = spec.EOS_ID
        # Auxiliary targets: which character's centre lies in each 14x14 cell of the 16x16 grid,
        # id 0 for none; every occupied cell plus random empty ones, AUX_CELLS in all.
        labels = np.zeros(GRID * GRID, np.int64)
        for (x, y), token in zip(rendered.centres, ids):
            column = min(GRID - 1, max(0, int(x / width * GRID)))
            row = min(GRID - 1, max(0, int(y / height * GRID)))
            labels[row * GRID + column] = token
        occupied = np.flatnonzero(labels)[:AUX_CELLS]
        empty = np.flatnonzero(labels == 0)
        generator = np.random.default_rng(rng.getrandbits(63))
        fill = generator.choice(empty, AUX_CELLS - occupied.size, replace=False)
        cells = np.concatenate([occupied, fill]).astype(np.int64)
        return pixels, inputs, targets, cells, labels[cells]


def worker_seed(seed: int, worker: int) -> str:
    return f"train/{seed}/{worker}"
