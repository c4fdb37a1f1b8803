"""Geometry glue: positioned text runs -> lines -> paragraphs, with boxes.

Used for PDF text layers and OCR output alike, so a scanned page and a born-
digital one produce the same kind of blocks. Boxes are (x0, top, x1, bottom)
with the origin at the top-left, in whatever unit the caller uses.
"""

from __future__ import annotations

import itertools
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


def _overlaps(a: BBox, b: BBox) -> bool:
    return a[0] < b[2] and b[0] < a[2]


def group_lines(runs: list[Line]) -> list[Line]:
    """Join consecutive runs that continue a line: same row, a word-sized gap to the right.

    Runs are taken in the order given (the content stream's, which is the
    reading order for nearly every generator), never re-sorted by position:
    sorting by y would merge the two columns of a two-column page into one
    line of nonsense. A wide gap (over 3 line heights) starts a new line, so
    side-by-side columns stay apart.
    """
    groups: list[list[Line]] = []
    for run in runs:
        if groups:
            current = groups[-1]
            box = _union([r.bbox for r in current])
            height = max(box[3] - box[1], 1.0)
            # Same row: the vertical spans overlap by 30% of the smaller one (glyph
            # boxes are tight, so a comma sits low and a capital high in its line).
            overlap = min(box[3], run.bbox[3]) - max(box[1], run.bbox[1])
            smaller = max(min(height, run.bbox[3] - run.bbox[1]), 0.5)
            gap = run.bbox[0] - current[-1].bbox[2]
            if overlap >= 0.3 * smaller and -height <= gap <= 3 * height:
                current.append(run)
                continue
        groups.append([run])
    return [Line(_join(group), _union([r.bbox for r in group])) for group in groups]


def _join(group: list[Line]) -> str:
    """Runs joined by a space, except where they touch (a comma after its word)."""
    box = _union([r.bbox for r in group])
    tight = 0.2 * max(box[3] - box[1], 1.0)
    text = group[0].text
    for prev, run in itertools.pairwise(group):
        text += ("" if run.bbox[0] - prev.bbox[2] < tight else " ") + run.text
    return text


def paragraphs(lines: list[Line]) -> list[Line]:
    """Join a line to the paragraph above when it sits just below it and overlaps it.

    "Just below": the gap is under ~0.8 line heights (a blank line or a new
    column breaks the paragraph); "overlaps": they share some horizontal span.
    """
    out: list[list[Line]] = []
    for line in lines:
        if out:
            prev = out[-1][-1]
            height = max(prev.bbox[3] - prev.bbox[1], 1.0)
            gap = line.bbox[1] - prev.bbox[3]
            if -0.3 * height <= gap <= 0.8 * height and _overlaps(
                _union([x.bbox for x in out[-1]]), line.bbox
            ):
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
