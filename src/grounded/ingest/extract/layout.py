"""Geometry glue: positioned text runs -> lines -> paragraphs, with boxes.

Used for PDF text layers and OCR output alike, so a scanned page and a born-
digital one produce the same kind of blocks. Boxes are (x0, top, x1, bottom)
with the origin at the top-left, in whatever unit the caller uses.
"""

from __future__ import annotations

from typing import NamedTuple

BBox = tuple[float, float, float, float]


class Line(NamedTuple):
    text: str
    bbox: BBox


def _union(boxes: list[BBox]) -> BBox:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def group_lines(runs: list[Line]) -> list[Line]:
    """Merge runs whose vertical centres fall within half a line of each other.

    Runs arrive in content-stream order, which is usually but not always
    reading order; lines are returned top to bottom, runs left to right.
    """
    ordered = sorted(runs, key=lambda r: ((r.bbox[1] + r.bbox[3]) / 2, r.bbox[0]))
    groups: list[list[Line]] = []
    for run in ordered:
        centre = (run.bbox[1] + run.bbox[3]) / 2
        if groups:
            last = groups[-1]
            box = _union([r.bbox for r in last])
            half = max((box[3] - box[1]) / 2, 1.0)
            if abs(centre - (box[1] + box[3]) / 2) <= half:
                last.append(run)
                continue
        groups.append([run])
    lines = []
    for group in groups:
        group.sort(key=lambda r: r.bbox[0])
        lines.append(Line(" ".join(r.text for r in group), _union([r.bbox for r in group])))
    return lines


def paragraphs(lines: list[Line]) -> list[Line]:
    """Join lines into paragraphs where the gap above a line is under ~0.8 line heights."""
    out: list[list[Line]] = []
    for line in lines:
        if out:
            prev = out[-1][-1]
            height = max(prev.bbox[3] - prev.bbox[1], 1.0)
            gap = line.bbox[1] - prev.bbox[3]
            if gap <= 0.8 * height:
                out[-1].append(line)
                continue
        out.append([line])
    result = []
    for group in out:
        text = ""
        for line in group:
            if text.endswith("-") and line.text[:1].islower():
                text = text[:-1] + line.text  # re-join a word hyphenated at the line end
            else:
                text = f"{text}\n{line.text}" if text else line.text
        result.append(Line(text, _union([line.bbox for line in group])))
    return result
