"""Makes a small VisionEncoderDecoder test model the way its users make theirs: seeded PyTorch
weights saved by transformers, exported by Hugging Face's own exporter (optimum-onnx's
`optimum-cli export onnx --task image-to-text-with-past`), with PyTorch `generate()`'s token ids
on evaluation images saved beside the export (expected-ids.json) for the CPU oracle and the page
to be held to. Run in its own environment (requirements.txt here), from scripts/:

    cd scripts && ../.hfenv/bin/python -m hf_test_model.make --model vit-trocr-tiny \\
        --seed 0 --out ../models/hf-test/vit-trocr-tiny

Two recipes (RECIPES), both a ViT encoder and a TrOCR decoder (optimum-onnx exports a BERT decoder,
manga-ocr's, only without a cache: its ONNX config has no past key values): vit-trocr-tiny
(manga-ocr's character-level WordPiece tokenizer, bilinear resize, a repetition penalty and
no_repeat_ngram_size, the merged decoder) and vit-trocr-bpe (a byte-level BPE tokenizer, bicubic
resize at another image size, other widths and depth, a repetition penalty alone, the decoder pair of
--no-post-process).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import torch
from PIL import Image
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    BertTokenizerFast,
    GenerationConfig,
    PreTrainedTokenizerFast,
    TrOCRConfig,
    VisionEncoderDecoderConfig,
    VisionEncoderDecoderModel,
    ViTConfig,
    ViTImageProcessor,
)

ROOT = Path(__file__).resolve().parents[2]
EVAL_DIR = ROOT / "models" / "eval"

# The reference cases: both smoke sets' images, hayai13 whole and the first cases of other styles.
REFERENCE_SETS = {"smoke2": 0, "hayai13": 0, "balloon": 3, "long": 3, "lowres": 3, "sfx": 3, "tilted": 3}
MAX_NEW_TOKENS = 24
# A step is a near tie when its two best scores (after the token rule) lie within this of each
# other, as scripts/ocrmodel/oracle.py counts them: there float32 kernels may fairly differ.
NEAR_TIE = 1e-3
PIL_RESAMPLE = {"bilinear": Image.Resampling.BILINEAR, "bicubic": Image.Resampling.BICUBIC}


@dataclass(frozen=True)
class Recipe:
    tokenizer: str  # "wordpiece" or "bpe-bytelevel"
    bpe_vocab_size: int | None  # the BPE trainer's target (the WordPiece vocabulary is characters)
    image_size: int
    patch_size: int
    encoder_hidden: int
    decoder_hidden: int
    layers: int
    heads: int
    resample: str  # a PIL_RESAMPLE key
    # Initial weight scales (the configs' initializer_range): transformers' 0.02 gives a tiny
    # random model near-equal logits, so greedy decoding repeats one token and meets near ties.
    encoder_init: float
    decoder_init: float
    # A random model almost never chooses EOS among thousands of ids: EOS's row of the output
    # layer is multiplied by this so that some readings end before the token limit.
    eos_row_scale: float
    repetition_penalty: float | None
    no_repeat_ngram_size: int | None
    merged: bool  # the merged decoder (post-processed export) or the pair (--no-post-process)


RECIPES = {
    "vit-trocr-tiny": Recipe(
        tokenizer="wordpiece",
        bpe_vocab_size=None,
        image_size=224,
        patch_size=16,
        encoder_hidden=64,
        decoder_hidden=64,
        layers=2,
        heads=4,
        resample="bilinear",
        encoder_init=0.2,
        decoder_init=0.5,
        eos_row_scale=2.5,
        repetition_penalty=1.3,
        no_repeat_ngram_size=3,
        merged=True,
    ),
    "vit-trocr-bpe": Recipe(
        tokenizer="bpe-bytelevel",
        bpe_vocab_size=2000,
        image_size=160,
        patch_size=32,
        encoder_hidden=96,
        decoder_hidden=80,
        layers=3,
        heads=4,
        resample="bicubic",
        encoder_init=0.2,
        decoder_init=0.5,
        eos_row_scale=2.5,
        # Without a rule this random decoder repeats one token; a penalty alone tests that rule
        # without the n-gram block.
        repetition_penalty=1.5,
        no_repeat_ngram_size=None,
        merged=False,
    ),
}


def eval_texts() -> list[str]:
    """Every evaluation set's expected texts: what the tokenizer is trained on."""
    texts = []
    for cases_path in sorted(EVAL_DIR.glob("*/cases.json")):
        texts.extend(case["expected"] for case in json.loads(cases_path.read_text(encoding="utf-8")))
    return sorted(set(texts))


