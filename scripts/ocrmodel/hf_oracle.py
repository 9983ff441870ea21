"""The reading oracle for an imported Hugging Face model: what onnxruntime CPU reads from an
evaluation set with an optimum export folder (`optimum-cli export onnx --task
image-to-text-with-past`) as transformers' greedy `generate()` reads it, sharing none of the
page's code.

    cd scripts && ../.venv/bin/python -m ocrmodel.hf_oracle --model ../models/hf-test/vit-bert-tiny \\
        --cases smoke2 --max-tokens 24

prints one JSON object in oracle.py's shape:

    {"nearTie": 0.001, "model": ..., "cases": "smoke2", "maxTokens": 24,
     "rule": {"repetitionPenalty": 1.3, "noRepeatNgramSize": 3}, "decoder": "merged",
     "results": [{"id": "1", "tokenIds": [...], "text": "...", "ended": "eos" | "maxTokens",
                  "nearTies": [...], "gaps": [...]}, ...]}

`tokenIds` are the ids after the decoder start token, EOS left out. The pieces, each as
transformers 4.57 defines it:
- pixels: ViTImageProcessor (the PIL one) reimplemented here with PIL: convert to RGB, resize
  with the named resample (PIL's filters, which widen when they shrink), rescale in float64 then
  float32, normalize in float32;
- the encoder once, then the merged decoder (`use_cache_branch` false with empty pasts on the
  first step, true after, the cross-attention pasts kept from the first step) or the pair
  decoder_model.onnx then decoder_with_past_model.onnx;
- the token rule from generation_config.json: RepetitionPenaltyLogitsProcessor over every id of
  the decoder's input so far (the decoder start token included), then
  NoRepeatNGramLogitsProcessor over the same ids, then the first maximum; EOS ends the reading;
- text: the export's tokenizer.json through the `tokenizers` library, special tokens skipped.
"""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
from PIL import Image
from tokenizers import Tokenizer

from train import scoring

from .oracle import NEAR_TIE, cpu_session

# ViTImageProcessor's defaults (transformers 4.57, image_processing_vit.py).
RESAMPLE = {
    0: Image.Resampling.NEAREST,
    1: Image.Resampling.LANCZOS,
    2: Image.Resampling.BILINEAR,
    3: Image.Resampling.BICUBIC,
    4: Image.Resampling.BOX,
    5: Image.Resampling.HAMMING,
}
VIT_PROCESSORS = {"ViTImageProcessor", "ViTFeatureExtractor", "DeiTImageProcessor", "DeiTFeatureExtractor"}
# generate() settings other than greedy that would change the ids; the oracle refuses them.
UNSUPPORTED_GENERATION = {
    "num_beams": 1,
    "do_sample": False,
    "min_length": 0,
    "min_new_tokens": None,
    "bad_words_ids": None,
    "forced_bos_token_id": None,
    "forced_eos_token_id": None,
    "suppress_tokens": None,
    "begin_suppress_tokens": None,
    "encoder_repetition_penalty": 1.0,
    "encoder_no_repeat_ngram_size": 0,
}
PAST = re.compile(r"past_key_values\.(\d+)\.(decoder|encoder)\.(key|value)")


def read_json(folder: Path, name: str) -> dict:
    path = folder / name
    if not path.is_file():
        raise ValueError(f"{folder}: no {name} (an optimum export folder has one)")
    return json.loads(path.read_text(encoding="utf-8"))


def pixel_values(path: Path, config: dict) -> np.ndarray:
    """[1, 3, H, W] float32 as transformers 4.57's ViTImageProcessor makes it from `config`
    (a preprocessor_config.json)."""
    kind = config.get("image_processor_type") or config.get("feature_extractor_type")
    if kind not in VIT_PROCESSORS:
        raise ValueError(f"image processor {kind!r} is not supported; supported: {sorted(VIT_PROCESSORS)}")
    size = config.get("size", {"height": 224, "width": 224})
    height, width = (size, size) if isinstance(size, int) else (size["height"], size["width"])
    resample = config.get("resample", 2)
    if resample not in RESAMPLE:
        raise ValueError(f"resample {resample!r}: allowed {sorted(RESAMPLE)} (PIL's filter numbers)")
    with Image.open(path) as image:
        if config.get("do_convert_rgb"):
            image = image.convert("RGB") if image.mode != "RGB" else image.copy()
        elif image.mode != "RGB":
            raise ValueError(f"{path}: a {image.mode} image, and the processor has no do_convert_rgb")
        if config.get("do_resize", True):
            image = image.resize((width, height), resample=RESAMPLE[resample])
        pixels = np.asarray(image)
    if config.get("do_rescale", True):
        pixels = (pixels.astype(np.float64) * config.get("rescale_factor", 1 / 255)).astype(np.float32)
    else:
        pixels = pixels.astype(np.float32)
    if config.get("do_normalize", True):
        mean = np.array(config.get("image_mean", [0.5] * 3), dtype=np.float32)
        std = np.array(config.get("image_std", [0.5] * 3), dtype=np.float32)
        pixels = (pixels - mean) / std
    return np.ascontiguousarray(pixels.transpose(2, 0, 1)[None])


