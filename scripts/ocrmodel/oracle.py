"""The reading oracle: what onnxruntime CPU reads from an evaluation set with the page's loop,
so the end-to-end tests can hold a browser's token ids to a decode that shares none of the
page's code (its own preprocessing, chooser and reading of the manifest).

    cd scripts && ../.venv/bin/python -m ocrmodel.oracle --manifest ../models/manifest.json \\
        --cases smoke2 --tier 121 --decoder baseline --max-tokens 16

prints one JSON object:

    {"nearTie": 0.001, "manifest": ..., "cases": "smoke2", "tier": "121", "decoder": "baseline",
     "maxTokens": 16, "results": [{"id": "1", "tokenIds": [...], "text": "...", "ended": "eos",
                                   "forced": 0, "nearTies": [{"position": 3, "chosen": 960,
                                   "runnerUp": 1032, "gap": 0.0004}],
                                   "gaps": [12.5, 9.1, 7.0, 0.0004, 8.3, 11.2]}, ...]}

Position k is the choice of the k-th token (0-based); the choice after the last token is EOS
when `ended` is "eos" ("maxTokens": the loop stopped at --max-tokens); `gaps` holds each
choice's lead over its runner-up, from position `forced` on. A near tie is a choice
whose two best scores after the repetition penalty and the run block (decode.penalised_scores)
lie within NEAR_TIE of each other: there a browser's float32 kernels may fairly choose the
runner-up. `--case ID --prefix T1,T2,...` reads one case with its first tokens forced (a page's
choices up to and including an accepted near tie), and reports the choices after them.

The pixels come from scripts/train/scoring.py's `preprocess` (ocrmodel.resize, then mean and
std), the files from the manifest's `embedded` entries (the same weights as `external`), and
the loop is decode.greedy_loop over an onnxruntime CPU session (cpu_session).
"""

from __future__ import annotations

import argparse
import json
from functools import partial
from pathlib import Path

import numpy as np
import onnxruntime as ort

from train import scoring

from . import spec
from .decode import OnnxDecoder, choose_token, content_ids, greedy_loop, penalised_scores

# The largest gap between a choice's two best scores at which a browser may choose the
# runner-up (docs/benchmark-protocol.md, "The reading oracle"): about the largest logit
# difference seen between a browser's float32 kernels and a CPU (verify=wasm: 1.5e-3 with
# fixed-kv on SwiftShader). Each result's `gaps` show how far its choices were from one.
NEAR_TIE = 1e-3


def cpu_session(path: Path) -> ort.InferenceSession:
    """A CPU session that computes what the page's WebGPU session computes: fp32 MatMul on the
    dequantized weights. By default onnxruntime's CPU EP fuses DequantizeLinear + MatMul into
    MatMulNBits that quantizes activations to int8 (logits off by up to 0.15 here);
    `session.disable_quant_qdq` instead folds each constant DequantizeLinear into an fp32
    initializer at load, exact to ~1e-5 against the reference and as fast (a decode step
    0.018 s, where accuracy level 1 took 0.29 s)."""
    if not Path(path).is_file():
        raise ValueError(f"{path} is missing: build the models first (scripts/build)")
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.disable_quant_qdq", "1")
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class TieRecorder:
    """A chooser for greedy_loop: choose_token's choice, the forced tokens first, and every near
    tie among the choices it made."""

    def __init__(self, forced: list[int]) -> None:
        self.forced = forced
        self.near_ties: list[dict] = []
        self.gaps: list[float] = []  # each choice's lead over its runner-up

    def __call__(self, logits: np.ndarray, sequence: list[int], tokens: list[int], content: set[int]) -> int:
        position = len(tokens)
        if position < len(self.forced):
            return self.forced[position]
        chosen = choose_token(logits, sequence, tokens, content)
        scores, _ = penalised_scores(logits, sequence, tokens, content)
        best = scores[chosen]
        scores[chosen] = -np.inf
        runner_up = int(np.argmax(scores))
        gap = float(best - scores[runner_up])
        self.gaps.append(gap)
        if gap <= NEAR_TIE:
            self.near_ties.append({"position": position, "chosen": chosen, "runnerUp": runner_up, "gap": gap})
        return chosen


def manifest_entry(manifest: dict, kind: str, name: str) -> dict:
    entries = manifest.get(kind, {})
    if name not in entries:
        raise ValueError(f"the manifest has no {kind} {name!r}; it has {sorted(entries)}")
    return entries[name]