def reference_cases() -> list[tuple[str, dict]]:
    """(set name, case) for every reference case."""
    cases = []
    for name, limit in REFERENCE_SETS.items():
        listed = json.loads((EVAL_DIR / name / "cases.json").read_text(encoding="utf-8"))
        cases.extend((name, case) for case in (listed[:limit] if limit else listed))
    return cases


def wordpiece_tokenizer(texts: list[str]) -> PreTrainedTokenizerFast:
    """A character-level BERT tokenizer (bert-base-japanese-char's kind, as manga-ocr uses: CJK
    ideographs split apart, other runs as a first character and `##` continuations). The
    WordPiece trainer runs with no merges: its merges' ties, and the ids it gives, change from
    run to run; its alphabet does not, so the ids are given again in order (specials, then the
    tokens sorted) and the same texts make the same tokenizer.json."""
    trained = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    trained.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False
    )
    trained.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trained.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=1, special_tokens=specials))
    ordered = specials + sorted(set(trained.get_vocab()) - set(specials))
    tokenizer = Tokenizer(models.WordPiece({token: index for index, token in enumerate(ordered)}, unk_token="[UNK]"))
    tokenizer.normalizer = trained.normalizer
    tokenizer.pre_tokenizer = trained.pre_tokenizer
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return BertTokenizerFast(
        tokenizer_object=tokenizer,
        do_lower_case=False,
        tokenize_chinese_chars=True,
        strip_accents=False,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )


