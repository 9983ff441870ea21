"""Writes fixture/: small tokenizers of each model kind a Hugging Face export ships (WordPiece as
BERT's, byte-level BPE as GPT-2's and RoBERTa's, BPE with Metaspace and byte fallback as a
converted sentencepiece model's, Unigram), trained by Hugging Face's `tokenizers` (the version
requirements.txt pins, the crate's version in crate/Cargo.toml) on the evaluation sets' Japanese
text and some ASCII, and the text that package decodes from id sequences, for
test_hf_tokenizer.py to hold the core's HfTokenizer to. Run in its own environment, from the
repository root:

    python3 -m venv /tmp/tok-parity && /tmp/tok-parity/bin/pip install -r scripts/tokenizer_parity/requirements.txt
    cd scripts && /tmp/tok-parity/bin/python -m tokenizer_parity.make_fixture

The sequences of each tokenizer: encoded evaluation lines wrapped in the special tokens,
text with characters the vocabulary lacks (the unknown token, or byte-fallback pieces), and
seeded random ids over the whole vocabulary; each decoded with and without the special tokens.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

import tokenizers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "fixture"

ASCII_LINES = [
    "The quick brown fox jumps over the lazy dog.",
    "OCR benchmark: 42 cases, 3.5 ms per token (WebGPU, f16).",
    "Hello, world! It's a test -- isn't it?",
    "manga-ocr reads vertical text; TrOCR reads printed lines.",
]
# Held out of training: characters the vocabularies are unlikely to have.
UNSEEN_LINES = ["鬱蒼とした森で𠮷野家を探す", "Zebra ±√ naïve café ☃"]
RANDOM_SEQUENCES = 12
RANDOM_LENGTH = 24
# Keeps each tokenizer.json under 50 KB.
VOCAB_SIZE = 700
LIMIT_ALPHABET = 400
# Unigram's trainer keeps every character of the corpus (about 1200): it needs room beyond them.
UNIGRAM_VOCAB_SIZE = 1600


def corpus() -> list[str]:
    lines = []
    for cases in sorted((ROOT / "models" / "eval").glob("*/cases.json")):
        lines += [case["expected"] for case in json.loads(cases.read_text(encoding="utf-8"))]
    return lines + ASCII_LINES


def wordpiece(lines: list[str]) -> Tokenizer:
    """BERT's: CJK characters split apart by the normaliser, `##` continuations."""
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=False)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(
        vocab_size=VOCAB_SIZE,
        limit_alphabet=LIMIT_ALPHABET,
        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
    )
    tokenizer.train_from_iterator(lines, trainer)
    return tokenizer


def byte_level_bpe(lines: list[str]) -> Tokenizer:
    """GPT-2's and RoBERTa's: every byte a token, so no text is unknown."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
    )
    tokenizer.train_from_iterator(lines, trainer)
    return tokenizer


def metaspace_bpe(lines: list[str]) -> Tokenizer:
    """A sentencepiece BPE model as transformers converts it (Llama's decoder chain): `▁` for
    spaces, and a character outside the vocabulary spelt as its UTF-8 bytes, `<0xE9>` pieces in
    the model's vocabulary (not added tokens, so never skipped)."""
    trained = Tokenizer(models.BPE(unk_token="<unk>"))
    trained.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE - 256,
        limit_alphabet=LIMIT_ALPHABET,
        special_tokens=["<unk>", "<s>", "</s>"],
    )
    trained.train_from_iterator(lines, trainer)
    # The trainer cannot put byte pieces in the model's vocabulary: they go in after the
    # special tokens, as sentencepiece numbers them, and the trained tokens after them.
    model = json.loads(trained.to_str())
    trained_vocab = sorted(model["model"]["vocab"].items(), key=lambda item: item[1])
    specials = [token for token, _ in trained_vocab[:3]]
    ordered = specials + [f"<0x{byte:02X}>" for byte in range(256)] + [token for token, _ in trained_vocab[3:]]
    vocab = {token: index for index, token in enumerate(ordered)}
    model["model"].update(vocab=vocab, byte_fallback=True, fuse_unk=True)
    for added in model["added_tokens"]:
        added["id"] = vocab[added["content"]]
    tokenizer = Tokenizer.from_str(json.dumps(model))
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
    )
    return tokenizer


def unigram(lines: list[str]) -> Tokenizer:
    """A sentencepiece Unigram model as transformers converts it (T5's, XLM-R's)."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(
        vocab_size=UNIGRAM_VOCAB_SIZE,
        special_tokens=["<pad>", "</s>", "<unk>"],
        unk_token="<unk>",
    )
    tokenizer.train_from_iterator(lines, trainer)
    return tokenizer


KINDS = {
    "wordpiece": (wordpiece, "[CLS]", "[SEP]"),
    "bpe_byte_level": (byte_level_bpe, "<s>", "</s>"),
    "bpe_metaspace": (metaspace_bpe, "<s>", "</s>"),
    "unigram": (unigram, "<pad>", "</s>"),
}


def sequences(tokenizer: Tokenizer, lines: list[str], start: str, end: str, seed: int) -> list[tuple[str, list[int]]]:
    """The id sequences decoded: what a reading's generated ids look like, and random ones."""
    wrap = [tokenizer.token_to_id(start)], [tokenizer.token_to_id(end)]
    found = [
        ("evaluation line", lines[0]),
        ("evaluation line", lines[len(lines) // 2]),
        ("ASCII line", ASCII_LINES[2]),
    ] + [("unseen characters", line) for line in UNSEEN_LINES]
    out = [(what, wrap[0] + tokenizer.encode(text, add_special_tokens=False).ids + wrap[1]) for what, text in found]
    out.append(("special tokens only", wrap[0] + wrap[1] + wrap[1]))
    generator = random.Random(seed)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    out += [("random ids", [generator.randrange(size) for _ in range(RANDOM_LENGTH)]) for _ in range(RANDOM_SEQUENCES)]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="the fixture folder (default: %(default)s)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    lines = corpus()
    cases = []
    for seed, (kind, (build, start, end)) in enumerate(KINDS.items()):
        tokenizer = build(lines)
        path = args.out / f"{kind}.json"
        path.write_text(tokenizer.to_str(), encoding="utf-8")
        for what, ids in sequences(tokenizer, lines, start, end, seed):
            for skip_special in (True, False):
                text = tokenizer.decode(ids, skip_special_tokens=skip_special)
                cases.append({"tokenizer": kind, "what": what, "ids": ids, "skipSpecial": skip_special, "text": text})
        print(f"{path}: {path.stat().st_size / 1e3:.1f} KB, {tokenizer.get_vocab_size()} tokens")
    fixture = {"tokenizers": tokenizers.__version__, "cases": cases}
    (args.out / "cases.json").write_text(json.dumps(fixture, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{args.out / 'cases.json'}: {len(cases)} cases")


if __name__ == "__main__":
    main()
