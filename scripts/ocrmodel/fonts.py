"""The typefaces the training renderer and the style evaluation sets draw with.

One table, `FACES`: every face's Debian package, file and family class (gothic, mincho, rounded,
handwritten, brush), so the setup installs exactly these packages and the GPU machine, which
has no system fonts, receives subsets of exactly these files (`scripts/train/font_subsets.py`).

A face draws only the characters its cmap maps; everything else falls back along
`FALLBACK_CHAIN` (Noto CJK JP, then HanaMin A for the rare kanji Noto lacks), as a typesetter's
composite font would. A character no face of the chain maps is not drawable at all; the
training text never asks for one (`drawable_vocabulary`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

SYSTEM_FONT_ROOT = Path("/usr/share/fonts")


@dataclass(frozen=True)
class Face:
    name: str  # stable id: eval sets and logs name faces by it
    package: str  # the Debian package that ships it
    path: str  # under /usr/share/fonts
    index: int  # face index inside a collection (.ttc)
    family: str  # gothic | mincho | rounded | handwritten | brush


FACES: tuple[Face, ...] = (
    Face("noto-sans-light", "fonts-noto-cjk-extra", "opentype/noto/NotoSansCJK-Light.ttc", 0, "gothic"),
    Face("noto-sans-regular", "fonts-noto-cjk", "opentype/noto/NotoSansCJK-Regular.ttc", 0, "gothic"),
    Face("noto-sans-bold", "fonts-noto-cjk", "opentype/noto/NotoSansCJK-Bold.ttc", 0, "gothic"),
    Face("noto-sans-black", "fonts-noto-cjk-extra", "opentype/noto/NotoSansCJK-Black.ttc", 0, "gothic"),
    Face("noto-serif-light", "fonts-noto-cjk-extra", "opentype/noto/NotoSerifCJK-Light.ttc", 0, "mincho"),
    Face("noto-serif-regular", "fonts-noto-cjk", "opentype/noto/NotoSerifCJK-Regular.ttc", 0, "mincho"),
    Face("noto-serif-bold", "fonts-noto-cjk", "opentype/noto/NotoSerifCJK-Bold.ttc", 0, "mincho"),
    Face("noto-serif-black", "fonts-noto-cjk-extra", "opentype/noto/NotoSerifCJK-Black.ttc", 0, "mincho"),
    Face("ipaex-gothic", "fonts-ipaexfont-gothic", "opentype/ipaexfont-gothic/ipaexg.ttf", 0, "gothic"),
    Face("ipaex-mincho", "fonts-ipaexfont-mincho", "opentype/ipaexfont-mincho/ipaexm.ttf", 0, "mincho"),
    Face("bizud-gothic", "fonts-morisawa-bizud-gothic", "truetype/bizud-gothic/BIZUDGothic-Regular.ttf", 0, "gothic"),
    Face("bizud-gothic-bold", "fonts-morisawa-bizud-gothic", "truetype/bizud-gothic/BIZUDGothic-Bold.ttf", 0, "gothic"),
    Face("bizud-mincho", "fonts-morisawa-bizud-mincho", "truetype/bizud-mincho/BIZUDMincho-Regular.ttf", 0, "mincho"),
    Face("mplus1-regular", "fonts-mplus", "opentype/mplus/Mplus1-Regular.otf", 0, "gothic"),
    Face("mplus1-black", "fonts-mplus", "opentype/mplus/Mplus1-Black.otf", 0, "gothic"),
    Face("mplus2-medium", "fonts-mplus", "opentype/mplus/Mplus2-Medium.otf", 0, "rounded"),
    Face("vl-gothic", "fonts-vlgothic", "truetype/vlgothic/VL-Gothic-Regular.ttf", 0, "gothic"),
    Face("ume-gothic", "fonts-horai-umefont", "truetype/horai-umefont/ume-hgo4.ttf", 0, "gothic"),
    Face("ume-mincho", "fonts-horai-umefont", "truetype/horai-umefont/ume-tms3.ttf", 0, "mincho"),
    Face("hanazono-mincho", "fonts-hanazono", "truetype/hanazono/HanaMinA.ttf", 0, "mincho"),
    Face("motoya-maruberi", "fonts-motoya-l-maruberi", "truetype/motoya-l-maruberi/MTLmr3m.ttf", 0, "rounded"),
    Face("motoya-cedar", "fonts-motoya-l-cedar", "truetype/motoya-l-cedar/MTLc3m.ttf", 0, "rounded"),
    Face("klee-regular", "fonts-klee", "truetype/klee/KleeOne-Regular.ttf", 0, "handwritten"),
    Face("klee-semibold", "fonts-klee", "truetype/klee/KleeOne-SemiBold.ttf", 0, "handwritten"),
    Face("seto", "fonts-seto", "truetype/seto/setofont.ttf", 0, "handwritten"),
    Face("kiloji", "fonts-kiloji", "truetype/kiloji/kiloji.ttf", 0, "handwritten"),
    Face("kouzan-brush", "fonts-kouzan-mouhitsu", "truetype/kouzan-mouhitsu/kouzan-mouhitsu.ttf", 0, "brush"),
    Face("aoyagi-kouzan", "fonts-aoyagi-kouzan-t", "truetype/aoyagi-kouzan-t/AoyagiKouzanT.ttf", 0, "brush"),
    Face("aoyagi-soseki", "fonts-aoyagi-soseki", "truetype/aoyagi-soseki/aoyagi-soseki.ttf", 0, "brush"),
)

# Drawn only where no face of the chain maps a character: the combining marks of the vocabulary.
FALLBACK_ONLY: tuple[Face, ...] = (
    Face("dejavu-sans", "fonts-dejavu-core", "truetype/dejavu/DejaVuSans.ttf", 0, "gothic"),
)
FAMILIES = ("gothic", "mincho", "rounded", "handwritten", "brush")
# Where a face lacks a character: the Noto face of its kind, then HanaMin A (14,594 of the
# vocabulary's 14,626 characters; Noto CJK JP maps 14,376), then DejaVu Sans for the combining marks.
FALLBACK_FOR_FAMILY = {"mincho": "noto-serif-regular"}
FALLBACK_DEFAULT = "noto-sans-regular"
LAST_RESORT = ("hanazono-mincho", "dejavu-sans")


def subset_name(face: Face) -> str:
    """The file name of a face's subset: one face per file (FreeType and fontTools read the
    format from the contents, so one suffix serves TrueType and CFF outlines)."""
    return f"{face.name}.otf"


def face_named(name: str) -> Face:
    for face in FACES + FALLBACK_ONLY:
        if face.name == name:
            return face
    raise KeyError(f"unknown face {name!r}; known: {[f.name for f in FACES]}")


def fallback_chain(face: Face) -> tuple[Face, ...]:
    """The face itself, its family's Noto face, then the last resort (duplicates dropped)."""
    names = [face.name, FALLBACK_FOR_FAMILY.get(face.family, FALLBACK_DEFAULT), *LAST_RESORT]
    return tuple(face_named(name) for name in dict.fromkeys(names))


