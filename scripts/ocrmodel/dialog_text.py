"""Random strings with the character mix of manga dialog, shared by the evaluation sets and training.

The mix: hiragana and katakana runs, common kanji (JIS X 0208 level 1, the 2965 kanji that
everyday Japanese text draws on), fullwidth Latin words and digits, and dialog punctuation
(！？、。「」～…．). Repeated chunks (パチパチ) and punctuation runs (．．．) are generated on
purpose: a model trained without them stutters or drops characters on such strings.

U+301C 〜 (wave dash) is left out on purpose: it looks almost like U+FF5E ～ (the fullwidth tilde
the seed's strings use), and training on both made the pair a third of all errors in an earlier
experiment. Strings hold no whitespace, since the scorer strips it.
"""

from __future__ import annotations

import random
from functools import lru_cache

HIRAGANA = [chr(c) for c in range(0x3041, 0x3094)]
KATAKANA = [chr(c) for c in range(0x30A1, 0x30F7)] + ["ー"] * 6
LATIN_UPPER = [chr(c) for c in range(0xFF21, 0xFF3B)]
LATIN_LOWER = [chr(c) for c in range(0xFF41, 0xFF5B)]
DIGITS = [chr(c) for c in range(0xFF10, 0xFF1A)]
# English letter frequencies (per mille, rounded) so fullwidth words look like the seed's.
LOWER_WEIGHTS = [82, 15, 28, 43, 127, 22, 20, 61, 70, 2, 8, 40, 24, 67, 75, 19, 1, 60, 63, 91, 28, 10, 24, 2, 20, 1]
END_PUNCTUATION = ["。", "！", "？", "！！", "！？", "…", "……", "．．．", "～", "っ"]
OPEN_CLOSE = [("「", "」"), ("『", "』"), ("（", "）")]


@lru_cache(maxsize=1)
def common_kanji() -> tuple[str, ...]:
    """JIS X 0208 level-1 kanji: EUC-JP rows 16..47 (lead bytes 0xB0..0xCF), sorted by code."""
    found = []
    for lead in range(0xB0, 0xD0):
        for trail in range(0xA1, 0xFF):
            try:
                character = bytes([lead, trail]).decode("euc_jp")
            except UnicodeDecodeError:
                continue
            if len(character) == 1 and 0x4E00 <= ord(character) <= 0x9FFF:
                found.append(character)
    return tuple(sorted(set(found)))


def _latin_word(rng: random.Random) -> str:
    length = rng.choice([1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 10])
    word = "".join(rng.choices(LATIN_LOWER, weights=LOWER_WEIGHTS, k=length))
    if rng.random() < 0.4:
        word = rng.choice(LATIN_UPPER) + word[1:]
    elif rng.random() < 0.08:
        word = "".join(rng.choices(LATIN_UPPER, k=length))
    return word


