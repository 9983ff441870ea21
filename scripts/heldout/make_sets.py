"""Write the held-out evaluation sets under models/eval/heldout-*/: cases.json and one PNG per case.

    cd scripts && ../.venv/bin/python -m heldout.make_sets [--only heldout-b] [--out DIR]

Each case is seeded by its set and id (`heldout-b/07`), its text by the set (`heldout-b-text`),
so the files are byte-identical on every run with the same Pillow, numpy and faces.
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

from .faces import require_faces
from .scenes import render_case
from .texts import EVAL_DIR, dialog_line


@dataclass(frozen=True)
class HeldoutSet:
    styles: tuple[str, ...]  # case i is styles[i % len(styles)]
    count: int
    extras: dict[str, float] = field(default_factory=dict)  # scenes.render_case's feature rates


SETS = {
    "heldout-a": HeldoutSet(
        ("vertical", "horizontal", "shout", "narration", "damaged", "neighbours", "ending", "tail"), 40
    ),
    "heldout-b": HeldoutSet(("rotated", "tail", "ending"), 42, {"tail": 0.5, "marks": 0.4, "rotated": 0.4}),
    "heldout-c": HeldoutSet(("webtoon", "inverted", "thought"), 42),
}


def set_cases(name: str) -> list[tuple[str, str, str]]:
    """(case id, style, text) of every case of a set; strings never repeat within the set."""
    spec = SETS[name]
    rng = random.Random(f"{name}-text")
    chosen: list[str] = []
    while len(chosen) < spec.count:
        text = dialog_line(rng)
        if text not in chosen:
            chosen.append(text)
    return [(f"{i + 1:02d}", spec.styles[i % len(spec.styles)], text) for i, text in enumerate(chosen)]


def render_set_case(name: str, case_id: str, style: str, text: str):
    return render_case(style, text, random.Random(f"{name}/{case_id}"), SETS[name].extras)


def write_set(name: str, out_dir: Path) -> list[dict[str, str]]:
    directory = out_dir / name
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for case_id, style, text in set_cases(name):
        image_name = f"{case_id}.png"
        render_set_case(name, case_id, style, text).save(directory / image_name, optimize=True)
        entries.append({"id": case_id, "image": image_name, "expected": text, "style": style})
    (directory / "cases.json").write_text(json.dumps(entries, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=EVAL_DIR, help="folder that receives <set>/cases.json")
    parser.add_argument("--only", choices=sorted(SETS), action="append", help="write only these sets")
    args = parser.parse_args()
    require_faces()
    for name in SETS:
        if args.only and name not in args.only:
            continue
        cases = write_set(name, args.out)
        size = sum(p.stat().st_size for p in (args.out / name).iterdir())
        print(f"{name}: {len(cases)} cases, {size / 1024:.0f} KiB in {args.out / name}")


if __name__ == "__main__":
    main()
