"""Score a build on the held-out sets on onnxruntime CPU, per set and per style.

    cd scripts && ../.venv/bin/python -m heldout.score --build ../models/generated \\
        [--vision 121] [--decoder baseline] [--threads 1]

Reads each set with train.compare_onnx (the seed's loop and token choice, up to 128 tokens)
and prints, per set and per style, nCER, exact cases and the readings that are the text plus
extra characters (`trailingExtras`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from train.compare_onnx import compare
from train.scoring import format_ncer

from .make_sets import SETS


def _row(label: str, summary: dict) -> str:
    return (
        f"| {label} | {summary['cases']} | {format_ncer(summary)} | {summary['exact']}/{summary['cases']} "
        f"| {summary['trailingExtras']} |"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="folder the builder wrote (its --out)")
    parser.add_argument("--vision", default="121", help="vision tier")
    parser.add_argument("--decoder", default="baseline", help="decoder variant")
    parser.add_argument("--threads", type=int, default=0, help="onnxruntime's intra-op threads (0: one per core)")
    args = parser.parse_args(argv)
    per_style: dict[str, list[dict]] = {}
    lines = ["| set | cases | nCER | exact | text + extras |", "|---|---|---|---|---|"]
    for name in SETS:
        (scored,) = compare(args.build, name, [args.vision], [args.decoder], threads=args.threads)
        lines.append(_row(name, scored))
        for style, summary in scored.get("perStyle", {}).items():
            per_style.setdefault(style, []).append(summary)
        for case in scored["results"]:
            if case["distance"]:
                print(f"  {name}/{case['id']}: {case['expected']} -> {case['actual']}")
    lines += ["", "| style | cases | nCER | exact | text + extras |", "|---|---|---|---|---|"]
    for style, summaries in sorted(per_style.items()):
        distance = sum(s["distance"] for s in summaries)
        characters = sum(s["characters"] for s in summaries)
        merged = {
            "cases": sum(s["cases"] for s in summaries),
            "nCER": distance / characters if characters else None,
            "exact": sum(s["exact"] for s in summaries),
            "trailingExtras": sum(s["trailingExtras"] for s in summaries),
        }
        lines.append(_row(style, merged))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
