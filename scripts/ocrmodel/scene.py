"""Manga scenes around a text layout: balloons, narration boxes, tones, art, and a scan's damage.

The layout (glyphs, columns, centres) is `render.layout`'s; this module puts it where manga puts
dialog and degrades the result the way crops from real pages are degraded:

- containers: ellipse, rounded box, spiky shout, cloud and thought balloons (outline weights
  from hairline to heavy, tails), narration boxes with single or double borders, or none (text
  straight on the art, usually with a white halo); any of them may be cut by the crop's edge;
- backgrounds: paper, screentone dots at any angle and pitch, hatching, speed lines (radial or
  parallel), photo-like smooth fields, gradients, dark panels;
- white text on dark (a black balloon or a dark panel);
- what follows the text in reading order without being text (`scene_after.py`): tails,
  thought bubbles, a neighbouring balloon's edge, panel borders, tone, speed lines, art; or no
  text at all (`blank`);
- display lettering (sound effects): outlines in layers, a drop shadow, stretching;
- damage: shear, perspective, rotation (by up to 25 degrees with the corners kept), blur,
  down-scaling (text 10-14 px high), noise, JPEG;
- colour: drawn in grey levels, then mapped to RGB through the scene's colours (`colour.py`).

Every centre follows every geometric step, so the auxiliary labels stay right. Everything
random comes from the `random.Random` passed in.
"""

from __future__ import annotations

import io
import math
import random
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from .colour import gradient_map
from .render import Rendered, Style, glyph_mask, layout
from .scene_after import draw_after, extend_for_after
from .scene_touching import draw_touching

CONTAINERS = ("none", "ellipse", "roundbox", "spiky", "cloud", "thought", "narration")
BACKGROUNDS = ("plain", "screentone", "hatching", "speedlines", "photo", "gradient", "dark")
CORNER_FILLS = ("white", "grey", "paper", "screentone", "hatching", "speedlines", "photo", "dark")


@dataclass(frozen=True)
class Scene:
    container: str = "ellipse"
    outline: float = 2.0  # container outline width, px
    tail: bool = False
    cut: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # share of the container cut per side (l, t, r, b)
    background: str = "plain"
    inverted: bool = False  # light text on a dark fill
    halo: int = 0  # white outline around the glyphs, px (text on art)
    paper: int = 250  # the container's fill (or the plain background)
    ink: int = 15  # the text's grey level (light when inverted)
    perspective: float = 0.0  # largest corner displacement, share of the side
    rotation: float = 0.0  # degrees, counter-clockwise
    blur: float = 0.0  # Gaussian radius, px, before down-scaling
    downscale: float = 1.0  # final size factor (< 1: a low-resolution crop)
    noise: float = 0.0  # Gaussian sigma, grey levels
    jpeg: int = 0  # JPEG quality; 0: none
    # The additions below keep their defaults in the kinds before them, so those kinds draw the
    # same pixels from the same seeds as before (the evaluation sets are hashed).
    after: tuple[str, ...] = ()  # scene_after.AFTER_KINDS drawn after the text's end
    blank: bool = False  # lay the text out for the crop's size, but draw none of it
    # (radius px, grey level) from the outermost: dilated copies of the glyphs under them
    # (display lettering's thick and double outlines).
    outline_layers: tuple[tuple[int, int], ...] = ()
    shadow: tuple[int, int, int] = (0, 0, 0)  # dx, dy px and grey level of a drop shadow; (0, 0, _): none
    stretch: tuple[float, float] = (1.0, 1.0)  # x and y scale of the whole crop
    shear: float = 0.0  # x += shear * y (columns lean), or y += shear * x for horizontal text
    keep_corners: bool = False  # rotate onto a larger canvas instead of cutting the corners
    # The wide families of `families.py` (training only); the defaults draw as before.
    # What fills the corners a turn with keep_corners uncovers (CORNER_FILLS); "": the crop's
    # own edge grey, as `tilted` draws.
    corner_fill: str = ""
    page: int = -1  # the grey of the page behind the container; -1: `paper`
    box_fill: int = -1  # the container's fill; -1: `paper` (or a dark grey when inverted)
    line: int = -1  # the container's outline grey; -1: a random dark one
    touching: tuple[str, ...] = ()  # scene_touching.TOUCHING_KINDS drawn against or across the text
    after_any_side: bool = False  # `after` marks on any side of the text and closer (the `marks` family)
    # (grey level, RGB) anchors the finished grey crop is mapped through (`colour.gradient_map`),
    # the `colour` family's pages; (): the crop stays grey.
    colours: tuple[tuple[int, tuple[int, int, int]], ...] = ()


