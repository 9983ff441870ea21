"""Screen candidate checkpoints on onnxruntime CPU before a browser round: the adoption rule on
the CPU's readings, and which candidate to take to the GPU machine.

A browser round reads one candidate's 14 sets in about six minutes of the GPU machine's time
with three browsers; the CPU reads them with the seed's loop (train.compare_onnx) in a few
minutes of cores that are otherwise idle once training has ended, and within a character a set
of what the browser reads (README.md, "Adopting a checkpoint"). This builds each checkpoint's
models, reads every set with one tier × decoder, side by side in processes, applies
`adoption.decide` to each candidate against the default and names the one to read in the
browser: the one the rule adopts with the fewest held-out characters missed, or, when none
passes, the one with the fewest sets over the allowed loss. The browser round still decides.

    cd scripts && ../.venv/bin/python -m train.screen --default ../models/checkpoint/ocr-bench-default.npz \\
        --candidate /tmp/run13.npz --blend 0.5 0.7 --out /tmp/screen --jobs 8

`--blend W …` also screens, for each W, the point (1 − W) · default + W · candidate
(`average_checkpoints.average`), written to `--out` as `blendW.npz`; the mean of two runs can
read worse than either ("Run 12"), so points are read, never assumed. Every reading is kept in
`--out`/readings.json (per checkpoint, per set).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ocrmodel import spec

from . import adoption
from .average_checkpoints import average
from .compare_onnx import compare
from .scoring import set_names

READER = "onnxruntime-cpu"  # the "browser" of the readings' keys


def build(name: str, checkpoint: Path, out: Path) -> Path:
    """The models of `checkpoint` in out/NAME/ (the builder's command, as a user runs it); by the
    screen's name, not the file's, so a default and a candidate of the same file name stay apart."""
    folder = out / name
    command = [sys.executable, "-m", "ocrmodel.build_models", "--checkpoint", str(checkpoint), "--out", str(folder)]
    command += ["--manifest", str(out / f"{name}-manifest.json")]
    subprocess.run(command, check=True, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.DEVNULL)
    return folder


def read(folder: Path, set_name: str, tier: str, decoder: str, threads: int) -> adoption.Reading:
    (scored,) = compare(folder, set_name, [tier], [decoder], threads=threads)
    return adoption.Reading(
        ncer=float(scored["nCER"]),
        distance=int(scored["distance"]),
        characters=int(scored["characters"]),
        exact=int(scored["exact"]),
        cases=int(scored["cases"]),
        extras=int(scored["trailingExtras"]),
    )


def read_all(
    folders: dict[str, Path], sets: list[str], tier: str, decoder: str, jobs: int, threads: int
) -> dict[str, dict[adoption.Key, adoption.Reading]]:
    """Each checkpoint's readings, keyed as adoption.read_results keys a results file's."""
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = {
            (name, set_name): pool.submit(read, folder, set_name, tier, decoder, threads)
            for name, folder in folders.items()
            for set_name in sets
        }
        readings: dict[str, dict[adoption.Key, adoption.Reading]] = {name: {} for name in folders}
        for (name, set_name), future in futures.items():
            readings[name][(READER, tier, decoder, set_name)] = future.result()
    return readings


def rank(decision: adoption.Decision, candidate: dict[adoption.Key, adoption.Reading]) -> tuple[int, int, int]:
    """Smaller is nearer adoption: adopted first, then the fewest sets over the allowed loss,
    then the fewest held-out characters missed."""
    heldout = sum(r.distance for key, r in candidate.items() if key[3] in adoption.HELDOUT_SETS)
    return (0 if decision.adopted else 1, len(decision.losses), heldout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--default", type=Path, required=True, help="the default checkpoint")
    parser.add_argument("--candidate", type=Path, nargs="+", required=True, help="candidate checkpoints")
    parser.add_argument("--blend", type=float, nargs="*", default=[], help="candidate's shares of points to screen too")
    parser.add_argument("--out", type=Path, required=True, help="where the blends and the models go")
    parser.add_argument("--sets", nargs="+", default=None, help="default: every set under models/eval")
    parser.add_argument("--vision", default="121", help="vision tier")
    parser.add_argument("--decoder", default="baseline", help="decoder variant")
    parser.add_argument("--jobs", type=int, default=4, help="sets read side by side")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime's intra-op threads per reading")
    args = parser.parse_args(argv)
    if args.blend and len(args.candidate) != 1:
        parser.error(f"--blend needs exactly one --candidate, got {len(args.candidate)}")
    if any(not 0 < w < 1 for w in args.blend):
        parser.error(f"--blend {args.blend}: each share strictly between 0 and 1")
    if args.jobs < 1 or args.threads < 1:
        parser.error(f"--jobs {args.jobs} --threads {args.threads}: both 1 or more")
    sets = args.sets or set_names()
    unknown = sorted(set(sets) - set(set_names()))
    if unknown:
        parser.error(f"no evaluation set {', '.join(unknown)} under models/eval; known: {', '.join(set_names())}")
    if not any(s in adoption.HELDOUT_SETS for s in sets):
        parser.error(f"--sets {' '.join(sets)}: the rule needs a held-out set ({', '.join(adoption.HELDOUT_SETS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    stems = [path.stem for path in args.candidate] + [f"blend{share:g}" for share in args.blend]
    if len(set(stems)) != len(stems) or "default" in stems:
        parser.error(f"candidates named {' '.join(stems)}: each file's name must differ, and none be 'default'")
    checkpoints = {"default": args.default} | {path.stem: path for path in args.candidate}
    for share in args.blend:
        path = args.out / f"blend{share:g}.npz"
        spec.save_checkpoint(average([args.default, args.candidate[0]], [1 - share, share]), path)
        checkpoints[path.stem] = path
    try:
        folders = {name: build(name, path, args.out) for name, path in checkpoints.items()}
    except subprocess.CalledProcessError as error:
        print(f"screen: building models failed: {error}", file=sys.stderr)
        return 2
    readings = read_all(folders, sets, args.vision, args.decoder, args.jobs, args.threads)
    kept = {name: {key[3]: vars(r) for key, r in per_set.items()} for name, per_set in readings.items()}
    (args.out / "readings.json").write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
    default = readings.pop("default")
    ranked = []
    for name, candidate in readings.items():
        decision = adoption.decide(default, candidate)
        ranked.append((rank(decision, candidate), name, decision))
        print(f"## {name}: {'passes' if decision.adopted else 'fails'} on the CPU")
        print(decision.table)
        print("\n".join(f"- {reason}" for reason in decision.reasons), end="\n\n")
    best = min(ranked)
    print(f"to the browser: {best[1]} ({checkpoints[best[1]]})")
    return 0 if best[2].adopted else 1


if __name__ == "__main__":
    sys.exit(main())
