"""A contact sheet of the training mix as the model sees it: samples squashed to 224x224, each
captioned with its kind and expected reading, for a person to look over before a run.

    cd scripts && ../.venv/bin/python -m train.preview_mix --out /tmp/mix.png
    ../.venv/bin/python -m train.preview_mix --only turned crossing colour boxed thought marks --out /tmp/families.png
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from ocrmodel.fonts import FontLibrary
from ocrmodel.render import system_face
from train.data import KIND_WEIGHTS, SampleMaker, kind_weights, parse_shares

TILE = 224
CAPTION = 34  # px under each tile: the kind, then the reading's first characters
COLUMNS = 8


def draw_sheet(maker: SampleMaker, count: int, columns: int = COLUMNS) -> Image.Image:
    rows = math.ceil(count / columns)
    sheet = Image.new("RGB", (columns * TILE, rows * (TILE + CAPTION)), "white")
    draw = ImageDraw.Draw(sheet)
    face = system_face("sans-regular")
    caption = ImageFont.truetype(face[0], 14, index=face[1])
    for index in range(count):
        kind = maker.kind()
        text = maker.text(kind)
        pixels = maker.sample_of(kind, text)[0]
        x, y = (index % columns) * TILE, (index // columns) * (TILE + CAPTION)
        sheet.paste(Image.fromarray(pixels, "RGB"), (x, y))
        draw.text((x + 2, y + TILE + 1), kind, fill=(0, 0, 0), font=caption)
        reading = text if len(text) <= 14 else text[:13] + "…"
        draw.text((x + 2, y + TILE + 17), reading or "(no text)", fill=(90, 90, 90), font=caption)
    return sheet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="the PNG to write")
    parser.add_argument("--count", type=int, default=64)
    parser.add_argument("--seed", default="preview")
    parser.add_argument("--only", nargs="+", choices=list(KIND_WEIGHTS), help="draw only these kinds, equally")
    parser.add_argument("--shares", nargs="*", default=[], help="KIND=SHARE overrides, as train.py takes them")
    parser.add_argument("--font-dir", type=Path, help="single-face subsets (train.font_subsets); default: system fonts")
    args = parser.parse_args()
    weights = kind_weights(parse_shares(args.shares))
    if args.only:
        weights = {kind: (1.0 / len(args.only) if kind in args.only else 0.0) for kind in weights}
    maker = SampleMaker(FontLibrary(args.font_dir), args.seed, weights)
    draw_sheet(maker, args.count).save(args.out)
    print(f"wrote {args.out}: {args.count} samples")


if __name__ == "__main__":
    main()
