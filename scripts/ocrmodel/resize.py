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

# Pillow's `reducing_gap`: before the Lanczos3 passes, average whole blocks of
# fx = max(1, floor(W / IMAGE_SIZE / REDUCING_GAP)) by fy (likewise from H) pixels
# (Pillow's Image.reduce). 1.0 keeps the reduced image at least IMAGE_SIZE on each axis.
# Images below 2 * IMAGE_SIZE on both axes are not reduced: the result is a plain Lanczos3.
REDUCING_GAP = 1.0


def reduce_factor(size: int) -> int:
    """The whole box factor along one axis, as Pillow's resize computes it for reducing_gap."""
    return max(1, int(size / spec.IMAGE_SIZE / REDUCING_GAP))


def resize_for_model(image: Image.Image) -> Image.Image:
    """Squash `image` (RGB, or L for the grey training canvases) to IMAGE_SIZE x IMAGE_SIZE like
    the harness core (crate/src/preprocess.rs, crate/src/box_reduce.rs):

    1. a box average over whole fx x fy blocks (Pillow's Image.reduce, which the core
       reproduces bit for bit);
    2. Lanczos3 across (width only), from the source box mapped into reduced coordinates;
    3. Lanczos3 down (height only), each pass rounded to 8 bits.

    This is Pillow's `resize((224, 224), Image.LANCZOS, reducing_gap=1.0)` except that the
    pass order is fixed: Pillow 13 runs the vertical pass first when the height shrinks more
    than the width, which changes the rounding by up to 16 levels (measured against the core).
    Two single-axis resizes pin the order to the core's on every Pillow version.

    The core does the box step because a full Lanczos3 costs ~25 multiply-adds per source
    pixel of a large page in WASM. The committed checkpoint was trained with the plain Lanczos3
    resize (no reduction); models/MODEL_CARD.md gives its accuracy under both."""
    width, height = image.size
    fx, fy = reduce_factor(width), reduce_factor(height)
    if (fx, fy) != (1, 1):
        image = image.reduce((fx, fy))
    reduced_height = image.size[1]
    across = image.resize((spec.IMAGE_SIZE, reduced_height), Image.LANCZOS, box=(0, 0, width / fx, reduced_height))
    return across.resize((spec.IMAGE_SIZE, spec.IMAGE_SIZE), Image.LANCZOS, box=(0, 0, spec.IMAGE_SIZE, height / fy))
