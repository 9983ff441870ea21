"""The held-out faces: Debian packages the training renderer never uses (scripts/ocrmodel/fonts.py
names its faces), none of them a derivative of the M+ or IPA faces training draws with.

Konatu was drawn for BeOS, Sawarabi Mincho and Gothic are their own designs, Dejima Mincho and
Oradano Mincho GSRR are Meiji-style mincho faces of their own. (Komatuna, Umeplus, Takao and
Ricty Diminished were left out: each is built from M+ or IPA glyphs.) A case draws its text in
one face that maps every character of it (texts.py picks the text first, then a face that
covers it), so no fallback face is needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from PIL import ImageFont

SYSTEM_FONT_ROOT = Path("/usr/share/fonts")


@dataclass(frozen=True)
class HeldoutFace:
    name: str
    package: str  # the Debian package that ships it (scripts/setup installs it)
    path: str  # under /usr/share/fonts


HELDOUT_FACES: tuple[HeldoutFace, ...] = (
    HeldoutFace("konatu", "fonts-konatu", "truetype/konatu/Konatu.ttf"),
    HeldoutFace("sawarabi-gothic", "fonts-sawarabi-gothic", "truetype/sawarabi-gothic/sawarabi-gothic-medium.ttf"),
    HeldoutFace("sawarabi-mincho", "fonts-sawarabi-mincho", "truetype/sawarabi-mincho/sawarabi-mincho-medium.ttf"),
    HeldoutFace("dejima-mincho", "fonts-dejima-mincho", "truetype/dejima-mincho/dejima-mincho-r227.ttf"),
    HeldoutFace("oradano-gsrr", "fonts-oradano-mincho-gsrr", "truetype/oradano-mincho/OradanoGSRR.ttf"),
)


def face_file(face: HeldoutFace) -> Path:
    return SYSTEM_FONT_ROOT / face.path


def require_faces() -> None:
    """Stops with the packages to install when a held-out face is missing."""
    missing = [face for face in HELDOUT_FACES if not face_file(face).is_file()]
    if missing:
        packages = " ".join(sorted({face.package for face in missing}))
        raise SystemExit(
            f"held-out faces missing under {SYSTEM_FONT_ROOT}: {[face.name for face in missing]}; "
            f"install the Debian packages {packages} (scripts/setup does)"
        )


@cache
def coverage(face: HeldoutFace) -> frozenset[str]:
    """The characters the face maps."""
    from fontTools.ttLib import TTFont

    return frozenset(chr(code) for code in TTFont(str(face_file(face)), lazy=True).getBestCmap())


@cache
def font(face: HeldoutFace, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(face_file(face)), size)