@dataclass(frozen=True)
class TokenRule:
    """generation_config.json's greedy rule."""

    start: int
    eos: int
    repetition_penalty: float | None
    no_repeat_ngram_size: int | None

    @classmethod
    def from_config(cls, generation: dict, config: dict) -> TokenRule:
        for name, neutral in UNSUPPORTED_GENERATION.items():
            if generation.get(name, neutral) not in (neutral, None):
                raise ValueError(
                    f"generation_config.json sets {name}={generation[name]!r}: only greedy decoding is read"
                )
        start = generation.get("decoder_start_token_id", config.get("decoder_start_token_id"))
        eos = generation.get("eos_token_id", config.get("eos_token_id"))
        if not isinstance(start, int) or not isinstance(eos, int):
            raise ValueError(f"decoder_start_token_id {start!r} and eos_token_id {eos!r}: each must be one id")
        penalty = generation.get("repetition_penalty")
        ngram = generation.get("no_repeat_ngram_size")
        return cls(start, eos, None if penalty in (None, 1.0) else float(penalty), ngram or None)

    def scores(self, logits: np.ndarray, sequence: list[int]) -> np.ndarray:
        """The scores greedy compares (float32, as PyTorch's processors leave them); `sequence` is
        the decoder's input so far: the start token, then the ids chosen."""
        scores = np.array(logits, dtype=np.float32).reshape(-1)
        if self.repetition_penalty is not None:
            seen = np.unique(np.asarray(sequence, dtype=np.int64))
            values = scores[seen]
            penalty = np.float32(self.repetition_penalty)
            scores[seen] = np.where(values < 0, values * penalty, values / penalty)
        n = self.no_repeat_ngram_size
        if n is not None and len(sequence) + 1 >= n:
            prefix = tuple(sequence[len(sequence) + 1 - n :])
            for start in range(len(sequence) - n + 1):
                if tuple(sequence[start : start + n - 1]) == prefix:
                    scores[sequence[start + n - 1]] = -np.inf
        return scores

    def describe(self) -> dict:
        return {"repetitionPenalty": self.repetition_penalty, "noRepeatNgramSize": self.no_repeat_ngram_size}


