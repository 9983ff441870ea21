"""Average checkpoints of one training lineage into one, weight by weight.

Each run of the lineage ends its cosine schedule near the same minimum from another side;
the mean of the last runs' weights reads better than either (stochastic weight averaging,
Izmailov et al. 2018): scripts/train/README.md gives the measurement. numpy only, so it runs
wherever the builder does.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from ocrmodel import spec


def average(paths: list[Path]) -> dict[str, np.ndarray]:
    """The mean of the checkpoints' weights, each read back from int8 as the harness reads it."""
    if len(paths) < 2:
        raise ValueError(f"averaging needs at least two checkpoints, got {len(paths)}")
    total = spec.load_checkpoint(paths[0])
    for path in paths[1:]:
        for name, value in spec.load_checkpoint(path).items():
            total[name] += value
    return {name: value / len(paths) for name, value in total.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", type=Path, nargs="+", help="checkpoints in spec.save_checkpoint's format")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    try:
        weights = average(args.checkpoints)
    except (ValueError, OSError) as error:
        raise SystemExit(f"cannot average: {error}") from error
    spec.save_checkpoint(weights, args.out)
    print(f"wrote {args.out}: the mean of {', '.join(map(str, args.checkpoints))}")


if __name__ == "__main__":
    main()
