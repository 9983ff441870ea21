"""Evaluate a checkpoint file as training's final evaluation does, without training.

For a checkpoint no single run wrote (average_checkpoints.py's mean): the same int8 weights
read back, the same greedy token choice and scoring, the same report format (`eval` per set
and case, tokens included), so compare_onnx.py checks the ONNX files against it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from ocrmodel.weights import sha256_of

from .evaluate import evaluate_all, summary_lines
from .model import OcrModel, spec
from .scoring import set_names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, help="a checkpoint in spec.save_checkpoint's format")
    parser.add_argument("--report", type=Path, required=True, help="where the evaluation (per case) goes as JSON")
    parser.add_argument("--eval-sets", nargs="+", default=None, help="default: every set under models/eval")
    parser.add_argument("--note", default="", help="how the checkpoint was made, kept in the report")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("the evaluation of record runs on a CUDA GPU, as training's does")
    device = torch.device("cuda")
    model = OcrModel().to(device)
    model.load_weights(spec.load_checkpoint(args.checkpoint))
    results = evaluate_all(model, args.eval_sets or set_names(), device)
    print("\n".join(summary_lines(results)), flush=True)
    report = {
        "checkpoint": args.checkpoint.name,
        "sha256": sha256_of(args.checkpoint),
        "note": args.note,
        "eval": results,
    }
    args.report.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
