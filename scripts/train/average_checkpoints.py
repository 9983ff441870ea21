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


def average(paths: list[Path], weights: list[float] | None = None) -> dict[str, np.ndarray]:
    """The mean of the checkpoints' weights, each read back from int8 as the harness reads it;
    with `weights` (one per checkpoint, adding to 1) the weighted mean: a point on the line
    between two runs rather than its middle."""
    if len(paths) < 2:
        raise ValueError(f"averaging needs at least two checkpoints, got {len(paths)}")
    if weights is None:
        weights = [1 / len(paths)] * len(paths)
    if len(weights) != len(paths):
        raise ValueError(f"{len(weights)} weights for {len(paths)} checkpoints: give one per checkpoint")
    if any(w < 0 for w in weights) or abs(sum(weights) - 1) > 1e-6:
        raise ValueError(f"weights {weights}: allowed: each 0 or more, adding to 1")
    total = {name: weights[0] * value for name, value in spec.load_checkpoint(paths[0]).items()}
    for path, weight in zip(paths[1:], weights[1:], strict=True):
        for name, value in spec.load_checkpoint(path).items():
            total[name] += weight * value
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", type=Path, nargs="+", help="checkpoints in spec.save_checkpoint's format")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--weights", type=float, nargs="+", default=None, help="one per checkpoint, adding to 1 (default: equal)"
    )
    args = parser.parse_args()
    try:
        weights = average(args.checkpoints, args.weights)
    except (ValueError, OSError) as error:
        raise SystemExit(f"cannot average: {error}") from error
    spec.save_checkpoint(weights, args.out)
    shares = args.weights or [1 / len(args.checkpoints)] * len(args.checkpoints)
    parts = ", ".join(f"{share:g} × {path}" for share, path in zip(shares, args.checkpoints, strict=True))
    print(f"wrote {args.out}: {parts}")


if __name__ == "__main__":
    main()
