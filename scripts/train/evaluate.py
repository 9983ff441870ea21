"""Greedy decoding with the harness's token choice, and the harness's scoring, on an evaluation set.

Token choice: ocrmodel.decode.choose_token on each row's last-position logits, the rule of the
page's core (greedy, every id already in the sequence, BOS included, penalised by 1.2, a
content character repeated 12 times in a row blocked, NaN never chosen).
Scoring: scoring.score_set (NFKC, JS whitespace removed, Levenshtein; nCER = total distance /
total characters). Both are tested against the wasm core without torch.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ocrmodel.decode import choose_token, content_ids

from .data import VOCAB_PATH
from .model import OcrModel, spec
from .scoring import EVAL_DIR, eval_cases, format_ncer, score_set
from .scoring import preprocess as preprocess_numpy


def vocabulary() -> list[str]:
    return json.loads(VOCAB_PATH.read_text(encoding="utf-8"))


def preprocess(path: Path) -> torch.Tensor:
    return torch.from_numpy(preprocess_numpy(path))


@torch.no_grad()
def greedy(
    model: OcrModel, pixels: torch.Tensor, content: set[int], max_tokens: int = spec.MAX_TOKENS
) -> list[list[int]]:
    """Batched greedy decoding, recomputing the whole sequence each step (no cache: simple, exact)."""
    batch = pixels.shape[0]
    device = pixels.device
    vision = model.vision(pixels)
    sequence = torch.full((batch, 1), spec.BOS_ID, dtype=torch.long, device=device)
    tokens: list[list[int]] = [[] for _ in range(batch)]
    done = [False] * batch
    for _ in range(max_tokens):
        logits = model.decoder(vision, sequence)[:, -1].float().cpu().numpy()
        chosen = []
        for row in range(batch):
            # A finished row keeps a place in the batch; what it is fed no longer matters.
            token = (
                spec.EOS_ID
                if done[row]
                else choose_token(logits[row], [spec.BOS_ID, *tokens[row]], tokens[row], content)
            )
            chosen.append(token)
            if done[row]:
                continue
            if token == spec.EOS_ID:
                done[row] = True
                continue
            tokens[row].append(token)
            if len(tokens[row]) >= max_tokens:
                done[row] = True
        if all(done):
            break
        sequence = torch.cat([sequence, torch.tensor(chosen, dtype=torch.long, device=device)[:, None]], dim=1)
    return tokens


def evaluate_set(model: OcrModel, name: str, device: torch.device, batch: int = 64, limit: int = 0) -> dict:
    characters = vocabulary()
    content = content_ids(VOCAB_PATH)
    cases = eval_cases(name, limit)
    tokens: list[list[int]] = []
    for start in range(0, len(cases), batch):
        chunk = cases[start : start + batch]
        pixels = torch.cat([preprocess(EVAL_DIR / name / case["image"]) for case in chunk]).to(device)
        tokens.extend(greedy(model, pixels, content))
    return score_set(name, cases, tokens, characters)


def evaluate_all(model: OcrModel, names: list[str], device: torch.device) -> dict[str, dict]:
    model.eval()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        return {name: evaluate_set(model, name, device) for name in names}
    finally:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        model.train()


def summary_lines(results: dict[str, dict]) -> list[str]:
    """nCER, exact and trailing extras per set, then what hayai13's cases read."""
    lines = [
        f"{name}: nCER {format_ncer(result)} ({result['distance']}/{result['characters']}), "
        f"exact {result['exact']}/{result['cases']}, trailing extras {result['trailingExtras']}/{result['cases']}"
        for name, result in results.items()
    ]
    lines += [
        f"  {result['id']} {result['distance']} {result['actual']}"
        for result in results.get("hayai13", {"results": []})["results"]
    ]
    return lines