class FontLibrary:
    """Resolves the table's faces to files: the system's, or the subsets in `font_dir` made for a
    machine without system fonts (`subset_name`)."""

    def __init__(self, font_dir: Path | None = None):
        self.font_dir = font_dir
        missing = [face.name for face in FACES + FALLBACK_ONLY if not self.path(face).is_file()]
        if missing:
            where = font_dir or SYSTEM_FONT_ROOT
            packages = sorted({face_named(name).package for name in missing})
            raise SystemExit(
                f"fonts missing under {where}: {missing}; install the Debian packages "
                f"{packages} (scripts/setup does) or make the subsets "
                "(scripts/train/font_subsets.py)"
            )

    def path(self, face: Face) -> Path:
        if self.font_dir is not None:
            return self.font_dir / subset_name(face)
        return SYSTEM_FONT_ROOT / face.path

    def handle(self, face: Face) -> tuple[str, int]:
        """(file, face index) as render.font() takes it. Subsets are single-face files."""
        return (str(self.path(face)), 0 if self.font_dir is not None else face.index)

    def covers(self, face: Face, character: str) -> bool:
        return ord(character) in _cmap(str(self.path(face)), 0 if self.font_dir is not None else face.index)

    def face_for(self, face: Face, character: str) -> Face | None:
        """The first face of the face's fallback chain that maps the character, or None."""
        for candidate in fallback_chain(face):
            if self.covers(candidate, character):
                return candidate
        return None


@cache
def _cmap(path: str, index: int) -> frozenset[int]:
    from fontTools.ttLib import TTCollection, TTFont  # imported here, as only renderers need it

    if path.endswith(".ttc"):
        font = TTCollection(path, lazy=True).fonts[index]
    else:
        font = TTFont(path, lazy=True, fontNumber=index)
    return frozenset(font.getBestCmap())


def drawable_vocabulary(library: FontLibrary, vocabulary: list[str]) -> tuple[list[str], list[str]]:
    """(characters some face of the chain maps, characters none maps), in vocabulary order."""
    chain = fallback_chain(face_named(FALLBACK_DEFAULT)) + fallback_chain(face_named("noto-serif-regular"))
    drawable, missing = [], []
    for character in vocabulary:
        (drawable if any(library.covers(face, character) for face in chain) else missing).append(character)
    return drawable, missing