def render_scene(text: str, style: Style, scene: Scene, rng: random.Random) -> Rendered:
    coverage, centres = layout(text, style, rng)
    text_h, text_w = coverage.shape
    em = style.size
    box = _container_box(scene, text_w, text_h, em, rng)  # container bbox relative to the text's top-left
    canvas_box = _canvas_box(scene, box, text_w, text_h, em, rng)
    strip = None
    if scene.after:
        canvas_box, strip, side = extend_for_after(
            canvas_box,
            box if scene.container != "none" else None,
            text_w,
            text_h,
            em,
            style.vertical,
            rng,
            any_side=scene.after_any_side,
        )
    x0, y0, x1, y1 = canvas_box
    width, height = x1 - x0, y1 - y0
    base = _background(scene, width, height, rng)
    image = Image.fromarray(base, "L")
    shift = (-x0, -y0)  # text top-left in canvas pixels
    _draw_container(image, scene, _moved(box, shift), rng)
    if strip is not None:
        draw_after(image, scene, _moved(strip, shift), side, em, _pattern, rng, _glyph_maker(style))
    text_box = (-x0, -y0, -x0 + text_w, -y0 + text_h)
    if scene.touching:
        draw_touching(image, scene, text_box, em, style.vertical, rng, under=True)
    pixels = np.asarray(image, np.float32).copy()
    tx, ty = shift
    if scene.blank:
        image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L")
        return _finished(*_damage(image, [], scene, style.vertical, rng), scene)
    if scene.shadow[:2] != (0, 0):
        dx, dy, level = scene.shadow
        _paint(pixels, coverage, tx + dx, ty + dy, max((r for r, _ in scene.outline_layers), default=0), level)
    for radius, level in scene.outline_layers:
        _paint(pixels, coverage, tx, ty, radius, level)
    alpha = coverage.astype(np.float32) / 255.0
    if scene.halo:
        halo = _dilate(coverage, scene.halo).astype(np.float32) / 255.0
        halo_level = 20.0 if scene.inverted else 252.0
        region = pixels[ty : ty + text_h, tx : tx + text_w]
        region[:] = region * (1.0 - halo) + halo_level * halo
    region = pixels[ty : ty + text_h, tx : tx + text_w]
    region[:] = region * (1.0 - alpha) + scene.ink * alpha
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "L")
    if scene.touching:
        draw_touching(image, scene, text_box, em, style.vertical, rng, under=False)
    centres = [(x + tx, y + ty) for x, y in centres]
    return _finished(*_damage(image, centres, scene, style.vertical, rng), scene)


def _finished(image: Image.Image, centres, scene: Scene) -> Rendered:
    """The damaged grey crop, in colour where the scene has colours: mapped after the damage so
    that blur, noise and JPEG blend its colours as they blend its grey levels."""
    return Rendered(gradient_map(image, scene.colours) if scene.colours else image, centres)


def _glyph_maker(style: Style):
    """(character, size px) -> (coverage, dx, dy) in the style's faces, or None where none draws it."""

    def glyph(character: str, size: int):
        face = style.face_for(character) if style.face_for is not None else style.face
        return None if face is None else glyph_mask(face, size, character, False)

    return glyph


def _paint(pixels: np.ndarray, coverage: np.ndarray, tx: int, ty: int, radius: int, level: int) -> None:
    """The glyphs dilated by `radius`, at (tx, ty), laid over `pixels` in grey `level` (clipped to the canvas)."""
    padded = np.pad(coverage, radius)
    mask = (_dilate(padded, radius) if radius else padded).astype(np.float32) / 255.0
    height, width = pixels.shape
    left, top = tx - radius, ty - radius
    xs, ys = max(0, left), max(0, top)
    xe, ye = min(width, left + mask.shape[1]), min(height, top + mask.shape[0])
    if xe <= xs or ye <= ys:
        return
    part = mask[ys - top : ye - top, xs - left : xe - left]
    region = pixels[ys:ye, xs:xe]
    region[:] = region * (1.0 - part) + level * part


