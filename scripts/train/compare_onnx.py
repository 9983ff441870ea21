"""Check that the ONNX files built from the checkpoint read like the PyTorch model did.

Runs the seed's loop (ocrmodel.decode) on onnxruntime CPU over an evaluation set for each
(vision tier, decoder variant) asked for, scores it as the page does (scoring.score_set), and
prints nCER, exact cases and how many cases chose exactly the tokens that PyTorch chose in
training's final evaluation (models/checkpoint/eval-pytorch.json, through the same resize,
ocrmodel.resize).

    cd scripts && ../.venv/bin/python -m train.compare_onnx --build /tmp/gen --set hayai13 \
        --vision 121 --decoder baseline gather-opt fp16-matmul fixed-kv gpu-gather nbits-int8 nbits-int4 gqa

`--decoder` takes any name of ocrmodel.variants.DECODER_VARIANTS (an unknown one is refused
with the list).

`--limit N` reads only the first N cases (test_compare_onnx.py runs 3 of hayai13). `--threads 1`
for several runs side by side (onnxruntime otherwise starts one thread per core in each).
"""

from __future__ import annotations

import argparse
import json
import time
from functools import partial
from pathlib import Path

import onnxruntime as ort

from ocrmodel import spec
from ocrmodel.decode import OnnxDecoder, content_ids, greedy_loop
from ocrmodel.variants import decoder_variant, vision_variant

from .scoring import EVAL_DIR, eval_cases, format_ncer, preprocess, score_set

REPO = Path(__file__).resolve().parents[2]
VOCAB = REPO / "models" / "vocab.json"
PYTORCH_REPORT = REPO / "models" / "checkpoint" / "eval-pytorch.json"


def session(path: Path, threads: int = 0) -> ort.InferenceSession:
    if not path.is_file():
        raise ValueError(
            f"{path} is missing: build the models there first "
            f"(cd scripts && ../.venv/bin/python -m ocrmodel.build_models --out {path.parent})"
        )
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def pytorch_tokens(set_name: str) -> dict[str, list[int]]:
    """Each case's tokens in training's final PyTorch evaluation (empty without the report)."""
    if not PYTORCH_REPORT.is_file():
        return {}
    report = json.loads(PYTORCH_REPORT.read_text(encoding="utf-8"))
    return {r["id"]: r["tokens"] for r in report["eval"].get(set_name, {}).get("results", [])}


def compare(
    build: Path, set_name: str, tiers: list[str], decoders: list[str], limit: int = 0, threads: int = 0
) -> list[dict]:
    """One scoring.score_set result per (tier, decoder), with "tier", "decoder", "seconds" and
    "samePyTorchTokens" (cases whose tokens equal PyTorch's) added; progress is printed."""
    characters = json.loads(VOCAB.read_text(encoding="utf-8"))
    content = content_ids(VOCAB)
    cases = eval_cases(set_name, limit)
    torch_tokens = pytorch_tokens(set_name)
    pixels = {case["id"]: preprocess(EVAL_DIR / set_name / case["image"]) for case in cases}
    results = []
    for tier in tiers:
        vision = session(build / vision_variant(tier).file, threads)
        embeds = {cid: vision.run(None, {"pixel_values": p})[0] for cid, p in pixels.items()}
        for name in decoders:
            variant = decoder_variant(name)
            decoder = OnnxDecoder(session(build / variant.file, threads), variant.fixed_kv)
            started = time.perf_counter()
            tokens = [
                greedy_loop(partial(decoder.prefill, embeds[case["id"]]), decoder.step, spec.MAX_TOKENS, content)
                for case in cases
            ]
            scored = score_set(set_name, cases, tokens, characters)
            same = 0
            for case in scored["results"]:
                if torch_tokens.get(case["id"]) == case["tokens"]:
                    same += 1
                elif case["id"] in torch_tokens:
                    print(f"  {tier}/{name} {case['id']}: differs from PyTorch: {case['actual']}", flush=True)
            scored.update(tier=tier, decoder=name, seconds=time.perf_counter() - started, samePyTorchTokens=same)
            # Sets PyTorch never read (the held-out ones) have no tokens to compare: say so,
            # rather than "identical in 0/N", which reads as a mismatch.
            kept = sum(case["id"] in torch_tokens for case in scored["results"])
            against = f"PyTorch tokens identical in {same}/{kept} cases" if kept else "no PyTorch tokens for this set"
            print(
                f"{set_name} tier={tier} decoder={name}: nCER {format_ncer(scored)} "
                f"({scored['distance']}/{scored['characters']}), exact {scored['exact']}/{scored['cases']}, "
                f"trailing extras {scored['trailingExtras']}/{scored['cases']}, "
                f"{against}, {scored['seconds']:.1f} s",
                flush=True,
            )
            results.append(scored)
    return results


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="folder the builder wrote (its --out)")
    parser.add_argument("--set", default="hayai13", help="evaluation set under models/eval")
    parser.add_argument("--vision", nargs="+", default=["121"], help="vision tiers")
    parser.add_argument("--decoder", nargs="+", default=["baseline"], help="decoder variants")
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases (0: all)")
    parser.add_argument(
        "--threads",
        type=int,
        default=0,
        help="onnxruntime's intra-op threads per session (0: its default, one per core); "
        "1 when several of these run side by side",
    )
    args = parser.parse_args(argv)
    try:
        if args.threads < 0:
            raise ValueError(f"--threads {args.threads}: give 0 (onnxruntime's default) or a positive count")
        return compare(args.build, args.set, args.vision, args.decoder, args.limit, args.threads)
    except (KeyError, ValueError) as error:  # an unknown tier, decoder or set, a negative limit
        parser.error(str(error))


if __name__ == "__main__":
    main()
