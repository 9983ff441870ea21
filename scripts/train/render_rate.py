"""How fast one data worker renders the mix: samples/s of `SampleMaker.sample` in one process.

The GPU machine runs 15 such workers (train.py --workers 15); their sum is what feeds the
fresh half of each batch, so a mix must keep 15 × this figure above the fresh samples a run
consumes (about 1,300/s at 10-12 steps/s of 256, half fresh).

    cd scripts && ../.venv/bin/python -m train.render_rate --samples 400

Timed in CPU seconds of this process (`time.process_time`), not wall time: on a machine shared
with other work the wall clock counts their time too, while a training worker has a core to
itself.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from ocrmodel.fonts import FontLibrary
from train.data import KIND_WEIGHTS, SampleMaker, kind_weights, parse_shares

WARM_UP = 40  # the first samples fill the glyph and face caches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=400, help="samples timed after the warm-up")
    parser.add_argument("--seed", default="render-rate")
    parser.add_argument("--font-dir", type=Path, help="single-face subsets (train.font_subsets); default: system fonts")
    parser.add_argument("--shares", nargs="*", default=[], help="KIND=SHARE overrides, as train.py takes them")
    parser.add_argument("--per-kind", action="store_true", help="also time each kind alone")
    args = parser.parse_args()
    weights = kind_weights(parse_shares(args.shares))
    maker = SampleMaker(FontLibrary(args.font_dir), args.seed, weights)
    for _ in range(WARM_UP):
        sample = maker.sample()
    # What one sample puts through the workers' queue (collated into shared memory, then pinned).
    queued = sum(array.nbytes for array in sample)
    start = time.process_time()
    for _ in range(args.samples):
        maker.sample()
    rate = args.samples / (time.process_time() - start)
    print(f"mix: {rate:.1f} samples/s per worker, {15 * rate:.0f}/s on 15 workers")
    print(f"queue: {queued:,} bytes a sample, {15 * rate * queued / 1e6:.0f} MB/s on 15 workers")
    if args.per_kind:
        seconds: dict[str, float] = defaultdict(float)
        for kind in KIND_WEIGHTS:
            for _ in range(args.samples // 10):
                began = time.process_time()
                maker.render(kind, maker.text(kind))
                seconds[kind] += time.process_time() - began
        for kind, spent in seconds.items():
            print(f"{kind:>12}: {1000 * spent / (args.samples // 10):.1f} ms a crop (render only)")


if __name__ == "__main__":
    main()
