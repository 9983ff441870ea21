"""The held-out dialog: kana-heavy lines with kanji, punctuation, ！？…, small kana, long vowels
and some full-width latin and digits, from a grammar of its own (not ocrmodel.dialog_text).

Characters come from the vocabulary (models/vocab.json, so the model can emit every one) and,
for kanji, JIS X 0208 level 1 (the common kanji, read from Python's euc_jp codec) mapped by
every held-out face. The strings a set reads are its committed cases.json; `heldout_strings`
reads them for training to leave out, so training needs neither these faces nor this grammar.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path

from .faces import HELDOUT_FACES, coverage

REPO = Path(__file__).resolve().parents[2]
VOCAB = REPO / "models" / "vocab.json"
EVAL_DIR = REPO / "models" / "eval"
SET_PREFIX = "heldout-"

# Characters drawn the same as another in most faces (カ/力, ヘ/へ, ロ/口, ...): no reader can tell
# them apart in a crop, so the grammar never asks for the second of each pair.
LOOKALIKES = "力口二工夕卜八一ヘ"
SMALL_KANA = "ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮ"
HIRAGANA = [chr(c) for c in range(ord("あ"), ord("ゔ")) if chr(c) not in SMALL_KANA + "ゐゑ"]
KATAKANA = [chr(c) for c in range(ord("ア"), ord("ヴ")) if chr(c) not in SMALL_KANA + "ヰヱ" + LOOKALIKES]
PARTICLES = ["は", "が", "を", "に", "で", "と", "も", "の", "へ", "から", "まで", "だけ", "なら"]
ENDINGS = "よ ね な ぞ ぜ わ か かな のに じゃん だろ です ます でしょ って さ".split()
TAILS = "する した して しない った って いる いた ない れる らない ろう たい ちゃう てる".split()
OPENERS = "えっ あれ うん ねえ おい ほら まさか ちょっと やだ へえ ふーん よし さあ うわっ".split()
CLOSERS = ["！", "？", "…", "！！", "！？", "ー！", "…？", "。", "", "っ！", "…！"]
LATIN = "ＡＢＣＤＥＦＧＨＩＪＫＬＭＮＯＰＱＲＳＴＵＶＷＸＹＺ"
DIGITS = "０１２３４５６７８９"
COUNTERS = ["人", "回", "分", "円", "個", "日", "年", "時"]
MIN_LENGTH, MAX_LENGTH = 3, 26


def _level1_kanji(character: str) -> bool:
    try:
        encoded = character.encode("euc_jp")
    except UnicodeEncodeError:
        return False
    return len(encoded) == 2 and 0xB0 <= encoded[0] <= 0xCF


@cache
def kanji_pool() -> tuple[str, ...]:
    vocabulary = set(json.loads(VOCAB.read_text(encoding="utf-8")))
    mapped = frozenset.intersection(*(coverage(face) for face in HELDOUT_FACES))
    return tuple(sorted(c for c in vocabulary & mapped if _level1_kanji(c) and c not in LOOKALIKES))


def _katakana_word(rng: random.Random) -> str:
    word = "".join(rng.choice(KATAKANA) for _ in range(rng.randint(2, 4)))
    if rng.random() < 0.4:
        word = word[:1] + rng.choice("ッャュョィ") + word[1:]
    return word + ("ー" if rng.random() < 0.4 else "")


def _noun(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.55:
        return "".join(rng.choice(kanji_pool()) for _ in range(rng.randint(1, 2)))
    if roll < 0.8:
        return _katakana_word(rng)
    if roll < 0.9:
        return "".join(rng.choice(DIGITS) for _ in range(rng.randint(1, 2))) + rng.choice(COUNTERS)
    return "".join(rng.choice(LATIN) for _ in range(rng.randint(2, 3)))


def _predicate(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.5:
        return rng.choice(kanji_pool()) + rng.choice(TAILS) + (rng.choice(ENDINGS) if rng.random() < 0.5 else "")
    if roll < 0.8:
        return "".join(rng.choice(HIRAGANA) for _ in range(rng.randint(1, 3))) + rng.choice(ENDINGS)
    return _noun(rng) + rng.choice(["だ", "だよ", "じゃない", "かも", "です", "なの"])


def dialog_line(rng: random.Random) -> str:
    """One line of dialog, MIN_LENGTH..MAX_LENGTH characters."""
    while True:
        parts = []
        if rng.random() < 0.3:
            parts.append(rng.choice(OPENERS) + rng.choice(["、", "…", "！", "？", "ー"]))
        for _ in range(rng.randint(0, 2)):
            parts.append(_noun(rng) + rng.choice(PARTICLES))
        parts.append(_predicate(rng))
        parts.append(rng.choice(CLOSERS))
        text = "".join(parts)
        if rng.random() < 0.08:
            text = "「" + text + "」"
        if MIN_LENGTH <= len(text) <= MAX_LENGTH:
            return text


def heldout_set_dirs() -> list[Path]:
    return sorted(path.parent for path in EVAL_DIR.glob(f"{SET_PREFIX}*/cases.json"))


def heldout_strings() -> set[str]:
    """Every string a committed held-out set reads (the empty reading is not a string)."""
    directories = heldout_set_dirs()
    if not directories:
        # Training leaves these strings out; without the files it would silently draw them.
        raise FileNotFoundError(f"no {SET_PREFIX}*/cases.json under {EVAL_DIR}: the held-out sets are committed there")
    strings: set[str] = set()
    for directory in directories:
        cases = json.loads((directory / "cases.json").read_text(encoding="utf-8"))
        strings |= {case["expected"] for case in cases if case["expected"]}
    return strings
