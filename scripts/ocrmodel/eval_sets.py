"""Write the evaluation sets under models/eval/<name>/: cases.json and one PNG per case.

- hayai13: the seed's 13 expected strings (ids 01..13), rendered manga-style;
- synth200: 200 held-out random strings of the training character mix (ids 001..200);
- smoke2: two short cases for fast end-to-end tests.

Rendering is seeded per set and per case, so the files are byte-identical on every run with the
same Pillow and fonts (the test hashes them). The training data generator excludes every string
written here (`evaluation_strings`).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from ocrmodel.dialog_text import random_dialog
from ocrmodel.make_vocab import SEED_EXPECTED
from ocrmodel.render import SYSTEM_FACES, mild_style, render, system_face

SMOKE_STRINGS = ["ありがとう", "ＯＫだよ！"]
SYNTH_COUNT = 200
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "models" / "eval"


def synth_strings(count: int = SYNTH_COUNT) -> list[str]:
    rng = random.Random("synth200-text")
    excluded = set(SEED_EXPECTED) | set(SMOKE_STRINGS)
    chosen: list[str] = []
    while len(chosen) < count:
        text = random_dialog(rng)
        if text not in excluded and text not in chosen:
            chosen.append(text)
    return chosen


def evaluation_sets() -> dict[str, list[tuple[str, str]]]:
    """Set name -> [(case id, expected text)]."""
    return {
        "hayai13": [(f"{i + 1:02d}", text) for i, text in enumerate(SEED_EXPECTED)],
        "synth200": [(f"{i + 1:03d}", text) for i, text in enumerate(synth_strings())],
        "smoke2": [(f"{i + 1}", text) for i, text in enumerate(SMOKE_STRINGS)],
    }


def evaluation_strings() -> set[str]:
    return {text for cases in evaluation_sets().values() for _, text in cases}


def write_set(name: str, cases: list[tuple[str, str]], out_dir: Path) -> list[dict[str, str]]:
    faces = [system_face(face) for face in SYSTEM_FACES]
    directory = out_dir / name
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for case_id, text in cases:
        rng = random.Random(f"{name}/{case_id}")
        rendered = render(text, mild_style(text, rng, faces), rng)
        image_name = f"{case_id}.png"
        rendered.image.convert("RGB").save(directory / image_name, optimize=True)
        entries.append({"id": case_id, "image": image_name, "expected": text})
    (directory / "cases.json").write_text(json.dumps(entries, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return entries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder that receives <set>/cases.json")
    parser.add_argument("--only", choices=sorted(evaluation_sets()), action="append", help="write only these sets")
    args = parser.parse_args()
    for name, cases in evaluation_sets().items():
        if args.only and name not in args.only:
            continue
        write_set(name, cases, args.out)
        size = sum(p.stat().st_size for p in (args.out / name).iterdir())
        print(f"{name}: {len(cases)} cases, {size / 1024:.0f} KiB in {args.out / name}")


if __name__ == "__main__":
    main()
