"""Check that the ONNX files built from the checkpoint read like the PyTorch model did.

Runs the seed's loop (ocrmodel.decode) on onnxruntime CPU over an evaluation set for each
(vision tier, decoder variant) asked for, and prints nCER and how many cases chose exactly the
tokens that PyTorch chose in training's final evaluation (models/checkpoint/eval-pytorch.json;
recorded with the plain Lanczos3 resize the checkpoint was trained with, while the images here
go through ocrmodel.resize, the harness's current resize).

    cd scripts && ../.venv/bin/python train/compare_onnx.py --build /tmp/gen --set hayai13 \
        --vision 121 --decoder baseline gather-opt fp16-matmul fixed-kv
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ocrmodel import spec  # noqa: E402
from ocrmodel.decode import OnnxDecoder, content_ids, greedy_loop  # noqa: E402
from ocrmodel.variants import decoder_variant, vision_variant  # noqa: E402
from scoring import levenshtein, normalise, preprocess  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
VOCAB = REPO / "models" / "vocab.json"
PYTORCH_REPORT = REPO / "models" / "checkpoint" / "eval-pytorch.json"


def session(path: Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="folder the builder wrote (its --out)")
    parser.add_argument("--set", default="hayai13", help="evaluation set under models/eval")
    parser.add_argument("--vision", nargs="+", default=["121"], help="vision tiers")
    parser.add_argument("--decoder", nargs="+", default=["baseline"], help="decoder variants")
    parser.add_argument("--limit", type=int, default=0, help="only the first N cases (0: all)")
    args = parser.parse_args()

    characters = json.loads(VOCAB.read_text(encoding="utf-8"))
    content = content_ids(VOCAB)
    cases = json.loads((REPO / "models" / "eval" / args.set / "cases.json").read_text(encoding="utf-8"))
    if args.limit:
        cases = cases[:args.limit]
    torch_tokens = {}
    if PYTORCH_REPORT.is_file():
        report = json.loads(PYTORCH_REPORT.read_text(encoding="utf-8"))
        torch_tokens = {r["id"]: r["tokens"] for r in report["eval"].get(args.set, {}).get("results", [])}
    pixels = {case["id"]: preprocess(REPO / "models" / "eval" / args.set / case["image"]) for case in cases}
    for tier in args.vision:
        vision = session(args.build / vision_variant(tier).file)
        embeds = {cid: vision.run(None, {"pixel_values": p})[0] for cid, p in pixels.items()}
        for name in args.decoder:
            variant = decoder_variant(name)
            decoder = OnnxDecoder(session(args.build / variant.file), variant.fixed_kv)
            started = time.perf_counter()
            distance = total = same = 0
            for case in cases:
                tokens = greedy_loop(lambda: decoder.prefill(embeds[case["id"]]), decoder.step, spec.MAX_TOKENS, content)
                text = "".join(characters[t - spec.VOCAB_OFFSET] for t in tokens if t >= spec.VOCAB_OFFSET)
                expected = normalise(case["expected"])
                distance += levenshtein(expected, normalise(text))
                total += len(expected)
                if torch_tokens.get(case["id"]) == tokens:
                    same += 1
                elif case["id"] in torch_tokens:
                    print(f"  {tier}/{name} {case['id']}: differs from PyTorch: {text}", flush=True)
            print(f"{args.set} tier={tier} decoder={name}: nCER {distance / total:.4f} ({distance}/{total}), "
                  f"PyTorch tokens identical in {same}/{len(cases)} cases, "
                  f"{time.perf_counter() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