def parse_prefix(text: str) -> list[int]:
    """`T1,T2,...` as token ids, each a content id (not BOS, EOS or another special id)."""
    try:
        tokens = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(f"--prefix {text!r}: give token ids separated by commas, such as 960,1032") from None
    if any(not spec.VOCAB_OFFSET <= token < spec.VOCAB_IDS for token in tokens):
        raise ValueError(
            f"--prefix {text!r}: every id must lie in {spec.VOCAB_OFFSET}..{spec.VOCAB_IDS - 1} "
            "(the vocabulary's characters)"
        )
    return tokens


def read(
    manifest_path: Path,
    cases_name: str,
    tier: str,
    decoder_name: str,
    max_tokens: int,
    case_id: str | None = None,
    prefix: list[int] | None = None,
) -> dict:
    """The oracle's reading of every case of the set (or of `case_id` alone, after `prefix`)."""
    if not 1 <= max_tokens <= spec.MAX_TOKENS:
        raise ValueError(f"--max-tokens {max_tokens}: allowed 1..{spec.MAX_TOKENS} (capability.maxTokens)")
    prefix = prefix or []
    if prefix and case_id is None:
        raise ValueError("--prefix forces one case's first tokens: name it with --case")
    if len(prefix) >= max_tokens:
        raise ValueError(f"--prefix of {len(prefix)} tokens leaves no choice below --max-tokens {max_tokens}")
    manifest = json.loads(Path(manifest_path).read_text(encoding="utf-8"))
    base = Path(manifest_path).parent
    vision_entry = manifest_entry(manifest, "vision", tier)
    decoder_entry = manifest_entry(manifest, "decoder", decoder_name)
    vocab_path = base / manifest["vocab"]
    characters = json.loads(vocab_path.read_text(encoding="utf-8"))
    content = content_ids(vocab_path)
    cases = scoring.eval_cases(cases_name)
    if case_id is not None:
        cases = [case for case in cases if str(case["id"]) == case_id]
        if not cases:
            raise ValueError(f"--case {case_id!r}: {cases_name} has no such case")
    vision = cpu_session(base / vision_entry["embedded"])
    decoder = OnnxDecoder(cpu_session(base / decoder_entry["embedded"]), bool(decoder_entry.get("fixedKv")))
    results = []
    for case in cases:
        pixels = scoring.preprocess(scoring.EVAL_DIR / cases_name / case["image"])
        embeds = vision.run(None, {"pixel_values": pixels})[0]
        chooser = TieRecorder(prefix)
        tokens = greedy_loop(partial(decoder.prefill, embeds), decoder.step, max_tokens, content, chooser)
        results.append(
            {
                "id": str(case["id"]),
                "tokenIds": tokens,
                "text": scoring.decode_text(tokens, characters),
                "ended": "maxTokens" if len(tokens) == max_tokens else "eos",
                "forced": len(prefix),
                "nearTies": chooser.near_ties,
                "gaps": chooser.gaps,
            }
        )
    return {
        "nearTie": NEAR_TIE,
        "manifest": str(manifest_path),
        "cases": cases_name,
        "tier": tier,
        "decoder": decoder_name,
        "maxTokens": max_tokens,
        "results": results,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manifest", type=Path, required=True, help="models/manifest.json")
    parser.add_argument("--cases", required=True, help="evaluation set under models/eval (the page's cases=)")
    parser.add_argument("--tier", required=True, help="vision tier (the page's tier=)")
    parser.add_argument("--decoder", required=True, help="decoder variant (the page's decoder=)")
    parser.add_argument("--max-tokens", type=int, required=True, help="the page's maxTokens=")
    parser.add_argument("--case", help="read only this case id")
    parser.add_argument("--prefix", help="with --case: its first token ids, forced (comma-separated)")
    args = parser.parse_args(argv)
    try:
        prefix = parse_prefix(args.prefix) if args.prefix else None
        result = read(args.manifest, args.cases, args.tier, args.decoder, args.max_tokens, args.case, prefix)
    except (OSError, ValueError) as error:  # a missing file, an unknown set, tier or decoder
        parser.error(str(error))
    print(json.dumps(result, ensure_ascii=False))
    return result


if __name__ == "__main__":
    main()
