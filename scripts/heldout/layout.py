"""Text set in columns (tategaki, right to left) or in lines, as an ink mask (255 = ink).

Vertical setting is done glyph by glyph: long-vowel marks, dashes, ellipses and brackets are
turned a quarter turn, and 、。 and small kana move to the upper right of their cell, as
vertical Japanese typesetting places them. Lines break after `run` characters, but a line never
starts with a closing mark (a simple kinsoku rule).
"""

from __future__ import annotations

from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

TURNED = "ー～…―－「」『』（）〜"
UPPER_RIGHT = "、。"
SMALL = "ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮ"
NO_LINE_START = "、。！？…ーっゃゅょッャュョ」』）"


@dataclass(frozen=True)
class SetText:
    mask: Image.Image  # L, ink 255 on 0
    end: tuple[float, float]  # just after the last character, in reading direction
    direction: tuple[int, int]  # the reading direction at the end: (0, 1) down, (1, 0) right


def break_lines(text: str, run: int) -> list[str]:
    lines: list[str] = []
    for character in text:
        if not lines or (len(lines[-1]) >= run and character not in NO_LINE_START):
            lines.append(character)
        else:
            lines[-1] += character
    return lines


def glyph(character: str, font: ImageFont.FreeTypeFont, em: int, turn: bool) -> Image.Image:
    cell = Image.new("L", (em * 2, em * 2), 0)
    ImageDraw.Draw(cell).text((em, em), character, font=font, anchor="mm", fill=255)
    return cell.rotate(-90) if turn else cell


def set_vertical(text: str, font: ImageFont.FreeTypeFont, em: int, run: int, tracking: float, leading: float):
    columns = break_lines(text, run)
    pitch_y, pitch_x = em * (1 + tracking), em * (1 + leading)
    width = int(pitch_x * len(columns) + em)
    height = int(pitch_y * max(len(c) for c in columns) + em)
    mask = Image.new("L", (width, height), 0)
    end = (0.0, 0.0)
    for index, column in enumerate(columns):
        center_x = width - em / 2 - pitch_x * index - em / 2
        for row, character in enumerate(column):
            center_y = em / 2 + pitch_y * row + em / 2
            dx = dy = 0.0
            if character in UPPER_RIGHT:
                dx, dy = 0.55 * em, -0.5 * em
            elif character in SMALL:
                dx, dy = 0.1 * em, -0.1 * em
            cell = glyph(character, font, em, character in TURNED)
            mask.paste(255, (int(center_x + dx - em), int(center_y + dy - em)), cell)
            end = (center_x, center_y + pitch_y / 2)
    return SetText(mask, end, (0, 1))


def set_horizontal(text: str, font: ImageFont.FreeTypeFont, em: int, run: int, leading: float, centred: bool):
    lines = break_lines(text, run)
    widths = [font.getlength(line) for line in lines]
    pitch = em * (1 + leading)
    width = int(max(widths) + em)
    height = int(pitch * len(lines) + em * 0.6)
    mask = Image.new("L", (width, height), 0)
    draw = ImageDraw.Draw(mask)
    end = (0.0, 0.0)
    for index, (line, line_width) in enumerate(zip(lines, widths, strict=True)):
        left = (width - line_width) / 2 if centred else em / 2
        middle = em * 0.3 + pitch * index + em / 2
        draw.text((left, middle), line, font=font, anchor="lm", fill=255)
        end = (left + line_width, middle)
    return SetText(mask, end, (1, 0))