class Decoder:
    """An optimum decoder: the merged graph or the pair, with its caches between steps."""

    def __init__(self, folder: Path) -> None:
        merged = folder / "decoder_model_merged.onnx"
        first, with_past = folder / "decoder_model.onnx", folder / "decoder_with_past_model.onnx"
        if merged.is_file():
            self.form = "merged"
            self.first = self.later = cpu_session(merged)
        elif first.is_file() and with_past.is_file():
            self.form = "pair"
            self.first, self.later = cpu_session(first), cpu_session(with_past)
        else:
            raise ValueError(
                f"{folder}: no decoder_model_merged.onnx and no pair decoder_model.onnx + "
                "decoder_with_past_model.onnx (export with --task image-to-text-with-past)"
            )
        self.pasts = {i.name: i for i in self.later.get_inputs() if PAST.fullmatch(i.name)}
        if not self.pasts:
            raise ValueError(f"{folder}: the decoder has no past_key_values inputs (a cache-less export)")

    def empty_pasts(self) -> dict[str, np.ndarray]:
        """The merged graph's pasts for the first step: every cache with 0 positions."""
        empty = {}
        for name, spec in self.pasts.items():
            batch, heads, _, head_dim = spec.shape
            if not isinstance(heads, int) or not isinstance(head_dim, int):
                raise ValueError(f"{name}: shape {spec.shape} names no fixed heads and head size")
            empty[name] = np.zeros((1, heads, 0, head_dim), dtype=np.float32)
        return empty

    def read(self, encoded: np.ndarray, rule: TokenRule, max_tokens: int) -> tuple[list[int], str, list, list]:
        """Greedy decoding of one image: the ids, how it ended, its near ties and gaps."""
        sequence = [rule.start]
        feeds: dict[str, np.ndarray] = {"encoder_hidden_states": encoded}
        if self.form == "merged":
            feeds.update(self.empty_pasts())
            feeds["use_cache_branch"] = np.array([False])
        session = self.first
        cross: dict[str, np.ndarray] = {}
        near_ties, gaps = [], []
        ended = "maxTokens"
        for position in range(max_tokens):
            feeds["input_ids"] = np.array([sequence[-1:]], dtype=np.int64)
            wanted = [o.name for o in session.get_outputs()]
            outputs = dict(zip(wanted, session.run(wanted, self.inputs_of(session, feeds)), strict=True))
            scores = rule.scores(outputs["logits"][0, -1], sequence)
            chosen = int(np.argmax(scores))  # the first maximum, as torch.argmax
            if not scores[chosen] > -np.inf:
                raise ValueError(f"step {position}: no token can be chosen (every score is -Infinity or NaN)")
            best = scores[chosen]
            scores[chosen] = -np.inf
            gap = float(np.float64(best) - np.float64(scores.max()))
            gaps.append(gap)
            if gap <= NEAR_TIE:
                near_ties.append(
                    {"position": position, "chosen": chosen, "runnerUp": int(np.argmax(scores)), "gap": gap}
                )
            if chosen == rule.eos:
                ended = "eos"
                break
            sequence.append(chosen)
            if position == 0:
                # The cross-attention caches are computed on the first step only; on the cache
                # branch the merged graph's encoder presents are not them.
                cross = {n.replace("present", "past_key_values"): v for n, v in outputs.items() if ".encoder." in n}
            for name, value in outputs.items():
                if name.startswith("present.") and ".decoder." in name:
                    feeds[name.replace("present", "past_key_values")] = value
            feeds.update(cross)
            if self.form == "merged":
                feeds["use_cache_branch"] = np.array([True])
            session = self.later
        return sequence[1:], ended, near_ties, gaps

    @staticmethod
    def inputs_of(session: ort.InferenceSession, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        names = [i.name for i in session.get_inputs()]
        missing = [name for name in names if name not in feeds]
        if missing:
            raise ValueError(f"the decoder wants inputs the oracle does not give: {missing}")
        return {name: feeds[name] for name in names}


def read(folder: Path, cases_name: str, max_tokens: int | None = None, rule: TokenRule | None = None) -> dict:
    """The oracle's reading of every case of the evaluation set `cases_name`; `rule` overrides
    the export's generation_config.json (tests give a wrong rule to see the ids change)."""
    folder = Path(folder)
    config = read_json(folder, "config.json")
    generation = read_json(folder, "generation_config.json")
    processor = read_json(folder, "preprocessor_config.json")
    rule = rule or TokenRule.from_config(generation, config)
    if max_tokens is None:
        max_tokens = generation.get("max_length", 21) - 1  # max_length counts the start token
    if max_tokens < 1:
        raise ValueError(f"max tokens {max_tokens}: allowed 1 or more")
    if not (folder / "encoder_model.onnx").is_file():
        raise ValueError(f"{folder}: no encoder_model.onnx")
    encoder = cpu_session(folder / "encoder_model.onnx")
    decoder = Decoder(folder)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    results = []
    for case in scoring.eval_cases(cases_name):
        pixels = pixel_values(scoring.EVAL_DIR / cases_name / case["image"], processor)
        encoded = encoder.run(["last_hidden_state"], {"pixel_values": pixels})[0]
        tokens, ended, near_ties, gaps = decoder.read(encoded, rule, max_tokens)
        results.append(
            {
                "id": str(case["id"]),
                "tokenIds": tokens,
                "text": tokenizer.decode(tokens, skip_special_tokens=True),
                "ended": ended,
                "nearTies": near_ties,
                "gaps": gaps,
            }
        )
    return {
        "nearTie": NEAR_TIE,
        "model": str(folder),
        "cases": cases_name,
        "maxTokens": max_tokens,
        "rule": rule.describe(),
        "decoder": decoder.form,
        "results": results,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="an optimum export folder")
    parser.add_argument("--cases", required=True, help="evaluation set under models/eval (the page's cases=)")
    parser.add_argument("--max-tokens", type=int, help="default: generation_config.json's max_length - 1")
    args = parser.parse_args(argv)
    try:
        result = read(args.model, args.cases, args.max_tokens)
    except (OSError, ValueError) as error:
        parser.error(str(error))
    print(json.dumps(result, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()