def _dilate(coverage: np.ndarray, radius: int) -> np.ndarray:
    """Grey dilation by a (2r+1)-square, separably (PIL's MaxFilter took 15 ms a crop)."""
    out = coverage.copy()
    for axis in (0, 1):
        source = out.copy()
        for step in range(1, radius + 1):
            ahead = [slice(None)] * 2
            behind = [slice(None)] * 2
            ahead[axis], behind[axis] = slice(step, None), slice(None, -step)
            np.maximum(out[tuple(behind)], source[tuple(ahead)], out=out[tuple(behind)])
            np.maximum(out[tuple(ahead)], source[tuple(behind)], out=out[tuple(ahead)])
    return out


def _moved(box, shift):
    dx, dy = shift
    return (box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy)


def _container_box(scene: Scene, text_w: int, text_h: int, em: int, rng: random.Random):
    """The container's bounding box (x0, y0, x1, y1) around the text at (0, 0)-(text_w, text_h)."""
    cx, cy = text_w / 2, text_h / 2
    if scene.container in ("ellipse", "spiky", "cloud", "thought"):
        # A factor near sqrt(2) puts the text rectangle's corners on the ellipse; lines are
        # centred, so their ends rarely reach the corners.
        k = rng.uniform(1.3, 1.55) if scene.container == "ellipse" else rng.uniform(1.45, 1.7)
        rx, ry = text_w / 2 * k + scene.outline, text_h / 2 * k + scene.outline
        return (cx - rx, cy - ry, cx + rx, cy + ry)
    pad = rng.uniform(0.25, 0.8) * em + scene.outline
    return (-pad, -pad, text_w + pad, text_h + pad)


