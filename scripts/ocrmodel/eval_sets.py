"""Write the evaluation sets under models/eval/<name>/: cases.json and one PNG per case.

- hayai13: the seed's 13 expected strings (ids 01..13), rendered manga-style;
- synth200: 200 held-out random strings of the training character mix (ids 001..200);
- smoke2: two short cases for fast end-to-end tests, and smoke1, its first case alone;
- the style sets, one per kind of `manga_styles.py` that users meet (balloon, narration,
  inverted, long, lowres, horizontal): new strings of the manga text mix (`random_manga_dialog`,
  without the rare-character deck) rendered by `scene.py` in the 29 faces of `fonts.py`, each
  case seeded by its set and id (training seeds are `train/<seed>/<worker>`). Each case names its
  style, so a set that mixes styles can still be scored per style;
- the sets of what a reader of real crops missed: `ending` (text followed by marks that are not
  text, and text-free crops whose right reading is empty), `sfx` (sound effects in display
  lettering) and `tilted` (lines turned by 8-25 degrees), strings drawn the way training draws
  them (`manga_styles.kind_text`) from seeds of their own.

Rendering is seeded per set and per case, so the files are byte-identical on every run with the
same Pillow and fonts (the test hashes them). The training data generator excludes every string
written here and every string of the held-out sets (`evaluation_strings`, `heldout.texts`).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from heldout.texts import heldout_strings
from ocrmodel.dialog_text import manga_length, random_dialog, random_manga_dialog
from ocrmodel.fonts import FontLibrary
from ocrmodel.make_vocab import SEED_EXPECTED
from ocrmodel.manga_styles import kind_text, render_kind
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


# Style set -> cases. The kind of manga_styles.py each renders is the set's name.
STYLE_SETS = {
    "balloon": 40,
    "narration": 30,
    "inverted": 30,
    "long": 30,
    "lowres": 30,
    "horizontal": 30,
    "ending": 40,
    "sfx": 30,
    "tilted": 30,
}
# Sets whose strings come from manga_styles.kind_text (the first six predate it and keep theirs).
KIND_TEXT_SETS = ("ending", "sfx", "tilted")
LONG_RANGE = (49, 100)
# A smaller em bound than training's 700 px keeps the committed files small.
EVAL_LONG_SIDE = 480


def style_strings(name: str, count: int, taken: set[str]) -> list[str]:
    rng = random.Random(f"{name}-text")
    chosen: list[str] = []
    while len(chosen) < count:
        if name in KIND_TEXT_SETS:
            text = kind_text(name, rng)
        else:
            length = rng.randint(*LONG_RANGE) if name == "long" else manga_length(rng, 48)
            text = random_manga_dialog(rng, None, length)
        # Text-free crops (the empty reading) may repeat; strings may not.
        if text == "" or (text not in taken and text not in chosen):
            chosen.append(text)
    return chosen


def evaluation_sets() -> dict[str, list[tuple[str, str]]]:
    """Set name -> [(case id, expected text)]."""
    sets = {
        "hayai13": [(f"{i + 1:02d}", text) for i, text in enumerate(SEED_EXPECTED)],
        "synth200": [(f"{i + 1:03d}", text) for i, text in enumerate(synth_strings())],
        "smoke2": [(f"{i + 1}", text) for i, text in enumerate(SMOKE_STRINGS)],
    }
    taken = {text for cases in sets.values() for _, text in cases}
    for name, count in STYLE_SETS.items():
        strings = style_strings(name, count, taken)
        taken |= set(strings)
        sets[name] = [(f"{i + 1:02d}", text) for i, text in enumerate(strings)]
    return sets


def evaluation_strings() -> set[str]:
    """Every string a set reads, the held-out sets' included, for training to leave out (the
    empty reading is not a string)."""
    return {text for cases in evaluation_sets().values() for _, text in cases if text} | heldout_strings()


def write_set(name: str, cases: list[tuple[str, str]], out_dir: Path) -> list[dict[str, str]]:
    faces = [system_face(face) for face in SYSTEM_FACES]
    library = FontLibrary() if name in STYLE_SETS else None
    directory = out_dir / name
    directory.mkdir(parents=True, exist_ok=True)
    entries = []
    for case_id, text in cases:
        rng = random.Random(f"{name}/{case_id}")
        image_name = f"{case_id}.png"
        if library is None:
            rendered = render(text, mild_style(text, rng, faces), rng)
            rendered.image.convert("RGB").save(directory / image_name, optimize=True)
            entries.append({"id": case_id, "image": image_name, "expected": text})
            continue
        rendered = render_kind(name, text, rng, library, long_side=EVAL_LONG_SIDE)
        # Grey PNGs: the scenes' noise and art make RGB files three times larger.
        rendered.image.save(directory / image_name, optimize=True)
        entries.append({"id": case_id, "image": image_name, "expected": text, "style": name})
    (directory / "cases.json").write_text(json.dumps(entries, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return entries


def write_smoke1(out_dir: Path) -> None:
    """smoke1: smoke2's first case alone, the same image file, for the slowest browser runs."""
    directory = out_dir / "smoke1"
    directory.mkdir(parents=True, exist_ok=True)
    first = json.loads((out_dir / "smoke2" / "cases.json").read_text(encoding="utf-8"))[0]
    entry = {**first, "image": f"../smoke2/{first['image']}"}
    (directory / "cases.json").write_text(json.dumps([entry], ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


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
        if name == "smoke2":
            write_smoke1(args.out)


if __name__ == "__main__":
    main()