def bytelevel_bpe_tokenizer(texts: list[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """A RoBERTa-style tokenizer (TrOCR's kind: byte-level BPE, <s> </s> specials)."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    tokenizer.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    tokenizer.post_processor = processors.RobertaProcessing(
        sep=("</s>", tokenizer.token_to_id("</s>")), cls=("<s>", tokenizer.token_to_id("<s>"))
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )


def special_ids(recipe: Recipe, tokenizer: PreTrainedTokenizerFast) -> dict[str, int]:
    """decoder start, EOS and pad: [CLS] [SEP] [PAD] as manga-ocr; </s> </s> <pad> as TrOCR."""
    if recipe.tokenizer == "wordpiece":
        start, eos, pad = "[CLS]", "[SEP]", "[PAD]"
    else:
        start, eos, pad = "</s>", "</s>", "<pad>"
    return {
        name: tokenizer.convert_tokens_to_ids(token) for name, token in (("start", start), ("eos", eos), ("pad", pad))
    }


def build_model(recipe: Recipe, vocab_size: int, ids: dict[str, int], seed: int) -> VisionEncoderDecoderModel:
    encoder = ViTConfig(
        image_size=recipe.image_size,
        patch_size=recipe.patch_size,
        hidden_size=recipe.encoder_hidden,
        num_hidden_layers=recipe.layers,
        num_attention_heads=recipe.heads,
        intermediate_size=recipe.encoder_hidden * 2,
        initializer_range=recipe.encoder_init,
    )
    # Positions for the start token and MAX_NEW_TOKENS more, with room to spare.
    positions = 64
    decoder = TrOCRConfig(
        vocab_size=vocab_size,
        d_model=recipe.decoder_hidden,
        decoder_layers=recipe.layers,
        decoder_attention_heads=recipe.heads,
        decoder_ffn_dim=recipe.decoder_hidden * 2,
        max_position_embeddings=positions,
        cross_attention_hidden_size=recipe.encoder_hidden,
        init_std=recipe.decoder_init,
        # Tied to the input embedding, a random output layer scores the last token highest.
        tie_word_embeddings=False,
        pad_token_id=ids["pad"],
        bos_token_id=ids["start"],
        eos_token_id=ids["eos"],
        decoder_start_token_id=ids["start"],
    )
    config = VisionEncoderDecoderConfig.from_encoder_decoder_configs(encoder, decoder)
    config.decoder_start_token_id = ids["start"]
    config.eos_token_id = ids["eos"]
    config.pad_token_id = ids["pad"]
    torch.manual_seed(seed)
    model = VisionEncoderDecoderModel(config=config)
    with torch.no_grad():
        model.decoder.get_output_embeddings().weight[ids["eos"]] *= recipe.eos_row_scale
    model.generation_config = generation_config(recipe, ids)
    return model.eval()


def generation_config(recipe: Recipe, ids: dict[str, int]) -> GenerationConfig:
    rules = {}
    if recipe.repetition_penalty is not None:
        rules["repetition_penalty"] = recipe.repetition_penalty
    if recipe.no_repeat_ngram_size is not None:
        rules["no_repeat_ngram_size"] = recipe.no_repeat_ngram_size
    return GenerationConfig(
        decoder_start_token_id=ids["start"],
        eos_token_id=ids["eos"],
        pad_token_id=ids["pad"],
        # max_length counts the decoder start token.
        max_length=MAX_NEW_TOKENS + 1,
        num_beams=1,
        do_sample=False,
        **rules,
    )


def image_processor(recipe: Recipe) -> ViTImageProcessor:
    return ViTImageProcessor(
        do_resize=True,
        size={"height": recipe.image_size, "width": recipe.image_size},
        resample=PIL_RESAMPLE[recipe.resample],
        do_rescale=True,
        do_normalize=True,
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
        do_convert_rgb=True,
    )


def greedy_reference(
    model: VisionEncoderDecoderModel, processor: ViTImageProcessor, tokenizer, ids: dict[str, int]
) -> dict:
    """PyTorch generate()'s reading of every reference case, by set and case id: the ids after the
    decoder start token (EOS left out), how the loop ended, the text with special tokens skipped,
    and the near ties among its choices (scores after the token rule)."""
    results: dict[str, dict] = {}
    for set_name, case in reference_cases():
        with Image.open(EVAL_DIR / set_name / case["image"]) as image:
            pixels = processor(images=image, return_tensors="pt").pixel_values
        with torch.no_grad():
            out = model.generate(
                pixels, max_new_tokens=MAX_NEW_TOKENS, output_scores=True, return_dict_in_generate=True
            )
        sequence = out.sequences[0].tolist()
        if sequence[0] != ids["start"]:
            raise RuntimeError(f"{set_name}/{case['id']}: generate() began with {sequence[0]}, not the start id")
        tokens = sequence[1:]
        ended = "eos" if tokens and tokens[-1] == ids["eos"] else "maxTokens"
        if ended == "eos":
            tokens = tokens[:-1]
        near_ties = []
        for position, scores in enumerate(out.scores):
            top = torch.topk(scores[0].double(), 2)
            gap = float(top.values[0] - top.values[1])
            if gap <= NEAR_TIE:
                near_ties.append(
                    {"position": position, "chosen": int(top.indices[0]), "runnerUp": int(top.indices[1]), "gap": gap}
                )
        results.setdefault(set_name, {})[str(case["id"])] = {
            "tokenIds": tokens,
            "ended": ended,
            "text": tokenizer.decode(tokens, skip_special_tokens=True),
            "nearTies": near_ties,
        }
    return results


def export(saved: Path, out: Path, merged: bool) -> None:
    """Hugging Face's exporter, as its users run it."""
    cli = Path(sys.executable).parent / "optimum-cli"
    command = [str(cli), "export", "onnx", "--model", str(saved), "--task", "image-to-text-with-past"]
    if not merged:
        command.append("--no-post-process")
    subprocess.run([*command, str(out)], check=True)


def make(name: str, seed: int, out: Path) -> dict:
    recipe = RECIPES[name]
    texts = eval_texts()
    if recipe.tokenizer == "wordpiece":
        tokenizer = wordpiece_tokenizer(texts)
    else:
        tokenizer = bytelevel_bpe_tokenizer(texts, recipe.bpe_vocab_size)
    ids = special_ids(recipe, tokenizer)
    model = build_model(recipe, len(tokenizer), ids, seed)
    processor = image_processor(recipe)
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory() as saved_dir:
        saved = Path(saved_dir)
        model.save_pretrained(saved)
        tokenizer.save_pretrained(saved)
        processor.save_pretrained(saved)
        export(saved, out, recipe.merged)
    if recipe.merged:
        # The post-processed export keeps the pair beside the merged graph; the merged form is
        # the one this recipe tests (vit-trocr-bpe tests the pair), and the pair would double the
        # committed size.
        for name in ("decoder_model.onnx", "decoder_with_past_model.onnx"):
            (out / name).unlink()
    reference = {
        "model": name,
        "seed": seed,
        "maxNewTokens": MAX_NEW_TOKENS,
        "nearTie": NEAR_TIE,
        "sets": greedy_reference(model, processor, tokenizer, ids),
    }
    (out / "expected-ids.json").write_text(json.dumps(reference, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return reference


def summary(reference: dict) -> str:
    """How varied the reading is: distinct readings, distinct ids, the longest run, near ties."""
    readings = [case for cases in reference["sets"].values() for case in cases.values()]
    distinct = {tuple(case["tokenIds"]) for case in readings}
    ids = {token for case in readings for token in case["tokenIds"]}
    ties = sum(len(case["nearTies"]) for case in readings)
    eos = sum(case["ended"] == "eos" for case in readings)
    return (
        f"{len(readings)} cases, {len(distinct)} distinct readings, {len(ids)} distinct ids, "
        f"{eos} ended at EOS, {ties} near ties"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(RECIPES), required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="the export folder (replaced)")
    args = parser.parse_args(argv)
    reference = make(args.model, args.seed, args.out.resolve())
    print(summary(reference))


if __name__ == "__main__":
    main()
