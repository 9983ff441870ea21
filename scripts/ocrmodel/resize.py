"""The model's image resize, defined once: how any canvas becomes IMAGE_SIZE x IMAGE_SIZE.

Training data (train/data.py) and every Python evaluation (train/scoring.py, hence evaluate.py
and compare_onnx.py) call resize_for_model, so they squash images exactly as the harness core
does (crate/src/preprocess.rs).

This lives beside spec.py rather than in it: spec.py is one of the builder's sources
(build_models.BUILDER_SOURCES, hashed into build-info.json's builderDigest), and the resize
changes nothing the builder writes, so editing it must not mark a built models/generated stale.
"""

from __future__ import annotations

from PIL import Image

from . import spec

# Pillow's `reducing_gap`: before the Lanczos3 pass, average whole blocks of
# fx = max(1, floor(W / IMAGE_SIZE / REDUCING_GAP)) by fy (likewise from H) pixels
# (Pillow's Image.reduce). 1.0 keeps the reduced image at least IMAGE_SIZE on each axis.
# Images below 2 * IMAGE_SIZE on both axes are not reduced: the result is a plain Lanczos3.
REDUCING_GAP = 1.0


def resize_for_model(image: Image.Image) -> Image.Image:
    """Squash `image` (RGB, or L for the grey training canvases) to IMAGE_SIZE x IMAGE_SIZE like
    the harness core: a box average over whole fx x fy blocks, then Lanczos3 from the reduced
    image with the source box mapped into reduced coordinates, i.e. Pillow's
    `resize((224, 224), Image.LANCZOS, reducing_gap=1.0)`. The core does this instead of a full
    Lanczos3 because the latter costs ~25 multiply-adds per source pixel of a large page in
    WASM; the box pre-reduction makes it several times cheaper.

    The committed checkpoint was trained with the plain Lanczos3 resize (no reduction);
    models/MODEL_CARD.md gives its accuracy under both."""
    return image.resize((spec.IMAGE_SIZE, spec.IMAGE_SIZE), Image.LANCZOS, reducing_gap=REDUCING_GAP)