def _canvas_box(scene: Scene, box, text_w: int, text_h: int, em: int, rng: random.Random):
    """The crop, in the text's coordinates: the container plus a margin, maybe cut into it
    (never into the text)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    margins = [rng.uniform(0.05, 0.6) * em for _ in range(4)]
    if scene.container == "thought" or scene.tail:
        margins = [m + rng.uniform(0.5, 1.5) * em for m in margins]
    left = x0 - margins[0] + scene.cut[0] * w
    top = y0 - margins[1] + scene.cut[1] * h
    right = x1 + margins[2] - scene.cut[2] * w
    bottom = y1 + margins[3] - scene.cut[3] * h
    guard = 0.15 * em + _reach(scene)
    left, top = min(left, -guard), min(top, -guard)
    right, bottom = max(right, text_w + guard), max(bottom, text_h + guard)
    return (int(math.floor(left)), int(math.floor(top)), int(math.ceil(right)), int(math.ceil(bottom)))


def _pattern(kind: str, width: int, height: int, paper: int, rng: random.Random) -> np.ndarray:
    """A patch of one background pattern on `paper` (the marks after the text use them)."""
    return _background(Scene(background=kind, paper=paper), width, height, rng)


def _reach(scene: Scene) -> int:
    """How far outlines and the shadow reach beyond the glyphs, px."""
    outline = max((radius for radius, _ in scene.outline_layers), default=0)
    return outline + max(abs(scene.shadow[0]), abs(scene.shadow[1])) if scene.shadow[:2] != (0, 0) else outline


def _background(scene: Scene, width: int, height: int, rng: random.Random) -> np.ndarray:
    kind = scene.background
    generator = np.random.default_rng(rng.getrandbits(63))
    yy, xx = np.ogrid[0:height, 0:width]
    yy, xx = yy.astype(np.float32), xx.astype(np.float32)
    level = float(scene.paper if not (scene.inverted and scene.container == "none") else rng.randint(0, 60))
    if scene.page >= 0:
        level = float(scene.page)
    field = np.full((height, width), level, np.float32)
    if kind == "screentone":
        period, angle = rng.uniform(3.0, 9.0), math.radians(rng.uniform(0, 90))
        u = (xx * math.cos(angle) + yy * math.sin(angle)) * (2 * math.pi / period)
        v = (-xx * math.sin(angle) + yy * math.cos(angle)) * (2 * math.pi / period)
        dots = (np.cos(u) + np.cos(v)) > rng.uniform(-0.6, 1.2)
        field -= dots * rng.uniform(60, 200)
    elif kind == "hatching":
        period, angle = rng.uniform(3.0, 10.0), math.radians(rng.uniform(0, 180))
        u = (xx * math.cos(angle) + yy * math.sin(angle)) % period
        field -= (u < rng.uniform(0.8, 2.5)) * rng.uniform(80, 200)
    elif kind == "speedlines":
        if rng.random() < 0.6:  # radial, focused somewhere near or beyond the crop
            fx, fy = rng.uniform(-0.5, 1.5) * width, rng.uniform(-0.5, 1.5) * height
            theta = np.arctan2(yy - fy, xx - fx)
            rays = rng.randint(60, 240)
            phase = generator.random(rays) * 2 * np.pi
            index = ((theta + np.pi) / (2 * np.pi) * rays).astype(np.int64) % rays
            lines = np.sin(theta * rays + phase[index]) > rng.uniform(0.5, 0.9)
        else:  # parallel streaks of random lengths
            lines = np.zeros((height, width), bool)
            for _ in range(rng.randint(15, 60)):
                row = rng.randrange(height)
                start = rng.randrange(width)
                lines[row : row + rng.randint(1, 2), start : start + rng.randint(width // 4, width)] = True
        field -= lines * rng.uniform(90, 220)
    elif kind == "photo":
        cells = (max(2, height // rng.randint(8, 40)), max(2, width // rng.randint(8, 40)))
        coarse = generator.random(cells).astype(np.float32)
        smooth = np.asarray(
            Image.fromarray((coarse * 255).astype(np.uint8), "L").resize((width, height), Image.BICUBIC), np.float32
        )
        # Light art behind dark text, dark art behind light text: a crop a reader can read.
        spread = rng.uniform(0.25, 0.5)
        field = (
            rng.uniform(0, 40) if scene.inverted else rng.uniform(255 * (1 - spread) - 60, 255 * (1 - spread))
        ) + smooth * spread
    elif kind == "gradient":
        angle = math.radians(rng.uniform(0, 360))
        ramp = xx * math.cos(angle) + yy * math.sin(angle)
        ramp = np.broadcast_to(ramp, (height, width))
        ramp = (ramp - ramp.min()) / max(1.0, float(np.ptp(ramp)))
        field -= ramp * rng.uniform(40, 180)
    elif kind == "dark":
        field = np.full((height, width), float(rng.randint(0, 50)), np.float32)
        field += generator.normal(0, rng.uniform(0, 6), field.shape)
    return np.clip(field, 0, 255).astype(np.uint8)


def _draw_container(image: Image.Image, scene: Scene, box, rng: random.Random) -> None:
    kind = scene.container
    if kind == "none":
        return
    draw = ImageDraw.Draw(image)
    fill = rng.randint(0, 50) if scene.inverted else scene.paper
    line = rng.choice([rng.randint(0, 40), 255 - rng.randint(0, 40)]) if scene.inverted else rng.randint(0, 60)
    fill = scene.box_fill if scene.box_fill >= 0 else fill
    line = scene.line if scene.line >= 0 else line
    width = max(1, int(round(scene.outline)))
    x0, y0, x1, y1 = box
    cx, cy, rx, ry = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2, (y1 - y0) / 2
    if scene.tail:
        _draw_tail(draw, (cx, cy, rx, ry), image.size, fill, line, width, rng)
    if kind == "ellipse":
        draw.ellipse(box, fill=fill, outline=line, width=width)
    elif kind == "roundbox":
        radius = int(min(rx, ry) * rng.uniform(0.2, 0.9))
        draw.rounded_rectangle(box, radius=radius, fill=fill, outline=line, width=width)
    elif kind == "narration":
        draw.rectangle(box, fill=fill, outline=line, width=width)
        if rng.random() < 0.3:  # a double border
            inset = width + rng.randint(2, 4)
            draw.rectangle((x0 + inset, y0 + inset, x1 - inset, y1 - inset), outline=line, width=max(1, width // 2))
    elif kind == "spiky":
        spikes = rng.randint(10, 28)
        inner, outer = rng.uniform(0.82, 0.92), rng.uniform(1.05, 1.25)
        points = []
        for index in range(2 * spikes):
            angle = math.pi * index / spikes + rng.uniform(-0.08, 0.08)
            scale = (outer if index % 2 == 0 else inner) * rng.uniform(0.95, 1.05)
            points.append((cx + rx * scale * math.cos(angle), cy + ry * scale * math.sin(angle)))
        draw.polygon(points, fill=fill, outline=line, width=width)
    else:  # cloud and thought: an ellipse with round bumps along its edge
        bumps = rng.randint(8, 16)
        radius = min(rx, ry) * rng.uniform(0.25, 0.4)
        circles = [
            (cx + rx * 0.9 * math.cos(2 * math.pi * i / bumps), cy + ry * 0.9 * math.sin(2 * math.pi * i / bumps))
            for i in range(bumps)
        ]
        for px, py in circles:
            draw.ellipse(
                (px - radius - width, py - radius - width, px + radius + width, py + radius + width), fill=line
            )
        draw.ellipse(
            (cx - rx * 0.9 - width, cy - ry * 0.9 - width, cx + rx * 0.9 + width, cy + ry * 0.9 + width), fill=line
        )
        for px, py in circles:
            draw.ellipse((px - radius, py - radius, px + radius, py + radius), fill=fill)
        draw.ellipse((cx - rx * 0.9, cy - ry * 0.9, cx + rx * 0.9, cy + ry * 0.9), fill=fill)
        if kind == "thought":  # small bubbles trailing off towards a corner
            angle = rng.uniform(0, 2 * math.pi)
            for step, size in enumerate((0.18, 0.11, 0.07)):
                distance = 1.15 + 0.3 * step
                px, py = cx + rx * distance * math.cos(angle), cy + ry * distance * math.sin(angle)
                r = min(rx, ry) * size
                draw.ellipse((px - r, py - r, px + r, py + r), fill=fill, outline=line, width=width)


def _draw_tail(draw: ImageDraw.ImageDraw, ellipse, size, fill: int, line: int, width: int, rng: random.Random) -> None:
    """A wedge from inside the balloon to beyond its edge; the balloon drawn over it hides its base."""
    cx, cy, rx, ry = ellipse
    angle = rng.uniform(0, 2 * math.pi)
    spread = rng.uniform(0.12, 0.3)
    reach = rng.uniform(1.25, 1.6)
    bend = rng.uniform(-0.3, 0.3)
    base = [(cx + rx * 0.8 * math.cos(angle + s), cy + ry * 0.8 * math.sin(angle + s)) for s in (-spread, spread)]
    tip = (cx + rx * reach * math.cos(angle + bend), cy + ry * reach * math.sin(angle + bend))
    draw.polygon([base[0], tip, base[1]], fill=fill, outline=line, width=width)


def _damage(image: Image.Image, centres, scene: Scene, vertical: bool, rng: random.Random):
    fill = int(np.median(np.asarray(image)[0]))
    if scene.stretch != (1.0, 1.0):
        image, centres = _stretch(image, centres, scene.stretch)
    if scene.shear:
        image, centres = _shear(image, centres, scene.shear, vertical, fill)
    if scene.perspective:
        image, centres = _perspective(image, centres, scene.perspective, fill, rng)
    if scene.rotation and scene.corner_fill:
        image, centres = _turn(image, centres, scene.rotation, scene.corner_fill, rng)
    elif scene.rotation:
        image, centres = _rotate(image, centres, scene.rotation, fill, scene.keep_corners)
    if scene.blur > 0:
        image = image.filter(ImageFilter.GaussianBlur(scene.blur))
    if scene.downscale < 1.0:
        width, height = image.size
        small = (max(8, int(width * scene.downscale)), max(8, int(height * scene.downscale)))
        image = image.resize(small, rng.choice([Image.BILINEAR, Image.BOX, Image.LANCZOS]))
        centres = [(x * small[0] / width, y * small[1] / height) for x, y in centres]
    if scene.noise > 0:
        pixels = np.asarray(image, np.float32)
        noise = np.random.default_rng(rng.getrandbits(63)).normal(0.0, scene.noise, pixels.shape)
        image = Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8), "L")
    if scene.jpeg:
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=scene.jpeg)
        image = Image.open(io.BytesIO(buffer.getvalue())).convert("L")
    return image, centres


def _rotate(image: Image.Image, centres, degrees: float, fill: int, keep_corners: bool = False):
    width, height = image.size
    rotated = image.rotate(degrees, resample=Image.BILINEAR, fillcolor=fill, expand=keep_corners)
    angle = math.radians(degrees)
    cos, sin = math.cos(angle), math.sin(angle)
    cx, cy = width / 2, height / 2
    nx, ny = rotated.size[0] / 2, rotated.size[1] / 2  # the centre of the (maybe larger) result
    moved = [(nx + cos * (x - cx) + sin * (y - cy), ny - sin * (x - cx) + cos * (y - cy)) for x, y in centres]
    return rotated, moved


def _turn(image: Image.Image, centres, degrees: float, corners: str, rng: random.Random):
    """The whole crop turned onto a larger canvas whose uncovered corners show `corners`
    (CORNER_FILLS): white, a flat grey, paper grain, a tone or art, as a detector's upright box
    around a turned balloon holds whatever lies beside it."""
    turned, moved = _rotate(image, centres, degrees, 0, keep_corners=True)
    covered = Image.new("L", image.size, 255).rotate(degrees, resample=Image.BILINEAR, expand=True)
    width, height = turned.size
    if corners == "white":
        behind = np.full((height, width), rng.randint(240, 255), np.uint8)
    elif corners == "grey":
        behind = np.full((height, width), rng.randint(40, 235), np.uint8)
    elif corners == "paper":  # a page's grain: low-pass noise about a light grey
        grain = np.random.default_rng(rng.getrandbits(63)).normal(0, rng.uniform(3, 12), (height, width))
        behind = np.clip(rng.randint(200, 250) + grain, 0, 255).astype(np.uint8)
        behind = np.asarray(Image.fromarray(behind, "L").filter(ImageFilter.GaussianBlur(0.8)))
    else:
        behind = _pattern(corners, width, height, rng.randint(200, 255), rng)
    return Image.composite(turned, Image.fromarray(behind, "L"), covered), moved


def _stretch(image: Image.Image, centres, scale: tuple[float, float]):
    width, height = image.size
    size = (max(8, round(width * scale[0])), max(8, round(height * scale[1])))
    moved = [(x * size[0] / width, y * size[1] / height) for x, y in centres]
    return image.resize(size, Image.BICUBIC), moved


def _shear(image: Image.Image, centres, amount: float, vertical: bool, fill: int):
    """Columns lean (x += amount * y) or lines climb (y += amount * x), on a canvas that holds it all."""
    width, height = image.size
    if vertical:
        extra = abs(amount) * height
        offset = extra if amount < 0 else 0.0
        size = (int(math.ceil(width + extra)), height)
        # PIL maps each output pixel (u, v) to the input (u - amount * v - offset, v).
        coefficients = (1, -amount, -offset, 0, 1, 0)
        moved = [(x + amount * y + offset, y) for x, y in centres]
    else:
        extra = abs(amount) * width
        offset = extra if amount < 0 else 0.0
        size = (width, int(math.ceil(height + extra)))
        coefficients = (1, 0, 0, -amount, 1, -offset)
        moved = [(x, y + amount * x + offset) for x, y in centres]
    return image.transform(size, Image.AFFINE, coefficients, Image.BILINEAR, fillcolor=fill), moved


def _perspective(image: Image.Image, centres, amount: float, fill: int, rng: random.Random):
    """Moves each corner by up to `amount` of the side, keeping the canvas size."""
    width, height = image.size
    source = [(0, 0), (width, 0), (width, height), (0, height)]
    target = [(x + rng.uniform(-amount, amount) * width, y + rng.uniform(-amount, amount) * height) for x, y in source]
    forward = _homography(source, target)  # source -> target, for the centres
    inverse = np.linalg.inv(forward)  # PIL wants target pixel -> source pixel
    coefficients = (inverse / inverse[2, 2]).flatten()[:8]
    warped = image.transform((width, height), Image.PERSPECTIVE, tuple(coefficients), Image.BILINEAR, fillcolor=fill)
    moved = []
    for x, y in centres:
        u, v, w = forward @ np.array([x, y, 1.0])
        moved.append((u / w, v / w))
    return warped, moved


def _homography(source, target) -> np.ndarray:
    rows, values = [], []
    for (x, y), (u, v) in zip(source, target, strict=True):
        rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        values.extend([u, v])
    h = np.linalg.solve(np.array(rows, np.float64), np.array(values, np.float64))
    return np.append(h, 1.0).reshape(3, 3)
