"""Write the calibration images the builder rounds the int4 vision tier with (ocrmodel/graphs/gptq.py):
training samples, drawn by the training renderer with a seed of their own, already squashed to
224x224 as the harness does, grey uint8 (the committed checkpoint's mix has no colour).

    cd scripts && ../.venv/bin/python -m train.calibration_set        # models/calibration/vision-pixels.npz

Like every training sample they never hold an evaluation string. The kinds come in the shares
the committed checkpoint was trained with (data.COMMITTED_SHARES), so the rounding fits the
inputs that model was trained for; a checkpoint trained on another mix draws them anew from its.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ocrmodel.build_models import CALIBRATION
from ocrmodel.fonts import FontLibrary

from .data import COMMITTED_SHARES, SampleMaker

SEED = "calibration/0"  # training workers draw from train/<seed>/<worker>
COUNT = 32


def calibration_pixels(count: int = COUNT, font_dir: Path | None = None) -> np.ndarray:
    """[count, 224, 224] grey: the committed checkpoint was trained on grey crops only (no
    `colour` family, no tinted paper), so its samples' three channels are equal and one is kept,
    as the builder's `calibration_feeds` expects."""
    maker = SampleMaker(FontLibrary(font_dir), SEED, COMMITTED_SHARES, tint_share=0.0)
    images = np.stack([maker.sample()[0] for _ in range(count)])
    if not (images == images[..., :1]).all():
        raise ValueError("a calibration sample is in colour: the builder's feeds take grey images only")
    return images[..., 0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CALIBRATION)
    parser.add_argument("--count", type=int, default=COUNT)
    parser.add_argument("--font-dir", type=Path, default=None, help="as train.py's; default: the system's fonts")
    args = parser.parse_args()
    if args.count < 1:
        raise SystemExit(f"--count {args.count}: allowed: 1 or more images")
    pixels = calibration_pixels(args.count, args.font_dir)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out, pixels=pixels)
    print(f"wrote {args.out}: {pixels.shape[0]} images, {args.out.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
