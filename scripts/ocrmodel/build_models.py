"""Build every model file of the manifest from one set of weights.

    cd scripts && ../.venv/bin/python -m ocrmodel.build_models [--checkpoint PATH | --synthetic-seed N]
        [--out DIR] [--manifest PATH]

Writes, for each vision tier and decoder variant, `<out>/<file>.onnx` (weights embedded) and
`<out>/external/<file>.onnx` + `<file>.onnx.data` (weights as external data, for
onnxruntime-web's `externalData`), then `<out>/build-info.json` and the manifest.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import logging
import os
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime

from . import spec
from .decode import content_ids
from .graphs.decoder import build_decoder
from .graphs.decoder_gptq import gptq_int4_blocks
from .graphs.vision import build_vision, quantize_int4
from .manifest import ORT_WEBGPU_KERNELS, build_manifest, graph_facts
from .variants import DECODER_VARIANTS, INT4_BLOCK_SIZE, VISION_VARIANTS
from .weights import load_weights

REPO = Path(__file__).resolve().parents[2]
DEFAULT_CHECKPOINT = REPO / "models" / "checkpoint" / "ocr-bench-default.npz"
DEFAULT_OUT = REPO / "models" / "generated"
DEFAULT_MANIFEST = REPO / "models" / "manifest.json"
VOCAB = REPO / "models" / "vocab.json"
# Grey 224x224 training samples that the int4 vision tier's and the int4 decoder's roundings are
# fitted to (train/calibration_set.py writes them; models/calibration/README.md).
CALIBRATION = REPO / "models" / "calibration" / "vision-pixels.npz"
DEFAULT_SYNTHETIC_SEED = 0
INT4_DECODER_ROUNDINGS = ("nearest", "gptq")
# Tensors below this many bytes (shape constants, norms) stay inside the external .onnx.
EXTERNAL_THRESHOLD_BYTES = 1024
# Files whose content decides what a build produces: a build-info with another digest is stale.
BUILDER_SOURCES = (
    "spec.py",
    "weights.py",
    "quantize.py",
    "variants.py",
    "manifest.py",
    "build_models.py",
    "decode.py",
    "graphs/builder.py",
    "graphs/decoder.py",
    "graphs/decoder_gptq.py",
    "graphs/gptq.py",
    "graphs/nbits.py",
    "graphs/vision.py",
)


def builder_digest() -> str:
    digest = hashlib.sha256()
    for name in BUILDER_SOURCES:
        digest.update(name.encode())
        digest.update((Path(__file__).parent / name).read_bytes())
    digest.update(CALIBRATION.read_bytes())
    digest.update(ORT_WEBGPU_KERNELS.read_bytes())  # the manifest's device limits read it
    return digest.hexdigest()


def calibration_feeds() -> list[dict[str, np.ndarray]]:
    """The calibration images as the vision graph's input: grey to three equal channels,
    (x/255 - mean)/std, [1,3,224,224] each."""
    with np.load(CALIBRATION) as stored:
        pixels = stored["pixels"]
    mean = np.array(spec.MEAN, np.float32).reshape(1, 3, 1, 1)
    std = np.array(spec.STD, np.float32).reshape(1, 3, 1, 1)
    return [
        {"pixel_values": ((np.float32(image[None, None]) / 255.0 - mean) / std).astype(np.float32)} for image in pixels
    ]


def int4_decoder_blocks(weights: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The int4 decoder's GPTQ blocks, fitted to the calibration images as the float32 vision
    graph sees them."""
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    vision = onnxruntime.InferenceSession(
        build_vision(weights, fp16=False).SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    embeds = [vision.run(None, feed)[0] for feed in calibration_feeds()]
    return gptq_int4_blocks(weights, embeds, content_ids(VOCAB))


def save_both(model: onnx.ModelProto, out: Path, file: str) -> list[Path]:
    """Embedded file first: converting to external data rewrites the model's tensors in place."""
    embedded = out / file
    onnx.save_model(model, embedded)
    external = out / "external" / file
    data = external.with_name(file + ".data")
    data.unlink(missing_ok=True)  # onnx appends to an existing data file
    onnx.save_model(
        model,
        external,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=data.name,
        size_threshold=EXTERNAL_THRESHOLD_BYTES,
    )
    return [embedded, external, data]


def build_all(
    weights: dict[str, np.ndarray], out: Path, int4_decoder_rounding: str = "nearest"
) -> tuple[list[Path], dict[str, dict]]:
    """The files written, and each model file's graph facts for the manifest. The int4 decoder's
    codes are the nearest ones, or with "gptq" int4_decoder_blocks' (docs/model-contract.md,
    "MatMulNBits blocks": measured no better, so not the default)."""
    (out / "external").mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    graphs: dict[str, dict] = {}
    for vision in VISION_VARIANTS:
        if vision.precision == "int4":
            model = quantize_int4(build_vision(weights, fp16=False), INT4_BLOCK_SIZE, calibration_feeds())
        elif vision.precision == "fp16":
            model = build_vision(weights, fp16=True)
        else:
            raise ValueError(f"tier {vision.tier}: unknown precision {vision.precision!r}")
        graphs[vision.file] = graph_facts(model, "vision")
        written += save_both(model, out, vision.file)
    int4_blocks = None
    for decoder in DECODER_VARIANTS:
        blocks = None
        if decoder.linear_format == "nbits4" and int4_decoder_rounding == "gptq":
            if int4_blocks is None:
                int4_blocks = int4_decoder_blocks(weights)
            blocks = int4_blocks
        model = build_decoder(weights, decoder, blocks)
        graphs[decoder.file] = graph_facts(model, "decoder")
        written += save_both(model, out, decoder.file)
    return written, graphs


def relative(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--checkpoint",
        type=Path,
        default=None,
        help=f"weights written by spec.save_checkpoint (default {relative(DEFAULT_CHECKPOINT, REPO)} when it exists)",
    )
    parser.add_argument(
        "--synthetic-seed",
        type=int,
        default=None,
        help="ignore any checkpoint and use deterministic synthetic weights from this seed",
    )
    parser.add_argument(
        "--int4-decoder-rounding",
        choices=INT4_DECODER_ROUNDINGS,
        default="nearest",
        help="codes of the nbits-int4 decoder: nearest (default) or gptq, fitted to the calibration images "
        "(about 100 s more on 16 cores)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory (default models/generated)")
    parser.add_argument(
        "--manifest",
        type=Path,
        default=DEFAULT_MANIFEST,
        help="where to write the manifest (default models/manifest.json)",
    )
    args = parser.parse_args(argv)
    if args.checkpoint is not None and args.synthetic_seed is not None:
        parser.error("--checkpoint and --synthetic-seed exclude each other: pick one weights source")
    if args.checkpoint is not None and not args.checkpoint.is_file():
        parser.error(f"--checkpoint {args.checkpoint}: no such file")
    checkpoint = args.checkpoint
    seed = args.synthetic_seed
    if checkpoint is None and seed is None:
        if DEFAULT_CHECKPOINT.is_file():
            checkpoint = DEFAULT_CHECKPOINT
        else:
            seed = DEFAULT_SYNTHETIC_SEED

    logging.getLogger("onnxruntime.quantization").setLevel(logging.WARNING)
    started = time.perf_counter()
    weights, source = load_weights(checkpoint, seed)
    out = args.out.resolve()
    written, graphs = build_all(weights, out, args.int4_decoder_rounding)
    seconds = time.perf_counter() - started

    info = {
        "weightsSource": source.as_json(),
        "builtAt": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "buildSeconds": round(seconds, 2),
        "builderDigest": builder_digest(),
        "tools": {"onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__, "numpy": np.__version__},
        "int4BlockSize": INT4_BLOCK_SIZE,
        "int4DecoderRounding": args.int4_decoder_rounding,
        "files": {relative(path, out): path.stat().st_size for path in written},
        "graphs": graphs,
    }
    (out / "build-info.json").write_text(json.dumps(info, indent=2) + "\n")

    manifest_dir = args.manifest.resolve().parent
    manifest = build_manifest(
        Path(relative(out, manifest_dir)),
        Path(relative(VOCAB, manifest_dir)),
        Path(relative(DEFAULT_CHECKPOINT, manifest_dir)),
        info["files"],
        graphs,
    )
    args.manifest.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")

    print(f"weights: {source.describe()}")
    for path in written:
        print(f"{path.stat().st_size / 2**20:9.2f} MiB  {relative(path, out)}")
    print(f"built {len(written)} files into {out} in {seconds:.1f} s; manifest {args.manifest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
