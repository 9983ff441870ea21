"""Write models/vocab.json: the 14626 characters of the contract's vocabulary (ids 4..14629).

Built offline and deterministically from Python's codecs: every single character that
`euc_jis_2004` can encode (the JIS X 0213 repertoire that Japanese text draws on), plus
printable ASCII, minus whitespace and control characters (the scorer strips whitespace, so
the model never needs to emit it), padded with the lowest unused CJK unified ideographs.
The result is sorted by code point so that an id never depends on set iteration order.
"""

from __future__ import annotations

import argparse
import json
import unicodedata
from pathlib import Path

VOCAB_SIZE = 14626
SKIPPED_CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp", "Cs", "Co", "Cn"}

# Every character of the seed's 13 expected strings must be in the vocabulary.
SEED_EXPECTED = [
    "知らない世界で見つけたイメージを",
    "カナデトモスソラ（Ｋａｎａｄｅｔｏｍｏｓｕｓｏｒａ）",
    "建設会社社員行方",
    "だとしてもこのレベルがウロつくなんて．．．おそらく２級の呪い",
    "パチパチパチパチ",
    "バビュン",
    "僕の過去とか未来とか",
    "くらべられっ子",
    "そうだクラス分けがあるんだった！！",
    "脇役よ、主役を超えよ！",
    "Ｅｈ～Ｉｄｏｎ＇ｔｒｅａｌｌｙｗａｎｔｔｏ～",
    "「Ｓｏｒｒｙｆｏｒｔｈｅｗａｉｔ～！Ｄｉｄｙｏｕｗａｉｔｌｏｎｇ？」",
    "ＹａｍａｔｅＡｒｅａＮｅｗｒｅｓｉｄｅｎｔｉａｌｄｉｓｔｒｉｃｔｆｏｒｆｏｒｅｉｇｎｅｒｓ",
]


def _wanted(character: str) -> bool:
    return unicodedata.category(character) not in SKIPPED_CATEGORIES and not character.isspace()


def build_vocabulary() -> list[str]:
    chosen: set[str] = set()
    for code_point in range(0x110000):
        if 0xD800 <= code_point <= 0xDFFF:
            continue
        character = chr(code_point)
        try:
            character.encode("euc_jis_2004")
        except UnicodeEncodeError:
            continue
        if _wanted(character):
            chosen.add(character)
    chosen.update(chr(code_point) for code_point in range(0x21, 0x7F))
    padding = 0x4E00
    while len(chosen) < VOCAB_SIZE:
        chosen.add(chr(padding))
        padding += 1
    if len(chosen) != VOCAB_SIZE:
        raise SystemExit(f"vocabulary has {len(chosen)} characters, the contract needs {VOCAB_SIZE}")
    vocabulary = sorted(chosen)
    missing = sorted({c for text in SEED_EXPECTED for c in text} - chosen)
    if missing:
        raise SystemExit(f"vocabulary misses characters of the seed's strings: {missing}")
    return vocabulary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "models" / "vocab.json")
    args = parser.parse_args()
    vocabulary = build_vocabulary()
    args.out.write_text(json.dumps(vocabulary, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out} ({len(vocabulary)} characters, {len(vocabulary) + 4} ids)")


if __name__ == "__main__":
    main()