def _japanese_segment(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.42:
        return "".join(rng.choices(HIRAGANA, k=rng.randint(1, 6)))
    if kind < 0.70:
        return "".join(rng.choices(common_kanji(), k=rng.randint(1, 3)))
    if kind < 0.90:
        return "".join(rng.choices(KATAKANA, k=rng.randint(2, 7)))
    if kind < 0.95:
        return "".join(rng.choices(DIGITS, k=rng.randint(1, 3)))
    return _latin_word(rng)


def _japanese(rng: random.Random, length: int) -> str:
    parts: list[str] = []
    size = 0
    while size < length:
        roll = rng.random()
        if roll < 0.08:
            chunk = "".join(rng.choices(KATAKANA + HIRAGANA, k=rng.randint(1, 3)))
            piece = chunk * rng.randint(2, 4)
        elif roll < 0.18 and parts:
            piece = rng.choice(["、", "、", "。", "・", "！", "？", "…", "～", "ー", "っ"])
        else:
            piece = _japanese_segment(rng)
        parts.append(piece)
        size += len(piece)
    return "".join(parts)


def _latin(rng: random.Random, length: int) -> str:
    parts: list[str] = []
    size = 0
    while size < length:
        roll = rng.random()
        if roll < 0.06 and parts:
            piece = "＇" + rng.choice(["ｔ", "ｓ", "ｍ", "ｌｌ", "ｒｅ", "ｖｅ"])
        elif roll < 0.12:
            piece = "".join(rng.choices(DIGITS, k=rng.randint(1, 4)))
        elif roll < 0.18 and parts:
            piece = rng.choice(["～", "！", "？", "．", "，", "…", "－"])
        else:
            piece = _latin_word(rng)
        parts.append(piece)
        size += len(piece)
    return "".join(parts)


def random_dialog(rng: random.Random, max_length: int = 48) -> str:
    """One string of 1..max_length characters drawn from the dialog mix."""
    roll = rng.random()
    if roll < 0.45:
        target = rng.randint(1, 12)
    elif roll < 0.80:
        target = rng.randint(8, 26)
    else:
        target = rng.randint(20, max_length)
    style = rng.random()
    if style < 0.68:
        text = _japanese(rng, target)
    elif style < 0.88:
        text = _latin(rng, target)
    else:
        # Mixed, like the seed's カナデトモスソラ（Ｋａｎａｄｅｔｏｍｏｓｕｓｏｒａ）.
        text = _japanese(rng, max(1, target // 2)) + "（" + _latin(rng, max(1, target // 2)) + "）"
    if rng.random() < 0.35:
        text += rng.choice(END_PUNCTUATION)
    if rng.random() < 0.12:
        opening, closing = rng.choice(OPEN_CLOSE)
        text = opening + text + closing
    if len(text) > max_length:
        text = text[:max_length]
    return text


def mix_characters() -> set[str]:
    """Every character random_dialog can emit."""
    characters = set(HIRAGANA) | set(KATAKANA) | set(LATIN_UPPER) | set(LATIN_LOWER) | set(DIGITS)
    characters |= set(common_kanji())
    characters |= set("".join(END_PUNCTUATION)) | {c for pair in OPEN_CLOSE for c in pair}
    characters |= set("、。・！？…～ーっ＇ｔｓｍｌｒｅｖ．，－")
    return characters


# The manga renderer's text (training and the style evaluation sets): the same mix, lengths up
# to 100, plus small kana, tate-chu-yoko digit pairs and characters drawn from the whole
# drawable vocabulary (a shuffled deck, so every character comes round).
SMALL_KANA_TEXT = list("ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ")
LONG_PUNCTUATION = [
    "、",
    "、",
    "。",
    "・",
    "！",
    "？",
    "…",
    "……",
    "～",
    "ー",
    "っ",
    "！！",
    "！？",
    "―",
    "「",
    "」",
    "『",
    "』",
]


class CharacterDeck:
    """Characters dealt from a shuffled list, reshuffled when it runs out."""

    def __init__(self, characters: list[str], rng: random.Random):
        self.characters = list(characters)
        self.rng = rng
        self.position = len(self.characters)

    def deal(self, count: int) -> str:
        dealt = []
        for _ in range(count):
            if self.position >= len(self.characters):
                self.rng.shuffle(self.characters)
                self.position = 0
            dealt.append(self.characters[self.position])
            self.position += 1
        return "".join(dealt)


def manga_length(rng: random.Random, max_length: int = 100) -> int:
    roll = rng.random()
    if roll < 0.35:
        return rng.randint(1, 12)
    if roll < 0.70:
        return rng.randint(8, 30)
    if roll < 0.88:
        return rng.randint(20, 60)
    return rng.randint(40, max_length)


def random_manga_dialog(rng: random.Random, deck: CharacterDeck | None, length: int, rare_share: float = 0.12) -> str:
    """One string of exactly `length` characters: the dialog mix with small kana, digit pairs,
    punctuation in runs and, at `rare_share` of the segments, characters from the deck."""
    parts: list[str] = []
    size = 0
    latin = rng.random() < 0.15
    while size < length:
        roll = rng.random()
        if deck is not None and roll < rare_share:
            piece = deck.deal(rng.randint(1, 4))
        elif roll < rare_share + 0.06:
            piece = "".join(rng.choices(SMALL_KANA_TEXT + HIRAGANA, k=rng.randint(1, 3)))
        elif roll < rare_share + 0.10:
            piece = "".join(rng.choices(DIGITS, k=rng.choice([1, 2, 2, 2, 3, 4])))
        elif roll < rare_share + 0.20 and parts:
            piece = rng.choice(LONG_PUNCTUATION)
        elif latin:
            piece = _latin(rng, rng.randint(2, 10))
        else:
            piece = _japanese(rng, rng.randint(1, 8))
        parts.append(piece)
        size += len(piece)
    text = "".join(parts)[:length]
    if length >= 3 and rng.random() < 0.1:
        opening, closing = rng.choice(OPEN_CLOSE)
        text = opening + text[1:-1] + closing
    return text


SOKUON_AFTER = list("いかきくけこさしすせそたちつてとはひふへほやゆよらりるれろわ")
GLIDE_HEADS = list("きぎしじちにひびぴみり")


def small_kana_phrase(rng: random.Random, length: int) -> str:
    """Dialog dense in small kana and sokuon (`いってらっしゃい`, `ちょっと`, `きゃっ`), the
    characters a tilted line loses first; katakana for a quarter of them."""
    parts: list[str] = []
    while sum(map(len, parts)) < length:
        roll = rng.random()
        if roll < 0.35:
            parts.append(rng.choice(SOKUON_AFTER) + "っ" + rng.choice(SOKUON_AFTER))
        elif roll < 0.65:
            parts.append(rng.choice(GLIDE_HEADS) + rng.choice("ゃゅょ"))
        elif roll < 0.75:
            parts.append(rng.choice(HIRAGANA) + rng.choice("ぁぃぅぇぉ"))
        else:
            parts.append("".join(rng.choices(HIRAGANA, k=rng.randint(1, 3))))
    text = "".join(parts)[:length]
    if rng.random() < 0.25:
        text = "".join(chr(ord(c) + 0x60) if "ぁ" <= c <= "ゖ" else c for c in text)
    return text
