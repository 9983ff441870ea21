"""The seed's preprocessing and scoring, without torch (shared by evaluate.py and compare_onnx.py)."""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ocrmodel import spec  # noqa: E402
from ocrmodel.resize import resize_for_model  # noqa: E402


def preprocess(path: Path) -> np.ndarray:
    """The harness's preprocessing: over white, RGB, the model's resize to 224x224
    (ocrmodel.resize: box pre-reduction by whole factors, then Lanczos3), (x/255 - mean)/std,
    [1,3,224,224]."""
    with Image.open(path) as image:
        rgb = Image.alpha_composite(Image.new("RGBA", image.size, "white"), image.convert("RGBA")).convert("RGB")
    pixels = np.asarray(resize_for_model(rgb), np.float32) / 255.0
    mean, std = np.array(spec.MEAN, np.float32), np.array(spec.STD, np.float32)
    return ((pixels - mean) / std).transpose(2, 0, 1)[None].astype(np.float32)


def normalise(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]
