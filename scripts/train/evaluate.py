"""Greedy decoding with the seed's token choice, and the seed's scoring, on an evaluation set.

Token choice (seed's chooseToken): greedy over the last position's logits, every id already in
the sequence (BOS included) penalised by 1.2 (divided if positive, multiplied if negative), and a
content character (a letter or number other than ーｰ〜~) repeated 12 times in a row blocked.
Scoring: NFKC, whitespace stripped, Levenshtein; nCER = total distance / total characters.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import torch

from data import VOCAB_PATH
from model import OcrModel, spec
from scoring import levenshtein, normalise
from scoring import preprocess as preprocess_numpy

EVAL_DIR = Path(__file__).resolve().parents[2] / "models" / "eval"


def vocabulary() -> list[str]:
    return json.loads(VOCAB_PATH.read_text(encoding="utf-8"))


def content_mask(characters: list[str]) -> torch.Tensor:
    mask = torch.zeros(spec.VOCAB_IDS, dtype=torch.bool)
    for index, character in enumerate(characters):
        if character not in "ーｰ〜~" and unicodedata.category(character)[0] in "LN":
            mask[index + spec.VOCAB_OFFSET] = True
    return mask


def preprocess(path: Path) -> torch.Tensor:
    return torch.from_numpy(preprocess_numpy(path))


@torch.no_grad()
def greedy(model: OcrModel, pixels: torch.Tensor, content: torch.Tensor, max_tokens: int = spec.MAX_TOKENS) -> list[list[int]]:
    """Batched greedy decoding, recomputing the whole sequence each step (no cache: simple, exact)."""
    batch = pixels.shape[0]
    device = pixels.device
    vision = model.vision(pixels)
    sequence = torch.full((batch, 1), spec.BOS_ID, dtype=torch.long, device=device)
    seen = torch.zeros(batch, spec.VOCAB_IDS, dtype=torch.bool, device=device)
    seen[:, spec.BOS_ID] = True
    tokens: list[list[int]] = [[] for _ in range(batch)]
    done = [False] * batch
    content_ids = set(torch.nonzero(content).flatten().tolist())
    for _ in range(max_tokens):
        logits = model.decoder(vision, sequence)[:, -1].float()
        adjusted = torch.where(seen, torch.where(logits < 0, logits * 1.2, logits / 1.2), logits)
        for row in range(batch):
            history = tokens[row]
            if history and history[-1] in content_ids:
                run = 0
                for token in reversed(history):
                    if token != history[-1]:
                        break
                    run += 1
                if run >= 12:
                    adjusted[row, history[-1]] = float("-inf")
        chosen = adjusted.argmax(dim=-1)
        for row, token in enumerate(chosen.tolist()):
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
        seen[torch.arange(batch, device=device), chosen] = True
        sequence = torch.cat([sequence, chosen[:, None]], dim=1)
    return tokens


def evaluate_set(model: OcrModel, name: str, device: torch.device, batch: int = 64) -> dict:
    characters = vocabulary()
    content = content_mask(characters)
    cases = json.loads((EVAL_DIR / name / "cases.json").read_text(encoding="utf-8"))
    results = []
    for start in range(0, len(cases), batch):
        chunk = cases[start:start + batch]
        pixels = torch.cat([preprocess(EVAL_DIR / name / case["image"]) for case in chunk]).to(device)
        for case, tokens in zip(chunk, greedy(model, pixels, content)):
            text = "".join(characters[t - spec.VOCAB_OFFSET] for t in tokens if t >= spec.VOCAB_OFFSET)
            expected, actual = normalise(case["expected"]), normalise(text)
            results.append({"id": case["id"], "expected": case["expected"], "actual": text, "tokens": tokens,
                            "distance": levenshtein(expected, actual), "characters": len(expected)})
    distance = sum(r["distance"] for r in results)
    total = sum(r["characters"] for r in results)
    return {"set": name, "cases": len(results), "nCER": distance / total, "distance": distance,
            "characters": total, "exact": sum(r["distance"] == 0 for r in results), "results": results}
