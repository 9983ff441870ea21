"""Train the default OCR model on rendered manga dialog and export it as the spec's checkpoint.

One documented command (scripts/train/README.md). Fixed seeds: the model's initial weights, every
data worker's stream and the batch order follow from --seed (GPU kernels may still differ in
the last bits between runs).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel
from torch.utils.data import DataLoader, IterableDataset, get_worker_info

from ocrmodel.fonts import FontLibrary

from .data import IGNORE, VOCAB_PATH, SampleMaker, kind_weights, parse_shares, worker_seed
from .evaluate import evaluate_all, summary_lines
from .model import OcrModel, spec
from .penalty import penalised_logits
from .replay import ReplayRing
from .schedule import Schedule
from .scoring import set_names

# The steps over which --minutes measures the step rate: late enough that the workers' queue,
# full after compilation, no longer inflates it (measured over steps 50-200 it read 7.8 steps/s
# against a steady 5.8).
RATE_WINDOW = (400, 700)
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "models" / "checkpoint" / "ocr-bench-default.npz"


class RenderedStream(IterableDataset):
    def __init__(self, font_dir: Path | None, seed: int, weights: dict[str, float]):
        self.font_dir = font_dir
        self.seed = seed
        self.weights = weights

    def __iter__(self):
        info = get_worker_info()
        worker = info.id if info else 0
        maker = SampleMaker(FontLibrary(self.font_dir), worker_seed(self.seed, worker), self.weights)
        while True:
            yield maker.sample()


def losses(
    model: OcrModel,
    pixels: torch.Tensor,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    cells: torch.Tensor,
    labels: torch.Tensor,
):
    mean = torch.tensor(spec.MEAN, device=pixels.device).view(1, 3, 1, 1)
    std = torch.tensor(spec.STD, device=pixels.device).view(1, 3, 1, 1)
    # RGB uint8 [B, 224, 224, 3] from the workers and the ring, normalised per channel as the core does.
    rgb = pixels.permute(0, 3, 1, 2).float().div(255.0)
    normalised = (rgb - mean) / std
    with torch.autocast("cuda", dtype=torch.bfloat16):
        vision = model.vision(normalised)
        logits = model.decoder(vision, inputs)
        aux = model.aux_logits(vision, cells)
    # Scored as the page's token choice sees them (penalty.py).
    scored = penalised_logits(logits.float(), inputs)
    text_loss = F.cross_entropy(scored.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)
    aux_loss = F.cross_entropy(aux.float().flatten(0, 1), labels.flatten())
    return text_loss, aux_loss


def train_step(
    model: OcrModel,
    optimizer: torch.optim.Optimizer,
    step_losses,
    fresh: list[torch.Tensor],
    ring: ReplayRing | None,
    replayed: int,
    aux_weight: float,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """One optimizer step on the fresh samples (kept in the ring) and `replayed` drawn from it;
    returns the two losses and the samples trained on."""
    batch = fresh
    if ring is not None:
        ring.add(fresh)
        batch = [torch.cat(pair) for pair in zip(fresh, ring.draw(replayed), strict=True)]
    text_loss, aux_loss = step_losses(model, *batch)
    loss = text_loss + aux_weight * aux_loss
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return text_loss, aux_loss, batch[0].shape[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps", type=int, default=0, help=f"optimizer steps; 0: fix them at step {RATE_WINDOW[1]} from --minutes"
    )
    parser.add_argument("--minutes", type=float, default=13.0, help="training time budget when --steps is 0")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument(
        "--fresh",
        type=float,
        default=1.0,
        help="share of each batch fresh from the renderer, the rest drawn again from "
        "recent samples on the GPU (replay.py); 1: every sample new",
    )
    parser.add_argument("--replay-capacity", type=int, default=16384, help="recent samples kept for --fresh < 1")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument(
        "--average-from",
        type=float,
        default=0.0,
        help="share of the steps after which the rate stays at --average-lr and the weights of "
        "every --average-every-th step join a running mean, which the run exports (schedule.py); "
        "0: no averaging",
    )
    parser.add_argument("--average-lr", type=float, default=0.0, help="the constant rate while averaging")
    parser.add_argument("--average-every", type=int, default=25, help="steps between the weights joining the mean")
    parser.add_argument("--aux-weight", type=float, default=1.0)
    parser.add_argument("--workers", type=int, default=14)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--font-dir",
        type=Path,
        default=None,
        help="folder of the faces of ocrmodel/fonts.py by file name (font_subsets.py makes it); "
        "default: the system's fonts",
    )
    parser.add_argument(
        "--shares",
        nargs="+",
        default=[],
        metavar="KIND=SHARE",
        help="replace data.KIND_WEIGHTS's share of these kinds (the shares must add to 1)",
    )
    parser.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start from this checkpoint (spec.save_checkpoint format) instead of random weights",
    )
    parser.add_argument(
        "--eval-sets", nargs="+", default=None, help="sets evaluated at the end; default: every set under models/eval"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report", type=Path, default=None, help="write the final evaluation (per case) as JSON")
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--eval-every", type=int, default=1000)
    args = parser.parse_args()
    fresh = round(args.batch * args.fresh)
    if not 0 < fresh <= args.batch:
        raise SystemExit(f"--fresh {args.fresh} leaves {fresh} fresh samples of {args.batch}; allowed: 0 < fresh <= 1")
    if fresh < args.batch and args.replay_capacity < args.batch:
        raise SystemExit(f"--replay-capacity {args.replay_capacity} is below the batch ({args.batch})")

    try:
        schedule = Schedule(args.lr, args.warmup, args.average_from, args.average_lr, args.average_every)
    except ValueError as error:
        raise SystemExit(str(error)) from error
    try:
        weights = kind_weights(parse_shares(args.shares))
    except ValueError as error:
        raise SystemExit(f"--shares: {error}") from error
    print(f"kind shares: {weights}", flush=True)
    if not torch.cuda.is_available():
        raise SystemExit("training needs a CUDA GPU")
    device = torch.device("cuda")
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    model = OcrModel().to(device)
    if args.init:
        model.load_weights(spec.load_checkpoint(args.init))
        print(f"initialised from {args.init}", flush=True)
    FontLibrary(args.font_dir)  # fails early, naming what is missing
    vocabulary_size = len(json.loads(VOCAB_PATH.read_text(encoding="utf-8")))
    drawn = torch.zeros(spec.VOCAB_IDS, dtype=torch.bool, device=device)
    decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and n != "vision.pos"]
    keep = [p for n, p in model.named_parameters() if not (p.ndim >= 2 and n != "vision.pos")]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.05}, {"params": keep, "weight_decay": 0.0}],
        lr=args.lr,
        betas=(0.9, 0.95),
        fused=True,
    )
    # The running mean lives beside the trained weights (a copy on the GPU), updated in place.
    averaged = AveragedModel(model) if args.average_from else None
    step_losses = losses if args.no_compile else torch.compile(losses)
    replayed = args.batch - fresh
    ring = (
        ReplayRing(args.replay_capacity, device, torch.Generator(device).manual_seed(args.seed)) if replayed else None
    )
    loader = DataLoader(
        RenderedStream(args.font_dir, args.seed, weights),
        batch_size=fresh,
        num_workers=args.workers,
        pin_memory=True,
        prefetch_factor=6,
        persistent_workers=args.workers > 0,
    )
    total = args.steps
    started = time.time()
    window_started, window_samples = started, 0
    print(
        f"parameters: {sum(p.numel() for n, p in model.named_parameters() if not n.startswith('aux_norm')):,}",
        flush=True,
    )
    curve = []
    for step, (pixels, inputs, targets, cells, labels) in enumerate(loader):
        if total and step >= total:
            break
        if step == RATE_WINDOW[0]:
            rate_started = time.time()
        if not total and step == RATE_WINDOW[1]:
            rate = (RATE_WINDOW[1] - RATE_WINDOW[0]) / (time.time() - rate_started)
            total = int(rate * (args.minutes * 60 - (time.time() - started))) + step
            print(
                f"measured {rate:.2f} steps/s; total steps fixed at {total} (reproduce with --steps {total})",
                flush=True,
            )
        lr = schedule.rate(step, total or 10**9)
        for group in optimizer.param_groups:
            group["lr"] = lr
        batch = [t.to(device, non_blocking=True) for t in (pixels, inputs, targets, cells, labels)]
        drawn[batch[1].flatten()] = True
        text_loss, aux_loss, trained = train_step(model, optimizer, step_losses, batch, ring, replayed, args.aux_weight)
        if averaged is not None and total and schedule.joins_mean(step, total):
            averaged.update_parameters(model)
        window_samples += trained
        if step % 100 == 0:
            now = time.time()
            entry = {
                "step": step,
                "text_loss": round(text_loss.item(), 4),
                "aux_loss": round(aux_loss.item(), 4),
                "lr": round(lr, 6),
                "samples_per_s": round(window_samples / (now - window_started)),
                "rendered_per_s": round(window_samples * fresh / args.batch / (now - window_started)),
                "minutes": round((now - started) / 60, 2),
            }
            curve.append(entry)
            print(json.dumps(entry), flush=True)
            window_started, window_samples = now, 0
        if args.eval_every and step and step % args.eval_every == 0:
            quick = evaluate_all(model, ["hayai13"], device)["hayai13"]
            print(f"step {step}: hayai13 nCER {quick['nCER']:.4f}", flush=True)
    train_minutes = (time.time() - started) / 60
    print(f"trained {total} steps of {args.batch} in {train_minutes:.1f} min", flush=True)
    drawn_ids = drawn[spec.VOCAB_OFFSET : spec.VOCAB_OFFSET + vocabulary_size].cpu()
    characters = json.loads(VOCAB_PATH.read_text(encoding="utf-8"))
    never = [characters[i] for i in range(vocabulary_size) if not drawn_ids[i]]
    print(
        f"vocabulary drawn in training: {vocabulary_size - len(never)} of {vocabulary_size}; "
        f"never drawn: {''.join(never)!r}",
        flush=True,
    )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    joined = int(averaged.n_averaged) if averaged is not None else 0  # the mean counts its own members
    if averaged is not None:
        if not joined:
            raise SystemExit(
                f"no step joined the mean (averaging from step {schedule.averaging_start(total)} of {total})"
            )
        print(f"exporting the mean of {joined} steps' weights from step {schedule.averaging_start(total)}", flush=True)
    exported = averaged.module if averaged is not None else model
    spec.save_checkpoint(exported.exported_weights(), args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.1f} MB)", flush=True)
    # Evaluate what was shipped: the int8 checkpoint read back, not the float weights.
    shipped = OcrModel().to(device)
    shipped.load_weights(spec.load_checkpoint(args.out))
    sets = args.eval_sets or set_names()
    report = {
        "steps": total,
        "batch": args.batch,
        "fresh": fresh,
        "train_minutes": round(train_minutes, 2),
        "curve": curve,
        "init": str(args.init) if args.init else None,
        "averagedSteps": joined,
        "vocabularyDrawn": vocabulary_size - len(never),
        "neverDrawn": "".join(never),
        "eval": evaluate_all(shipped, sets, device),
    }
    print("\n".join(summary_lines(report["eval"])), flush=True)
    if args.report:
        args.report.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
