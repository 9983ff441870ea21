"""Subset every face of ocrmodel/fonts.py to what the renderer can draw, for a machine without fonts.

Writes OUT/<face name>.otf (one face per file; `FontLibrary(OUT)` reads them) keeping only the
characters of models/vocab.json and their vertical presentation forms, with no hinting and no
layout tables (the renderer draws glyph by glyph, with no shaping). The 30 faces come to about
90 MB; `tar -cJ` brings them to about 70 MB.

    cd scripts && ../.venv/bin/python -m train.font_subsets --out /tmp/fonts
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ocrmodel.fonts import FACES, FALLBACK_ONLY, SYSTEM_FONT_ROOT, subset_name
from ocrmodel.render import PRESENTATION_FORMS

VOCAB = Path(__file__).resolve().parents[2] / "models" / "vocab.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    characters = "".join(json.loads(VOCAB.read_text(encoding="utf-8"))) + "".join(PRESENTATION_FORMS.values())
    pyftsubset = shutil.which("pyftsubset", path=str(Path(sys.executable).parent)) or "pyftsubset"
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt") as text_file:
        text_file.write(characters)
        text_file.flush()
        for face in FACES + FALLBACK_ONLY:
            source = SYSTEM_FONT_ROOT / face.path
            target = args.out / subset_name(face)
            # Some fonts carry a malformed gasp table that fontTools refuses; the renderer never
            # reads it.
            subprocess.run(
                [
                    pyftsubset,
                    str(source),
                    f"--font-number={face.index}",
                    f"--text-file={text_file.name}",
                    "--layout-features=",
                    "--no-hinting",
                    "--drop-tables+=gasp,mort,morx",
                    f"--output-file={target}",
                ],
                check=True,
                stderr=subprocess.DEVNULL,
            )
            print(f"{face.name}: {target.stat().st_size / 1e6:.1f} MB", flush=True)


if __name__ == "__main__":
    main()
